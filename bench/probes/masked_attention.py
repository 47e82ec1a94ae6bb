"""Probe (GPU): FlashAttention with a mask input (Hugging Face's eager attention: `select(mask, s, mask - 1e4)`),
the kernel cleave emits for examples/models/llama3_causal_attention.mlir at H32 S2048 D128, against variants
of it made by editing its text, each checked against float64 and timed:

    python bench/gpu_suite.py prepare --models --rows llama3_causal_attention --out /tmp/m   # CPU
    cp /tmp/m/kernels/llama3_causal_attention__full.py attn.py
    bash bench/on_device.sh python bench/probes/masked_attention.py attn.py        # or --lower (CPU): CUDA only

Variants: as emitted; the mask tile copied before the first GEMM; the mask tile copied by threads (no TMA);
no warp specialization; no mask at all (the same kernel unmasked: what the mask costs).
"""
import importlib.util, re, statistics, sys

import tilelang

NAME = "llama3_causal_attention_c1_k0"


def variants(src: str) -> dict[str, tuple[str, dict]]:
    """Each variant: the module text with kernel NAME edited, and its pass configs."""
    pc = {"tl.enable_fast_math": True}
    start = src.index(f"def {NAME}(")
    end = src.index("\n\n\n", start)
    body = src[start:end]
    mask_copy = re.search(r"\n( +)T\.copy\(mask\[[^\n]*\n", body).group(0)
    k_copy = re.search(r"\n( +)T\.copy\(k\[[^\n]*\n", body).group(0)
    early = body.replace(mask_copy, "\n").replace(k_copy, k_copy + mask_copy.lstrip("\n"))
    nomask = re.sub(r"T\.if_then_else\(mask_1\[i0, i1\] != .*?, (acc\[i0, i1\] \* [0-9.e-]+), T\.Cast[^\n]*\n", r"\1\n", body).replace(mask_copy, "\n")
    notma = body.replace(mask_copy, mask_copy.replace("mask_1)", 'mask_1, annotations={"disable_tma": True})'))
    wide = body
    for a, b in (("64*r0:64*r0 + 64", "128*r0:128*r0 + 128"), ("(64, 128)", "(128, 128)"), ("(128, 64)", "(128, 128)"),
                 ("T.Pipelined(32,", "T.Pipelined(16,")):
        wide = wide.replace(a, b)
    put = lambda b: src[:start] + b + src[end:]  # noqa: E731
    return {
        "as emitted": (src, pc),
        "mask copied first": (put(early), pc),
        "mask by threads": (put(notma), pc),
        "no warp specialization": (src, {**pc, "tl.disable_warp_specialized": True}),
        "128-key tiles": (put(wide), pc),
        "128-key tiles, 3 stages": (put(wide.replace("T.Pipelined(16, num_stages=2)", "T.Pipelined(16, num_stages=3)")), pc),
        "no mask (reference)": (put(nomask), pc),
    }


def load(src: str, tag: str):
    path = f"/tmp/masked_{abs(hash(tag))}.py"
    open(path, "w").write(src)
    spec = importlib.util.spec_from_file_location(f"m{abs(hash(tag))}", path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m.prim_func(NAME) if hasattr(m, "prim_func") else getattr(m, NAME)


def main() -> None:
    src = open(sys.argv[-1]).read()
    if "--lower" in sys.argv:
        from tilelang import tvm
        for name, (text, pc) in variants(src).items():
            with tvm.target.Target({"kind": "cuda", "arch": "sm_90a"}), tvm.transform.PassContext(opt_level=3, config=pc):
                cuda = tilelang.lower(load(text, name))
            code = str(getattr(cuda, "kernel_source", cuda))
            print(f"{name}: tma_load {code.count('tma_load')}, cp.async {code.count('cp_async')}, lines {code.count(chr(10))}")
        return
    import torch
    import torch.nn.functional as F

    B, H, S, D = 1, 32, 2048, 128
    g = torch.Generator(device="cuda").manual_seed(0)
    q, k, v = (torch.randn(B, H, S, D, device="cuda", dtype=torch.float16, generator=g) for _ in range(3))
    keep = torch.ones(S, S, device="cuda", dtype=torch.bool).tril()
    mask = keep.to(torch.float16).view(1, 1, S, S).contiguous()
    qd, kd, vd = q.double(), k.double(), v.double()
    s = (qd @ kd.transpose(-1, -2)) * D ** -0.5
    ref = torch.softmax(torch.where(keep, s, s.new_tensor(-1e4) - 1 + 1), -1) @ vd
    ref_open = torch.softmax(s, -1) @ vd

    def bench(fn, iters=30) -> float:
        for _ in range(5):
            fn()
        torch.cuda.synchronize()
        ts = []
        for _ in range(iters):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record(); fn(); b.record(); torch.cuda.synchronize()
            ts.append(a.elapsed_time(b) * 1e3)
        return statistics.median(ts)

    flops = 4 * B * H * S * S * D
    for name, (text, pc) in variants(src).items():
        try:
            kern = tilelang.compile(load(text, name), out_idx=[4], pass_configs=pc)
            out = kern(q, k, v, mask)
            want = ref_open if "no mask" in name else ref
            err = ((out.double() - want).abs().max() / want.abs().max()).item()
            us = bench(lambda: kern(q, k, v, mask))
            print(f"{name:26s} {us:8.1f} us {flops / us / 1e6:6.0f} TF/s  err {err:.1e}", flush=True)
        except Exception as e:  # a variant that fails to compile is reported, not fatal
            print(f"{name:26s} FAILED {str(e).splitlines()[0][:200]}", flush=True)
    bmask = keep.view(1, 1, S, S)
    for name, fn in (
        ("sdpa bool mask (default)", lambda: F.scaled_dot_product_attention(q, k, v, attn_mask=bmask)),
        ("sdpa is_causal (default)", lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True)),
        ("sdpa no mask (default)", lambda: F.scaled_dot_product_attention(q, k, v)),
    ):
        print(f"{name:26s} {bench(fn):8.1f} us", flush=True)


if __name__ == "__main__":
    main()
