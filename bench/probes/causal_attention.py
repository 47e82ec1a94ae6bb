"""Probe (GPU): causal attention as `cleave_ir.torch` captures `scaled_dot_product_attention(is_causal=True)`
(the mask an input promised causal, `#cleave.causal`), our best candidate against PyTorch's causal SDPA.

For each shape, the pipeline's best-estimated candidate as emitted (on the CPU, beforehand) into
each folder given (`label=DIR`, DIR/<shape>.py: an earlier commit, this one without and with
`cleave-overlap-gemms`), beside cuDNN and FlashAttention causal SDPA, 5 interleaved rounds; each
checked against float64 causal SDPA. Times: CUDA-graph replays (`cleave_ir.runtime.time_us`).

    python bench/probes/causal_attention.py --emit DIR [--no-overlap]     # CPU: DIR/<shape>.py
    bash bench/on_device.sh bash -c 'R=$PWD; cd /tmp && python $R/bench/probes/causal_attention.py before=$R/B off=$R/C on=$R/D'
"""

import json
import os
import statistics
import sys
from pathlib import Path

SHAPES = {  # name: (batch, heads, tokens, head dim)
    "llama3_b1_s2048": (1, 32, 2048, 128),
    "llama3_b1_s4096": (1, 32, 4096, 128),
    "gpt2_b1_s2048": (1, 12, 2048, 64),
    "llama3_b4_s1024": (4, 32, 1024, 128),
}


def graph_text(b: int, h: int, s: int, d: int) -> str:
    """The graph `cleave_ir.torch` emits for causal SDPA (its softmax before canonicalization)."""
    t = lambda *dims: f"!tgraph.tensor<[{', '.join(map(str, dims))}], f16>"  # noqa: E731
    x, m, sc = t(b, h, s, d), t(1, 1, s, s), t(b, h, s, s)
    return f"""tgraph.graph @causal(%q: {x}, %k: {x}, %v: {x}, %mask: {m} {{cleave.causal = #cleave.causal<offset = 0>}}) -> {x} {{
  %s = tgraph.matmul %q, %k transpose_b : {x}, {x} -> {sc}
  %t = tgraph.scale %s, {d ** -0.5!r} : {sc}
  %a = tgraph.scalar add %mask, -1.000000e+00 : {m}
  %p = tgraph.scale %a, 3.000000e+04 : {m}
  %l = tgraph.add %t, %p : {sc}, {m} -> {sc}
  %e = tgraph.exp %l : {sc}
  %r = tgraph.reduce sum %e dim 3 : {sc} -> !tgraph.tensor<[{b}, {h}, {s}, 1], f16>
  %w = tgraph.div %e, %r : {sc}, !tgraph.tensor<[{b}, {h}, {s}, 1], f16> -> {sc}
  %o = tgraph.matmul %w, %v : {sc}, {x} -> {x}
  tgraph.output %o : {x}
}}
"""


def emitted(shape: tuple[int, ...], overlap_gemms: bool) -> str:
    """The Python module of the pipeline's best-estimated candidate."""
    from xdsl.context import Context

    from cleave_ir.passes.lower_tilelang import lower_module
    from cleave_ir.passes.pipeline import PipelinePass
    from cleave_ir.diagnostics import parse_module_text
    from cleave_ir.run import make_context
    from cleave_ir.tilelang_emitter import module_source

    module = parse_module_text(make_context(), graph_text(*shape), "<causal>")
    PipelinePass(keep=1, top_k=1).apply(Context(), module)
    lower_module(module, overlap_gemms)
    return module_source(module)


def load(text: str, name: str):
    """The emitted module `text`, imported from a file (TileLang reads its source)."""
    import importlib.util
    import tempfile

    path = Path(tempfile.mkdtemp()) / f"{name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def bench(fn) -> float:
    """Median us per call, CUDA-graph replays of 20 calls (no Python launch overhead: `cleave_ir.runtime.timed`)."""
    from cleave_ir.runtime import time_us

    return time_us(fn, batch=20, iters=10)


def main() -> None:
    if "--emit" in sys.argv:
        folder = Path(sys.argv[sys.argv.index("--emit") + 1])
        folder.mkdir(parents=True, exist_ok=True)
        for name, shape in SHAPES.items():
            (folder / f"{name}.py").write_text(emitted(shape, "--no-overlap" not in sys.argv))
        return
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    folders = dict(a.split("=", 1) for a in sys.argv[1:])
    out: dict[str, dict[str, object]] = {}
    for name, shape in SHAPES.items():
        b, h, s, d = shape
        variants = {label: Path(d, f"{name}.py").read_text() for label, d in folders.items() if Path(d, f"{name}.py").exists()}
        torch.manual_seed(0)
        q, k, v = (torch.randn(shape, device="cuda", dtype=torch.float16) for _ in range(3))
        mask = torch.ones(s, s, device="cuda", dtype=torch.float16).tril()[None, None].contiguous()
        ref = F.scaled_dot_product_attention(q.double(), k.double(), v.double(), is_causal=True)
        flops = 2 * b * h * s * s * d  # causal: half of 4 b h s^2 d
        runs = {}
        for vname, text in variants.items():
            mod = load(text, f"{name}_{vname.replace(' ', '_')}")
            try:
                fn = lambda mod=mod: mod.run(q, k, v, mask)  # noqa: E731
                o = fn()
                err = ((o.double() - ref).abs().max() / ref.abs().max()).item()
                kernels = [k for k in mod.KERNELS]
                out[f"{name} {vname}"] = {"err": err, "us": [], "kernels": kernels, "tiles": [mod.KERNELS[k]["tiles"] for k in kernels]}
                runs[vname] = (fn, None)
            except Exception as e:  # noqa: BLE001
                out[f"{name} {vname}"] = {"error": str(e)[:300]}
                print(f"{name} {vname}: FAILED {str(e)[:300]}", flush=True)
        for backend, label in ((SDPBackend.CUDNN_ATTENTION, "sdpa cudnn"), (SDPBackend.FLASH_ATTENTION, "sdpa flash")):
            def call(backend=backend):
                return F.scaled_dot_product_attention(q, k, v, is_causal=True)

            runs[label] = (call, backend)
            out[f"{name} {label}"] = {"us": []}
        for _ in range(5):  # rounds: each variant once per round, the median of the rounds
            for vname, (fn, backend) in runs.items():
                if backend is None:
                    t = bench(fn)
                else:
                    with sdpa_kernel(backend):
                        t = bench(fn)
                out[f"{name} {vname}"]["us"].append(round(t, 1))
        for vname in runs:
            r = out[f"{name} {vname}"]
            r["median_us"] = statistics.median(r["us"])
            r["tflops"] = round(flops / r["median_us"] * 1e-6, 1)
            print(f"{name} {vname}: {r}", flush=True)
    Path(os.environ.get("OUT", "."), "causal_attention.json").write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
