"""One transformer layer of GPT-2, Llama-3 8B and Qwen3-32B: eager, torch.compile, and cleave_ir.torch.

    bash bench/on_device.sh python bench/layers.py --out $OUT/layers [--budget 540] [--models llama3-8b]
    python bench/layers.py --smoke --out /tmp/layers        # tiny shapes on a CPU (kernels interpreted)

The layers are written here from the models' public configs (hidden size, heads, kv heads, head dim,
intermediate size, norm, activation, RoPE, Qwen3's q/k norms), with random fp16 weights: no
downloads. Attention is `F.scaled_dot_product_attention`; prefill is causal (`is_causal=True`, as Hugging
Face's SDPA path without a padding mask), decode attends over a KV cache of 4096 plus the new token.
Settings: prefill B1 S2048, decode B in --decode-batches (default 1, 16, 64) with KV 4096.
Grouped-query attention passes the kv heads to SDPA as they are (`--gqa enable_gqa`, the default since session
53: what Hugging Face 4.57's `sdpa_attention_forward` does on CUDA with torch >= 2.5 when there is no mask, as in
these layers), or with `--gqa repeat_kv` repeats them first as Hugging Face's `repeat_kv` does where a mask is
given (a copy of the KV cache `group` times per step; the layer tables before session 53 used it).

For each (model, setting): median us per call (CUDA graphs where capture works, `cleave_ir.runtime.timed`)
of eager, torch.compile (default) and torch.compile (max-autotune-no-cudagraphs), ours
(`ct.optimize`: regions that beat the region under torch.compile by --margin run our kernels, the rest
eager) and ours+compile (torch.compile of that module: the rest fused by inductor, our custom ops
opaque); the relative error (max abs / max abs reference) of each
against the layer run in float64. Writes layers.md, layers.json (with every gate report) and, with
matplotlib, layers.png under --out. --budget caps the run: cases that would start after it are
listed as skipped, and regions whose compile would start after it stay in PyTorch.
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass(frozen=True)
class Config:
    name: str
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    ffn: int
    norm: str  # "layer" or "rms"
    eps: float
    mlp: str  # "gelu" (GPT-2, tanh approximation) or "swiglu"
    bias: bool  # linear biases (GPT-2)
    rope_theta: float | None
    qk_norm: bool  # Qwen3: RMSNorm of q and k per head


CONFIGS = {
    # gpt2: n_embd 768, n_head 12, n_inner 4*768, layer_norm_epsilon 1e-5, gelu_new
    "gpt2": Config("gpt2", 768, 12, 12, 64, 3072, "layer", 1e-5, "gelu", True, None, False),
    # Meta-Llama-3-8B: hidden 4096, 32 heads, 8 kv heads, intermediate 14336, rms_norm_eps 1e-5, rope_theta 500000
    "llama3-8b": Config("llama3-8b", 4096, 32, 8, 128, 14336, "rms", 1e-5, "swiglu", False, 500000.0, False),
    # Qwen3-32B: hidden 5120, 64 heads, 8 kv heads, head_dim 128, intermediate 25600, rms_norm_eps 1e-6, rope_theta 1e6
    "qwen3-32b": Config("qwen3-32b", 5120, 64, 8, 128, 25600, "rms", 1e-6, "swiglu", False, 1000000.0, True),
}

SMOKE = {
    name: Config(name, 64, 4, 4 if c.kv_heads == c.heads else 2, 16, 128, c.norm, c.eps, c.mlp, c.bias, c.rope_theta, c.qk_norm)
    for name, c in CONFIGS.items()
}


class RMSNorm(nn.Module):
    def __init__(self, n: int, eps: float) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(n))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def repeat_kv(x: torch.Tensor, n: int) -> torch.Tensor:
    if n == 1:
        return x
    b, h, t, d = x.shape
    return x[:, :, None, :, :].expand(b, h, n, t, d).reshape(b, h * n, t, d)


class Layer(nn.Module):
    """A pre-norm decoder layer: norm, attention (+ cache in decode), residual, norm, MLP, residual."""

    def __init__(self, c: Config, gqa: str = "enable_gqa") -> None:
        super().__init__()
        self.c, self.gqa = c, gqa
        norm = (lambda: nn.LayerNorm(c.hidden, eps=c.eps)) if c.norm == "layer" else (lambda: RMSNorm(c.hidden, c.eps))
        self.norm1, self.norm2 = norm(), norm()
        self.q = nn.Linear(c.hidden, c.heads * c.head_dim, bias=c.bias)
        self.k = nn.Linear(c.hidden, c.kv_heads * c.head_dim, bias=c.bias)
        self.v = nn.Linear(c.hidden, c.kv_heads * c.head_dim, bias=c.bias)
        self.o = nn.Linear(c.heads * c.head_dim, c.hidden, bias=c.bias)
        if c.qk_norm:
            self.q_norm, self.k_norm = RMSNorm(c.head_dim, c.eps), RMSNorm(c.head_dim, c.eps)
        if c.mlp == "swiglu":
            self.gate = nn.Linear(c.hidden, c.ffn, bias=False)
            self.up = nn.Linear(c.hidden, c.ffn, bias=False)
        else:
            self.up = nn.Linear(c.hidden, c.ffn, bias=c.bias)
        self.down = nn.Linear(c.ffn, c.hidden, bias=c.bias)

    def forward(self, x, cos=None, sin=None, k_cache=None, v_cache=None):
        c = self.c
        b, s, _ = x.shape
        h = self.norm1(x)
        q = self.q(h).view(b, s, c.heads, c.head_dim)
        k = self.k(h).view(b, s, c.kv_heads, c.head_dim)
        v = self.v(h).view(b, s, c.kv_heads, c.head_dim).transpose(1, 2)
        if c.qk_norm:
            q, k = self.q_norm(q), self.k_norm(k)
        q, k = q.transpose(1, 2), k.transpose(1, 2)
        if c.rope_theta is not None:
            q = q * cos + rotate_half(q) * sin
            k = k * cos + rotate_half(k) * sin
        if k_cache is not None:
            k, v = torch.cat([k_cache, k], dim=2), torch.cat([v_cache, v], dim=2)
        rep = c.heads // c.kv_heads
        causal = k_cache is None and s > 1
        if self.gqa == "enable_gqa" and rep > 1:  # SDPA reads each kv head for its group (Hugging Face on torch >= 2.5 where it can)
            a = F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)
        else:
            a = F.scaled_dot_product_attention(q, repeat_kv(k, rep), repeat_kv(v, rep), is_causal=causal)
        x = x + self.o(a.transpose(1, 2).reshape(b, s, c.heads * c.head_dim))
        h = self.norm2(x)
        if c.mlp == "swiglu":
            m = F.silu(self.gate(h)) * self.up(h)
        else:
            m = F.gelu(self.up(h), approximate="tanh")
        return x + self.down(m)


def make_layer(c: Config, dtype: torch.dtype, device: str, seed: int = 0, gqa: str = "enable_gqa") -> Layer:
    torch.manual_seed(seed)
    layer = Layer(c, gqa)
    with torch.no_grad():
        for name, p in layer.named_parameters():
            if "norm" in name and name.endswith("weight"):
                p.copy_(1 + 0.1 * torch.randn_like(p))
            elif name.endswith("bias"):
                p.copy_(0.02 * torch.randn_like(p))
            else:
                p.copy_(torch.randn_like(p) / math.sqrt(p.shape[-1]))
    return layer.to(device=device, dtype=dtype).eval()


class Bound(nn.Module):
    """The layer as a function of the setting's tensors only (torch.export takes no None inputs)."""

    def __init__(self, layer: Layer, names: list[str]) -> None:
        super().__init__()
        self.layer, self.names = layer, names

    def forward(self, *tensors: torch.Tensor) -> torch.Tensor:
        return self.layer(**dict(zip(self.names, tensors)))


