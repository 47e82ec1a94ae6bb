"""GEMM probe: does keeping one WGMMA batch in flight across k-steps close the gap to cuBLAS?

Our GEMM kernel (128x256 tiles, `T.Pipelined` with TileLang's automatic warp specialization) runs 90% tensor
pipe and ~0.92-0.95x cuBLAS (`ncu_rows_2026-12-06s42_H100.md`, `gemm_cluster_2026-12-06s42_H200.md`). Its
lowered consumer loop issues a k-step's WGMMAs, then `warpgroup_wait<0>` before releasing the stage, so the
tensor cores drain at every k-step. CUTLASS's Hopper mainloop waits with one batch still pending
(`wait<1>`) and releases the *previous* stage. TileLang's automatic pipeline cannot express that (it
releases a stage after its last use in program order), so the `ws1_` variants here write the producer /
consumer split by hand: `T.ws` warp groups, `T.alloc_barrier` full/empty barriers, `T.tma_copy`,
`T.wgmma_gemm` + `T.wait_wgmma(1)`, with TileLang's shared-memory sync insertion off
(`tl.disable_thread_storage_sync`: it would put a `__syncthreads` between producer and consumer).
`ws0_` is the same hand-written kernel waiting for 0, to separate the wait from the rest.

    python bench/probes/gemm_inflight.py --lower                    # lower every variant for sm_90a (no GPU)
    bash bench/on_device.sh python bench/probes/gemm_inflight.py    # time against cuBLAS ($OUT/gemm_inflight.json)

Times: medians of 7 interleaved rounds of CUDA-event-timed back-to-back launches; every variant is checked 5
times against float64 before it is timed.
"""
import json, multiprocessing, os, statistics, sys

import tilelang
import tilelang.language as T

from gemm_cluster import ours  # the suite's kernel until this session (its own directory is on sys.path)

NO_SYNC = {"tl.disable_thread_storage_sync": True}
SHAPES = [(4096, 4096, 4096), (4096, 14336, 4096), (2048, 6144, 4096)]


