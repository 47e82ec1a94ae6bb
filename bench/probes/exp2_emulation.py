"""Probe (GPU): does computing part of FlashAttention's exp2 on the FMA pipe speed up the softmax?

At head dim 64 the per-step softmax (128 x 128 exp2 on the SFU, 16 a clock per SM) takes as long as
the step's two GEMMs on the tensor cores; at 128 half as long. FlashAttention-4's answer on Blackwell:
evaluate some of the exponentials as a polynomial on the FMA pipe,
2^x = 2^j * p(f) with j = round(x), f = x - j in [-0.5, 0.5] and p a degree-3 minimax polynomial
(relative error 1.0e-4, under fp16's half ulp), 2^j added into p's exponent bits. x is clamped at
-127, where the result is exactly 0 (so a masked -inf still gives 0).

Variants text-edit the pipeline's one-kernel attention (`mha_c1_k0`): `emu C` computes columns
< C of every 128-wide score tile by the polynomial (C / 128 of the exponentials), the rest by
`T.exp2`. Each is checked against float64 SDPA and timed (median of 30 calls after 5), interleaved
over 3 rounds, beside cuDNN SDPA.

    bash bench/on_device.sh bash -c 'cd /tmp && python $OLDPWD/bench/probes/exp2_emulation.py'   # $OUT/exp2_emulation.json
    python bench/probes/exp2_emulation.py --cuda ROW C    # CPU: the variant's CUDA source (sm_90a)
"""

from __future__ import annotations

import json
import os
import re
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fa_order import bench, kernel_text, load, source  # noqa: E402

ROWS = ("mha_b1_h32_s8192_d64", "mha_b1_h32_s4096_d128", "mha_b4_h32_s2048_d128")
# p(f) = 1 + f (C1 + f (C2 + f C3)) ~ 2^f on [-0.5, 0.5] (Lawson's minimax, rel. error 1.01e-4 in f32)
C1, C2, C3 = 0.693282961845398, 0.24221113324165344, 0.055008742958307266
MAGIC = 12582912.0  # 1.5 * 2^23: x + MAGIC rounds x to an integer held in the low mantissa bits


def emulated(arg: str) -> str:
    """TIR text of 2^arg on the FMA pipe (arg is evaluated once, through T.max)."""
    x = f"T.max({arg}, T.float32(-127.0))"
    t = f"({x} + T.float32({MAGIC!r}))"
    # the integer as a float; reinterpret keeps TVM's simplifier from folding (x + M) - M back to x
    j = f"(T.reinterpret(\"float32\", T.reinterpret(\"uint32\", {t})) - T.float32({MAGIC!r}))"
    f = f"({x} - {j})"
    p = f"(T.float32(1.0) + {f} * (T.float32({C1!r}) + {f} * (T.float32({C2!r}) + {f} * T.float32({C3!r}))))"
    return f"T.reinterpret(\"float32\", T.reinterpret(\"uint32\", {p}) + T.shift_left(T.reinterpret(\"uint32\", {t}), T.uint32(23)))"


def emulate(text: str, cols: int) -> str:
    """Columns < cols of the exp2 loop over the score tile by the polynomial."""
    m = re.search(r"( +)acc\[i0, i1\] = T\.exp2\((.+)\)\n", text)
    assert m, "the score tile's exp2 was not found"
    ind, arg = m.group(1), m.group(2)
    new = f"{ind}acc[i0, i1] = T.if_then_else(i1 < {cols}, {emulated(arg)}, T.exp2({arg}))\n"
    return text[: m.start()] + new + text[m.end() :]


def cuda(row: str, cols: int) -> str:
    import tilelang
    from tilelang import tvm

    text = emulate(kernel_text(source(row)), cols)
    with tvm.target.Target({"kind": "cuda", "arch": "sm_90a"}), tvm.transform.PassContext(opt_level=3, config={"tl.enable_fast_math": True}):
        return tilelang.lower(load(text, f"{row}_{cols}")).kernel_source


def main() -> None:
    if sys.argv[1:2] == ["--cuda"]:
        print(cuda(sys.argv[2], int(sys.argv[3])))
        return
    import tilelang
    import torch
    import torch.nn.functional as F

    out: dict[str, dict[str, object]] = {}
    for row in ROWS:
        text = kernel_text(source(row))
        variants = {"as emitted": text, **{f"emu {c}": emulate(text, c) for c in (16, 24, 32, 48)}}
        shape = tuple(int(x) for x in re.search(r"q: T\.\w+\(\(([0-9, ]+)\)", text).group(1).split(","))
        q, k, v = (torch.randn(shape, device="cuda", dtype=torch.float16) for _ in range(3))
        ref = F.scaled_dot_product_attention(q.double(), k.double(), v.double())
        flops = 4 * shape[0] * shape[1] * shape[2] * shape[2] * shape[3]
        calls = {}
        for name, t in variants.items():
            try:
                kern = tilelang.compile(load(t, f"{row}_{len(calls)}"), out_idx=[3], pass_configs={tilelang.PassConfigKey.TL_ENABLE_FAST_MATH: True})
                res = kern(q, k, v)
                out[f"{row} {name}"] = {"err": ((res.double() - ref).norm() / ref.norm()).item()}
                calls[name] = lambda kern=kern: kern(q, k, v)
            except Exception as e:  # a variant that does not build is recorded
                out[f"{row} {name}"] = {"error": str(e).splitlines()[0][:200]}
            print(f"{row} {name}: {out[f'{row} {name}']}", flush=True)

        def cudnn():
            with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.CUDNN_ATTENTION):
                return F.scaled_dot_product_attention(q, k, v)

        calls["sdpa cudnn"] = cudnn
        times: dict[str, list[float]] = {n: [] for n in calls}
        for _ in range(3):
            for n, f in calls.items():
                times[n].append(bench(f))
        for n, ts in times.items():
            us = statistics.median(ts)
            out.setdefault(f"{row} {n}", {}).update({"us": round(us, 1), "tflops": round(flops / us * 1e-6, 1), "rounds": [round(u, 1) for u in ts]})
            print(f"{row} {n}: {out[f'{row} {n}']}", flush=True)
    Path(os.environ.get("OUT", "."), "exp2_emulation.json").write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
