"""Probe (GPU): does folding a deferred row reduction's wide accumulator into fewer columns speed up
rmsnorm_matmul's one-kernel form (the norm's sum of squares computed from the GEMM's own x tiles)?

The pipeline's `rmsnorm_matmul_c5_k0` keeps sum(x^2) element by element in a [128, 128] fp32 fragment
(`lower_tilelang.DEFERRED_REDUCTION_REGS`: 64 registers a thread, beside the 128 x 192 accumulator's 96)
and reduces its rows after the loop. Variants text-edit that kernel: `fold W` keeps a [128, W] fragment,
each thread summing 128 / W columns of the tile into each of its registers. Each variant is checked
against float64 and timed (median of 30 calls after 5) at T = 1024 and 4096, beside eager
`x * rsqrt(mean(x^2)) @ w` and torch.compile of it, interleaved in 3 rounds.

    bash bench/on_device.sh python bench/probes/wide_fold.py SUITE_DIR   # $OUT/wide_fold.json
(SUITE_DIR: a `gpu_suite.py prepare` output holding rmsnorm_matmul_t1024__full.py.)
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import statistics
import sys
import tempfile
from pathlib import Path

import torch

KERNEL = "rmsnorm_matmul_c5_k0"


def kernel_text(suite: Path) -> str:
    """The c5 kernel's prim_func with the dynamic-size globals before it."""
    src = (suite / "kernels" / "rmsnorm_matmul_t1024__full.py").read_text()
    end = src.index(f"def {KERNEL}(")
    start = src.rfind("\n\n\n", 0, end) + 3
    stop = src.index("\n\n\n", end)
    return src[start:stop]


def fold(text: str, width: int) -> str:
    """The [128, 128] sum-of-squares fragment as [128, width]: each element sums 128 / width columns."""
    text = text.replace('ss_wide = T.alloc_fragment((128, 128), "float32")', f'ss_wide = T.alloc_fragment((128, {width}), "float32")')
    pattern = re.compile(
        r"( +)for i0, i1 in T.Parallel\(128, 128\):\n +sq\[i0, i1\] = x_1\[i0, i1\] \* x_1\[i0, i1\]\n"
        r" +for i0, i1 in T.Parallel\(128, 128\):\n +ss_wide\[i0, i1\] = ss_wide\[i0, i1\] \+ sq\[i0, i1\]\n"
    )
    m = pattern.search(text)
    assert m, "the sum-of-squares loops were not found"
    ind = m.group(1)
    repl = (
        f"{ind}for kk in T.serial({128 // width}):\n"
        f"{ind}    for i0, i1 in T.Parallel(128, {width}):\n"
        f"{ind}        ss_wide[i0, i1] = ss_wide[i0, i1] + T.Cast(\"float32\", x_1[i0, i1 + {width}*kk]) * T.Cast(\"float32\", x_1[i0, i1 + {width}*kk])\n"
    )
    text = text[: m.start()] + repl + text[m.end() :]
    return text.replace('        sq = T.alloc_fragment((128, 128), "float32")\n', "")


def load(text: str, name: str):
    path = Path(tempfile.mkdtemp()) / f"{name}.py"
    path.write_text("import tilelang\nimport tilelang.language as T\n\n" + text + "\n")
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return getattr(mod, KERNEL)


def bench(fn, iters: int = 30) -> float:
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(iters):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        ts.append(a.elapsed_time(b) * 1e3)
    return statistics.median(ts)


def main() -> None:
    import tilelang

    suite = Path(sys.argv[1])
    text = kernel_text(suite)
    variants = {"as emitted": text, "fold 32": fold(text, 32), "fold 16": fold(text, 16), "fold 8": fold(text, 8)}
    compiled = {}
    for name, t in variants.items():
        try:
            compiled[name] = tilelang.compile(load(t, f"v{len(compiled)}"), pass_configs={tilelang.PassConfigKey.TL_ENABLE_FAST_MATH: True})
        except Exception as e:  # a variant that does not build is recorded
            compiled[name] = e
            print(f"{name}: build failed: {str(e).splitlines()[0][:200]}", flush=True)
        if name != "as emitted":
            print(f"--- {name}\n{t}", flush=True)

    def eager(x, w):
        return (x * torch.rsqrt((x.float() * x.float()).mean(1, keepdim=True)).half()) @ w

    compiled_eager = torch.compile(eager)
    out: dict[str, dict[str, object]] = {}
    for t in (1024, 4096):
        x = torch.randn(t, 4096, device="cuda", dtype=torch.float16)
        w = torch.randn(4096, 6144, device="cuda", dtype=torch.float16) * 0.02
        ref = (x.double() * torch.rsqrt((x.double() ** 2).mean(1, keepdim=True))) @ w.double()
        o = torch.empty(t, 6144, device="cuda", dtype=torch.float16)
        flops = 2 * t * 4096 * 6144
        calls = {n: (lambda k=k: k(x, w, o)) for n, k in compiled.items() if not isinstance(k, Exception)}
        calls["eager"] = lambda: eager(x, w)
        calls["torch.compile"] = lambda: compiled_eager(x, w)
        calls["cuBLAS x @ w alone"] = lambda: x @ w
        times: dict[str, list[float]] = {n: [] for n in calls}
        for n, f in calls.items():
            if n in compiled:
                f()
                err = ((o.double() - ref).abs().max() / ref.abs().max()).item()
                out[f"T{t} {n}"] = {"err": err}
        for _ in range(3):
            for n, f in calls.items():
                times[n].append(bench(f))
        for n, ts in times.items():
            us = statistics.median(ts)
            out.setdefault(f"T{t} {n}", {}).update({"us": round(us, 1), "tflops": round(flops / us * 1e-6, 1), "rounds": [round(u, 1) for u in ts]})
            print(f"T{t} {n}: {out[f'T{t} {n}']}", flush=True)
    Path(os.environ.get("OUT", "."), "wide_fold.json").write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
