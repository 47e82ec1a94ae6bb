"""The pipeline's own FlashAttention kernels with part of their exp2 on the FMA pipes (`cleave-emulate-exp2`).

`prepare` (CPU) runs cleave-pipeline once per graph and writes the best candidate's module at each
`exp2-on-fma-every` (0: all exp2 on the MUFU, as the lowering emits by default); `run` (GPU) checks each
against float64 and times them interleaved, beside cuDNN SDPA on the same inputs.

    python bench/probes/exp2_fma_rows.py prepare .gpu/e2                     # here
    bash bench/on_device.sh python bench/probes/exp2_fma_rows.py run .gpu/e2   # $OUT/exp2_fma_rows.json
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GRAPHS = {
    "s8192_d64": ROOT / "bench/probes/fa_stages/mha_d64.mlir",
    "s4096_d128": ROOT / "bench/probes/fa_stages/mha_d128.mlir",
    "s4096_d64": ROOT / "bench/probes/fa_stages/mha_s4096_d64.mlir",
    "s4096_d96": ROOT / "bench/probes/fa_stages/mha_s4096_d96.mlir",
    "s4096_d80": ROOT / "bench/probes/fa_stages/mha_s4096_d80.mlir",
    "s4096_d112": ROOT / "bench/probes/fa_stages/mha_s4096_d112.mlir",
}
EVERY = (0, 8, 4, 2)


def prepare(out: Path, graphs: tuple[str, ...] = tuple(GRAPHS)) -> None:
    from xdsl.context import Context

    from cleave_ir.passes.lower_tilelang import lower_module
    from cleave_ir.passes.pipeline import PipelinePass
    from cleave_ir.run import load_module
    from cleave_ir.tilelang_emitter import module_source

    out.mkdir(parents=True, exist_ok=True)
    for name in graphs:
        module = load_module(str(GRAPHS[name]))
        (out / f"{name}.mlir").write_text(str(module))
        PipelinePass(keep=1).apply(Context(), module)
        for every in EVERY:
            lowered = module.clone()
            lower_module(lowered, exp2_on_fma_every=every)
            (out / f"{name}_e{every}.py").write_text(module_source(lowered))
            print(f"{name} every={every}: written", flush=True)


def run(src: Path, rounds: int = 5, graphs: tuple[str, ...] = tuple(GRAPHS), every_values: tuple[int, ...] = EVERY) -> None:
    import torch
    import torch.nn.functional as F

    from cleave_ir.run import load_module
    from cleave_ir.runtime import random_inputs, time_us, torch_reference
    from cleave_ir.tilelang_check import load_module_file

    res: dict[str, dict[str, float]] = {"device": torch.cuda.get_device_name()}  # type: ignore[dict-item]
    for name in graphs:
        graph = load_module(str(src / f"{name}.mlir")).body.block.first_op
        xs = random_inputs(graph)
        (ref,) = torch_reference(graph, xs)
        fns = {}
        mods = [load_module_file(src / f"{name}_e{every}.py") for every in every_values]
        with ThreadPoolExecutor(len(mods)) as pool:  # TileLang compiles each module's kernels on first run
            firsts = list(pool.map(lambda m: m.run(*xs), mods))
        for every, mod, got in zip(every_values, mods, firsts):
            got = got[0] if isinstance(got, (list, tuple)) else got
            err = ((got.double() - ref.double()).abs().max() / ref.double().abs().max()).item()
            print(f"{name} every={every}: kernels {mod.CANDIDATES[0][1]}, rel. error {err:.2e}", flush=True)
            res[f"{name} every={every} error"] = err
            if err < 1e-2:
                fns[f"every={every}"] = (lambda m: (lambda: m.run(*xs)))(mod)
        q, k, v = xs

        def cudnn():
            with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.CUDNN_ATTENTION):
                return F.scaled_dot_product_attention(q, k, v)

        fns["sdpa_cudnn"] = cudnn
        times: dict[str, list[float]] = {n: [] for n in fns}
        for r in range(rounds):
            for n in (fns if r % 2 == 0 else reversed(list(fns))):
                times[n].append(time_us(fns[n], batch=20, iters=10))
        for n, ts in sorted(times.items(), key=lambda x: statistics.median(x[1])):
            us = statistics.median(ts)
            res[f"{name} {n}"] = round(us, 1)
            print(f"{name} {n:12s} {us:8.1f} us  (rounds {', '.join(f'{t:.1f}' for t in ts)})", flush=True)
    Path(os.environ.get("OUT", "/tmp"), "exp2_fma_rows.json").write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    # run DIR [ROUNDS [GRAPH,... [EVERY,...]]]
    if sys.argv[1] == "prepare":  # prepare DIR [GRAPH,...]
        prepare(Path(sys.argv[2]), *([tuple(sys.argv[3].split(","))] if len(sys.argv) > 3 else []))
    else:
        extra = sys.argv[3:]
        run(
            Path(sys.argv[2]), int(extra[0]) if extra else 5, tuple(extra[1].split(",")) if len(extra) > 1 else tuple(GRAPHS),
            tuple(int(e) for e in extra[2].split(",")) if len(extra) > 2 else EVERY,
        )
