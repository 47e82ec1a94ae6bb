"""cleave_ir.torch on a third set of unseen modules: padding masks of finfo.min, dynamic masked attention, ...

Kernels run through the tgraph interpreter (`ct.interpreted_graph`) with faked timings, or, where
only the lowered kernels show the bug, through `cleave compile --no-search` and the TileLang
interpreter; each test compares the stitched module with eager PyTorch on inputs the gate did not see.
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


def lowered() -> ct.PipelineCompiler:
    """`cleave compile` without the search, its kernels run in the TileLang interpreter (about 1 s a region)."""
    return ct.PipelineCompiler(options=("--no-search", "--no-cache", "-j", "1"), gpu=False)


def masked_fill_min(q, k, v, pad):
    """BERT-style eager attention: padding keys filled with finfo.min."""
    w = (q @ k.transpose(-1, -2)).masked_fill(pad, torch.finfo(q.dtype).min)
    return torch.softmax(w, -1) @ v


def hf_sdpa(q, k, v, keep):
    """Hugging Face's extended mask `(1 - mask) * finfo.min` into SDPA."""
    ext = (1.0 - keep[:, None, None, :].to(q.dtype)) * torch.finfo(q.dtype).min
    return F.scaled_dot_product_attention(q, k, v, attn_mask=ext)


def sdpa(q, k, v, mask):
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)


@pytest.mark.parametrize(
    "f, dtype", [(masked_fill_min, torch.float32), (hf_sdpa, torch.bfloat16), (sdpa, torch.float32)], ids=["masked_fill-f32", "hf_sdpa-bf16", "sdpa_float_mask-f32"]
)
def test_a_row_masked_whole_with_finfo_min_is_uniform(f, dtype):
    """A query row whose keys are all masked with finfo(float32 or bf16).min is uniform in PyTorch (the
    mean of V); the kernels compute exp(x - max) as exp2(x * log2(e) - max * log2(e)), where
    finfo.min * log2(e) overflows to -inf, so the row was NaN (-inf + inf) and the gate, whose example
    had no such row, accepted the region: a left-padded batch then got NaN rows. Now such fill
    constants reaching a softmax are raised to -1e38 and an SDPA float mask input is floored there."""
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 1, 4, 16, dtype=dtype) for _ in range(3))
    if f is masked_fill_min:
        mask = torch.zeros(2, 1, 1, 4, dtype=torch.bool)
        mask[1, ..., 3:] = True
        whole = mask.clone()
        whole[1] = True
    elif f is hf_sdpa:
        mask = torch.ones(2, 4, dtype=torch.long)
        mask[1, 3:] = 0
        whole = mask.clone()
        whole[1] = 0
    else:
        mask = torch.zeros(2, 1, 1, 4, dtype=dtype)
        mask[1, ..., 3:] = torch.finfo(dtype).min
        whole = mask.clone()
        whole[1] = torch.finfo(dtype).min
        whole[0, ..., 1:] = float("-inf")  # partly -inf rows stay as they were
    m2 = ct.optimize(f, (q, k, v, mask), compiler=lowered(), timer=faster)
    [row] = m2.cleave_report.replaced()
    assert "-3.40" not in graph_text(next(r for r in ct.explain(f, (q, k, v, mask), quiet=True).regions if r.worth).graph)
    with torch.no_grad():
        got, want = m2(q, k, v, whole), f(q, k, v, whole)
    assert not bool(want.isnan().any())
    tol = 1e-5 if dtype == torch.float32 else 2e-2
    torch.testing.assert_close(got, want, rtol=tol, atol=tol)


def test_dynamic_padding_mask_region_is_checked_at_other_sizes():
    """The gate's set at other sizes makes boolean masks causal (True keeps); a masked_fill padding
    mask drops where True, so a [b, 1, 1, s] mask of one query row dropped every key, the reference was
    NaN and the set was skipped without a word: "correct on 4 input sets", a kernel that serves only
    the example size accepted. Now the set is retried with the masks inverted and checked."""
    from cleave_ir.interpreter import run_graph

    def f(q, k, v, pad):
        w = (q @ k.transpose(-1, -2)).masked_fill(pad, float("-inf"))
        return torch.softmax(w, -1) @ v

    def fixed_size(graph):  # a kernel that serves the example size only
        def run(*xs):
            return torch.from_numpy(run_graph(graph, [x.double().numpy() for x in xs], mode="declared")[0]).float()

        return run

    torch.manual_seed(0)
    q, k, v = (torch.randn(1, 2, 8, 16) for _ in range(3))
    pad = torch.zeros(1, 1, 1, 8, dtype=torch.bool)
    pad[..., 6:] = True
    s = torch.export.Dim("s", min=2, max=64)
    shapes = ({2: s}, {2: s}, {2: s}, {3: s})
    m2 = ct.optimize(f, (q, k, v, pad), dynamic_shapes=shapes, compiler=ct.interpreted_graph, timer=faster)
    [row] = m2.cleave_report.rows
    assert row.decision == "cleave" and row.reason.startswith("correct on 7 input sets"), row
    m3 = ct.optimize(f, (q, k, v, pad), dynamic_shapes=shapes, compiler=fixed_size, timer=faster)
    [row] = m3.cleave_report.rows
    assert row.decision == "pytorch" and "input %in0 has shape" in row.reason, row
    pad2 = torch.zeros(1, 1, 1, 5, dtype=torch.bool)
    pad2[..., 3:] = True
    ys = (*(torch.randn(1, 2, 5, 16) for _ in range(3)), pad2)
    with torch.no_grad():
        torch.testing.assert_close(m2(*ys), f(*ys), rtol=1e-5, atol=1e-5)


