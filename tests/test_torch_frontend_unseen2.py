"""cleave_ir.torch on more modules it was not developed on: GPT-J / Gemma constants, learned scalars, ...

Kernels run through the tgraph interpreter (`ct.interpreted_graph`) with faked timings; each test
compares the stitched module with eager PyTorch on inputs the gate did not see.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
import torch.nn as nn  # noqa: E402

import cleave_ir.torch as ct  # noqa: E402
from cleave_ir.compile import graph_text  # noqa: E402

pytestmark = pytest.mark.usefixtures("tf32_allowed")  # fp32 models: TF32 as PyTorch at "high"


def faster(fn, inputs, which, region):  # ours 2x faster
    return 1.0 if which == "cleave" else 2.0


class ScalarTensors(nn.Module):
    """GPT-J's eager attention: `where(causal, w, torch.tensor(finfo.min))` (a constant torch.export
    lifts), scores scaled by a 0-d buffer, the output by a learned 0-d temperature, and a constant
    first operand (`torch.tensor(1.0) - p`)."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("scale", torch.tensor(0.25))
        self.t = nn.Parameter(torch.tensor(0.7))

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        s = q.shape[-2]
        w = (q @ k.transpose(-1, -2)) * self.scale
        w = torch.where(torch.ones(s, s, dtype=torch.bool).tril(), w, torch.tensor(torch.finfo(w.dtype).min, dtype=w.dtype))
        p = torch.softmax(w, -1)
        return (torch.tensor(1.0) - p) @ v * self.t


def test_zero_d_tensors_join_their_region():
    """A lifted `torch.tensor(c)` is read as a scalar and a 0-d parameter or buffer enters as its [1]
    view, so the attention is one region (before: "operand detach_ is a 0-d tensor" left the where,
    the scale and the temperature in PyTorch and cut the attention in two); the temperature stays an
    input, so a new value of it is used."""
    torch.manual_seed(0)
    m = ScalarTensors().eval()
    xs = tuple(torch.randn(2, 2, 8, 16) for _ in range(3))
    plan = ct.explain(m, xs, quiet=True)
    [region] = [r for r in plan.regions if r.worth]
    assert region.tgraph_ops().count("matmul") == 2 and {"aten.where", "aten.sub"} <= set(region.ops()), plan.text()
    assert "tgraph.scalar rsub" in graph_text(region.graph)
    layouts = {i.node.name: i.layout for i in region.inputs}
    assert layouts["scale"] == layouts["t"] == (None,) * 4, layouts
    assert "a 0-d constant: the regions that use it read its value as a scalar" in plan.text()
    m2 = ct.optimize(m, xs, compiler=ct.interpreted_graph, timer=faster)
    [row] = m2.cleave_report.replaced()
    assert row.error < 1e-5, row
    ys = tuple(torch.randn(2, 2, 8, 16) for _ in range(3))
    with torch.no_grad():
        m.t.fill_(-1.5)
        torch.testing.assert_close(m2(*ys), m(*ys), rtol=1e-5, atol=1e-5)


