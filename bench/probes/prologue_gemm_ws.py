"""Probe (GPU): the GEMM kernel of rmsnorm_matmul's per-matmul cut (x tile * row scale -> T.gemm in
the K loop), compiled as emitted and without warp specialization / TMA, four runs each against float64.

    python bench/gpu_suite.py prepare --out /tmp/sp --rows 'rmsnorm_matmul_t(16|1024)$'   # CPU
    cp /tmp/sp/kernels/rmsnorm_matmul_t16__full.py rm16.py; cp .../t1024__full.py rm1024.py
    bash bench/on_device.sh python bench/probes/prologue_gemm_ws.py

(run from the folder holding rm16.py and rm1024.py, emitted before 58d0097, which now sets
`tl.disable_warp_specialized` for such kernels itself). Results: bench/results/lowering_probes_2026-12-01_H200.md.
"""
import sys, importlib.util, torch, tilelang, re
def load(path, patch=None):
    src = open(path).read()
    if patch: src = patch(src)
    p = path + ".tmp.py"; open(p, "w").write(src)
    spec = importlib.util.spec_from_file_location("m" + str(abs(hash(p + str(patch)))), p); m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m); return m
def notma(src):
    return re.sub(r"(T\.copy\(x\[[^\n]*?, x_1)\)", r'\1, annotations={"disable_tma": True})', src)
for path, T in (("rm16.py", 16), ("rm1024.py", 1024)):
    torch.manual_seed(0)
    x = torch.randn(T, 4096, device="cuda", dtype=torch.float16)
    w = (torch.randn(4096, 6144, device="cuda", dtype=torch.float16) / 64)
    xd = x.double(); rs_ref = torch.rsqrt((xd * xd).mean(1, keepdim=True)); out_ref = (xd * rs_ref) @ w.double()
    for name, patch, pc in (("as emitted", None, {"tl.enable_fast_math": True}), ("no WS", None, {"tl.enable_fast_math": True, "tl.disable_warp_specialized": True}), ("x no TMA", notma, {"tl.enable_fast_math": True}), ("no TMA lower", None, {"tl.enable_fast_math": True, "tl.disable_tma_lower": True})):
        try:
            m = load(path, patch)
            k = tilelang.compile(m.rmsnorm_matmul_mm_p1_k0, out_idx=[3], pass_configs=pc)
            errs = []
            for rep in range(4):
                o = k(rs_ref.half(), x, w); torch.cuda.synchronize()
                errs.append(((o.double() - out_ref).abs().max() / out_ref.abs().max()).item())
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            for _ in range(3): k(rs_ref.half(), x, w)
            a.record()
            for _ in range(20): k(rs_ref.half(), x, w)
            b.record(); torch.cuda.synchronize()
            print(f"T{T} {name:14s} errs {' '.join(f'{e:.1e}' for e in errs)}  {a.elapsed_time(b)/20*1e3:.1f} us", flush=True)
        except Exception as e:
            print(f"T{T} {name}: FAILED {str(e)[:200]}", flush=True)