def test_linear_of_a_transposed_weight_view():
    """`F.linear(x, w.t(), b)` (a weight kept as [in, out], tied or shared) is x @ w + b in its region
    (before: "transpose not used only as a matmul's second operand" left the t in PyTorch, and the
    region read the transposed view)."""

    def f(x, w, b):
        return F.gelu(F.linear(x, w.t(), b), approximate="tanh")

    torch.manual_seed(0)
    xs = (torch.randn(2, 4, 32), torch.randn(32, 16), torch.randn(16))
    plan = ct.explain(f, xs, quiet=True)
    [region] = plan.regions
    assert not plan.unsupported and region.ops()[:2] == ["aten.t", "aten.linear"], plan.text()
    assert "transpose_b" not in graph_text(region.graph)
    m2 = ct.optimize(f, xs, compiler=ct.interpreted_graph, timer=faster)
    assert m2.cleave_report.rows[0].decision == "cleave"
    ys = [torch.randn_like(x) for x in xs]
    with torch.no_grad():
        torch.testing.assert_close(m2(*ys), f(*ys), rtol=1e-5, atol=1e-5)


def test_input_sets_left_unchecked_are_named():
    """A region whose random inputs leave its domain (the square root of a variance computed in PyTorch,
    drawn from a normal) was checked on the example only; the reason said "correct on 1 input sets"
    and no more. Now it names the sets that were not checked, and the model's run on its example
    inputs shuffled (the same positive variances) is checked too."""

    def f(x, w, var):
        return (x @ w) / torch.sqrt(var + 1e-5)

    torch.manual_seed(0)
    xs = (torch.randn(4, 16), torch.randn(16, 8), torch.rand(4, 1))
    m2 = ct.optimize(f, xs, compiler=ct.interpreted_graph, timer=faster)
    [row] = m2.cleave_report.rows
    # the example and the model run on it shuffled (the same positive variances) are checked
    assert row.decision == "cleave" and row.reason.startswith("correct on 2 input sets"), row
    assert row.reason.endswith("(not checked where the reference is not finite: the model run on normal(0,1) inputs; normal(0,1); uniform(-1,1); normal(0,0.1))"), row


def test_causal_attention_at_an_awkward_length_compiles_padded():
    """SDPA(is_causal=True) over 300 tokens (an LLM prompt; over 256 and no tile of 64 divides it): the
    front end refused it ('is_causal=True with a dynamic or padded sequence length') and the region
    stayed in PyTorch. Keys past the real length are in every query's future, so the causal mask
    input's dims follow the padded length (dynamic) and `cleave compile` pads the graph (9c9a13e);
    the stitched module equals eager at 300."""

    def f(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)

    torch.manual_seed(0)
    q, k, v = (torch.randn(1, 2, 300, 32) for _ in range(3))
    compiler = ct.PipelineCompiler(options=("--no-cache", "--keep", "1", "--top-k", "1", "--search-budget", "1500", "-j", "1"), gpu=False)
    m2 = ct.optimize(f, (q, k, v), compiler=compiler, timer=faster)
    [row] = m2.cleave_report.replaced()
    q, k, v = (torch.rand(1, 2, 300, 32) * 4 - 2 for _ in range(3))  # inputs the gate did not see
    with torch.no_grad():
        torch.testing.assert_close(m2(q, k, v), f(q, k, v), rtol=2e-3, atol=2e-3)


