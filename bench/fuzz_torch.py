"""Random transformer-like PyTorch modules through `cleave_ir.torch.optimize`, against eager in float64.

Each seed draws a module of 1-4 blocks over `x [B, S, H]`: pre- or post-norm residual blocks of attention
(separate or fused q/k/v, grouped kv heads as `enable_gqa`, `repeat_kv` or `expand`, rotary, q/k norms, SDPA
causal or with a padding mask, or written out with a scale, soft-cap, float32 softmax, additive or
`masked_fill` masks) and MLPs (plain, gated, fused `chunk`-ed, a dozen activations), norms of five kinds,
LM heads with `log_softmax` or `logsumexp`, at fp32, fp16 or bf16 and odd sizes; a quarter are decode steps
(one token against K/V caches given as inputs), some mark the batch or the sequence dynamic and are checked
at a second size too. `optimize` must not raise, and on fresh inputs of another distribution the optimized
module must be as close to the float64 model as eager is (within a dtype's tolerance). A failure prints the
seed; `--seed N --n 1 -v` replays it.

    python bench/fuzz_torch.py --n 200                 # regions in the tgraph interpreter (~0.5 s each)
    python bench/fuzz_torch.py --n 20 --lowered        # the real pipeline (no search) and TileLang's interpreter
    python bench/fuzz_torch.py --n 100 --backend       # through torch.compile(backend=ct.backend(...)): dynamo's graphs

`tests/test_fuzz_torch.py` runs a few seeds of each; `-m slow` runs more.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import io
import math
import random
import re
from collections import Counter
import sys
import time
import traceback
from dataclasses import dataclass, field

import torch
import torch.nn as nn
import torch.nn.functional as F

MAX_POSITIONS = 64  # rotary tables' length: a dynamic sequence may take any size up to it

ACTIVATIONS = {
    "gelu": F.gelu,
    "gelu_tanh": lambda t: F.gelu(t, approximate="tanh"),
    "silu": F.silu,
    "relu": F.relu,
    "relu2": lambda t: F.relu(t).square(),
    "quick_gelu": lambda t: t * torch.sigmoid(1.702 * t),
    "sigmoid": torch.sigmoid,
    "tanh": torch.tanh,
    "softplus": F.softplus,
    "mish": F.mish,
    "hardswish": F.hardswish,
    "leaky_relu": lambda t: F.leaky_relu(t, 0.1),
    "elu": F.elu,
    "clamped": lambda t: t.clamp(-2.0, 2.0),
}


@dataclass
class Spec:
    """What one seed drew: sizes, dtype and the blocks, printed with a failure."""

    seed: int
    dtype: torch.dtype
    b: int
    s: int
    h: int
    blocks: list[dict] = field(default_factory=list)
    padding: bool = False
    cache: int = 0  # a decode step (s = 1) against a KV cache of this length, else 0
    dynamic: str = ""  # "b" or "s": that dim marked dynamic (`torch.export.Dim`), checked at another size too
    context: int = 0  # the length of a second input [b, context, h] that cross-attention blocks attend to


def draw(seed: int) -> Spec:
    rnd = random.Random(seed)
    spec = Spec(seed, rnd.choice([torch.float32, torch.float16, torch.bfloat16]), rnd.choice([1, 2, 3]), rnd.choice([1, 5, 8, 16, 33]), rnd.choice([32, 48, 64]))
    if rnd.random() < 0.25:
        spec.s, spec.cache = 1, rnd.choice([7, 16, 40])
    for _ in range(rnd.randint(1, 4)):
        kind = rnd.choice(["attention", "attention", "mlp", "mlp", "norm", "head", "elementwise"])
        block: dict = {"kind": kind, "norm": rnd.choice(["layer", "layer_nobias", "rms", "rms_f32", "gemma", "none"]), "post": rnd.random() < 0.2}
        if kind == "attention":
            nh = rnd.choice([h for h in (1, 2, 4) if spec.h % h == 0])
            block.update(
                heads=nh,
                kv=rnd.choice([k for k in (1, 2, 4) if nh % k == 0]),
                fused=rnd.random() < 0.3,
                bias=rnd.random() < 0.4,
                rotary=rnd.random() < 0.4,
                qk_norm=rnd.random() < 0.2,
                gqa=rnd.choice(["enable_gqa", "repeat_kv", "expand"]),
                form=rnd.choice(["sdpa_causal", "sdpa", "sdpa_mask", "manual", "manual_f32", "manual_softcap", "manual_mask"]),
            )
            if spec.cache and block["form"] == "sdpa_causal":  # one new token sees the whole cache
                block["form"] = "sdpa"
            spec.padding |= block["form"] in ("sdpa_mask", "manual_mask")
        elif kind == "mlp":
            block.update(
                width=rnd.choice([2 * spec.h, 3 * spec.h + 8, 4 * spec.h]),
                gated=rnd.choice(["no", "separate", "fused"]),
                act=rnd.choice(sorted(ACTIVATIONS)),
                bias=rnd.random() < 0.4,
            )
        elif kind == "head":
            block.update(vocab=rnd.choice([50, 96, 256]), out=rnd.choice(["logits", "log_softmax", "logsumexp", "softmax"]))
        elif kind == "elementwise":
            block.update(op=rnd.choice(["scale", "clamp", "normalize", "mean_center", "tanh_cap"]))
        spec.blocks.append(block)
        if kind == "head":
            break  # the head ends the model
    if rnd.random() < 0.3:  # (a size-1 dim is specialized by torch.export: not marked)
        spec.dynamic = "s" if not spec.cache and spec.s > 1 and rnd.random() < 0.5 else "b" if spec.b > 1 else ""
    _draw_more(spec, random.Random(seed * 7919 + 1))
    return spec


def _draw_more(spec: Spec, rnd: random.Random) -> None:
    """Position biases, cross-attention, einsum scores, LoRA, pooled heads: drawn from a stream of their
    own, so the modules of the seeds drawn before them stay as they were."""
    for c in spec.blocks:
        if c["kind"] == "attention":
            manual = c["form"].startswith("manual")
            c["cross"] = not spec.cache and c["form"] in ("sdpa", "manual", "manual_f32", "manual_softcap") and rnd.random() < 0.15
            c["position_bias"] = rnd.choice(["none", "none", "none", "alibi", "window"]) if manual and not c["cross"] else "none"
            c["einsum"] = manual and rnd.random() < 0.25
            if c["cross"]:
                c["rotary"] = False
                spec.context = spec.context or rnd.choice([7, 24])
        elif c["kind"] == "mlp":
            c["lora"] = rnd.random() < 0.2
        elif c["kind"] == "head":
            c["pool"] = rnd.random() < 0.2


class Norm(nn.Module):
    def __init__(self, kind: str, h: int) -> None:
        super().__init__()
        self.kind = kind
        if kind == "layer":
            self.mod = nn.LayerNorm(h)
        elif kind == "layer_nobias":
            self.mod = nn.LayerNorm(h, bias=False)
        elif kind == "rms":
            self.mod = nn.RMSNorm(h, eps=1e-6)
        elif kind in ("rms_f32", "gemma"):
            self.weight = nn.Parameter(torch.randn(h) * 0.1 + (0.0 if kind == "gemma" else 1.0))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.kind == "none":
            return x
        if self.kind in ("rms_f32", "gemma"):  # Hugging Face's float32 forms
            xf = x.float()
            y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)
            w = (1.0 + self.weight.float()) if self.kind == "gemma" else self.weight.float()
            return (y * w).type_as(x)
        return self.mod(x)


def rotate_half(t: torch.Tensor) -> torch.Tensor:
    a, b = t.chunk(2, dim=-1)
    return torch.cat((-b, a), dim=-1)


class Attention(nn.Module):
    def __init__(self, c: dict, h: int, s: int) -> None:
        super().__init__()
        self.c, self.h = c, h
        self.nh, self.nkv = c["heads"], c["kv"]
        self.hd = h // self.nh
        kvw = self.nkv * self.hd
        if c["fused"]:
            self.qkv = nn.Linear(h, h + 2 * kvw, bias=c["bias"])
        else:
            self.q, self.k, self.v = nn.Linear(h, h, bias=c["bias"]), nn.Linear(h, kvw, bias=c["bias"]), nn.Linear(h, kvw, bias=c["bias"])
        self.o = nn.Linear(h, h, bias=c["bias"])
        if c["qk_norm"]:
            self.qn, self.kn = nn.RMSNorm(self.hd, eps=1e-6), nn.RMSNorm(self.hd, eps=1e-6)
        pos = torch.arange(MAX_POSITIONS, dtype=torch.float32)[:, None] / (10000 ** (torch.arange(0, self.hd, 2, dtype=torch.float32) / self.hd))
        ang = torch.cat((pos, pos), dim=-1)
        self.register_buffer("cos", ang.cos()[None, None], persistent=False)
        self.register_buffer("sin", ang.sin()[None, None], persistent=False)

    def forward(self, x: torch.Tensor, keep: torch.Tensor | None, cache: tuple[torch.Tensor, torch.Tensor] | None, context: torch.Tensor | None) -> torch.Tensor:
        b, s, _ = x.shape
        kvw = self.nkv * self.hd
        src = context if self.c.get("cross") else x  # cross-attention: keys and values from the context
        if self.c["fused"] and src is x:
            qkv = self.qkv(x)
            q, k, v = qkv[..., : self.h], qkv[..., self.h : self.h + kvw], qkv[..., self.h + kvw :]
        elif self.c["fused"]:  # the fused weight's rows, as a model that shares it would slice them
            q = F.linear(x, self.qkv.weight[: self.h], None if self.qkv.bias is None else self.qkv.bias[: self.h])
            kv = F.linear(src, self.qkv.weight[self.h :], None if self.qkv.bias is None else self.qkv.bias[self.h :])
            k, v = kv[..., :kvw], kv[..., kvw:]
        else:
            q, k, v = self.q(x), self.k(src), self.v(src)
        t = src.shape[1]
        q = q.view(b, s, self.nh, self.hd).transpose(1, 2)
        k = k.view(b, t, self.nkv, self.hd).transpose(1, 2)
        v = v.view(b, t, self.nkv, self.hd).transpose(1, 2)
        if self.c["qk_norm"]:
            q, k = self.qn(q), self.kn(k)
        if self.c["rotary"] and self.hd % 2 == 0:
            at = slice(0, s) if cache is None else slice(cache[0].shape[2], cache[0].shape[2] + 1)  # the new token's position
            cos, sin = self.cos[:, :, at].to(q.dtype), self.sin[:, :, at].to(q.dtype)
            q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        if cache is not None:
            k, v = torch.cat((cache[0], k), dim=2), torch.cat((cache[1], v), dim=2)
        s = k.shape[2]  # the keys' length from here on
        group = self.nh // self.nkv
        form = self.c["form"]
        if group > 1 and not (form.startswith("sdpa") and self.c["gqa"] == "enable_gqa"):
            if self.c["gqa"] == "expand" and self.nkv == 1:
                k, v = k.expand(b, self.nh, s, self.hd), v.expand(b, self.nh, s, self.hd)  # (s: the keys')
            else:  # Hugging Face's repeat_kv
                k = k[:, :, None].expand(b, self.nkv, group, s, self.hd).reshape(b, self.nh, s, self.hd)
                v = v[:, :, None].expand(b, self.nkv, group, s, self.hd).reshape(b, self.nh, s, self.hd)
        gqa = group > 1 and self.c["gqa"] == "enable_gqa"
        if form == "sdpa_causal":
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=gqa)
        elif form == "sdpa":
            a = F.scaled_dot_product_attention(q, k, v, enable_gqa=gqa)
        elif form == "sdpa_mask":
            assert keep is not None
            a = F.scaled_dot_product_attention(q, k, v, attn_mask=keep[:, None, None, :], enable_gqa=gqa)
        else:
            w = (torch.einsum("bhqd,bhkd->bhqk", q, k) if self.c.get("einsum") else q @ k.transpose(-1, -2)) / math.sqrt(self.hd)
            if self.c.get("position_bias", "none") != "none":
                w = w + self.position_bias(x.shape[1], s).to(w.dtype)
            if form == "manual_softcap":
                w = torch.tanh(w / 30.0) * 30.0
            if form == "manual_mask":
                assert keep is not None
                w = w.masked_fill(~keep[:, None, None, :], torch.finfo(w.dtype).min)
            p = torch.softmax(w.float(), dim=-1).to(q.dtype) if form == "manual_f32" else torch.softmax(w, dim=-1)
            a = p @ v
        return self.o(a.transpose(1, 2).reshape(b, x.shape[1], self.h))

    def position_bias(self, queries: int, keys: int) -> torch.Tensor:
        """ALiBi's per-head linear bias, or a causal sliding window of 4 as an additive -inf mask
        ([heads or 1, queries, keys], the queries the last of the keys), made from positions per call."""
        rel = torch.arange(keys)[None, :] - torch.arange(keys - queries, keys)[:, None]  # key - query position
        if self.c["position_bias"] == "alibi":
            slopes = 2.0 ** (-8.0 * torch.arange(1, self.nh + 1) / self.nh)
            return slopes[:, None, None] * rel.clamp(max=0)[None].float()
        return torch.zeros(1, queries, keys).masked_fill(((rel > 0) | (rel < -4))[None], float("-inf"))


class Mlp(nn.Module):
    def __init__(self, c: dict, h: int) -> None:
        super().__init__()
        self.c = c
        w = c["width"]
        if c["gated"] == "fused":
            self.gate_up = nn.Linear(h, 2 * w, bias=c["bias"])
        else:
            self.up = nn.Linear(h, w, bias=c["bias"])
            if c["gated"] == "separate":
                self.gate = nn.Linear(h, w, bias=c["bias"])
        self.down = nn.Linear(w, h, bias=c["bias"])
        if c.get("lora"):  # a low-rank update beside the down projection
            self.lora_a, self.lora_b = nn.Linear(w, 4, bias=False), nn.Linear(4, h, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        act = ACTIVATIONS[self.c["act"]]
        if self.c["gated"] == "fused":
            g, u = self.gate_up(x).chunk(2, dim=-1)
            m = act(g) * u
        elif self.c["gated"] == "separate":
            m = act(self.gate(x)) * self.up(x)
        else:
            m = act(self.up(x))
        if self.c.get("lora"):
            return self.down(m) + 0.5 * self.lora_b(self.lora_a(m))
        return self.down(m)


class Head(nn.Module):
    def __init__(self, c: dict, h: int) -> None:
        super().__init__()
        self.c = c
        self.lm = nn.Linear(h, c["vocab"], bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.lm(x.mean(1) if self.c.get("pool") else x)
        out = self.c["out"]
        if out == "log_softmax":
            return F.log_softmax(y.float(), dim=-1)
        if out == "logsumexp":
            return torch.logsumexp(y, dim=-1)
        if out == "softmax":
            return torch.softmax(y, dim=-1)
        return y


def elementwise(op: str, x: torch.Tensor) -> torch.Tensor:
    if op == "scale":
        return x * 0.5
    if op == "clamp":
        return x.clamp(-4.0, 4.0)
    if op == "normalize":
        return F.normalize(x, dim=-1) * math.sqrt(x.shape[-1])
    if op == "mean_center":
        return x - x.mean(-1, keepdim=True)
    return torch.tanh(x / 8.0) * 8.0


class Model(nn.Module):
    """The drawn blocks: residual blocks with their norm before (or after: `post`) them."""

    def __init__(self, spec: Spec) -> None:
        super().__init__()
        self.spec = spec
        self.norms = nn.ModuleList(Norm(c["norm"], spec.h) for c in spec.blocks)
        mods: list[nn.Module] = []
        for c in spec.blocks:
            kind = c["kind"]
            mods.append(Attention(c, spec.h, spec.s) if kind == "attention" else Mlp(c, spec.h) if kind == "mlp" else Head(c, spec.h) if kind == "head" else nn.Identity())
        self.mods = nn.ModuleList(mods)

    def forward(self, x: torch.Tensor, *rest: torch.Tensor) -> torch.Tensor:
        """`rest`: the padding mask (`spec.padding`), the context (`spec.context`), then each attention
        block's K and V caches (`spec.cache`)."""
        rest_ = list(rest)
        keep = rest_.pop(0) if self.spec.padding else None
        context = rest_.pop(0) if self.spec.context else None
        caches = rest_
        for c, norm, mod in zip(self.spec.blocks, self.norms, self.mods):
            kind = c["kind"]
            cache = (caches.pop(0), caches.pop(0)) if kind == "attention" and self.spec.cache else None
            if kind == "head":
                return mod(norm(x))
            if kind == "norm":
                x = norm(x)
            elif kind == "elementwise":
                x = elementwise(c["op"], x)
            elif c["post"]:
                x = norm(x + (mod(x, keep, cache, context) if kind == "attention" else mod(x)))
            else:
                h = norm(x)
                x = x + (mod(h, keep, cache, context) if kind == "attention" else mod(h))
        return x