def gemm_ws(M, N, K, bm=128, bn=256, bk=64, stages=3, inflight=1, panel=10, stage_c=True):
    """C = A @ B with a hand-written producer warp group (TMA) and two consumer warp groups (WGMMA);
    `inflight=1` keeps one k-step's WGMMA batch running while the next is issued."""
    nk, S = K // bk, stages

    @T.prim_func
    def f(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float16")):
        with T.Kernel(M // bm, N // bn, threads=384) as (bx, by):
            T.use_swizzle(panel_size=panel)
            A_s = T.alloc_shared((S, bm, bk), "float16")
            B_s = T.alloc_shared((S, bk, bn), "float16")
            C_l = T.alloc_fragment((bm, bn), "float32")
            if stage_c:
                C_s = T.alloc_shared((bm, bn), "float16")
            full = T.alloc_barrier([128] * S)
            empty = T.alloc_barrier([256] * S)
            with T.ws(2):
                T.set_max_nreg(24, 0)
                for ko in range(nk):
                    T.mbarrier_wait_parity(empty[ko % S], ((ko // S) & 1) ^ 1)
                    T.tma_copy(A[bx * bm:(bx + 1) * bm, ko * bk:(ko + 1) * bk], A_s[ko % S, :, :], barrier=full[ko % S])
                    T.tma_copy(B[ko * bk:(ko + 1) * bk, by * bn:(by + 1) * bn], B_s[ko % S, :, :], barrier=full[ko % S])
                    T.mbarrier_arrive(full[ko % S])
            with T.ws(0, 1):
                T.set_max_nreg(240, 1)
                T.clear(C_l)
                for ko in range(nk):
                    T.mbarrier_wait_parity(full[ko % S], (ko // S) & 1)
                    T.wgmma_gemm(A_s[ko % S, :, :], B_s[ko % S, :, :], C_l, policy=T.GemmWarpPolicy.FullRow)
                    if inflight:
                        T.wait_wgmma(1)
                        if ko > 0:
                            T.mbarrier_arrive(empty[(ko + S - 1) % S])
                    else:
                        T.wait_wgmma(0)
                        T.mbarrier_arrive(empty[ko % S])
                T.wait_wgmma(0)
                if stage_c:
                    T.copy(C_l, C_s)
                    T.sync_threads(3, 256)
                    T.copy(C_s, C[bx * bm, by * bn])
                else:
                    T.copy(C_l, C[bx * bm, by * bn])

    return f


def auto(M, N, K, bk=64, stages=3):
    """The same tiles through `T.Pipelined` and TileLang's automatic warp specialization (the control)."""

    @T.prim_func
    def f(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float16")):
        with T.Kernel(M // 128, N // 256, threads=256) as (bx, by):
            T.use_swizzle(panel_size=10)
            Cl = T.alloc_fragment((128, 256), "float32")
            As = T.alloc_shared((128, bk), "float16")
            Bs = T.alloc_shared((bk, 256), "float16")
            Cs = T.alloc_shared((128, 256), "float16")
            T.clear(Cl)
            for k in T.Pipelined(K // bk, num_stages=stages):
                T.copy(A[128 * bx, bk * k], As)
                T.copy(B[bk * k, 256 * by], Bs)
                T.gemm(As, Bs, Cl)
            T.copy(Cl, Cs)
            T.copy(Cs, C[128 * bx, 256 * by])

    return f


VARIANTS = {
    "ours": None,
    "auto_k64_s3": "auto",
    "ws0_k64_s3": dict(inflight=0),
    "ws1_k64_s3": dict(),
    "ws0_k64_s2": dict(inflight=0, stages=2),
    "ws0_k64_s4_direct": dict(inflight=0, stages=4, stage_c=False),
    "ws0_256x128_k64_s3": dict(inflight=0, bm=256, bn=128),
    "ws0_k64_s3_panel4": dict(inflight=0, panel=4),
}


def build(name, M, N, K):
    kw = VARIANTS[name]
    return ours(M, N, K) if kw is None else auto(M, N, K) if kw == "auto" else gemm_ws(M, N, K, **kw)


def configs(name):
    return NO_SYNC if isinstance(VARIANTS[name], dict) else {}


def lower_all(M=4096, N=4096, K=4096):
    import tvm
    from tvm.target import Target

    for name in VARIANTS:
        try:
            with Target({"kind": "cuda", "arch": "sm_90a"}), tvm.transform.PassContext(opt_level=3, config=configs(name)):
                src = tilelang.lower(build(name, M, N, K)).kernel_source
            print(f"{name}: lowered, {src.count('__syncthreads')} __syncthreads, "
                  f"wait<1>: {'wait_wgmma<1>' in src}")
        except Exception as ex:  # noqa: BLE001 - a probe reports every variant's failure and goes on
            print(f"{name}: FAILED {type(ex).__name__}: {str(ex)[-400:]}")


def _compile(args):
    name, M, N, K = args
    try:
        tilelang.compile(build(name, M, N, K), target="cuda", pass_configs=configs(name))
        return name, None
    except Exception as ex:  # noqa: BLE001
        return name, f"{type(ex).__name__}: {str(ex)[-300:]}"


def run_shape(M, N, K, rounds=7, iters=30):
    import torch
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(min(len(VARIANTS), 15), mp_context=multiprocessing.get_context("spawn")) as ex:
        failed = {n: e for n, e in ex.map(_compile, [(n, M, N, K) for n in VARIANTS]) if e}
    torch.manual_seed(0)
    a = torch.randn(M, K, device="cuda", dtype=torch.float16)
    b = torch.rand(K, N, device="cuda", dtype=torch.float16) / 16 - 1 / 32
    c = torch.empty(M, N, device="cuda", dtype=torch.float16)
    ref = a.double() @ b.double()
    fns = {"cublas": lambda: torch.matmul(a, b, out=c)}
    res = {"shape": [M, N, K], "failed": failed, "err": {}, "us": {}, "rounds": []}
    for name in VARIANTS:
        if name in failed:
            print(f"{name}: compile FAILED {failed[name]}", flush=True)
            continue
        k = tilelang.compile(build(name, M, N, K), target="cuda", pass_configs=configs(name))
        err = 0.0
        for _ in range(5):  # a race shows in some launches only
            c.fill_(float("nan"))
            k(a, b, c)
            torch.cuda.synchronize()
            err = max(err, ((c.double() - ref).abs().max() / ref.abs().max()).nan_to_num(1.0).item())
        res["err"][name] = err
        if err > 1e-2:
            print(f"{name}: WRONG (rel. error {err:.2e})", flush=True)
            continue
        fns[name] = (lambda kk: (lambda: kk(a, b, c)))(k)
    times = {n: [] for n in fns}
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for rnd in range(rounds):
        for n, fn in fns.items():
            for _ in range(3):
                fn()
            torch.cuda.synchronize()
            s.record()
            for _ in range(iters):
                fn()
            e.record()
            torch.cuda.synchronize()
            times[n].append(s.elapsed_time(e) * 1000 / iters)
        res["rounds"].append({n: round(t[-1], 1) for n, t in times.items()})
    flops = 2 * M * N * K
    for n, t in sorted(times.items(), key=lambda x: statistics.median(x[1])):
        us = statistics.median(t)
        res["us"][n] = us
        print(f"{M}x{N}x{K} {n:24s} {us:8.1f} us {flops / us / 1e6:6.0f} TF/s  cublas/this "
              f"{statistics.median(times['cublas']) / us:.3f}  err {res['err'].get(n, 0):.1e}", flush=True)
    return res


def run():
    import torch

    out = {"device": torch.cuda.get_device_name(), "shapes": [run_shape(*s) for s in SHAPES]}
    json.dump(out, open(os.path.join(os.environ.get("OUT", "/tmp"), "gemm_inflight.json"), "w"), indent=1)


if __name__ == "__main__":
    lower_all() if "--lower" in sys.argv else run()
