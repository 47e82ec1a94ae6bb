"""Probe (GPU): does FlashAttention's per-block tail shrink if the last V tile is loaded before the loop?

`cleave-overlap-gemms` runs the loop's P @ V one iteration late, so the last tile's product runs after
the loop through a tile of its own (`v_last`), whose copy is issued only then: each block waits for one
more load from L2/DRAM after its loop. Blocks of 16 iterations (mha B4 S2048) pay that tail twice as
often per unit of work as blocks of 32 (S4096); the suite's B4 S2048 row runs 493 us against 435 at
S4096 for the same FLOPs (`gpu_suite_2026-12-07s51_H100.md`).

Variants of the suite's one-kernel candidates (text edits of `.gpu/suite51`'s emitted kernels):
`as emitted`; `last V first` (its copy moved before the loop, after Q's); each checked against float64
SDPA, then 5 interleaved rounds beside cuDNN SDPA (median).

    bash bench/on_device.sh python bench/probes/fa_prefetch_last.py .gpu/suite51/kernels   # $OUT/fa_prefetch_last.json
"""

import json
import os
import re
import statistics
import sys
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fa_order import bench, load  # noqa: E402

ROWS = ("mha_b4_h32_s2048_d128", "mha_b1_h32_s4096_d128", "mha_b1_h32_s8192_d64", "gqa_b1_s4096")


def kernel(src: str, name: str) -> str:
    """The prim_func `name` with the module's dynamic stride symbols it reads."""
    start = src.index(f"@T.prim_func\ndef {name}(")
    func = src[start : src.index("\n\n\n", start)]
    symbols = sorted(set(re.findall(r"\b(\w+_stride\d+)\b", func)))
    return "".join(f'{s} = T.dynamic("{s}")\n' for s in symbols) + func


def last_first(text: str) -> str:
    """The copy into the last tile's buffer moved to just before the pipelined loop."""
    lines = text.splitlines()
    c = next(n for n, l in enumerate(lines) if re.match(r"\s*T\.copy\(v\[.*, v_last\)", l))
    moved = lines.pop(c)
    loop = next(n for n, l in enumerate(lines) if "T.Pipelined(" in l)
    ind = lines[loop][: len(lines[loop]) - len(lines[loop].lstrip())]
    return "\n".join(lines[:loop] + [ind + moved.strip()] + lines[loop:])


def shapes(text: str) -> list[tuple[int, ...]]:
    return [tuple(int(x) for x in m.split(",")) for m in re.findall(r"T\.StridedTensor\(\(([0-9, ]+)\)", text)[:3]]


def main() -> None:
    import tilelang

    kernels_dir = Path(sys.argv[1] if len(sys.argv) > 1 else ".gpu/suite51/kernels")
    fast = {tilelang.PassConfigKey.TL_ENABLE_FAST_MATH: True}
    out: dict[str, dict[str, object]] = {}
    for row in ROWS:
        name = f"{row.split('_')[0]}_c1_k0"
        text = kernel((kernels_dir / f"{row}__full.py").read_text(), name)
        variants = {"as emitted": text, "last V first": last_first(text)}
        (sq, sk, sv) = shapes(text)
        q = torch.randn(sq, device="cuda", dtype=torch.float16)
        k = torch.randn(sk, device="cuda", dtype=torch.float16)
        v = torch.randn(sv, device="cuda", dtype=torch.float16)
        qd, kd, vd = (t.double().reshape(t.shape[0], -1, *t.shape[-2:]) for t in (q, k, v))
        gqa = qd.shape[1] != kd.shape[1]
        ref = F.scaled_dot_product_attention(qd, kd, vd, enable_gqa=gqa).reshape(sq)
        flops = 4 * sq[-2] * sk[-2] * sq[-1] * (q.numel() // (sq[-2] * sq[-1]))
        fns = {}
        for vname, t in variants.items():
            kern = tilelang.compile(load(t, f"k{len(out)}_{len(fns)}", name), out_idx=[3], pass_configs=fast)
            err = ((kern(q, k, v).double() - ref).norm() / ref.norm()).item()
            fns[vname] = lambda kern=kern: kern(q, k, v)
            out[f"{row} {vname}"] = {"err": err, "us": []}
        q4, k4, v4 = (t.reshape(t.shape[0], -1, *t.shape[-2:]) for t in (q, k, v))
        with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.CUDNN_ATTENTION):
            fns["sdpa cudnn"] = lambda: F.scaled_dot_product_attention(q4, k4, v4, enable_gqa=gqa)
            out[f"{row} sdpa cudnn"] = {"us": []}
            for _ in range(5):
                for vname, fn in fns.items():
                    out[f"{row} {vname}"]["us"].append(round(bench(fn), 1))
        for vname in fns:
            r = out[f"{row} {vname}"]
            r["median_us"] = statistics.median(r["us"])
            r["tflops"] = round(flops / r["median_us"] * 1e-6, 1)
            print(f"{row} {vname}: {r}", flush=True)
    Path(os.environ.get("OUT", "."), "fa_prefetch_last.json").write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
