"""cleave_ir.torch on modules it was not developed on: Hugging Face masks, attention variants, layers.

Kernels run through the tgraph interpreter (`ct.interpreted_graph`) with faked timings; each test
compares the stitched module with eager PyTorch on inputs the gate did not see.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402

import cleave_ir.torch as ct  # noqa: E402
from cleave_ir.compile import graph_text  # noqa: E402

pytestmark = pytest.mark.usefixtures("tf32_allowed")  # fp32 models: TF32 as PyTorch at "high"


def faster(fn, inputs, which, region):  # ours 2x faster
    return 1.0 if which == "cleave" else 2.0


def custom_ops(gm) -> list[str]:
    return [str(n.target) for n in gm.graph.nodes if n.op == "call_function" and str(n.target).startswith("cleave.")]


def hf_sdpa(q, k, v, mask):
    """Hugging Face's extended attention mask from a [b, s] 0/1 padding mask, into SDPA."""
    ext = (1.0 - mask[:, None, None, :].to(q.dtype)) * torch.finfo(q.dtype).min
    return F.scaled_dot_product_attention(q, k, v, attn_mask=ext)


def hf_eager(q, k, v, mask):
    """BERT's eager attention: softmax(q k^T / sqrt(d) + extended mask) v."""
    ext = (1.0 - mask[:, None, None, :].to(q.dtype)) * torch.finfo(q.dtype).min
    w = q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5 + ext
    return F.softmax(w, dim=-1) @ v


@pytest.mark.parametrize("f", [hf_sdpa, hf_eager], ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=str)
def test_hugging_face_extended_mask_is_in_the_attention_region(f, dtype):
    """`(1.0 - mask.to(dtype)) * finfo(dtype).min` joins its attention's region: the integer mask
    enters as 0/1 and (1 - keep) * c as select(keep, 0, c), so the search draws it as 0/1 (before:
    rsub stayed in PyTorch, the region read the 0/1 float as an input, the gate drew it from a
    normal, times finfo.min that overflowed, and the region was refused as "wrong: rel. error inf")."""
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 2, 8, 16, dtype=dtype) for _ in range(3))
    mask = torch.ones(2, 8, dtype=torch.long)
    mask[1, 5:] = 0
    plan = ct.explain(f, (q, k, v, mask), quiet=True)
    [region] = [r for r in plan.regions if r.worth]
    assert {"aten.to", "aten.rsub", "aten.mul"} <= set(region.ops()), plan.text()
    assert "select" in region.tgraph_ops() and "rsub" not in graph_text(region.graph), graph_text(region.graph)
    assert [str(i.cast) for i in region.inputs if i.cast is not None] == [str(dtype)]
    m2 = ct.optimize(f, (q, k, v, mask), compiler=ct.interpreted_graph, timer=faster)
    [row] = m2.cleave_report.replaced()
    assert row.error < (1e-5 if dtype == torch.float32 else 1e-2), row
    other = torch.ones(2, 8, dtype=torch.long)
    other[0, :3] = 0  # left padding
    tol = 1e-5 if dtype == torch.float32 else 2e-3
    with torch.no_grad():
        torch.testing.assert_close(m2(q, k, v, other), f(q, k, v, other), rtol=tol, atol=tol)


