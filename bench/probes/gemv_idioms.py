"""Probe (GPU): which one-row GEMV idiom reads an nn.Linear weight (W [N, K], row-major) at the H200's bandwidth.

y[1, N] = x[1, K] @ W^T, hand-written in TileLang 0.1.15 three ways, each timed beside F.linear (cuBLAS) with
cleave_ir.runtime.time_us and checked against a float64 reference:

- `smem-whole`: what cleave-lower-tilelang emits today for `out=[1, 16] reduce=none`: the block's whole 16 x K
  weight slab copied to shared memory, 8-wide partial sums per thread, partials reduced through shared memory.
- `simt`: TileLang's examples/gemv `splitk_gemv_vectorized_tvm`: a block of `rows` x `lanes` threads, each thread
  loads `vec` contiguous halves of its row straight from global memory into registers per step, and the lanes of a
  row are summed with a warp all-reduce. No shared memory.
- `reducer`: examples/gemv `gemv_alloc_reducer`: a pipelined (rows x bk) shared-memory copy per step, the products
  accumulated into a replicated reducer fragment, reduced once at the end.

    bash bench/on_device.sh python bench/probes/gemv_idioms.py     # writes $OUT/gemv_idioms.json
    python bench/probes/gemv_idioms.py --lower                      # CPU: only lower every variant for sm_90a
    ... gemv_idioms.py [--lower] --only emitted simt                # just the variants with these name prefixes
"""
import json
import os
import sys

import tilelang
import tilelang.language as T

SHAPES = [(14336, 4096), (4096, 4096), (4096, 14336), (1024, 4096)]


