"""Module patterns the front end was not developed on, captured, gated and stitched through the
interpreters in fp32 and fp16: cross-attention with a boolean padding mask, einsum attention, a masked
mean pool with an L2 norm, LayerNorm over 200 columns into 333, a softmax over tokens (dim 1), a
logsumexp head, SDPA with `scale=` and a float mask. Every region must pass the gate (the test timer
makes ours faster) and the stitched module must equal eager in float64."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import cleave_ir.torch as ct  # noqa: E402

pytestmark = pytest.mark.usefixtures("tf32_allowed")  # fp32 models: TF32 as PyTorch at "high"


def faster(fn, inputs, which, region):  # ours 2x faster: only correctness decides
    return 1.0 if which == "cleave" else 2.0

class CrossAttnPad(nn.Module):  # decoder queries over encoder states with a boolean padding mask
    def __init__(self):
        super().__init__()
        self.q = nn.Linear(64, 64); self.kv = nn.Linear(48, 128); self.o = nn.Linear(64, 64)
    def forward(self, x, enc, keep):
        b, t, _ = x.shape; l = enc.shape[1]
        q = self.q(x).view(b, t, 4, 16).transpose(1, 2)
        k, v = self.kv(enc).view(b, l, 2, 4, 16).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, attn_mask=keep[:, None, None, :])
        return self.o(a.transpose(1, 2).reshape(b, t, 64))

class EinsumAttn(nn.Module):
    def forward(self, q, k, v):
        w = torch.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(q.shape[-1])
        return torch.einsum("bhqk,bhkd->bhqd", w.softmax(-1), v)

class MaskedMeanPool(nn.Module):  # sentence embedding: masked mean over tokens, then a projection and L2 norm
    def __init__(self):
        super().__init__()
        self.p = nn.Linear(64, 32)
    def forward(self, h, m):
        pooled = (h * m[..., None]).sum(1) / m.sum(1, keepdim=True).clamp(min=1e-9)
        return F.normalize(self.p(pooled), dim=-1)

class AwkwardLN(nn.Module):  # odd widths: LayerNorm over 200, GELU(erf) projection to 333
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(200); self.fc = nn.Linear(200, 333)
    def forward(self, x): return F.gelu(self.fc(self.ln(x)))

class SoftmaxDim1(nn.Module):  # softmax over a middle dim (attention pooling over tokens)
    def __init__(self):
        super().__init__()
        self.score = nn.Linear(64, 1)
    def forward(self, h):
        w = torch.softmax(self.score(h), dim=1)
        return (w * h).sum(1)

class LogSumExpHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, 500)
    def forward(self, x):
        z = self.fc(x)
        return z - torch.logsumexp(z, dim=-1, keepdim=True)

class ScaledSDPA(nn.Module):  # SDPA with an explicit scale and a float additive mask
    def forward(self, q, k, v, m): return F.scaled_dot_product_attention(q, k, v, attn_mask=m, scale=0.3)

CASES = {
    "CrossAttnPad": lambda: (CrossAttnPad(), (torch.randn(2, 5, 64), torch.randn(2, 9, 48), torch.tensor([[True] * 9, [True] * 6 + [False] * 3]))),
    "EinsumAttn": lambda: (EinsumAttn(), tuple(torch.randn(2, 4, 16, 32) for _ in range(3))),
    "MaskedMeanPool": lambda: (MaskedMeanPool(), (torch.randn(3, 12, 64), (torch.rand(3, 12) > 0.3).float())),
    "AwkwardLN": lambda: (AwkwardLN(), (torch.randn(7, 200),)),
    "SoftmaxDim1": lambda: (SoftmaxDim1(), (torch.randn(3, 12, 64),)),
    "LogSumExpHead": lambda: (LogSumExpHead(), (torch.randn(4, 64),)),
    "ScaledSDPA": lambda: (ScaledSDPA(), (*(torch.randn(1, 2, 8, 16) for _ in range(3)), torch.randn(1, 1, 8, 8))),
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("name", sorted(CASES))
def test_pattern_is_compiled_and_stitched(name: str, dtype: torch.dtype) -> None:
    torch.manual_seed(0)
    model, xs = CASES[name]()
    model = model.to(dtype).eval()
    xs = tuple(x.to(dtype) if x.is_floating_point() else x for x in xs)
    m2 = ct.optimize(model, xs, compiler=ct.interpreted_graph, timer=faster)
    rows = m2.cleave_report.rows
    assert rows and all(r.decision == "cleave" for r in rows), m2.cleave_report
    with torch.no_grad():
        want = model.double()(*[x.double() if x.is_floating_point() else x for x in xs])
        model.to(dtype)
        got = m2(*xs).double()
    err = ((got - want).abs().max() / want.abs().max()).item()
    assert err < (3e-3 if dtype == torch.float16 else 1e-4), err