def test_boolean_mask_rows_masked_whole_are_zero():
    """PyTorch's SDPA returns 0 for a query row its boolean mask masks whole (torch 2.13); the kernel's
    fill gives the mean of V there, so the stitched op zeroes those rows (before: the gate, which saw
    a mask without such rows, accepted the region, and a left-padded mask then got silently wrong rows)."""

    def f(q, k, v, mask):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)

    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 2, 8, 16) for _ in range(3))
    causal = torch.ones(2, 1, 8, 8, dtype=torch.bool).tril()
    m2 = ct.optimize(f, (q, k, v, causal), compiler=ct.interpreted_graph, timer=faster)
    [row] = m2.cleave_report.replaced()
    assert m2.cleave_report.rows[0].decision == "cleave"
    padded = causal.clone()
    padded[1, :, :, :3] = False  # batch 1: three padding keys, so its first three query rows keep none
    with torch.no_grad():
        want = f(q, k, v, padded)
        assert bool((want[1, :, :3] == 0).all())
        torch.testing.assert_close(m2(q, k, v, padded), want, rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(m2(q, k, v, causal), f(q, k, v, causal), rtol=1e-5, atol=1e-5)


class T5Norm(torch.nn.Module):
    """T5's RMSNorm: the variance in float32, `x * rsqrt(var + eps)` promoted to float32, cast back
    to the weight's half type, then a projection."""

    def __init__(self, d: int = 32) -> None:
        super().__init__()
        self.w = torch.nn.Parameter(torch.rand(d) + 0.5)
        self.proj = torch.nn.Linear(d, 16, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        var = x.to(torch.float32).pow(2).mean(-1, keepdim=True)
        h = (x * torch.rsqrt(var + 1e-6)).to(self.w.dtype)
        return self.proj(self.w * h)


def test_mixed_type_product_and_half_precision_tolerance():
    """bf16 x times a float32 statistic is computed in float32 (PyTorch's promotion: both cast), so the
    norm and projection are one region (before: "mul of mixed element types" cut it in two); the gate
    checks a region at the tolerance of the least precise type it computes (before: the first
    input's, float32's 1e-3, refused the bf16 projection as wrong at 4e-3)."""
    torch.manual_seed(0)
    m, x = T5Norm().to(torch.bfloat16).eval(), torch.randn(4, 32, dtype=torch.bfloat16)
    plan = ct.explain(m, (x,), quiet=True)
    [region] = plan.regions
    assert not plan.unsupported and region.tgraph_ops().count("cast") >= 2, plan.text()
    m2 = ct.optimize(m, (x,), compiler=ct.interpreted_graph, timer=faster)
    [row] = m2.cleave_report.rows
    assert row.decision == "cleave" and 1e-3 < row.error < 2e-2, row
    x2 = torch.randn(4, 32, dtype=torch.bfloat16)
    with torch.no_grad():
        torch.testing.assert_close(m2(x2), m(x2), rtol=2e-2, atol=2e-2)


def test_enable_gqa_is_the_grouped_form():
    """SDPA(enable_gqa=True) over fewer kv heads: the grouped form of repeat_kv'd attention (the query
    heads of a kv head are rows, K and V read once); before, it stayed in PyTorch."""

    def f(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, enable_gqa=True)

    torch.manual_seed(0)
    xs = (torch.randn(2, 8, 3, 16), torch.randn(2, 2, 40, 16), torch.randn(2, 2, 40, 16))
    plan = ct.explain(f, xs, quiet=True)
    [region] = plan.regions
    assert region.output_like == 0 and "%in0: !tgraph.tensor<[2, 2, 12, 16], f32>" in graph_text(region.graph), plan.text()
    m2 = ct.optimize(f, xs, compiler=ct.interpreted_graph, timer=faster)
    assert m2.cleave_report.rows[0].decision == "cleave"
    ys = (torch.randn(2, 8, 3, 16), torch.randn(2, 2, 40, 16), torch.randn(2, 2, 40, 16))
    with torch.no_grad():
        torch.testing.assert_close(m2(*ys), f(*ys), rtol=1e-5, atol=1e-5)
    masked = ct.explain(lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m, enable_gqa=True), (*xs, torch.zeros(3, 40)), quiet=True)
    assert "enable_gqa with an attn_mask" in masked.text()


def test_baddbmm_and_numpy_transpose():
    """`torch.baddbmm` (Bloom's ALiBi scores) and `x @ w.T` (aten.numpy_T) over broadcast batch dims compile."""

    def f(b, x, y, w):
        s = torch.baddbmm(b, x, y, beta=0.5, alpha=2.0)
        return torch.softmax(s, -1) @ w.T

    torch.manual_seed(0)
    xs = (torch.randn(2, 4, 8), torch.randn(2, 4, 16), torch.randn(2, 16, 8), torch.randn(12, 8))
    plan = ct.explain(f, xs, quiet=True)
    assert not plan.unsupported and [r.tgraph_ops().count("matmul") for r in plan.regions] == [2], plan.text()
    m2 = ct.optimize(f, xs, compiler=ct.interpreted_graph, timer=faster)
    assert m2.cleave_report.rows[0].decision == "cleave"
    ys = [torch.randn_like(x) for x in xs]
    with torch.no_grad():
        torch.testing.assert_close(m2(*ys), f(*ys), rtol=1e-5, atol=1e-5)


def test_dynamic_shapes_of_a_plain_function():
    """`dynamic_shapes` for a function (per input, or a dict by parameter name) reaches torch.export
    through the wrapper's `forward(*args)` (before: "torch.export failed" for every function)."""

    def f(q, k, v, mask):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)

    b = torch.export.Dim("b", min=1, max=8)
    xs = (torch.randn(2, 4, 8, 16), torch.randn(2, 4, 8, 16), torch.randn(2, 4, 8, 16), torch.ones(2, 1, 8, 8, dtype=torch.bool).tril())
    for shapes in (({0: b},) * 4, {"q": {0: b}, "k": {0: b}, "v": {0: b}, "mask": {0: b}}):
        m2 = ct.optimize(f, xs, dynamic_shapes=shapes, compiler=ct.interpreted_graph, timer=faster)
        [row] = m2.cleave_report.rows
        assert row.decision == "cleave" and row.reason.startswith("correct on 7 input sets"), row
    ys = (torch.randn(3, 4, 8, 16), torch.randn(3, 4, 8, 16), torch.randn(3, 4, 8, 16), torch.ones(3, 1, 8, 8, dtype=torch.bool).tril())
    with torch.no_grad():
        torch.testing.assert_close(m2(*ys), f(*ys), rtol=1e-5, atol=1e-5)