def smem_whole(N: int, K: int, rows: int = 16, threads: int = 128):
    split = 64

    @T.prim_func
    def main(x: T.Tensor((1, K), "float16"), w: T.Tensor((N, K), "float16"), y: T.Tensor((1, N), "float16")):
        with T.Kernel(N // rows, threads=threads) as (bx,):
            x_s = T.alloc_shared((K,), "float16")
            w_s = T.alloc_shared((rows, K), "float16")
            acc = T.alloc_fragment((rows,), "float32")
            part = T.alloc_fragment((rows, split), "float32")
            part_s = T.alloc_shared((rows, split), "float32")
            T.copy(x[0, 0:K], x_s)
            T.copy(w[rows * bx:rows * bx + rows, 0:K], w_s)
            T.clear(part)
            for kk in T.serial(K // split):
                for i0, i1 in T.Parallel(rows, split):
                    part[i0, i1] += x_s[i1 + split * kk] * w_s[i0, i1 + split * kk]
            T.copy(part, part_s)
            T.clear(acc)
            for kk in T.serial(split):
                for i0 in T.Parallel(rows):
                    acc[i0] += part_s[i0, kk]
            T.copy(acc, y[0, rows * bx:rows * bx + rows])

    return main


def simt(N: int, K: int, rows: int = 4, lanes: int = 32, vec: int = 8):
    step = lanes * vec

    @T.prim_func
    def main(x: T.Tensor((1, K), "float16"), w: T.Tensor((N, K), "float16"), y: T.Tensor((1, N), "float16")):
        with T.Kernel(N // rows, threads=(rows, lanes)) as bn:
            tn = T.get_thread_binding(0)
            tk = T.get_thread_binding(1)
            x_l = T.alloc_local((vec,), "float16")
            w_l = T.alloc_local((vec,), "float16")
            acc = T.alloc_local((1,), "float32")
            red = T.alloc_local((1,), "float32")
            T.clear(acc)
            for bk in T.serial(K // step):
                for k in T.vectorized(vec):
                    x_l[k] = x[0, bk * step + tk * vec + k]
                    w_l[k] = w[bn * rows + tn, bk * step + tk * vec + k]
                for k in T.serial(vec):
                    acc[0] += T.cast(x_l[k], "float32") * T.cast(w_l[k], "float32")
            with T.attr(T.comm_reducer(lambda a, b: a + b, [T.cast(0, "float32")]), "reduce_scope",
                        T.reinterpret(T.uint64(0), dtype="handle")):
                T.evaluate(T.tvm_thread_allreduce(T.uint32(1), acc[0], True, red[0], tk, dtype="handle"))
            y[0, bn * rows + tn] = T.cast(red[0], "float16")

    return main


def reducer(N: int, K: int, rows: int = 128, bk: int = 128, stages: int = 2, threads: int = 256):
    @T.prim_func
    def main(x: T.Tensor((1, K), "float16"), w: T.Tensor((N, K), "float16"), y: T.Tensor((1, N), "float16")):
        with T.Kernel(N // rows, threads=threads) as (bx,):
            o = T.alloc_reducer((rows,), "float32", replication="all")
            T.clear(o)
            for r in T.Pipelined(K // bk, num_stages=stages):
                w_s = T.alloc_shared((rows, bk), "float16")
                T.copy(w[bx * rows, r * bk], w_s)
                w_f = T.alloc_fragment((rows, bk), "float16")
                T.copy(w_s, w_f)
                x_f = T.alloc_fragment((bk,), "float16")
                T.copy(x[0, r * bk], x_f)
                for i, j in T.Parallel(rows, bk):
                    o[i] += T.cast(w_f[i, j], "float32") * T.cast(x_f[j], "float32")
            T.finalize_reducer(o)
            T.copy(o, y[0, bx * rows])

    return main


def emitted(N: int, K: int, rows: int = 4, x_global: bool = False, unroll: bool = False):
    """The form `lower_tilelang.direct_gemv` emits: a T.Parallel(rows, split) of fp32 products into a
    (rows, split) fragment over a serial K loop, then T.reduce_sum. `x_global`: the input row read
    from global memory in the loop instead of a shared copy made first; `unroll`: the K loop unrolled."""
    split = 256
    threads = rows * 32

    @T.prim_func
    def main(x: T.Tensor((1, K), "float16"), w: T.Tensor((N, K), "float16"), y: T.Tensor((1, N), "float16")):
        with T.Kernel(N // rows, threads=threads) as (bx,):
            x_s = T.alloc_shared((K,), "float16")
            acc = T.alloc_fragment((rows,), "float32")
            part = T.alloc_fragment((rows, split), "float32")
            acc_s = T.alloc_shared((rows,), "float32")
            if not x_global:
                T.copy(x[0, 0:K], x_s)
            T.clear(part)
            loop = T.unroll if unroll else T.serial
            for kk in loop(K // split):
                for i0, i1 in T.Parallel(rows, split):
                    if x_global:
                        part[i0, i1] += T.Cast("float32", x[0, i1 + split * kk]) * T.Cast("float32", w[rows * bx + i0, i1 + split * kk])
                    else:
                        part[i0, i1] += T.Cast("float32", x_s[i1 + split * kk]) * T.Cast("float32", w[rows * bx + i0, i1 + split * kk])
            T.reduce_sum(part, acc, dim=1, clear=True)
            T.copy(acc, acc_s)
            T.copy(acc_s, y[0, rows * bx:rows * bx + rows])

    return main


VARIANTS = {
    "smem-whole t128": (smem_whole, dict()),
    "smem-whole t256": (smem_whole, dict(threads=256)),
    "simt r2 l32": (simt, dict(rows=2, lanes=32)),
    "simt r4 l32": (simt, dict(rows=4, lanes=32)),
    "simt r8 l32": (simt, dict(rows=8, lanes=32)),
    "simt r4 l64": (simt, dict(rows=4, lanes=64)),
    "simt r8 l16": (simt, dict(rows=8, lanes=16)),
    "simt r16 l16": (simt, dict(rows=16, lanes=16)),
    "simt r4 l32 v16": (simt, dict(rows=4, lanes=32, vec=16)),
    "simt r8 l32 v16": (simt, dict(rows=8, lanes=32, vec=16)),
    "emitted r4": (emitted, dict()),
    "emitted r2": (emitted, dict(rows=2)),
    "emitted r4 xg": (emitted, dict(x_global=True)),
    "emitted r2 xg": (emitted, dict(rows=2, x_global=True)),
    "emitted r4 unroll": (emitted, dict(unroll=True)),
    "emitted r2 xg unroll": (emitted, dict(rows=2, x_global=True, unroll=True)),
    "reducer 128x128 s2 t256": (reducer, dict()),
    "reducer 128x128 s3 t256": (reducer, dict(stages=3)),
    "reducer 64x256 s3 t256": (reducer, dict(rows=64, bk=256, stages=3)),
    "reducer 64x128 s4 t128": (reducer, dict(rows=64, stages=4, threads=128)),
    "reducer 32x512 s3 t256": (reducer, dict(rows=32, bk=512, stages=3)),
}


def main() -> None:
    if "--only" in sys.argv:  # --only PREFIX...: just the variants whose names start with a PREFIX
        prefixes = sys.argv[sys.argv.index("--only") + 1:]
        for name in [v for v in VARIANTS if not v.startswith(tuple(prefixes))]:
            del VARIANTS[name]
    if "--lower" in sys.argv:
        from tvm.target import Target

        for name, (make, kw) in VARIANTS.items():
            with Target({"kind": "cuda", "arch": "sm_90a"}):
                tilelang.lower(make(4096, 4096, **kw))
            print("lowered", name, flush=True)
        return
    import torch
    import torch.nn.functional as F

    from cleave_ir import runtime

    torch.manual_seed(0)
    out = {}
    jobs = [(n, k, name) for n, k in SHAPES for name in VARIANTS]

    def build(job):  # type: ignore[no-untyped-def]
        n, k, name = job
        make, kw = VARIANTS[name]
        return tilelang.compile(make(n, k, **kw), out_idx=[2],
                                pass_configs={tilelang.PassConfigKey.TL_ENABLE_FAST_MATH: True})

    kernels = dict(zip(jobs, runtime.parallel_map(build, jobs, 15)))
    for n, k in SHAPES:
        x = torch.randn(1, k, dtype=torch.half, device="cuda")
        w = torch.rand(n, k, dtype=torch.half, device="cuda") - 0.5
        ref = (x.double() @ w.double().T).float()
        gb = n * k * 2 / 1e9

        def rec(name: str, us: float, err: float) -> None:
            out[f"{n}x{k} {name}"] = {"us": us, "TB/s": gb / us * 1e3, "err": err}
            print(f"W[{n},{k}] {name:26s} {us:8.1f} us {gb / us * 1e3:5.2f} TB/s err {err:.1e}", flush=True)

        rec("F.linear", runtime.time_us(lambda: F.linear(x, w), batch=20, iters=10), 0.0)
        for name in VARIANTS:
            kern = kernels[(n, k, name)]
            try:
                if isinstance(kern, Exception):
                    raise kern
                got = kern(x, w)
                err = ((got.float() - ref).abs().max() / ref.abs().max()).item()
                rec(name, runtime.time_us(lambda: kern(x, w), batch=20, iters=10), err)
            except Exception as e:  # noqa: BLE001 - a probe records what failed and goes on
                print(f"W[{n},{k}] {name}: FAILED {type(e).__name__}: {str(e)[:300]}", flush=True)
    dest = os.path.join(os.environ.get("OUT", "/tmp"), "gemv_idioms.json")
    json.dump(out, open(dest, "w"), indent=1)


if __name__ == "__main__":
    main()
