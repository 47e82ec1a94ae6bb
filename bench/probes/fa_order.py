"""Probe (GPU): does the order of the statements in our FlashAttention loop body matter?

Runs the pipeline on the suite's attention rows, takes the emitted one-kernel candidate's source and
times it beside text-edited variants (each checked against float64 SDPA):
- `sum first`: the row sum of P and the running-sum update before P's cast and the second gemm
  (TileLang's example order), not after the gemm;
- `v late`: the V tile's copy right before the second gemm, not before the rescale of O;
- `fold`: the max taken of the unscaled scores, the scale folded into exp2's one FMA
  (exp2(s * c - m * c), c = scale * log2 e), no separate scale and subtract passes.

    bash bench/on_device.sh bash -c 'cd /tmp && python $OLDPWD/bench/probes/fa_order.py'   # $OUT/fa_order.json
"""

import json
import os
import re
import statistics
import sys
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from gpu_suite import graph_text, parse_graph, rows  # noqa: E402

ROWS = ("mha_b1_h32_s8192_d64", "mha_b1_h32_s4096_d128")


def source(row: str) -> str:
    from xdsl.context import Context

    from cleave_ir.passes.pipeline import PipelinePass
    from cleave_ir.tilelang_emitter import module_source

    r = next(r for r in rows() if r.name == row)
    graph = parse_graph(graph_text(r))
    module = graph.parent_op()
    PipelinePass(keep=1, top_k=1).apply(Context(), module)
    return module_source(module)


def kernel_text(src: str) -> str:
    """`mha_c1_k0` with the module's dynamic stride symbols it reads (emitted as module globals)."""
    start = src.index("@T.prim_func\ndef mha_c1_k0")
    func = src[start : src.index("\n\n\n", start)]
    symbols = sorted(set(re.findall(r"\b(\w+_stride\d+)\b", func)))
    return "".join(f'{s} = T.dynamic("{s}")\n' for s in symbols) + func


def move_before(text: str, lines: list[str], anchor: str) -> str:
    body = text.splitlines()
    picked = [l for l in body if any(l.strip().startswith(p) for p in lines)]
    rest = [l for l in body if l not in picked]
    at = next(i for i, l in enumerate(rest) if l.strip().startswith(anchor))
    return "\n".join(rest[:at] + picked + rest[at:])


def sum_first(text: str) -> str:
    body = text.splitlines()
    i = next(i for i, l in enumerate(body) if "T.reduce_sum(acc," in l)
    block = body[i : i + 3]  # the reduce_sum, the T.Parallel header, the running-sum update
    rest = body[:i] + body[i + 3 :]
    at = next(j for j, l in enumerate(rest) if l.strip().startswith("T.copy(acc, acc_h)"))
    return "\n".join(rest[:at] + block + rest[at:])


def v_late(text: str) -> str:
    return move_before(text, ["T.copy(v["], "T.gemm(acc_h")


def fold(text: str) -> str:
    scale = float(re.search(r"acc\[i0, i1\] = acc\[i0, i1\] \* ([0-9.e-]+)", text).group(1))
    c = scale * 1.4426950408889634
    body = text.splitlines()
    out = []
    skip = 0
    for n, l in enumerate(body):
        if skip:
            skip -= 1
            continue
        s = l.strip()
        if s.startswith("acc[i0, i1] = acc[i0, i1] * "):  # the scale pass: gone (with its loop header)
            out.pop()
            continue
        if s.startswith("acc[i0, i1] = acc[i0, i1] - red[i0]"):  # subtract + exp2 -> one FMA + exp2
            out.append(l.replace(s, f"acc[i0, i1] = T.exp2(acc[i0, i1] * {c!r} - red[i0] * {c!r})"))
            skip = 2  # the exp2 pass's header and body
            continue
        if s.startswith("alpha[i0] = T.exp2("):
            l = l.replace("* 1.4426950408889634)", f"* {c!r})")
        out.append(l)
    return "\n".join(out)


def load(text: str, name: str, func: str = "mha_c1_k0"):
    """The kernel function `func` of `text`, imported from a file named `name` (TileLang reads its source)."""
    import importlib.util
    import tempfile

    path = Path(tempfile.mkdtemp()) / f"{name}.py"
    path.write_text("import tilelang\nimport tilelang.language as T\n\n" + text + "\n")
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return getattr(mod, func)


def bench(fn, iters: int = 30) -> float:
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(iters):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        ts.append(a.elapsed_time(b) * 1e3)
    return statistics.median(ts)


def main() -> None:
    import tilelang
    import tilelang.language as T

    out: dict[str, dict[str, object]] = {}
    for row in ROWS:
        text = kernel_text(source(row))
        variants = {
            "as emitted": text,
            "sum first": sum_first(text),
            "v late": v_late(text),
            "sum first + v late": v_late(sum_first(text)),
            "fold": fold(text),
            "fold + sum first + v late": fold(v_late(sum_first(text))),
        }
        shape = tuple(int(x) for x in re.search(r"q: T.Tensor\(\(([0-9, ]+)\)", text).group(1).split(","))
        q, k, v = (torch.randn(shape, device="cuda", dtype=torch.float16) for _ in range(3))
        ref = F.scaled_dot_product_attention(q.double(), k.double(), v.double())
        flops = 4 * shape[0] * shape[1] * shape[2] * shape[2] * shape[3]
        for name, t in variants.items():
            try:
                kern = tilelang.compile(load(t, f"{row}_{len(out)}"), out_idx=[3], pass_configs={tilelang.PassConfigKey.TL_ENABLE_FAST_MATH: True})
                res = kern(q, k, v)
                err = ((res.double() - ref).norm() / ref.norm()).item()
                us = bench(lambda: kern(q, k, v))
                out[f"{row} {name}"] = {"us": round(us, 1), "tflops": round(flops / us * 1e-6, 1), "err": err}
            except Exception as e:  # a variant that does not build is recorded
                out[f"{row} {name}"] = {"error": str(e).splitlines()[0][:200]}
            print(f"{row} {name}: {out[f'{row} {name}']}", flush=True)
            if name == "as emitted":
                print(t, flush=True)
        with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.CUDNN_ATTENTION):
            us = bench(lambda: F.scaled_dot_product_attention(q, k, v))
        out[f"{row} sdpa cudnn"] = {"us": round(us, 1), "tflops": round(flops / us * 1e-6, 1)}
        print(f"{row} sdpa cudnn: {out[f'{row} sdpa cudnn']}", flush=True)
    Path(os.environ.get("OUT", "."), "fa_order.json").write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