def make_inputs(c: Config, setting: str, batch: int, seq: int, kv: int, dtype: torch.dtype, device: str) -> dict[str, torch.Tensor]:
    """The layer's inputs by name: x, cos, sin, k_cache, v_cache (those the setting has)."""
    gen = torch.Generator(device="cpu").manual_seed(1)
    s = seq if setting == "prefill" else 1
    x = torch.randn(batch, s, c.hidden, generator=gen).to(device, dtype)
    cos = sin = kc = vc = None
    if c.rope_theta is not None:
        pos = torch.arange(s, dtype=torch.float64) + (0 if setting == "prefill" else kv)
        inv = 1.0 / c.rope_theta ** (torch.arange(0, c.head_dim, 2, dtype=torch.float64) / c.head_dim)
        ang = torch.outer(pos, inv)
        ang = torch.cat([ang, ang], dim=-1)
        cos, sin = ang.cos().to(device, dtype), ang.sin().to(device, dtype)
    if setting == "decode":
        kc = torch.randn(batch, c.kv_heads, kv, c.head_dim, generator=gen).to(device, dtype)
        vc = torch.randn(batch, c.kv_heads, kv, c.head_dim, generator=gen).to(device, dtype)
    named = {"x": x, "cos": cos, "sin": sin, "k_cache": kc, "v_cache": vc}
    return {k: v for k, v in named.items() if v is not None}


