"""Probe (GPU): attention at awkward sequence lengths (ViT's 197 tokens, Whisper's 1500; causal: CLIP's
77 text tokens, LLM prompts of 1000 and 2000), compiled padded (`passes/padded_dims.py`: scheduled at
256 / 1536 / ... as dynamic dims, serving the real size) and as given (the tiles the real size
admits), each kept candidate beside PyTorch's SDPA backends (is_causal=True for the causal shapes).

    python bench/probes/padded_attention.py --emit DIR [NAME ...]   # CPU: DIR/<shape>_{padded,given}.py
    bash bench/on_device.sh bash -c 'R=$PWD; cd /tmp && python $R/bench/probes/padded_attention.py $R/DIR'

Every candidate is checked against float64 SDPA before it is timed (CUDA-graph replays,
`cleave_ir.runtime.time_us`, 5 interleaved rounds, the median).
"""

import json
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from causal_attention import bench, load  # noqa: E402

SHAPES = {  # name: (batch, heads, tokens, head dim)
    "vit_b1_s197": (1, 12, 197, 64),
    "vit_b32_s197": (32, 12, 197, 64),
    "whisper_b1_s1500": (1, 8, 1500, 64),
    "clip_causal_b8_s77": (8, 12, 77, 64),
    "llama3_causal_b1_s1000": (1, 32, 1000, 128),
    "llama3_causal_b1_s2000": (1, 32, 2000, 128),
}
GIVEN = ("vit_b1_s197", "vit_b32_s197", "whisper_b1_s1500", "clip_causal_b8_s77")
"""The shapes also compiled as given (the unpadded forms of the long causal ones take minutes to compile)."""


def graph_text(b: int, h: int, s: int, d: int, causal: bool = False) -> str:
    """softmax(Q K^T / sqrt(d)) V, as `examples/mha.mlir` writes it (causal: as `cleave_ir.torch` does)."""
    if causal:
        from causal_attention import graph_text as causal_text

        return causal_text(b, h, s, d)
    x, sc, r = (f"!tgraph.tensor<[{b}, {h}, {s}, {n}], f16>" for n in (d, s, 1))
    return f"""tgraph.graph @attention(%q: {x}, %k: {x}, %v: {x}) -> {x} {{
  %s = tgraph.matmul %q, %k transpose_b : {x}, {x} -> {sc}
  %t = tgraph.scale %s, {d ** -0.5!r} : {sc}
  %e = tgraph.exp %t : {sc}
  %r = tgraph.reduce sum %e dim 3 : {sc} -> {r}
  %p = tgraph.div %e, %r : {sc}, {r} -> {sc}
  %o = tgraph.matmul %p, %v : {sc}, {x} -> {x}
  tgraph.output %o : {x}
}}
"""


def emit(folder: Path) -> None:
    """Each shape compiled by `cleave compile` (CPU: search, schedule, lower), padded and as given."""
    from unittest import mock

    from cleave_ir import compile as cc
    from cleave_ir.diagnostics import parse_module_text
    from cleave_ir.run import make_context

    folder.mkdir(parents=True, exist_ok=True)
    names = sys.argv[sys.argv.index("--emit") + 2 :] or list(SHAPES)
    for name in names:
        for variant in ("padded", "given") if name in GIVEN else ("padded",):
            module = parse_module_text(make_context(), graph_text(*SHAPES[name], causal="causal" in name), f"<{name}>")
            graph = next(iter(module.body.block.ops))
            with mock.patch.object(cc, "_padded_pipeline", return_value=None) if variant == "given" else mock.MagicMock():
                cc.compile_graph(graph, folder / f"{name}_{variant}.py", ["--no-cache", "--keep", "3"])


def main() -> None:
    if "--emit" in sys.argv:
        emit(Path(sys.argv[sys.argv.index("--emit") + 1]))
        return
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    folder = Path(sys.argv[1])
    out: dict[str, dict[str, object]] = {}
    for name, shape in SHAPES.items():
        if not any((folder / f"{name}_{variant}.py").exists() for variant in ("padded", "given")):
            continue
        b, h, s, d = shape
        causal = "causal" in name
        torch.manual_seed(0)
        q, k, v = (torch.randn(shape, device="cuda", dtype=torch.float16) for _ in range(3))
        extra = (torch.ones(s, s, device="cuda", dtype=torch.float16).tril()[None, None].contiguous(),) if causal else ()
        ref = F.scaled_dot_product_attention(q.double(), k.double(), v.double(), is_causal=causal)
        runs = {}
        for variant in ("padded", "given"):
            path = folder / f"{name}_{variant}.py"
            if not path.exists():
                continue
            mod = load(path.read_text(), f"{name}_{variant}")
            for c, (est, kernels, graph) in enumerate(mod.CANDIDATES):
                if os.environ.get("CANDIDATES") and str(c) not in os.environ["CANDIDATES"].split(","):
                    continue  # (a kernel that crashes poisons the process's CUDA context: time the others apart)
                label = f"{variant} c{c} ({graph})"
                try:
                    fn = lambda mod=mod, c=c: mod.run(q, k, v, *extra, candidate=c)  # noqa: E731
                    err = ((fn().double() - ref).abs().max() / ref.abs().max()).item()
                    out[f"{name} {label}"] = {"err": err, "est_us": est, "us": [], "tiles": [mod.KERNELS[n]["tiles"] for n in kernels]}
                    if err < 1e-2:
                        runs[label] = (fn, None)
                except Exception as e:  # noqa: BLE001
                    out[f"{name} {label}"] = {"error": str(e)[:300]}
                    print(f"{name} {label}: FAILED {str(e)[:300]}", flush=True)
        for backend, label in ((SDPBackend.CUDNN_ATTENTION, "sdpa cudnn"), (SDPBackend.FLASH_ATTENTION, "sdpa flash"), (SDPBackend.EFFICIENT_ATTENTION, "sdpa efficient")):
            runs[label] = (lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal), backend)
            out[f"{name} {label}"] = {"us": []}
        for _ in range(5):
            for label, (fn, backend) in list(runs.items()):
                try:
                    if backend is None:
                        t = bench(fn)
                    else:
                        with sdpa_kernel(backend):
                            t = bench(fn)
                except Exception as e:  # noqa: BLE001
                    out[f"{name} {label}"] = {"error": str(e)[:300]}
                    del runs[label]
                    continue
                out[f"{name} {label}"]["us"].append(round(t, 2))
        for label in runs:
            r = out[f"{name} {label}"]
            r["median_us"] = statistics.median(r["us"])
            r["tflops"] = round((2 if causal else 4) * b * h * s * s * d / r["median_us"] * 1e-6, 1)
        for key, r in out.items():
            if key.startswith(name):
                print(key, {k: v for k, v in r.items() if k != "us"}, flush=True)
    Path(os.environ.get("OUT", "."), "padded_attention.json").write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
