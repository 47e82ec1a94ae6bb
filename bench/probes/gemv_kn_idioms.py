"""Probe (GPU): a one-row GEMV against a [K, N] weight (x @ W, as GPT-2's Conv1D and the suite's
rmsnorm_matmul / swiglu store it) read straight from global memory, against torch's x @ W (cuBLAS).

y[1, N] = x[1, K] @ W[K, N]. Each variant is a block of `threads` over `cols` output columns: per step the
block reads a (kg x cols) slab of W, kg = threads * 8 / cols rows, each thread one 16-byte vector of a row,
and accumulates fp32 products into a (kg, cols) fragment, summed over kg by T.reduce_sum at the end.
`sS`: the K axis is also split over S blocks whose fp32 partials a second kernel sums (Split-K);
`unroll`: the K loop unrolled so each thread has several loads in flight.

    bash bench/on_device.sh python bench/probes/gemv_kn_idioms.py     # writes $OUT/gemv_kn_idioms.json
    python bench/probes/gemv_kn_idioms.py --lower                      # CPU: only lower every variant for sm_90a
"""
import json
import os
import sys

import tilelang
import tilelang.language as T

SHAPES = [(4096, 6144), (4096, 14336), (14336, 4096), (768, 3072)]  # (K, N)


def columns(K: int, N: int, cols: int = 64, threads: int = 128, splits: int = 1, unroll: bool = False):
    kg = threads * 8 // cols
    kslice = K // splits

    @T.prim_func
    def main(x: T.Tensor((1, K), "float16"), w: T.Tensor((K, N), "float16"), y: T.Tensor((splits, N), "float32")):
        with T.Kernel(N // cols, splits, threads=threads) as (bx, by):
            part = T.alloc_fragment((kg, cols), "float32")
            acc = T.alloc_fragment((cols,), "float32")
            T.clear(part)
            loop = T.unroll if unroll else T.serial
            for kk in loop(kslice // kg):
                for i0, i1 in T.Parallel(kg, cols):
                    k = by * kslice + kk * kg + i0
                    part[i0, i1] += T.Cast("float32", x[0, k]) * T.Cast("float32", w[k, bx * cols + i1])
            T.reduce_sum(part, acc, dim=0, clear=True)
            T.copy(acc, y[by, bx * cols:bx * cols + cols])

    return main


def combine(N: int, splits: int, cols: int = 256):
    @T.prim_func
    def main(p: T.Tensor((splits, N), "float32"), y: T.Tensor((1, N), "float16")):
        with T.Kernel(N // cols, threads=cols) as (bx,):
            acc = T.alloc_fragment((cols,), "float32")
            T.clear(acc)
            for s in T.serial(splits):
                for i in T.Parallel(cols):
                    acc[i] += p[s, bx * cols + i]
            T.copy(acc, y[0, bx * cols:bx * cols + cols])

    return main


VARIANTS = {
    f"cols{c} t{t}{f' s{s}' if s > 1 else ''}{' unroll' if u else ''}": dict(cols=c, threads=t, splits=s, unroll=u)
    for c, t, s, u in [
        (64, 128, 1, False), (64, 128, 1, True), (32, 128, 1, True), (128, 128, 1, True), (64, 256, 1, True),
        (64, 128, 4, False), (64, 128, 8, False), (64, 128, 16, False), (128, 128, 8, False), (256, 256, 16, False),
        (64, 128, 8, True),
    ]
}


def build(K: int, N: int, kw: dict):  # type: ignore[type-arg]
    return columns(K, N, **kw), (combine(N, kw["splits"]) if kw["splits"] > 1 else None)


def main() -> None:
    if "--lower" in sys.argv:
        from tvm.target import Target

        for name, kw in VARIANTS.items():
            with Target({"kind": "cuda", "arch": "sm_90a"}):
                for f in build(4096, 6144, kw):
                    if f is not None:
                        tilelang.lower(f)
            print("lowered", name, flush=True)
        return
    import torch

    from cleave_ir import runtime

    torch.manual_seed(0)
    cfg = {tilelang.PassConfigKey.TL_ENABLE_FAST_MATH: True}
    out = {}
    jobs = [(k, n, name) for k, n in SHAPES for name in VARIANTS]

    def compile_job(job):  # type: ignore[no-untyped-def]
        k, n, name = job
        split, comb = build(k, n, VARIANTS[name])
        return (tilelang.compile(split, out_idx=[2], pass_configs=cfg),
                tilelang.compile(comb, out_idx=[1], pass_configs=cfg) if comb is not None else None)

    kernels = dict(zip(jobs, runtime.parallel_map(compile_job, jobs, 15)))
    for k, n in SHAPES:
        x = torch.randn(1, k, dtype=torch.half, device="cuda")
        w = torch.rand(k, n, dtype=torch.half, device="cuda") - 0.5
        ref = (x.double() @ w.double()).float()
        gb = n * k * 2 / 1e9

        def rec(name: str, us: float, err: float) -> None:
            out[f"{k}x{n} {name}"] = {"us": us, "TB/s": gb / us * 1e3, "err": err}
            print(f"W[{k},{n}] {name:26s} {us:8.1f} us {gb / us * 1e3:5.2f} TB/s err {err:.1e}", flush=True)

        rec("x @ W", runtime.time_us(lambda: x @ w, batch=20, iters=10), 0.0)
        for name in VARIANTS:
            pair = kernels[(k, n, name)]
            try:
                if isinstance(pair, Exception):
                    raise pair
                split, comb = pair
                run = (lambda: split(x, w)) if comb is None else (lambda: comb(split(x, w)))
                got = run()
                err = ((got.float() - ref).abs().max() / ref.abs().max()).item()
                rec(name, runtime.time_us(run, batch=20, iters=10), err)
            except Exception as e:  # noqa: BLE001 - a probe records what failed and goes on
                print(f"W[{k},{n}] {name}: FAILED {type(e).__name__}: {str(e)[:300]}", flush=True)
    dest = os.path.join(os.environ.get("OUT", "/tmp"), "gemv_kn_idioms.json")
    json.dump(out, open(dest, "w"), indent=1)


if __name__ == "__main__":
    main()