def rel_error(got: torch.Tensor, ref: torch.Tensor) -> float:
    g = got.double()
    if not bool(torch.isfinite(g).all()):
        return math.inf
    return ((g - ref).abs().max() / ref.abs().max()).item()


def time_us(fn, inputs, smoke: bool) -> float:
    if smoke or not torch.cuda.is_available():
        fn(*inputs)
        samples = []
        for _ in range(3):
            t0 = time.perf_counter()
            fn(*inputs)
            samples.append((time.perf_counter() - t0) * 1e6)
        return sorted(samples)[1]
    from cleave_ir.runtime import timed

    return timed(lambda: fn(*inputs)).us


def run_case(
    c: Config, setting: str, batch: int, args: argparse.Namespace, device: str, dtype: torch.dtype, budget_s: float, compiler: Any
) -> dict[str, Any]:
    import cleave_ir.torch as ct

    named = make_inputs(c, setting, batch, args.seq, args.kv, dtype, device)
    layer = Bound(make_layer(c, dtype, device, gqa=args.gqa), list(named)).eval()
    inputs = tuple(named.values())
    row: dict[str, Any] = {"model": c.name, "setting": setting, "batch": batch, "seq": args.seq if setting == "prefill" else 1, "kv": args.kv if setting == "decode" else 0}
    with torch.no_grad():
        ref = copy.deepcopy(layer).double()(*[t.double() for t in inputs])
        fns: dict[str, Any] = {"eager": layer}
        if not args.smoke:
            fns["compile"] = torch.compile(layer)
            if args.max_autotune:
                fns["compile-max-autotune-no-cudagraphs"] = torch.compile(layer, mode="max-autotune-no-cudagraphs")
        t0 = time.perf_counter()
        ours = ct.optimize(
            layer, inputs, margin=args.margin, compiler=compiler, budget_s=budget_s, baseline="eager" if args.smoke else args.baseline, verbose=args.verbose,
            group_projections=args.groups,
        )
        row["ours_prepare_s"] = time.perf_counter() - t0
        if args.warm:  # the same capture and compile again: every region's kernels from the cache
            t0 = time.perf_counter()
            again = ct.optimize(
                layer, inputs, margin=args.margin, compiler=compiler, budget_s=budget_s, baseline="eager" if args.smoke else args.baseline, verbose=args.verbose,
                group_projections=args.groups,
            )
            row["ours_warm_prepare_s"] = time.perf_counter() - t0
            row["warm_replaced"] = len(again.cleave_report.replaced())
        row["report"] = ours.cleave_report.to_json()
        row["plan"] = ours.cleave_report.plan
        row["replaced"] = len(ours.cleave_report.replaced())
        row["regions"] = len(ours.cleave_report.regions())
        fns["ours"] = ours
        if not args.smoke:
            fns["ours+compile"] = torch.compile(ours)  # the rest of the layer fused by inductor, our ops opaque
        for name, fn in fns.items():
            try:
                row[f"{name}_err"] = rel_error(fn(*inputs), ref)
                row[f"{name}_us"] = time_us(fn, inputs, args.smoke)
            except Exception as e:  # one failing variant must not hide the others
                row[f"{name}_failure"] = f"{type(e).__name__}: {str(e).strip().splitlines()[-1] if str(e).strip() else ''}"
    return row


