"""Probe (GPU): a one-row GEMV against a [K, N] weight (x @ W, as GPT-2's Conv1D and the suite's
rmsnorm_matmul / swiglu store it) read straight from global memory, against torch's x @ W (cuBLAS).

y[1, N] = x[1, K] @ W[K, N]. Each variant is a block of `threads` over `cols` output columns: per step the
block reads a (kg x cols) slab of W, kg = threads * 8 / cols rows, each thread one 16-byte vector of a row,
and accumulates fp32 products into a (kg, cols) fragment, summed over kg by T.reduce_sum at the end.
`sS`: the K axis is also split over S blocks whose fp32 partials a second kernel sums (Split-K);
`unroll`: the K loop unrolled so each thread has several loads in flight (`uF`: by a factor F only).

`--cold` times every variant and torch on rotated copies of the weight (more bytes than the L2 holds), as
`cleave compile --gpu` and the suite do; without it the weight stays in the L2 where it fits (50 MiB), which
flatters every variant. `--shapes KxN ...` picks the shapes; `--qkv` adds torch's three Llama-3-8B q/k/v
GEMVs (x @ Wq, x @ Wk, x @ Wv) beside the [4096, 6144] shape they concatenate to.

    bash bench/on_device.sh python bench/probes/gemv_kn_idioms.py     # writes $OUT/gemv_kn_idioms.json
    bash bench/on_device.sh python bench/probes/gemv_kn_idioms.py --cold --qkv --shapes 4096x6144 4096x14336
    python bench/probes/gemv_kn_idioms.py --lower                      # CPU: only lower every variant for sm_90a
"""
import json
import os
import sys

import tilelang
import tilelang.language as T

SHAPES = [(4096, 6144), (4096, 14336), (14336, 4096), (768, 3072)]  # (K, N)


def columns(K: int, N: int, cols: int = 64, threads: int = 128, splits: int = 1, unroll: bool | int = False):
    kg = threads * 8 // cols
    kslice = K // splits

    @T.prim_func
    def main(x: T.Tensor((1, K), "float16"), w: T.Tensor((K, N), "float16"), y: T.Tensor((splits, N), "float32")):
        with T.Kernel(N // cols, splits, threads=threads) as (bx, by):
            part = T.alloc_fragment((kg, cols), "float32")
            acc = T.alloc_fragment((cols,), "float32")
            T.clear(part)
            for kk in T.unroll(kslice // kg, unroll_factor=None if unroll is True else unroll) if unroll else T.serial(kslice // kg):
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


def _label(c: int, t: int, s: int, u: bool | int) -> str:
    return f"cols{c} t{t}{f' s{s}' if s > 1 else ''}{' unroll' if u is True else (f' u{u}' if u else '')}"


VARIANTS = {
    _label(c, t, s, u): dict(cols=c, threads=t, splits=s, unroll=u)
    for c, t, s, u in [
        (64, 128, 1, False), (64, 128, 1, True), (32, 128, 1, True), (128, 128, 1, True), (64, 256, 1, True),
        (64, 128, 4, False), (64, 128, 8, False), (64, 128, 16, False), (128, 128, 8, False), (256, 256, 16, False),
        (64, 128, 8, True), (64, 128, 8, 4), (64, 128, 4, 4), (64, 128, 4, True), (64, 256, 8, False), (64, 256, 8, 4),
        (64, 256, 4, 4), (32, 128, 8, 4), (64, 128, 16, 4), (128, 256, 8, 4), (64, 64, 8, 4), (64, 64, 16, False),
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
    cold = "--cold" in sys.argv
    shapes = SHAPES
    if "--shapes" in sys.argv:
        given = sys.argv[sys.argv.index("--shapes") + 1:]
        shapes = [tuple(int(v) for v in a.split("x")) for a in given if "x" in a and not a.startswith("-")]
    jobs = [(k, n, name) for k, n in shapes for name in VARIANTS]

    def compile_job(job):  # type: ignore[no-untyped-def]
        k, n, name = job
        split, comb = build(k, n, VARIANTS[name])
        return (tilelang.compile(split, out_idx=[2], pass_configs=cfg),
                tilelang.compile(comb, out_idx=[1], pass_configs=cfg) if comb is not None else None)

    kernels = dict(zip(jobs, runtime.parallel_map(compile_job, jobs, 15)))
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    for k, n in shapes:
        x = torch.randn(1, k, dtype=torch.half, device="cuda")
        w = torch.rand(k, n, dtype=torch.half, device="cuda") - 0.5
        ref = (x.double() @ w.double()).float()
        gb = n * k * 2 / 1e9
        copies = [(x, w)] + ([(x.clone(), w.clone()) for _ in range(max(2, -(-3 * l2 // (k * n * 2))) - 1)] if cold else [])

        def timed(fn) -> float:  # type: ignore[no-untyped-def]
            """fn(x, w) per call, on rotated copies with --cold"""
            return runtime.time_us(fn, rotate=copies, batch=20, iters=10)

        def rec(name: str, us: float, err: float) -> None:
            out[f"{k}x{n} {name}"] = {"us": us, "TB/s": gb / us * 1e3, "err": err}
            print(f"W[{k},{n}] {name:26s} {us:8.1f} us {gb / us * 1e3:5.2f} TB/s err {err:.1e}", flush=True)

        rec("x @ W", timed(lambda a, b: a @ b), 0.0)
        if "--qkv" in sys.argv and (k, n) == (4096, 6144):
            parts = [(x, w[:, :4096].contiguous(), w[:, 4096:5120].contiguous(), w[:, 5120:].contiguous())]
            parts += [tuple(t.clone() for t in parts[0]) for _ in range(len(copies) - 1)]
            us = runtime.time_us(lambda a, q, kk, v: (a @ q, a @ kk, a @ v), rotate=parts, batch=20, iters=10)
            rec("x @ Wq, x @ Wk, x @ Wv", us, 0.0)
        for name in VARIANTS:
            pair = kernels[(k, n, name)]
            try:
                if isinstance(pair, Exception):
                    raise pair
                split, comb = pair
                run = (lambda a, b: split(a, b)) if comb is None else (lambda a, b: comb(split(a, b)))
                got = run(x, w)
                err = ((got.float() - ref).abs().max() / ref.abs().max()).item()
                rec(name, timed(run), err)
            except Exception as e:  # noqa: BLE001 - a probe records what failed and goes on
                print(f"W[{k},{n}] {name}: FAILED {type(e).__name__}: {str(e)[:300]}", flush=True)
    dest = os.path.join(os.environ.get("OUT", "/tmp"), "gemv_kn_idioms_cold.json" if cold else "gemv_kn_idioms.json")
    json.dump(out, open(dest, "w"), indent=1)


if __name__ == "__main__":
    main()