def test_einsum_matmuls_are_compiled():
    """`torch.einsum` written as a batched matmul (`bhqd,bhkd->bhqk`, `...qk,...kd->...qd`, a linear
    `bsd,nd->bsn`, operands swapped) is a tgraph matmul, so einsum attention is one region (before:
    "aten.einsum is not in the aten->tgraph table"; only the softmax was compiled); an einsum that is
    no matmul stays in PyTorch with that reason."""

    def attention(q, k, v, w):
        p = torch.einsum("bhqd,bhkd->bhqk", q, k).mul(0.25).softmax(-1)
        o = torch.einsum("...qk,...kd->...qd", p, v)
        return torch.einsum("bhsd,nd->bhsn", o, w)

    def other(x, y):
        return torch.einsum("bij,bkj->bki", x, y).softmax(-1) * torch.einsum("bsd,bsd->bs", x, x)[:, None, :]

    torch.manual_seed(0)
    xs = (*(torch.randn(2, 2, 8, 16) for _ in range(3)), torch.randn(12, 16))
    plan = ct.explain(attention, xs, quiet=True)
    assert not plan.unsupported and [r.tgraph_ops().count("matmul") for r in plan.regions] == [1, 2], plan.text()
    m2 = ct.optimize(attention, xs, compiler=ct.interpreted_graph, timer=faster)
    assert [r.decision for r in m2.cleave_report.rows] == ["cleave", "cleave"]
    ys = [torch.randn_like(x) for x in xs]
    with torch.no_grad():
        torch.testing.assert_close(m2(*ys), attention(*ys), rtol=1e-5, atol=1e-5)
    zs = (torch.randn(2, 8, 16), torch.randn(2, 5, 16))
    plan = ct.explain(other, zs, quiet=True)
    assert "einsum 'bsd,bsd->bs' that is not a batched matmul" in plan.text()
    assert [r.ops() for r in plan.regions if r.worth] == [["aten.einsum", "aten.softmax", "aten.unsqueeze", "aten.mul"]], plan.text()
    m2 = ct.optimize(other, zs, compiler=ct.interpreted_graph, timer=faster)
    with torch.no_grad():
        torch.testing.assert_close(m2(*zs), other(*zs), rtol=1e-5, atol=1e-5)


def test_float_mask_rows_minus_inf_throughout_are_zero():
    """PyTorch's SDPA returns 0 for a query row its float mask makes -inf throughout (torch 2.13, as for
    a boolean mask); ours was NaN there, and the gate, whose example mask had no such row, accepted
    the region: a left-padded additive mask then got NaN rows. Now the stitched op zeroes those rows,
    and a mask that may hold -inf (here ALiBi's `masked_fill(-inf)`) is an input of the SDPA's region
    so it can; Hugging Face's finite `(1 - mask) * finfo.min` still joins its region."""
    import torch.nn.functional as F

    def sdpa(q, k, v, mask):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)

    def alibi(q, k, v, slopes, keep):
        bias = (slopes[:, None, None] * torch.arange(8.0)).masked_fill(~keep, float("-inf"))
        return F.scaled_dot_product_attention(q, k, v, attn_mask=bias)

    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 2, 8, 16) for _ in range(3))
    causal = torch.ones(8, 8, dtype=torch.bool).tril()
    mask = torch.zeros(2, 1, 8, 8).masked_fill(~causal, float("-inf"))
    m2 = ct.optimize(sdpa, (q, k, v, mask), compiler=ct.interpreted_graph, timer=faster)
    assert m2.cleave_report.rows[0].decision == "cleave"
    padded = mask.clone()
    padded[1, :, :, :3] = float("-inf")  # batch 1: three padding keys, so its first three query rows keep none
    with torch.no_grad():
        want = sdpa(q, k, v, padded)
        assert bool((want[1, :, :3] == 0).all())
        torch.testing.assert_close(m2(q, k, v, padded), want, rtol=1e-5, atol=1e-5)
    plan = ct.explain(alibi, (q, k, v, torch.rand(2), causal), quiet=True)
    [region] = [r for r in plan.regions if r.worth]
    assert region.ops() == ["aten.scaled_dot_product_attention"] and region.empty_rows == 3, plan.text()
    m2 = ct.optimize(alibi, (q, k, v, torch.rand(2), causal), compiler=ct.interpreted_graph, timer=faster)
    keep = causal.clone()
    keep[:2] = False  # query rows 0 and 1 keep no key
    slopes = torch.rand(2)
    with torch.no_grad():
        want = alibi(q, k, v, slopes, keep)
        assert bool((want[:, :, :2] == 0).all())
        torch.testing.assert_close(m2(q, k, v, slopes, keep), want, rtol=1e-5, atol=1e-5)