def cases(args: argparse.Namespace) -> list[tuple[str, str, int]]:
    out = []
    for model in args.models:
        if "prefill" in args.settings:
            out.append((model, "prefill", 1))
        if "decode" in args.settings:
            out.extend((model, "decode", b) for b in args.decode_batches)
    return out


def _us(row: dict[str, Any], name: str) -> str:
    if f"{name}_failure" in row:
        return "failed"
    return f"{row[name + '_us']:.1f}" if f"{name}_us" in row else "-"


def _err(row: dict[str, Any], name: str) -> str:
    return f"{row[name + '_err']:.1e}" if f"{name}_err" in row else "-"


def markdown(rows: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    lines = [
        f"# Transformer layers: eager, torch.compile, cleave_ir.torch ({meta['device']}, torch {meta['torch']}, {meta['date']})",
        "",
        f"Command: `{meta['command']}`. Times: median us per call; errors: max abs / max abs of the float64 layer.",
        "",
        "| model | setting | eager us | compile us | max-autotune-no-cg us | ours us | ours+compile us | best ours vs compile | regions replaced | err eager | err compile | err ours | ours prepare s | warm prepare s |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        shape = f"prefill B{r['batch']} S{r['seq']}" if r["setting"] == "prefill" else f"decode B{r['batch']} KV{r['kv']}"
        if "skipped" in r:
            lines.append(f"| {r['model']} | {shape} | {r['skipped']} |" + " |" * 12)
            continue
        best = min((r[k] for k in ("ours_us", "ours+compile_us") if k in r), default=None)
        speed = f"{r['compile_us'] / best:.2f}x" if "compile_us" in r and best else "-"
        warm = f"{r['ours_warm_prepare_s']:.1f}" if "ours_warm_prepare_s" in r else "-"
        lines.append(
            f"| {r['model']} | {shape} | {_us(r, 'eager')} | {_us(r, 'compile')} | {_us(r, 'compile-max-autotune-no-cudagraphs')} | {_us(r, 'ours')} | {_us(r, 'ours+compile')} | {speed} "
            f"| {r.get('replaced', '-')}/{r.get('regions', '-')} | {_err(r, 'eager')} | {_err(r, 'compile')} | {_err(r, 'ours')} | {r.get('ours_prepare_s', 0):.0f} | {warm} |"
        )
    lines.append("")
    for r in rows:
        if "report" in r:
            lines.append(f"## {r['model']} {r['setting']} B{r['batch']}: gate report")
            lines.append("")
            from cleave_ir.torch.gate import Report, Row

            rep = Report([Row(**x) for x in r["report"]["rows"]], r["report"]["margin"])
            lines.append(rep.table())
            lines.append("")
    return "\n".join(lines)


def chart(rows: list[dict[str, Any]], path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    done = [r for r in rows if "eager_us" in r]
    if not done:
        return False
    names = ["eager", "compile", "compile-max-autotune-no-cudagraphs", "ours", "ours+compile"]
    fig, ax = plt.subplots(figsize=(max(6, 1.2 * len(done)), 4))
    width = 0.16
    for i, n in enumerate(names):
        ys = [r["eager_us"] / r[f"{n}_us"] if f"{n}_us" in r else 0 for r in done]
        ax.bar([j + i * width for j in range(len(done))], ys, width, label=n)
    ax.set_xticks([j + 2 * width for j in range(len(done))])
    ax.set_xticklabels([f"{r['model']}\n{r['setting']} B{r['batch']}" for r in done], fontsize=7)
    ax.set_ylabel("speed-up over eager")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    return True


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True, help="directory for layers.md, layers.json, layers.png")
    p.add_argument("--models", nargs="+", default=list(CONFIGS), choices=list(CONFIGS))
    p.add_argument("--settings", nargs="+", default=["prefill", "decode"], choices=["prefill", "decode"])
    p.add_argument("--decode-batches", type=int, nargs="+", default=[1, 16, 64])
    p.add_argument("--seq", type=int, default=2048, help="prefill sequence length (default 2048)")
    p.add_argument("--kv", type=int, default=4096, help="decode KV cache length (default 4096)")
    p.add_argument("--margin", type=float, default=0.03, help="gate margin (default 0.03)")
    p.add_argument("--budget", type=float, default=540.0, help="seconds; no case or region compile starts after it (default 540)")
    p.add_argument("--baseline", default="compile", help="what a region's kernel must beat: eager, compile, or a torch.compile mode (default compile)")
    p.add_argument("--cleave-options", default="--keep 2", help="cleave compile options for each region (default '--keep 2')")
    p.add_argument("--max-autotune", action=argparse.BooleanOptionalAction, default=True, help="also time torch.compile's max-autotune-no-cudagraphs (its compile takes minutes at prefill)")
    p.add_argument("--smoke", action="store_true", help="tiny shapes, float32, CPU, kernels interpreted, no torch.compile")
    p.add_argument("--warm", action="store_true", help="optimize each layer a second time (warm cache) and report how long that took")
    p.add_argument("--verbose", action="store_true")
    p.add_argument("--groups", action=argparse.BooleanOptionalAction, default=True, help="try regions that project one input (q, k, v) as one graph first (default on)")
    p.add_argument(
        "--gqa", default="enable_gqa", choices=["enable_gqa", "repeat_kv"],
        help="how attention with fewer kv heads is written: SDPA(enable_gqa=True) (default; Hugging Face without a mask) or Hugging Face's repeat_kv",
    )
    args = p.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    configs = SMOKE if args.smoke else CONFIGS
    if args.smoke:
        args.seq, args.kv, args.decode_batches = min(args.seq, 16), min(args.kv, 32), [b for b in args.decode_batches if b <= 2] or [1]
    device = "cuda" if torch.cuda.is_available() and not args.smoke else "cpu"
    dtype = torch.float16 if device == "cuda" else torch.float32
    if dtype == torch.float32:  # our kernels compute fp32 matmuls in TF32: allowed at "high" (`partition.tf32_refused`)
        torch.set_float32_matmul_precision("high")
    meta = {
        "device": torch.cuda.get_device_name() if device == "cuda" else "cpu",
        "torch": torch.__version__,
        "date": time.strftime("%Y-%m-%d"),
        "command": "python bench/layers.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "dtype": str(dtype),
    }
    import cleave_ir.torch as ct

    compiler = ct.interpreted_graph if args.smoke else ct.PipelineCompiler(options=tuple(args.cleave_options.split()))
    t_start = time.perf_counter()
    rows: list[dict[str, Any]] = []
    for model, setting, batch in cases(args):
        if time.perf_counter() - t_start > args.budget:
            rows.append({"model": model, "setting": setting, "batch": batch, "seq": args.seq if setting == "prefill" else 1, "kv": args.kv, "skipped": "skipped: --budget"})
            continue
        print(f"{model} {setting} B{batch} ...", flush=True)
        try:
            row = run_case(configs[model], setting, batch, args, device, dtype, args.budget - (time.perf_counter() - t_start), compiler)
        except Exception as e:
            traceback.print_exc()
            row = {"model": model, "setting": setting, "batch": batch, "seq": args.seq, "kv": args.kv, "skipped": f"failed: {type(e).__name__}: {str(e).strip().splitlines()[-1] if str(e).strip() else ''}"[:200]}
        rows.append(row)
        print(f"  {json.dumps({k: v for k, v in row.items() if k not in ('report', 'plan')})}", flush=True)
        if device == "cuda":
            torch.cuda.empty_cache()
        (out / "layers.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
        (out / "layers.md").write_text(markdown(rows, meta))
        if isinstance(compiler, ct.PipelineCompiler):
            (out / "cleave_compile.log").write_text(compiler.log.getvalue())
    (out / "layers.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    (out / "layers.md").write_text(markdown(rows, meta))
    png = chart(rows, out / "layers.png")
    print(f"wrote {out / 'layers.md'}, {out / 'layers.json'}{', ' + str(out / 'layers.png') if png else ''} in {time.perf_counter() - t_start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
