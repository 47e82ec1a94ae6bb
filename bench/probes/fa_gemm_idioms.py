"""Probe (GPU): which FlashAttention / GEMM lowering idioms pay on the H200 with TileLang 0.1.15.

Hand-written TileLang kernels in the structure cleave-lower-tilelang emits, each with one idiom
toggled (pipelining stages, nvcc fast math, exp2 with the scale folded into one FMA, grid order, the
output staged through shared memory, manual pipeline order/stage, GEMM tiles), timed beside cuDNN /
FlashAttention SDPA and cuBLAS, each checked against a float64 reference:

    bash bench/on_device.sh python bench/probes/fa_gemm_idioms.py fa gemm     # writes $OUT/idioms.json

Results: bench/results/lowering_probes_2026-12-01_H200.md.
"""
import sys, time, statistics, json, os
import torch, tilelang
import tilelang.language as T
import torch.nn.functional as F

def bench(fn, iters=30):
    for _ in range(5): fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(iters):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); torch.cuda.synchronize(); ts.append(a.elapsed_time(b) * 1e3)
    return statistics.median(ts)

def fa(B=1, H=32, S=4096, D=128, bm=128, bn=128, stages=3, threads=256, fast=False, swap=False, fold=False, fa3=0, oshared=False, nostages=False):
    sc = D ** -0.5
    L2E = 1.4426950408889634
    nq = S // bm
    grid = (nq, H * B) if swap else (H * B, nq)
    pc = {tilelang.PassConfigKey.TL_ENABLE_FAST_MATH: True} if fast else {}
    kw = {}
    if fa3 == 1:  # the removed wgmma_pipelined example's groups, one entry per statement
        kw = dict(order=[-1, 0, 0] + [3] * 8 + [1, -1, 2], stage=[-1, 0, 0] + [1] * 8 + [1, -1, 1])
    elif fa3 == 3:  # unique orders (no num_stages): QK(t); rescale, PV, softmax of t-1
        kw = dict(order=[0, 1, 2] + list(range(6, 14)) + [3, 4, 5], stage=[0, 0, 0] + [1] * 8 + [1, 1, 1])
    elif fa3 == 2:  # QK(t) issued before softmax/PV of t-1
        kw = dict(order=[0, 1, 2] + [4] * 8 + [5, 3, 6], stage=[0, 0, 0] + [1] * 8 + [1, 0, 1])
    if fa3 and nostages:
        stages = None
    @T.prim_func
    def main(q: T.Tensor((B, H, S, D), "float16"), k: T.Tensor((B, H, S, D), "float16"), v: T.Tensor((B, H, S, D), "float16"), o: T.Tensor((B, H, S, D), "float16")):
        with T.Kernel(grid[0], grid[1], threads=threads) as (bx, by):
            qb = bx if swap else by
            hh = by if swap else bx
            q_s = T.alloc_shared((bm, D), "float16")
            k_s = T.alloc_shared((bn, D), "float16")
            v_s = T.alloc_shared((bn, D), "float16")
            o_s = T.alloc_shared((bm, D), "float16")
            acc_o = T.alloc_fragment((bm, D), "float32")
            acc = T.alloc_fragment((bm, bn), "float32")
            acc_h = T.alloc_fragment((bm, bn), "float16")
            m = T.alloc_fragment((bm,), "float32")
            mp = T.alloc_fragment((bm,), "float32")
            al = T.alloc_fragment((bm,), "float32")
            ssum = T.alloc_fragment((bm,), "float32")
            l = T.alloc_fragment((bm,), "float32")
            T.copy(q[hh // H, hh % H, qb * bm:(qb + 1) * bm, 0:D], q_s)
            T.clear(acc_o); T.clear(l); T.fill(m, -T.infinity("float32"))
            for r in (T.Pipelined(S // bn, **kw) if stages is None else T.Pipelined(S // bn, num_stages=stages, **kw)):
                T.copy(k[hh // H, hh % H, r * bn:(r + 1) * bn, 0:D], k_s)
                T.clear(acc)
                T.gemm(q_s, k_s, acc, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
                T.copy(m, mp)
                T.reduce_max(acc, m, dim=1, clear=False)
                for i in T.Parallel(bm):
                    m[i] = T.max(m[i], mp[i])
                for i in T.Parallel(bm):
                    al[i] = T.exp2(mp[i] * (sc * L2E) - m[i] * (sc * L2E))
                if fold:
                    for i, j in T.Parallel(bm, bn):
                        acc[i, j] = T.exp2(acc[i, j] * (sc * L2E) - m[i] * (sc * L2E))
                else:
                    for i, j in T.Parallel(bm, bn):
                        acc[i, j] = acc[i, j] * sc
                    for i, j in T.Parallel(bm, bn):
                        acc[i, j] = acc[i, j] - m[i] * sc
                    for i, j in T.Parallel(bm, bn):
                        acc[i, j] = T.exp2(acc[i, j] * L2E)
                T.reduce_sum(acc, ssum, dim=1)
                for i in T.Parallel(bm):
                    l[i] = l[i] * al[i] + ssum[i]
                T.copy(acc, acc_h)
                for i, j in T.Parallel(bm, D):
                    acc_o[i, j] *= al[i]
                T.copy(v[hh // H, hh % H, r * bn:(r + 1) * bn, 0:D], v_s)
                T.gemm(acc_h, v_s, acc_o, policy=T.GemmWarpPolicy.FullRow)
            for i, j in T.Parallel(bm, D):
                acc_o[i, j] /= l[i]
            if oshared:
                T.copy(acc_o, o_s)
                T.copy(o_s, o[hh // H, hh % H, qb * bm:(qb + 1) * bm, 0:D])
            else:
                T.copy(acc_o, o[hh // H, hh % H, qb * bm:(qb + 1) * bm, 0:D])
    return tilelang.compile(main, out_idx=[3], pass_configs=pc)

def gemm(M=4096, N=4096, K=4096, bm=128, bn=256, bk=64, stages=3, threads=256, swz=10, cshared=False, fast=False):
    @T.prim_func
    def main(a: T.Tensor((M, K), "float16"), b: T.Tensor((K, N), "float16"), c: T.Tensor((M, N), "float16")):
        with T.Kernel(N // bn, M // bm, threads=threads) as (bx, by):
            a_s = T.alloc_shared((bm, bk), "float16")
            b_s = T.alloc_shared((bk, bn), "float16")
            c_s = T.alloc_shared((bm, bn), "float16")
            acc = T.alloc_fragment((bm, bn), "float32")
            if swz:
                T.use_swizzle(panel_size=swz)
            T.clear(acc)
            for r in T.Pipelined(K // bk, num_stages=stages):
                T.copy(a[by * bm:(by + 1) * bm, r * bk:(r + 1) * bk], a_s)
                T.copy(b[r * bk:(r + 1) * bk, bx * bn:(bx + 1) * bn], b_s)
                T.gemm(a_s, b_s, acc)
            if cshared:
                T.copy(acc, c_s)
                T.copy(c_s, c[by * bm:(by + 1) * bm, bx * bn:(bx + 1) * bn])
            else:
                T.copy(acc, c[by * bm:(by + 1) * bm, bx * bn:(bx + 1) * bn])
    return tilelang.compile(main, out_idx=[2])

out = {}
def rec(name, us, flops, err):
    out[name] = (us, flops / us * 1e-6, err)
    print(f"{name:50s} {us:9.1f} us {flops/us*1e-6:7.1f} TF/s err {err:.1e}", flush=True)

torch.manual_seed(0)
which = sys.argv[1:] or ["fa", "gemm"]
if "fa" in which:
    for (B, H, S, D) in [(1, 32, 4096, 128), (1, 32, 8192, 64)]:
        q, k, v = (torch.randn(B, H, S, D, device="cuda", dtype=torch.float16) for _ in range(3))
        ref = F.scaled_dot_product_attention(q.double(), k.double(), v.double()).float()
        flops = 4 * B * H * S * S * D
        from torch.nn.attention import sdpa_kernel, SDPBackend
        for be in (SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION):
            with sdpa_kernel(be):
                rec(f"S{S}D{D} sdpa {be.name}", bench(lambda: F.scaled_dot_product_attention(q, k, v)), flops, 0.0)
        variants = {
            "ours-like s3": dict(),
            "s2": dict(stages=2),
            "fast": dict(fast=True),
            "swap": dict(swap=True),
            "fold": dict(fold=True),
            "s2 fast fold": dict(stages=2, fast=True, fold=True),
            "s2 fast fold swap": dict(stages=2, fast=True, fold=True, swap=True),
            "s2 fast fold swap oshared": dict(stages=2, fast=True, fold=True, swap=True, oshared=True),
            "s2 fast fold swap fa3=1": dict(stages=2, fast=True, fold=True, swap=True, fa3=1),
            "s2 fast fold swap fa3=2": dict(stages=2, fast=True, fold=True, swap=True, fa3=2),
            "fast fold swap fa3=3 nostages": dict(fast=True, fold=True, swap=True, fa3=3, nostages=True),
            "fast fold swap fa3=2 nostages": dict(fast=True, fold=True, swap=True, fa3=2, nostages=True),
            "s3 fast fold swap": dict(stages=3, fast=True, fold=True, swap=True),
            "s1 fast fold swap": dict(stages=1, fast=True, fold=True, swap=True),
        }
        for name, kw in variants.items():
            try:
                kern = fa(B, H, S, D, **kw)
                got = kern(q, k, v)
                err = ((got.float() - ref).abs().max() / ref.abs().max()).item()
                rec(f"S{S}D{D} {name}", bench(lambda: kern(q, k, v)), flops, err)
            except Exception as e:
                print(f"S{S}D{D} {name}: FAILED {type(e).__name__}: {str(e)[:300]}", flush=True)
if "gemm" in which:
    M = N = K = 4096
    a = torch.randn(M, K, device="cuda", dtype=torch.float16); b = torch.randn(K, N, device="cuda", dtype=torch.float16)
    ref = (a.double() @ b.double()).float()
    flops = 2 * M * N * K
    rec("gemm cublas", bench(lambda: a @ b), flops, 0.0)
    variants = {
        "128x256x128 s2 (ours)": dict(bk=128, stages=2),
        "128x256x64 s3": dict(),
        "128x256x64 s4": dict(stages=4),
        "128x256x64 s3 cshared": dict(cshared=True),
        "128x256x64 s4 cshared": dict(stages=4, cshared=True),
        "256x128x64 s3 cshared": dict(bm=256, bn=128, cshared=True),
        "128x128x64 s4 t128 cshared": dict(bn=128, stages=4, threads=128, cshared=True),
        "128x256x64 s3 noswz": dict(swz=0, cshared=True),
    }
    for name, kw in variants.items():
        try:
            kern = gemm(**kw)
            got = kern(a, b)
            err = ((got.float() - ref).abs().max() / ref.abs().max()).item()
            rec(f"gemm {name}", bench(lambda: kern(a, b)), flops, err)
        except Exception as e:
            print(f"gemm {name}: FAILED {type(e).__name__}: {str(e)[:300]}", flush=True)
os.makedirs(os.environ.get("OUT", "/tmp"), exist_ok=True)
json.dump(out, open(os.path.join(os.environ.get("OUT", "/tmp"), "idioms.json"), "w"), indent=1)