def test_pytorchs_own_nan_rows_match():
    """masked_fill(-inf) over a row masked whole: PyTorch's softmax gives NaN there; NaN in both
    counts as equal, and the random input sets are still checked everywhere else (before: refused
    as wrong, with a reason claiming the reference was finite)."""

    def f(q, k, v, mask):
        w = (q @ k.transpose(-1, -2)).masked_fill(mask, float("-inf"))
        return torch.softmax(w, -1) @ v

    torch.manual_seed(0)
    q, k, v = (torch.randn(1, 2, 8, 16) for _ in range(3))
    drop = ~torch.ones(1, 1, 8, 8, dtype=torch.bool).tril()
    drop[..., 0, :] = True
    m2 = ct.optimize(f, (q, k, v, drop), compiler=ct.interpreted_graph, timer=faster)
    [row] = m2.cleave_report.rows
    assert row.decision == "cleave" and row.reason.startswith("correct on 6 input sets"), row
    with torch.no_grad():
        got, want = m2(q, k, v, drop), f(q, k, v, drop)
    assert torch.equal(got.isnan(), want.isnan()) and bool(want[..., 0, :].isnan().all())
    torch.testing.assert_close(got.nan_to_num(), want.nan_to_num(), rtol=1e-5, atol=1e-5)


def test_safe_softmax_stays_in_pytorch():
    """`aten._safe_softmax` (SDPA's math decomposition) is 0 on rows that are -inf throughout; as a
    plain softmax ours was NaN there, wrong whenever the gate's example had no such row. It stays in
    PyTorch with that reason, and the model's output is PyTorch's."""

    def f(x, w):
        return torch.ops.aten._safe_softmax(x @ w, -1)

    torch.manual_seed(0)
    x, w = torch.randn(4, 16), torch.randn(16, 8)
    plan = ct.explain(f, (x, w), quiet=True)
    assert "_safe_softmax is 0 on rows that are -inf throughout" in plan.text(), plan.text()
    m2 = ct.optimize(f, (x, w), compiler=ct.interpreted_graph, timer=faster)
    x2 = torch.randn(4, 16)
    w2 = torch.randn(16, 8)
    w2[:, :] = float("-inf")  # every logit of every row -inf
    x2 = x2.abs() + 1
    assert torch.equal(m2(x2, w2), f(x2, w2)) and torch.equal(f(x2, w2), torch.zeros(4, 8))


def test_multi_query_attention_through_expand_reads_kv_once():
    """Multi-query attention written `k.expand(b, h, L, d)` (one kv head) becomes the grouped form: the
    query heads are rows of one [b, 1, h*s, d] input and K/V are read once (before: a region that read
    the expanded K and V once per query head)."""

    def mqa(q, k, v):
        b, h, s, d = q.shape
        return F.scaled_dot_product_attention(q, k.expand(b, h, -1, -1), v.expand(b, h, -1, -1))

    torch.manual_seed(0)
    xs = (torch.randn(2, 4, 3, 16), torch.randn(2, 1, 20, 16), torch.randn(2, 1, 20, 16))
    plan = ct.explain(mqa, xs, quiet=True)
    [region] = [r for r in plan.regions if r.worth]
    text = graph_text(region.graph)
    assert "%in0: !tgraph.tensor<[2, 1, 12, 16], f32>" in text, text  # 4 query heads x 3 positions as rows
    assert text.count("!tgraph.tensor<[2, 1, 20, 16], f32>") >= 2, text
    m2 = ct.optimize(mqa, xs, compiler=ct.interpreted_graph, timer=faster)
    [row] = m2.cleave_report.replaced()
    assert row.error < 1e-5, row
    ys = (torch.randn(2, 4, 3, 16), torch.randn(2, 1, 20, 16), torch.randn(2, 1, 20, 16))
    torch.testing.assert_close(m2(*ys), mqa(*ys), rtol=1e-5, atol=1e-5)


