"""GEMM structure probe on the GPU: hand-written TileLang GEMMs against cuBLAS, interleaved in one process.

Non-persistent against persistent (`T.Persistent`) grids, K tile and pipelining stages, and the tilings of a
T=128-row GEMM (rmsnorm_matmul T128's). Run on the GPU machine:
    bash bench/on_device.sh python bench/probes/gemm.py   (writes $OUT/gemm_probe.json)
Times are medians of 5 interleaved rounds of CUDA-event-timed back-to-back launches; the T=128 case
rotates 4 copies of its inputs so that its 48 MiB weight is not read from the L2.
"""
import json, statistics, os
import torch, tilelang, tilelang.language as T

SMS = torch.cuda.get_device_properties(0).multi_processor_count

def gemm(M, N, K, bm, bn, bk, stages, threads=256, persistent=False, swizzle=True, split=1):
    Ks = K // split
    if split > 1:
        @T.prim_func
        def f(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((split, M, N), "float32")):
            with T.Kernel(T.ceildiv(M, bm), split, T.ceildiv(N, bn), threads=threads) as (bx, bs, by):
                As = T.alloc_shared((bm, bk), "float16"); Bs = T.alloc_shared((bk, bn), "float16")
                Cl = T.alloc_fragment((bm, bn), "float32"); T.clear(Cl)
                for k in T.Pipelined(Ks // bk, num_stages=stages):
                    T.copy(A[bx * bm, bs * Ks + k * bk], As); T.copy(B[bs * Ks + k * bk, by * bn], Bs)
                    T.gemm(As, Bs, Cl)
                T.copy(Cl, C[bs, bx * bm, by * bn])
        return f
    if not persistent:
        @T.prim_func
        def f(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float16")):
            with T.Kernel(T.ceildiv(M, bm), T.ceildiv(N, bn), threads=threads) as (bx, by):
                if swizzle:
                    T.use_swizzle(panel_size=10)
                As = T.alloc_shared((bm, bk), "float16"); Bs = T.alloc_shared((bk, bn), "float16")
                Cl = T.alloc_fragment((bm, bn), "float32"); Cs = T.alloc_shared((bm, bn), "float16")
                T.clear(Cl)
                for k in T.Pipelined(T.ceildiv(K, bk), num_stages=stages):
                    T.copy(A[bx * bm, k * bk], As); T.copy(B[k * bk, by * bn], Bs)
                    T.gemm(As, Bs, Cl)
                T.copy(Cl, Cs); T.copy(Cs, C[bx * bm, by * bn])
        return f
    @T.prim_func
    def f(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float16")):
        with T.Kernel(SMS, threads=threads) as (bid):
            As = T.alloc_shared((bm, bk), "float16"); Bs = T.alloc_shared((bk, bn), "float16")
            Cl = T.alloc_fragment((bm, bn), "float32"); Cs = T.alloc_shared((bm, bn), "float16")
            for bx, by in T.Persistent([T.ceildiv(M, bm), T.ceildiv(N, bn)], SMS, bid):
                T.clear(Cl)
                for k in T.Pipelined(T.ceildiv(K, bk), num_stages=stages):
                    T.copy(A[bx * bm, k * bk], As); T.copy(B[k * bk, by * bn], Bs)
                    T.gemm(As, Bs, Cl)
                T.copy(Cl, Cs); T.copy(Cs, C[bx * bm, by * bn])
    return f

def bench(fns, copies, iters, rounds=5):
    times = {n: [] for n in fns}
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for r in range(rounds):
        for n, fn in fns.items():
            for i in range(3): fn(*copies[i % len(copies)])
            torch.cuda.synchronize(); s.record()
            for i in range(iters): fn(*copies[i % len(copies)])
            e.record(); torch.cuda.synchronize()
            times[n].append(s.elapsed_time(e) * 1000 / iters)
    return {n: statistics.median(t) for n, t in times.items()}

def case(M, N, K, variants, ncopies, iters, res):
    copies = []
    for i in range(ncopies):
        a = torch.randn(M, K, device="cuda", dtype=torch.float16); b = torch.randn(K, N, device="cuda", dtype=torch.float16) / 16
        copies.append((a, b, torch.empty(M, N, device="cuda", dtype=torch.float16)))
    ref = (copies[0][0].float() @ copies[0][1].float())
    fns = {"cublas": lambda a, b, c: torch.matmul(a, b, out=c)}
    from concurrent.futures import ThreadPoolExecutor
    def comp(f):
        try:
            return tilelang.compile(f, target="cuda")
        except Exception as ex:
            return ex
    with ThreadPoolExecutor(12) as ex:
        compiled = dict(zip(variants, ex.map(comp, [gemm(M, N, K, **kw) for kw in variants.values()])))
    for name, kw in variants.items():
        try:
            split = kw.get("split", 1)
            k = compiled[name]
            if isinstance(k, Exception): raise k
            if split > 1:
                parts = [torch.empty(split, M, N, device="cuda", dtype=torch.float32) for _ in range(ncopies)]
                k(copies[0][0], copies[0][1], parts[0]); out = parts[0].sum(0)
                fns[name] = (lambda kk, pl: (lambda a, b, c: kk(a, b, pl[0])))(k, parts)  # f32 partials, no combine
            else:
                k(*copies[0]); out = copies[0][2].float()
            err = ((out - ref).abs().max() / ref.abs().max()).item()
            res.setdefault("err", {})[f"{M}x{N}x{K}/{name}"] = err
            if err > 1e-2: print("BAD", name, err); fns.pop(name, None)
            elif split == 1: fns[name] = (lambda kk: (lambda a, b, c: kk(a, b, c)))(k)
        except Exception as ex:
            print("FAIL", name, repr(ex)[:300]); fns.pop(name, None)
    t = bench(fns, copies, iters)
    flops = 2 * M * N * K
    for n, us in sorted(t.items(), key=lambda x: x[1]):
        print(f"{M}x{N}x{K} {n:32s} {us:9.2f} us {flops / us / 1e6:7.1f} TF/s  cublas/ours {t['cublas'] / us:.3f}")
    res[f"{M}x{N}x{K}"] = t

res = {}
big = {
    "ours_128x256x128_s2": dict(bm=128, bn=256, bk=128, stages=2),
    "np_128x256x64_s3": dict(bm=128, bn=256, bk=64, stages=3),
    "np_128x256x64_s4": dict(bm=128, bn=256, bk=64, stages=4),
    "p_128x256x64_s3": dict(bm=128, bn=256, bk=64, stages=3, persistent=True),
    "p_128x256x64_s4": dict(bm=128, bn=256, bk=64, stages=4, persistent=True),
    "p_128x256x128_s2": dict(bm=128, bn=256, bk=128, stages=2, persistent=True),
    "np_256x128x64_s3": dict(bm=256, bn=128, bk=64, stages=3),
}
case(4096, 4096, 4096, big, 1, 30, res)
case(4096, 6144, 4096, big, 1, 30, res)
case(4096, 14336, 4096, {k: v for k, v in big.items() if k in ("ours_128x256x128_s2", "np_128x256x64_s3", "p_128x256x64_s3", "p_128x256x64_s4")}, 1, 10, res)
small = {
    "ours_64x128x128_s3_t128": dict(bm=64, bn=128, bk=128, stages=3, threads=128, swizzle=False),
    "64x128x128_s4_t128": dict(bm=64, bn=128, bk=128, stages=4, threads=128, swizzle=False),
    "128x48x128_s4_t128": dict(bm=128, bn=48, bk=128, stages=4, threads=128, swizzle=False),
    "128x48x128_s4_t256": dict(bm=128, bn=48, bk=128, stages=4, threads=256, swizzle=False),
    "64x96x128_s4_t128": dict(bm=64, bn=96, bk=128, stages=4, threads=128, swizzle=False),
    "128x64x128_s4_t128": dict(bm=128, bn=64, bk=128, stages=4, threads=128, swizzle=False),
    "128x96x128_s4_split2_t128": dict(bm=128, bn=96, bk=128, stages=4, threads=128, split=2),
    "128x192x128_s3_split4_t256": dict(bm=128, bn=192, bk=128, stages=3, threads=256, split=4),
    "128x128x64_s6_split3ish": dict(bm=128, bn=128, bk=64, stages=6, threads=256, swizzle=False),
}
case(128, 6144, 4096, small, 4, 100, res)
os.makedirs(os.environ.get("OUT", "/tmp"), exist_ok=True)
json.dump(res, open(os.path.join(os.environ.get("OUT", "/tmp"), "gemm_probe.json"), "w"), indent=1)
