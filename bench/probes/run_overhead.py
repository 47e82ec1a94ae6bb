"""Probe (GPU): where an eager `run()` of an emitted module spends its host time.

For each module in DIR (`cleave compile GRAPH -o DIR/NAME_*.py`, GRAPH in bench/probes/unseen), after a warm-up:
the wall time of `run()` per call (host-bound: calls back to back, synchronized at the end), of each kernel's
TileLang launcher called directly with the same arguments, and of an empty CUDA launch from PyTorch
(`torch.empty(0).add_(1)`); then a cProfile of 300 `run()` calls (top functions by own time).

    bash bench/on_device.sh bash -c 'cd /tmp && python $OLDPWD/bench/probes/run_overhead.py $OLDPWD/.gpu/defaults'
"""

from __future__ import annotations

import cProfile
import io
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from default_candidate import load  # noqa: E402
from gpu_suite import parse_graph  # noqa: E402


def per_call_us(fn, n: int = 300) -> float:
    import torch

    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(n):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t) / n * 1e6


def main() -> None:
    import torch

    from cleave_ir.runtime import random_inputs

    d = Path(sys.argv[1])
    unseen = Path(__file__).resolve().parent / "unseen"
    e = torch.empty(1, device="cuda")
    print(f"empty torch launch: {per_call_us(lambda: e.add_(1)):.1f} us a call", flush=True)
    for path in sorted(d.glob("*.py")):
        name = path.stem.rsplit("_", 1)[0]
        mod = load(path)
        xs = random_inputs(parse_graph((unseen / f"{name}.mlir").read_text()), seed=1)
        _, names, head = mod.CANDIDATES[0]
        print(f"== {path.stem}: candidate {head}, kernels {names}", flush=True)
        print(f"run(): {per_call_us(lambda: mod.run(*xs)):.1f} us a call", flush=True)
        # each kernel's launcher alone, on the arguments run() gives it (its first kernel's: the inputs)
        k0 = mod.compile_kernel(names[0])
        print(f"{names[0]} launcher alone: {per_call_us(lambda: k0(*xs)):.1f} us a call", flush=True)
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(300):
            mod.run(*xs)
        torch.cuda.synchronize()
        prof.disable()
        s = io.StringIO()
        pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(18)
        print("\n".join(line for line in s.getvalue().splitlines() if line.strip())[:6000], flush=True)


if __name__ == "__main__":
    main()
