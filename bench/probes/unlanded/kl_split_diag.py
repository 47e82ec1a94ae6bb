"""Which candidate of an emitted module hangs on the GPU, and at which kernel: each candidate runs in a subprocess
under a timeout, its kernels compiled first, then launched one at a time with a synchronize after each (the last
`launch` line without its `done` names the kernel; DIAG_CANDIDATES=0,2 and DIAG_TIMEOUT=seconds narrow it). Inputs: standard normal fp16 tensors of the shapes given.

    bash bench/on_device.sh python bench/probes/unlanded/kl_split_diag.py kernels/kl_logits_t4_v32000__full.py 4x32000 4x32000
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

TIMEOUT_S = int(os.environ.get("DIAG_TIMEOUT", "40"))


def main() -> None:
    path, shapes = sys.argv[1], [tuple(int(d) for d in a.split("x")) for a in sys.argv[2:]]
    if "DIAG_CANDIDATE" not in os.environ:
        spec = importlib.util.spec_from_file_location("emitted", path)
        module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        spec.loader.exec_module(module)  # type: ignore[union-attr]
        only = os.environ.get("DIAG_CANDIDATES")  # e.g. "0,2"
        for c in [int(x) for x in only.split(",")] if only else range(len(module.CANDIDATES)):
            try:
                env = {**os.environ, "DIAG_CANDIDATE": str(c)}
                r = subprocess.run([sys.executable, *sys.argv], capture_output=True, text=True, timeout=TIMEOUT_S, env=env)
                print(f"candidate {c}: rc {r.returncode}:", r.stdout.strip().replace("\n", " | ")[-600:], r.stderr.strip()[-300:], flush=True)
            except subprocess.TimeoutExpired as e:
                out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
                print(f"candidate {c}: no result after {TIMEOUT_S} s:", out.strip().replace("\n", " | ")[-600:], flush=True)
        return
    import torch

    spec = importlib.util.spec_from_file_location("emitted", path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    candidate = int(os.environ["DIAG_CANDIDATE"])
    _, kernels, name = module.CANDIDATES[candidate]
    print("candidate", name, flush=True)
    call = module._call

    def synchronized(kernel: str, *args: object) -> object:
        print("launch", kernel, flush=True)
        result = call(kernel, *args)
        torch.cuda.synchronize()
        print("done", kernel, flush=True)
        return result

    module._call = synchronized
    for kernel in kernels:
        module.compile_kernel(kernel)
        print("compiled", kernel, flush=True)
    xs = [torch.randn(*s, device="cuda", dtype=torch.float16) for s in shapes]
    module.run(*xs, candidate=candidate)
    torch.cuda.synchronize()
    print("ran", name, flush=True)


if __name__ == "__main__":
    main()
