"""Probe (GPU): can TileLang 0.1.15 overlap FlashAttention's softmax with its GEMMs (FA3's
intra-warpgroup schedule) in the kernel we emit? (It led to `passes/overlap_gemms.py`.)

Default: an A/B on one machine, 5 interleaved rounds, of the pipeline's one-kernel attention
candidate without and with `cleave-overlap-gemms`, and with the scores' T.clear folded into their
gemm (`clear_accum=True`, which the pass then adopted), beside cuDNN SDPA; each checked against
float64 SDPA (bench/results/fa_overlap_ab_2026-12-02_H200.json).

`--text-edit`, the first probe (bench/results/fa_overlap_2026-12-02_H200.json): `overlap`
text-edits the kernel as emitted before the pass existed: in iteration j it issues S_j = Q K_j^T and
O += P_{j-1} V_{j-1} as asynchronous WGMMAs (`T.wgmma_gemm`), waits for S_j only
(`T.wait_wgmma(1)`), runs the softmax of S_j while P_{j-1} V_{j-1} is on the tensor cores, then waits
for it, rescales O and casts P_j; the last tile's P V runs after the loop. With `touch`, one element
of K and of V is read after their waits: TileLang's warp-specialized consumer otherwise releases the
tiles to the producer right after issuing the gemms, before they finish (a race: error 0.028 at
S8192 D64 without it).

    bash bench/on_device.sh bash -c 'cd /tmp && python $OLDPWD/bench/probes/fa_overlap.py'   # $OUT/fa_overlap_ab.json
    ... fa_overlap.py --text-edit   # the first probe: $OUT/fa_overlap.json
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
from fa_order import ROWS, bench, kernel_text, load, source  # noqa: E402


def overlap(text: str, touch: bool = False, reuse: bool = False) -> str:
    lines = text.splitlines()
    i = next(n for n, l in enumerate(lines) if "T.Pipelined(" in l)
    ind = " " * (len(lines[i + 1]) - len(lines[i + 1].lstrip()))
    end = next(n for n in range(i + 1, len(lines)) if not lines[n].startswith(ind))
    body = lines[i + 1 : end]
    trips = int(re.search(r"T.Pipelined\((\d+)", lines[i]).group(1))
    tile = int(re.search(r"128\*r0|(\d+)\*r0", "\n".join(body)).group(0).split("*")[0])

    def find(p: str) -> int:
        return next(n for n, l in enumerate(body) if l.strip().startswith(p))

    gemm0 = body[find("T.gemm(q_1")].replace("T.gemm(", "T.wgmma_gemm(").rstrip()[:-1] + ", clear_accum=True)"
    vcopy = body[find("T.copy(v[")]
    gemm1 = body[find("T.gemm(acc_h")]
    cast = find("T.copy(acc, acc_h)")
    new = [
        body[find("T.copy(k[")],
        gemm0,
        vcopy.replace(f"{tile}*r0", f"{tile}*T.max(r0 - 1, 0)"),
        gemm1.replace("T.gemm(", "T.wgmma_gemm("),
        ind + "T.wait_wgmma(1)",
        *([ind + "touch[0] = k_1[0, 0]"] if touch else []),
        *body[find("T.reduce_max") : cast - 2],  # the softmax of S_j and the running sums
        ind + "T.wait_wgmma(0)",
        *([ind + "touch[0] = v_1[0, 0]"] if touch else []),
        *body[cast - 2 : cast],  # O's rescale
        body[cast],
    ]
    last = vcopy.replace(f"{tile}*r0:{tile}*r0 + {tile}", f"{tile * (trips - 1)}:{tile * trips}").replace("v_1)", "v_1)" if reuse else "v_e)")
    out = lines[:i] + [ind[:-4] + "T.clear(acc_h)", lines[i], *new]
    out += [ind[:-4] + last.strip(), ind[:-4] + gemm1.strip().replace("v_1", "v_1" if reuse else "v_e"), *lines[end:]]
    text = "\n".join(out)
    alloc = next(l for l in lines if l.strip().startswith("v_1 = T.alloc_shared"))
    extra = ([] if reuse else [alloc.replace("v_1", "v_e")]) + ([alloc.split("v_1")[0] + 'touch = T.alloc_local((1,), "float16")'] if touch else [])
    return text.replace(alloc, "\n".join([alloc, *extra]), 1)


def emitted(row: str, overlap_gemms: bool) -> str:
    """Our one-kernel attention candidate as the pipeline emits it, with or without cleave-overlap-gemms."""
    from xdsl.context import Context

    from cleave_ir.passes.lower_tilelang import lower_module
    from cleave_ir.passes.pipeline import PipelinePass
    from cleave_ir.tilelang_emitter import module_source
    from gpu_suite import graph_text, parse_graph, rows

    r = next(r for r in rows() if r.name == row)
    module = parse_graph(graph_text(r)).parent_op()
    PipelinePass(keep=1, top_k=1).apply(Context(), module)
    lower_module(module, overlap_gemms)
    return kernel_text(module_source(module))


def clear_accum(text: str) -> str:
    """The scores' T.clear folded into the first async gemm (`clear_accum=True`: WGMMA's scale-d 0)."""
    lines = text.splitlines()
    g = next(n for n, l in enumerate(lines) if "T.wgmma_gemm(q_1" in l)
    acc = lines[g].split("(")[1].split(",")[2].strip()
    c = next(n for n in range(g - 1, -1, -1) if lines[n].strip() == f"T.clear({acc})")
    lines[g] = lines[g].rstrip()[:-1] + ", clear_accum=True)"
    del lines[c]
    return "\n".join(lines)


def main() -> None:
    """A/B on one machine, interleaved: the pipeline's kernel without and with cleave-overlap-gemms,
    and with the scores' clear folded into the gemm. `--text-edit` runs the first probe instead."""
    import tilelang

    if "--text-edit" in sys.argv:
        return text_edit_main()
    fast = {tilelang.PassConfigKey.TL_ENABLE_FAST_MATH: True}
    out: dict[str, dict[str, object]] = {}
    for row in ROWS:
        on = emitted(row, True)
        variants = {"overlap off": emitted(row, False), "overlap on": on, "overlap on, clear_accum": clear_accum(on)}
        shape = tuple(int(x) for x in re.search(r"q: T.Tensor\(\(([0-9, ]+)\)", on).group(1).split(","))
        q, k, v = (torch.randn(shape, device="cuda", dtype=torch.float16) for _ in range(3))
        ref = F.scaled_dot_product_attention(q.double(), k.double(), v.double())
        flops = 4 * shape[0] * shape[1] * shape[2] * shape[2] * shape[3]
        kernels = {}
        for name, t in variants.items():
            kern = tilelang.compile(load(t, f"v{len(out)}{len(kernels)}"), out_idx=[3], pass_configs=fast)
            err = ((kern(q, k, v).double() - ref).norm() / ref.norm()).item()
            kernels[name] = kern
            out[f"{row} {name}"] = {"err": err, "us": []}
        with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.CUDNN_ATTENTION):
            kernels["sdpa cudnn"] = lambda q, k, v: F.scaled_dot_product_attention(q, k, v)
            out[f"{row} sdpa cudnn"] = {"us": []}
            for _ in range(5):  # rounds: each variant once per round, the median of the rounds
                for name, kern in kernels.items():
                    out[f"{row} {name}"]["us"].append(round(bench(lambda: kern(q, k, v)), 1))
        for name in kernels:
            r = out[f"{row} {name}"]
            r["median_us"] = statistics.median(r["us"])
            r["tflops"] = round(flops / r["median_us"] * 1e-6, 1)
            print(f"{row} {name}: {r}", flush=True)
    Path(os.environ.get("OUT", "."), "fa_overlap_ab.json").write_text(json.dumps(out, indent=1))


