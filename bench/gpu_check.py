"""Compile, verify and time emitted TileLang modules on a GPU against PyTorch (run on the H200).

    python bench/gpu_check.py KERNEL_DIR [--candidates 3]

KERNEL_DIR holds modules written by `cleave-opt examples/X.mlir -p cleave-pipeline -t tilelang -o
KERNEL_DIR/X.py`. For every module: each of the top candidates is compiled (tilelang.compile,
sm_90a), run on random fp16 inputs with its final outputs poisoned (NaN) beforehand, checked
against a float64 reference of the example (max relative error < 1e-2), and timed: CUDA events
around a CUDA graph of 50 calls (or 50 back-to-back launches where capture fails, marked), median of
20; the PyTorch baselines (SDPA, eager) are timed the same way in the same process. Prints a markdown table.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

SCALE_128 = 128 ** -0.5


def _attention(q, k, v, scale):
    s = torch.matmul(q, k.transpose(-1, -2)) * scale
    return torch.matmul(torch.softmax(s, dim=-1), v)


REFERENCES = {  # float64 references of the examples, same argument order as the graphs
    "mha": lambda q, k, v: _attention(q, k, v, SCALE_128),
    "gqa_decode": lambda q, k, v: _attention(q, k, v, SCALE_128),
    "rmsnorm_matmul": lambda x, w: (x * torch.rsqrt((x * x).mean(-1, keepdim=True))) @ w,
    "matmul_rowsum": lambda a, b: (a @ b).sum(-1, keepdim=True),
    "swiglu": lambda x, wg, wu: F.silu(x @ wg) * (x @ wu),
}


def _baselines(name, xs):
    """(label, callable) PyTorch baselines on the fp16 inputs."""
    if name == "mha":
        q, k, v = xs
        return [("sdpa", lambda: F.scaled_dot_product_attention(q, k, v))]
    if name == "gqa_decode":
        q, k, v = xs  # q [1, 8, 4, 128] (4 query heads per KV head), k/v [1, 8, L, 128]
        return [("sdpa", lambda: F.scaled_dot_product_attention(q, k, v))]
    fn = REFERENCES[name]
    return [("eager", lambda: fn(*xs))]


def time_us(fn, iters: int = 20, batch: int = 50) -> tuple[float, str]:
    """Median time of one call, from a CUDA graph of `batch` calls when capture works, else from
    `batch` back-to-back launches (host overhead then counts, and the result says so)."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    method = "graph"
    try:
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            fn()
        torch.cuda.current_stream().wait_stream(s)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(batch):
                fn()
        run = graph.replay
    except Exception:
        method = "launches"
        torch.cuda.synchronize()

        def run():
            for _ in range(batch):
                fn()
    run()
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        run()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b) * 1e3 / batch)
    return statistics.median(times), method


def load(path: Path):
    spec = importlib.util.spec_from_file_location(f"k_{path.stem}", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def check_module(path: Path, n_candidates: int) -> list[str]:
    name = path.stem
    mod = load(path)
    rows = []
    first = mod.KERNELS[mod.CANDIDATES[0][1][0]]
    n_in = first["inputs"]
    gen = torch.Generator(device="cuda").manual_seed(0)
    xs = [torch.randn(s, generator=gen, device="cuda", dtype=torch.float16) for s in first["shapes"][:n_in]]
    if name in ("rmsnorm_matmul", "swiglu"):  # keep activations in a sane range for fp16
        xs = [xs[0]] + [x * 0.02 for x in xs[1:]]
    ref = REFERENCES[name](*[x.double() for x in xs])
    base = {label: time_us(fn) for label, fn in _baselines(name, xs)}
    for est, kernels, graph in mod.CANDIDATES[:n_candidates]:
        t0 = time.perf_counter()
        try:
            compiled = [mod.compile_kernel(k) for k in kernels]
        except Exception as e:  # report and go on: one bad candidate must not hide the others
            rows.append(f"| {name} | {graph} | {est} | compile failed: {str(e).splitlines()[-1][:80]} | | | |")
            print(rows[-1], flush=True)
            continue
        compile_s = time.perf_counter() - t0
        # a second build of the last kernel that writes into outputs we pass: poisoned with NaN, so a
        # tile the kernel never writes shows in the check
        import tilelang

        from cleave_ir.tilelang_check import kernel_func

        last = kernels[-1]
        raw = tilelang.compile(kernel_func(mod, last), out_idx=None, target="cuda", pass_configs=mod.KERNELS[last].get("pass_configs"))

        first = mod.KERNELS[kernels[0]]["input_names"]

        def call(poisoned: bool = False):
            values = list(xs)
            for kname, ck in zip(kernels, compiled):
                extra = [xs[first.index(n)] for n in mod.KERNELS[kname]["passthrough"]]
                # (an input the kernel reads stored transposed is passed as its transpose, as `run` does)
                args = mod._stored(kname, values[: mod.KERNELS[kname]["inputs"] - len(extra)] + extra)
                if poisoned and kname == last:
                    meta = mod.KERNELS[kname]
                    outs = [
                        torch.full(shape, float("nan"), device="cuda", dtype=getattr(torch, dt))
                        for shape, dt in zip(meta["shapes"][meta["inputs"]:], meta["dtypes"][meta["inputs"]:])
                    ]
                    raw(*args, *outs)
                    return outs[0]
                out = ck(*args)
                values = list(out) if isinstance(out, (list, tuple)) else [out]
            return values[0]

        try:
            out = call(poisoned=True)
            torch.cuda.synchronize()
        except Exception as e:
            rows.append(f"| {name} | {graph} | {est} | run failed: {str(e).splitlines()[-1][:80]} | | | |")
            print(rows[-1], flush=True)
            continue
        err = ((out.double().reshape(ref.shape) - ref).abs().max() / ref.abs().max()).item()
        us, method = time_us(call)
        best_label, (best_us, base_method) = min(base.items(), key=lambda kv: kv[1][0])
        ok = "ok" if err < 1e-2 else "WRONG"
        rows.append(
            f"| {name} | {graph} ({len(kernels)} kernel{'s' if len(kernels) > 1 else ''}) | {est} | "
            f"{us:.1f} ({method}) | {best_label} {best_us:.1f} ({base_method}) | {best_us / us:.2f}x | {err:.2e} {ok} | {compile_s:.1f} |"
        )
        print(rows[-1], flush=True)
    return rows


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("kernel_dir")
    p.add_argument("--candidates", type=int, default=3)
    args = p.parse_args()
    print(f"GPU: {torch.cuda.get_device_name()}, torch {torch.__version__}, {time.strftime('%Y-%m-%d')}")
    print()
    print("| example | candidate | estimated us | measured us | best baseline us | speed-up | rel. error | compile s |")
    print("| --- | --- | ---: | ---: | --- | ---: | --- | ---: |")
    for path in sorted(Path(args.kernel_dir).glob("*.py")):
        if path.stem not in REFERENCES:
            continue
        try:
            check_module(path, args.candidates)
        except Exception as e:
            print(f"| {path.stem} | - | - | failed: {str(e).splitlines()[-1][:100]} | | | |", flush=True)


if __name__ == "__main__":
    main()
