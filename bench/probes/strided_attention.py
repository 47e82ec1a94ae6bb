"""Probe (GPU): causal attention on head-transposed views, as a model's attention hands them over.

Hugging Face-style layers make q, k, v as `linear(x).view(b, s, h, d).transpose(1, 2)`: views whose
row stride is h * d. The emitted module now reads such views in place (`run` specializes each kernel's
input strides); before, the front end copied each to a dense tensor first. Per shape: our kernel on
the views, on copies made in the call (the old way), on dense tensors made beforehand, the copies
alone, and cuDNN / FlashAttention SDPA on the views; 5 interleaved rounds of CUDA-graph replays
(`cleave_ir.runtime.time_us`), each output checked against float64 causal SDPA.

    python bench/probes/causal_attention.py --emit DIR          # CPU: DIR/<shape>.py
    bash bench/on_device.sh bash -c 'R=$PWD; cd /tmp && python $R/bench/probes/strided_attention.py $R/DIR'
"""

import json
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from causal_attention import SHAPES, bench, load  # noqa: E402

ROWS = ("gpt2_b1_s2048", "llama3_b1_s2048")


def main() -> None:
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    folder = Path(sys.argv[1])
    out: dict[str, dict[str, object]] = {}
    for name in ROWS:
        b, h, s, d = SHAPES[name]
        mod = load(Path(folder, f"{name}.py").read_text(), f"strided_{name}")
        torch.manual_seed(0)
        q, k, v = (torch.randn(b, s, h, d, device="cuda", dtype=torch.float16).transpose(1, 2) for _ in range(3))
        dense = [t.contiguous() for t in (q, k, v)]
        mask = torch.ones(s, s, device="cuda", dtype=torch.float16).tril()[None, None].contiguous()
        ref = F.scaled_dot_product_attention(q.double(), k.double(), v.double(), is_causal=True)
        runs = {
            "ours on views": (lambda: mod.run(q, k, v, mask), None),
            "ours on copies": (lambda: mod.run(q.contiguous(), k.contiguous(), v.contiguous(), mask), None),
            "ours on dense": (lambda: mod.run(*dense, mask), None),
            "copies alone": (lambda: [t.contiguous() for t in (q, k, v)], None),
            "sdpa cudnn on views": (lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True), SDPBackend.CUDNN_ATTENTION),
            "sdpa flash on views": (lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True), SDPBackend.FLASH_ATTENTION),
        }
        for label, (fn, backend) in runs.items():
            row: dict[str, object] = {"us": []}
            if label != "copies alone":
                with sdpa_kernel(backend) if backend is not None else torch.no_grad():
                    o = fn()
                row["err"] = ((o.double() - ref).abs().max() / ref.abs().max()).item()
            out[f"{name} {label}"] = row
        for _ in range(5):
            for label, (fn, backend) in runs.items():
                with sdpa_kernel(backend) if backend is not None else torch.no_grad():
                    out[f"{name} {label}"]["us"].append(round(bench(fn), 1))  # type: ignore[union-attr]
        for label in runs:
            r = out[f"{name} {label}"]
            r["median_us"] = statistics.median(r["us"])  # type: ignore[arg-type]
            print(f"{name} {label}: {r}", flush=True)
    Path(os.environ.get("OUT", "."), "strided_attention.json").write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