def text_edit_main() -> None:
    import tilelang

    fast = {tilelang.PassConfigKey.TL_ENABLE_FAST_MATH: True}
    out: dict[str, dict[str, object]] = {}
    for row in ROWS:
        text = kernel_text(source(row))
        variants = {
            "as emitted": (text, fast),
            "overlap, ws, releases after the waits": (overlap(text, touch=True), fast),
        }
        shape = tuple(int(x) for x in re.search(r"q: T.Tensor\(\(([0-9, ]+)\)", text).group(1).split(","))
        q, k, v = (torch.randn(shape, device="cuda", dtype=torch.float16) for _ in range(3))
        ref = F.scaled_dot_product_attention(q.double(), k.double(), v.double())
        flops = 4 * shape[0] * shape[1] * shape[2] * shape[2] * shape[3]
        for name, (t, cfg) in variants.items():
            key = f"{row} {name}"
            try:
                kern = tilelang.compile(load(t, f"v{len(out)}"), out_idx=[3], pass_configs=cfg)
                res = kern(q, k, v)
                err = ((res.double() - ref).norm() / ref.norm()).item()
                q4 = q * 4  # sharper rows: the running max moves more often
                ref4 = F.scaled_dot_product_attention(q4.double(), k.double(), v.double())
                err = max(err, ((kern(q4, k, v).double() - ref4).norm() / ref4.norm()).item())
                us = bench(lambda: kern(q, k, v))
                src = kern.get_kernel_source()
                threads = re.findall(r"__launch_bounds__\((\d+)", src)
                out[key] = {"us": round(us, 1), "tflops": round(flops / us * 1e-6, 1), "err": err, "threads": threads}
            except Exception as e:  # a variant that does not build is recorded
                out[key] = {"error": str(e).splitlines()[0][:300]}
            print(f"{key}: {out[key]}", flush=True)
        with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.CUDNN_ATTENTION):
            us = bench(lambda: F.scaled_dot_product_attention(q, k, v))
        out[f"{row} sdpa cudnn"] = {"us": round(us, 1), "tflops": round(flops / us * 1e-6, 1)}
        print(f"{row} sdpa cudnn: {out[f'{row} sdpa cudnn']}", flush=True)
    Path(os.environ.get("OUT", "."), "fa_overlap.json").write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