class CausalGQA(torch.nn.Module):
    """Llama-style prefill attention: q/k/v heads as views of projections, causal SDPA over 2 kv heads
    shared by 4 query heads, written with `enable_gqa=True` or with Hugging Face's `repeat_kv`."""

    def __init__(self, gqa: str, d: int = 64, h: int = 4, kvh: int = 2) -> None:
        super().__init__()
        self.gqa, self.h, self.kvh, self.hd = gqa, h, kvh, d // h
        self.q, self.o = torch.nn.Linear(d, d, bias=False), torch.nn.Linear(d, d, bias=False)
        self.k, self.v = torch.nn.Linear(d, kvh * self.hd, bias=False), torch.nn.Linear(d, kvh * self.hd, bias=False)

    def forward(self, x):
        b, s, d = x.shape
        q = self.q(x).view(b, s, self.h, self.hd).transpose(1, 2)
        k, v = (p(x).view(b, s, self.kvh, self.hd).transpose(1, 2) for p in (self.k, self.v))
        if self.gqa == "enable_gqa":
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        else:
            n = self.h // self.kvh
            k, v = (t[:, :, None].expand(b, self.kvh, n, s, self.hd).reshape(b, self.h, s, self.hd) for t in (k, v))
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.o(a.transpose(1, 2).reshape(b, s, d))


@pytest.mark.parametrize("gqa", ["enable_gqa", "repeat_kv"])
def test_causal_grouped_attention_is_one_region_reading_views(gqa):
    """Causal attention over shared kv heads (modern Hugging Face prefill: `enable_gqa=True`; before:
    refused) becomes the grouped form with the query heads of a kv head as a dim of their own
    ([b, kvh, group, s, d] against K/V [b, kvh, 1, s, d], the causal mask per query position): K/V
    are read once per kv head, the transposed query view is passed in place and the kernel writes
    PyTorch's output layout through a view of it; equal to eager on new inputs and under torch.compile."""
    seen: list[tuple] = []

    def compiler(graph):
        base = ct.interpreted_graph(graph)

        def kernel(*xs, out=None):
            seen.append(([tuple(x.shape) for x in xs], [x.stride() for x in xs], None if out is None else (tuple(out.shape), out.stride())))
            got = base(*xs)
            return got if out is None else out.copy_(got)

        return kernel

    torch.manual_seed(0)
    m, x = CausalGQA(gqa).eval(), torch.randn(1, 8, 64)
    m2 = ct.optimize(m, (x,), compiler=compiler, timer=faster)
    [row] = [r for r in m2.cleave_report.replaced() if "aten.scaled_dot_product_attention" in r.ops]
    assert row.error < 1e-5, row
    seen.clear()
    y = torch.randn(1, 8, 64)
    with torch.no_grad():
        torch.testing.assert_close(m2(y), m(y), rtol=1e-4, atol=1e-5)
    [(shapes, strides, out)] = [c for c in seen if len(c[0]) == 4 and len(c[0][0]) == 5]  # q, k, v and the causal mask
    assert shapes[:3] == [(1, 2, 2, 8, 16), (1, 2, 1, 8, 16), (1, 2, 1, 8, 16)], shapes
    assert strides[0][1:] == (2 * 16, 16, 64, 1)  # the query heads of [1, 8, 4, 16] memory, in place
    assert out is not None and out[0] == (1, 2, 2, 8, 16) and out[1][1:] == (2 * 16, 16, 64, 1)  # SDPA's transposed heads
    torch._dynamo.reset()
    compiled = torch.compile(m2, backend="aot_eager", fullgraph=True)
    with torch.no_grad():
        torch.testing.assert_close(compiled(y), m(y), rtol=1e-4, atol=1e-5)