def test_causal_attention_over_a_symbolic_length_makes_its_mask_per_call():
    """SDPA(is_causal=True) with the sequence length a `torch.export.Dim` (a prefill at any prompt
    length): the front end refused it ('is_causal=True with a dynamic sequence length') because the
    region made its causal mask at the example's size. The mask's dims now take the query's and the
    key's length per call (`Input.lengths`); the gate's other-size set runs it at 65 tokens, and the
    stitched module equals eager at lengths it never saw (1, 77, 130)."""

    def f(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)

    torch.manual_seed(0)
    q, k, v = (torch.randn(1, 2, 128, 32) for _ in range(3))
    s = torch.export.Dim("s", min=1, max=1024)
    # (top-k 3: at 128 keys a tile holds the whole length; a kernel that loops over the keys, which
    # serves every length, must be among the kept ones, else the gate's other-size set refuses it)
    compiler = ct.PipelineCompiler(options=("--no-cache", "--search-budget", "1500", "--top-k", "3", "-j", "1"), gpu=False)
    m2 = ct.optimize(f, (q, k, v), dynamic_shapes=({2: s},) * 3, compiler=compiler, timer=faster)
    [row] = m2.cleave_report.replaced()
    for n in (1, 77, 130):
        q, k, v = (torch.rand(1, 2, n, 32) * 4 - 2 for _ in range(3))  # inputs the gate did not see
        with torch.no_grad():
            torch.testing.assert_close(m2(q, k, v), f(q, k, v), rtol=2e-3, atol=2e-3)



def test_causal_masks_made_per_length_are_few():
    """A region over a symbolic length makes its causal mask per call at the call's length
    (`Input.lengths`); at many prompt lengths only the last `MASKS_KEPT` masks stay cached, each
    keeping key j for query i when j <= i."""
    from cleave_ir.torch import aten

    slot = aten.Input(None, shape=(1, 1, 8, 8), dtype=torch.float32, causal=0, lengths=(None, None, (0, 2), (1, 2)))
    for n in range(3, 23):
        q, k = torch.zeros(1, 2, n, 4), torch.zeros(1, 2, n + 1, 4)
        mask = slot.mask(torch.device("cpu"), (q, k))
        assert mask.shape == (1, 1, n, n + 1)
        assert torch.equal(mask[0, 0], torch.ones(n, n + 1).tril())
        assert len(aten._MASKS) <= aten.MASKS_KEPT


class CosineAttention(torch.nn.Module):
    """Swin-v2's attention: F.normalize of q and k, a clamped learned logit scale, softmax; the norms
    are regions of their own (the attention's region would pass 12 ops), so they enter it as inputs."""

    def __init__(self) -> None:
        super().__init__()
        self.qkv = torch.nn.Linear(64, 192)
        self.logit_scale = torch.nn.Parameter(torch.log(10 * torch.ones(4, 1, 1)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, _ = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, 4, 16).permute(2, 0, 3, 1, 4)
        attn = F.normalize(q, dim=-1) @ F.normalize(k, dim=-1).transpose(-2, -1)
        attn = attn * torch.clamp(self.logit_scale, max=4.6052).exp()
        return (attn.softmax(-1) @ v).transpose(1, 2).reshape(b, t, 64)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_random_norms_past_what_the_type_computes(dtype: torch.dtype) -> None:
    """The gate draws the norms entering the attention's region from a normal: a negative one, clamped
    to 1e-12, divides q by it. In fp32 the logits reach ~1e13 and the test compiler's exp(x) / sum(exp(x))
    (the aten table's softmax) overflowed where every emitted kernel subtracts the row max: it now does
    too (`interpreted_graph`). In fp16 q itself overflows, in PyTorch's own region as in ours: those sets
    are not checked, and the report names them, where before the region was refused as "ours is inf or
    NaN where the float64 reference is not"; the model's own runs on other inputs, whose norms are
    positive, are. The stitched model equals eager."""
    torch.manual_seed(0)
    m, x = CosineAttention().to(dtype).eval(), torch.randn(2, 16, 64).to(dtype)
    m2 = ct.optimize(m, (x,), compiler=ct.interpreted_graph, timer=faster)
    attention = [r for r in m2.cleave_report.rows if "aten.softmax" in r.ops]
    assert len(attention) == 1 and attention[0].decision == "cleave", m2.cleave_report
    if dtype == torch.float32:
        assert attention[0].reason.startswith("correct on 6 input sets"), attention[0].reason
    else:  # the example and the model's own runs (`with_model_runs`: positive norms) are checked
        assert attention[0].reason.startswith("correct on 3 input sets"), attention[0].reason
        assert "(not checked where float16 cannot compute the result, PyTorch's own region not finite or past its range: normal(0,1)" in attention[0].reason, attention[0].reason
    with torch.no_grad():
        tol = 1e-2 if dtype == torch.float16 else 1e-4
        torch.testing.assert_close(m2(x), m(x), rtol=tol, atol=tol)