def build(spec: Spec) -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(spec.seed)
    model = Model(spec).eval()
    with torch.no_grad():
        for p in model.parameters():  # weights of a trained model's scale: outputs stay near 1
            if p.dim() == 2:
                p.normal_(0.0, 1.0 / math.sqrt(p.shape[1]))
    return model.to(spec.dtype), inputs(spec, spec.b, spec.s)


def inputs(spec: Spec, b: int, s: int) -> tuple[torch.Tensor, ...]:
    """x [b, s, h], the padding mask [b, keys] (the last row left-padded, never every key), the caches."""
    xs = [torch.randn(b, s, spec.h).to(spec.dtype)]
    if spec.padding:
        keep = torch.ones(b, s + spec.cache, dtype=torch.bool)
        keep[-1, : (s + spec.cache) // 3] = False
        xs.append(keep)
    if spec.context:
        xs.append(torch.randn(b, spec.context, spec.h).to(spec.dtype))
    for c in spec.blocks:
        if c["kind"] == "attention" and spec.cache:
            xs += [torch.randn(b, c["kv"], spec.cache, spec.h // c["heads"]).to(spec.dtype) for _ in range(2)]
    return tuple(xs)


def dynamic_shapes(spec: Spec, xs: tuple[torch.Tensor, ...]) -> tuple | None:
    """`spec.dynamic`'s dim marked on every input that has it, structured as `Model.forward(x, *rest)`."""
    if not spec.dynamic:
        return None
    if spec.dynamic == "b":
        d = torch.export.Dim("b", min=2, max=8)
        marks = [{0: d} for _ in xs]
    else:
        d = torch.export.Dim("s", min=2, max=MAX_POSITIONS)
        marks = [{1: d} if i == 0 or (i == 1 and spec.padding) else {} for i in range(len(xs))]  # x and the mask
    return (marks[0], tuple(marks[1:])) if len(marks) > 1 else (marks[0],)  # (torch.export's view of *rest)


def other_size(spec: Spec) -> tuple[int, int]:
    """(b, s) of the second check of a module with a dynamic dim."""
    if spec.dynamic == "b":
        return spec.b % 3 + 2, spec.s
    return spec.b, 47 if spec.s != 47 else 9


def fresh(xs: tuple[torch.Tensor, ...], seed: int) -> tuple[torch.Tensor, ...]:
    """Uniform(-1.5, 2.5) values for the floating inputs (the gate saw normal ones); masks kept."""
    g = torch.Generator().manual_seed(seed + 1)
    return tuple((torch.rand(x.shape, generator=g, dtype=torch.float64) * 4 - 1.5).to(x.dtype) if x.is_floating_point() else x for x in xs)


def faster(fn, inputs, which, region) -> float:  # noqa: ANN001 - ours 2x faster: only correctness decides
    return 1.0 if which == "cleave" else 2.0


TOLERANCE = {torch.float32: 2e-3, torch.float16: 2e-2, torch.bfloat16: 8e-2}


@dataclass
class Outcome:
    seed: int
    ok: bool
    replaced: int
    regions: int
    err: float  # ours against float64, relative to the output's scale
    eager_err: float
    message: str = ""
    kept: list[str] = field(default_factory=list)  # why each region that stayed PyTorch's did


def check(seed: int, compiler, verbose: bool = False, backend: bool = False) -> Outcome:  # noqa: ANN001
    """Draw, optimize and compare one module; with `backend`, through `torch.compile(backend=ct.backend(..))`
    (dynamo's graphs: the second size of a dynamic module recompiles it as a dynamic graph)."""
    import cleave_ir.torch as ct

    spec = draw(seed)
    model, xs = build(spec)
    if verbose:
        print(spec)
    log = io.StringIO()
    reports: list = []
    options = {"compiler": compiler, "timer": faster, "timings": None}
    try:
        with contextlib.redirect_stdout(log) if not verbose else contextlib.nullcontext():
            if backend:
                torch._dynamo.reset()
                m2 = torch.compile(model, backend=ct.backend(reports=reports, **options))
            else:
                m2 = ct.optimize(model, xs, dynamic_shapes(spec, xs), **options)
                reports.append(m2.cleave_report)
    except Exception as e:  # noqa: BLE001 - the front end must never raise: report it
        return Outcome(seed, False, 0, 0, math.inf, math.inf, f"optimize raised {type(e).__name__}: {e}\n{traceback.format_exc(limit=-6)}")
    wide = copy.deepcopy(model).to(torch.float64)
    sets = [fresh(xs, seed)] + ([fresh(inputs(spec, *other_size(spec)), seed)] if spec.dynamic else [])
    err = eager_err = 0.0
    problems = []
    for ys in sets:
        try:
            with torch.no_grad():
                got, want = m2(*ys), model(*ys)
                ref = wide(*(y.double() if y.is_floating_point() else y for y in ys))
        except Exception as e:  # noqa: BLE001 - a stitched module that does not run is a failure
            problems.append(f"at {[tuple(y.shape) for y in ys]} it raised {type(e).__name__}: {e}\n{traceback.format_exc(limit=-6)}")
            continue
        if got.shape != want.shape or got.dtype != want.dtype:
            problems.append(f"shape/dtype {tuple(got.shape)} {got.dtype} vs {tuple(want.shape)} {want.dtype}")
            continue
        scale = float(ref.abs().max()) + 1e-6
        finite = torch.isfinite(ref)
        e_ours = float((got.double() - ref)[finite].abs().max()) / scale if bool(finite.any()) else 0.0
        e_eager = float((want.double() - ref)[finite].abs().max()) / scale if bool(finite.any()) else 0.0
        err, eager_err = max(err, e_ours), max(eager_err, e_eager)
        if bool((got.isnan() & ~want.isnan()).any()):
            problems.append(f"NaN where eager has none at {tuple(got.shape)}")
        elif e_ours > max(4 * e_eager, TOLERANCE[spec.dtype]):
            problems.append(f"err {e_ours:.3g} vs eager {e_eager:.3g} at {tuple(got.shape)}")
    if verbose:  # (after the runs: the backend's graphs are optimized at their first call)
        print("\n".join(str(report) for report in reports))
    rows = [r for report in reports for r in report.regions()]
    msg = "" if not problems else "; ".join(problems) + f"\n{spec}\n" + "\n".join(str(report) for report in reports)
    kept = [re.sub(r"[\d.]+(e-?\d+)?", "N", r.reason)[:90] for r in rows if r.decision != "cleave"]
    return Outcome(seed, not problems, sum(r.decision == "cleave" for r in rows), len(rows), err, eager_err, msg, kept)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=int, default=50, help="how many seeds")
    p.add_argument("--seed", type=int, default=0, help="the first seed")
    p.add_argument("--lowered", action="store_true", help="compile regions with `cleave compile --no-search` and run TileLang's interpreter")
    p.add_argument("--backend", action="store_true", help="through torch.compile(backend=cleave_ir.torch.backend(...)) instead of optimize")
    p.add_argument("-v", "--verbose", action="store_true")
    args = p.parse_args(argv)
    import cleave_ir.torch as ct

    torch.set_float32_matmul_precision("high")  # fp32 matmul regions allowed (TF32, as PyTorch at "high")
    compiler = (lambda: ct.PipelineCompiler(options=("--no-search", "--no-cache", "-j", "1"), gpu=False)) if args.lowered else (lambda: ct.interpreted_graph)
    failures = []
    t0 = time.perf_counter()
    replaced = regions = 0
    kept: Counter[str] = Counter()
    seeds_of: dict[str, list[int]] = {}
    for seed in range(args.seed, args.seed + args.n):
        out = check(seed, compiler(), args.verbose, args.backend)
        replaced += out.replaced
        regions += out.regions
        kept.update(out.kept)
        for reason in out.kept:
            seeds_of.setdefault(reason, []).append(seed)
        if not out.ok:
            failures.append(out)
            print(f"FAIL seed {seed}: {out.message}", flush=True)
        elif args.verbose:
            print(f"ok seed {seed}: err {out.err:.3g} (eager {out.eager_err:.3g}), {out.replaced} of {out.regions} regions replaced")
    for reason, n in kept.most_common():
        print(f"{n:6d}  kept in PyTorch: {reason}  (seeds {sorted(set(seeds_of[reason]))[:6]})")
    print(f"{args.n} modules, {len(failures)} failed ({[f.seed for f in failures]}); {replaced} of {regions} regions replaced; {time.perf_counter() - t0:.0f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
