"""cleave_ir.torch: aten ops written as tgraph ops (`cleave_ir/torch/aten.py`), each captured in a
region beside a matmul, compiled, and compared with eager PyTorch on inputs the gate did not see.

Before, every op here stayed in PyTorch and cut its region off the matmul that feeds it (a clamp,
an activation, a norm of a projection's output): a kernel launch more and no fusion.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402

import cleave_ir.torch as ct  # noqa: E402

pytestmark = pytest.mark.usefixtures("tf32_allowed")  # fp32 models: TF32 as PyTorch at "high"


def faster(fn, inputs, which, region):  # ours 2x faster
    return 1.0 if which == "cleave" else 2.0


def proj(f):
    """f applied to x @ w (v, a [32] vector, unused)."""
    return lambda x, w, v: f(x @ w)


CASES = {
    "clamp": proj(lambda y: torch.clamp(y, -1.0, 1.5)),
    "clamp_min": proj(lambda y: y.clamp_min(0.25)),
    "clamp_max_tensor": lambda x, w, v: torch.clamp(x @ w, max=v),
    "hardtanh": proj(F.hardtanh),
    "relu6": proj(F.relu6),
    "leaky_relu": proj(lambda y: F.leaky_relu(y, 0.1)),
    "elu": proj(lambda y: F.elu(y, 0.7)),
    "selu": proj(F.selu),
    "softplus": proj(F.softplus),
    "softplus_beta": proj(lambda y: F.softplus(y, beta=2.0)),
    "mish": proj(F.mish),
    "hardsigmoid": proj(F.hardsigmoid),
    "hardswish": proj(F.hardswish),
    "var": proj(lambda y: (y - y.mean(-1, keepdim=True)) / torch.sqrt(y.var(-1, keepdim=True, unbiased=False) + 1e-5)),
    "std_unbiased": proj(lambda y: y / y.std(-1, keepdim=True)),
    "var_correction": proj(lambda y: y * torch.var(y, dim=-1, correction=2, keepdim=True)),
    "vector_norm": proj(lambda y: y / torch.linalg.vector_norm(y, dim=-1, keepdim=True)),
    "vector_norm_l1": proj(lambda y: y / torch.linalg.vector_norm(y, ord=1, dim=-1, keepdim=True)),
    "vector_norm_inf": proj(lambda y: y / torch.linalg.vector_norm(y, ord=float("inf"), dim=-1, keepdim=True)),
    "normalize": proj(lambda y: F.normalize(y, dim=-1)),
    "logsumexp": proj(lambda y: torch.logsumexp(y, -1)),
    "log_softmax": proj(lambda y: F.log_softmax(y, -1)),
    "addcmul": lambda x, w, v: torch.addcmul(x @ w, x @ w, v, value=0.5),
    "lerp": lambda x, w, v: torch.lerp(x @ w, v, 0.3),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_op_joins_its_matmul_region(name: str) -> None:
    f = CASES[name]
    torch.manual_seed(0)
    xs = (torch.randn(4, 64), torch.randn(64, 32) / 8, torch.randn(32))
    plan = ct.explain(f, xs, quiet=True)
    assert not plan.unsupported, plan.text()
    m2 = ct.optimize(f, xs, compiler=ct.interpreted_graph, timer=faster)
    # (one region, or two where the decomposition passes the region's op cap: a variance's 13 ops)
    assert {r.decision for r in m2.cleave_report.rows} == {"cleave"}, m2.cleave_report
    for scale in (1.0, 6.0):  # around zero, and far out on both sides of each kink and saturation
        ys = (torch.randn(4, 64) * scale, torch.randn(64, 32) / 8, torch.randn(32) * scale)
        with torch.no_grad():
            got, eager, exact = m2(*ys), f(*ys), f(*(y.double() for y in ys))
        # against float64, no further off than eager fp32 is (with room for another summation order):
        # where x @ w cancels to near 0, y * var(y) is ill-conditioned and both differ by 1e-4 relative
        err, eager_err = (got.double() - exact).abs(), (eager.double() - exact).abs()
        torch.testing.assert_close(got, eager, rtol=1e-4, atol=1e-5 + 8 * eager_err.max().item())
        assert err.max() <= 8 * eager_err.max() + 1e-6 * exact.abs().max(), (err.max(), eager_err.max())


def test_expand_read_by_a_matmul_stays_in_pytorch() -> None:
    """An expand that broadcasts is dropped only where element-wise binary ops alone read it (their
    own broadcasting gives the same result); a matmul reading it needs the expanded operand."""

    def f(x, w):
        return x.expand(4, 64) @ w

    plan = ct.explain(f, (torch.randn(1, 64), torch.randn(64, 32)), quiet=True)
    assert any("expand" in str(op) for op in plan.unsupported), plan.text()


def test_kernels_of_the_new_ops_run_in_the_tilelang_interpreter() -> None:
    """Through `cleave compile` (no search) and the TileLang interpreter: a projection's mish, then
    its L2 normalization and log-softmax (two regions: the op cap), every region compiled."""

    def f(x, w):
        return F.log_softmax(F.normalize(F.mish(x @ w), dim=-1) * 4, -1)

    compiler = ct.PipelineCompiler(options=("--no-search", "--no-cache", "-j", "1"), gpu=False)
    torch.manual_seed(1)
    xs = (torch.randn(8, 64), torch.randn(64, 32) / 8)
    m2 = ct.optimize(f, xs, compiler=compiler, timer=faster)
    assert {r.decision for r in m2.cleave_report.rows} == {"cleave"}, m2.cleave_report
    ys = (torch.randn(8, 64) * 3, torch.randn(64, 32) / 8)
    with torch.no_grad():
        torch.testing.assert_close(m2(*ys), f(*ys), rtol=2e-2, atol=2e-2)


class FusedGateUp(torch.nn.Module):
    """Phi-3's MLP: one projection to gate and up, chunked, then down(silu(gate) * up)."""

    def __init__(self, bias: bool) -> None:
        super().__init__()
        self.gate_up = torch.nn.Linear(64, 256, bias=bias)
        self.down = torch.nn.Linear(128, 64, bias=False)

    def forward(self, x):
        g, u = self.gate_up(x).chunk(2, dim=-1)
        return self.down(F.silu(g) * u)


def slower(fn, inputs, which, region):  # PyTorch 2x faster
    return 2.0 if which == "cleave" else 1.0


@pytest.mark.parametrize("bias", [False, True])
def test_chunked_projection_pieces_are_computed_in_their_regions(bias: bool) -> None:
    """`gate_up(x).chunk(2, -1)`: each piece is the projection over the weight's rows
    (`capture.slice_chunked_projections`), so silu(gate) * up joins the matmuls instead of staying in
    PyTorch (element-wise only) behind a chunk. Where the regions are taken, the fused projection and
    its chunk are dropped; where not, the model runs as it was."""
    from cleave_ir.torch.capture import SLICED_LINEAR

    torch.manual_seed(0)
    m = FusedGateUp(bias).eval()
    xs = (torch.randn(2, 8, 64),)
    plan = ct.explain(m, xs, quiet=True)
    assert all(r.worth for r in plan.regions) and sum("aten.linear (chunk)" in r.ops() for r in plan.regions) == 2, plan.text()
    m2 = ct.optimize(m, xs, compiler=ct.interpreted_graph, timer=faster)
    assert {r.decision for r in m2.cleave_report.rows} == {"cleave"}, m2.cleave_report
    ops = [str(n.target) for n in m2.graph.nodes if n.op == "call_function"]
    assert not any(o.startswith(("aten.linear", "aten.chunk", "aten.silu")) for o in ops), ops
    for scale in (1.0, 5.0):
        ys = (torch.randn(2, 8, 64) * scale,)
        with torch.no_grad():
            torch.testing.assert_close(m2(*ys), m(*ys), rtol=1e-4, atol=1e-5)
    kept = ct.optimize(m, xs, compiler=ct.interpreted_graph, timer=slower)
    assert {r.decision for r in kept.cleave_report.rows} == {"pytorch"}
    ops = [str(n.target) for n in kept.graph.nodes if n.op == "call_function"]
    assert "aten.chunk.default" in ops and not any("slice" in o for o in ops), ops
    assert not any(SLICED_LINEAR in n.meta for n in kept.graph.nodes if n.op == "call_function" and "getitem" not in str(n.target))


GATES = {
    "mish": lambda g, u: F.mish(g) * u,
    "gelu_tanh_in_fp32": lambda g, u: (F.gelu(g.float(), approximate="tanh") * u.float()).to(g.dtype),
    "clamped_swiglu": lambda g, u: F.silu(g.clamp(max=7.0)) * u.clamp(-7.0, 7.0),
    "squared_relu": lambda g, u: torch.square(F.relu(g)) * u,
}


@pytest.mark.parametrize("gate", sorted(GATES))
def test_chunked_projection_pieces_feeding_any_elementwise_op(gate: str) -> None:
    """The pieces are projections of their own wherever every reader is element-wise (`aten.ELEMENTWISE`):
    mish, a tanh GELU in fp32 after a cast, clamps (GPT-OSS's clamped SwiGLU), a squared ReLU; also for
    `split` with sizes. Each runs with no chunk left in PyTorch, against eager at two scales."""
    lin, down = torch.nn.Linear(64, 256), torch.nn.Linear(128, 64, bias=False)

    def f(x):
        g, u = lin(x).split([128, 128], dim=-1)
        return down(GATES[gate](g, u))

    torch.manual_seed(0)
    xs = (torch.randn(2, 8, 64),)
    m2 = ct.optimize(f, xs, compiler=ct.interpreted_graph, timer=faster)
    assert {r.decision for r in m2.cleave_report.rows} == {"cleave"}, m2.cleave_report
    ops = [str(n.target) for n in m2.graph.nodes if n.op == "call_function"]
    assert not any(o.startswith(("aten.linear", "aten.split")) for o in ops), ops
    for scale in (1.0, 5.0):
        ys = (torch.randn(2, 8, 64) * scale,)
        with torch.no_grad():
            torch.testing.assert_close(m2(*ys), f(*ys), rtol=1e-4, atol=1e-5)


def test_fused_qkv_chunk_feeding_attention_is_left_as_it_is() -> None:
    """Only pieces that feed element-wise ops are written as projections of their own: a fused QKV
    projection's pieces go to attention (views, SDPA), and stay the chunk's."""
    from cleave_ir.torch.capture import SLICED_LINEAR, capture

    qkv = torch.nn.Linear(64, 192)

    def f(x):
        q, k, v = qkv(x).chunk(3, -1)
        return F.scaled_dot_product_attention(q, k, v)

    captured = capture(f, (torch.randn(2, 16, 64),))
    assert not any(SLICED_LINEAR in n.meta for n in captured.module.graph.nodes)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_logsumexp_of_a_row_masked_throughout_is_minus_inf(dtype) -> None:
    """A row that is -inf throughout (masked out) gives -inf, as PyTorch does (not -inf - -inf = NaN);
    the other rows, masked in part or not at all, are unchanged."""

    def f(x, w, mask):
        return torch.logsumexp((x @ w).masked_fill(mask, float("-inf")), -1)

    torch.manual_seed(0)
    mask = torch.zeros(4, 32, dtype=torch.bool)
    mask[1] = True
    mask[2, :20] = True
    xs = (torch.randn(4, 64, dtype=dtype), (torch.randn(64, 32) / 8).to(dtype), mask)
    m2 = ct.optimize(f, xs, compiler=ct.interpreted_graph, timer=faster)
    assert {r.decision for r in m2.cleave_report.rows} == {"cleave"}, m2.cleave_report
    with torch.no_grad():
        for scale in (1.0, 30.0):
            ys = (xs[0] * scale, xs[1], mask)
            got, want = m2(*ys), f(*ys)
            assert got[1].item() == float("-inf")
            torch.testing.assert_close(got, want, rtol=2e-3, atol=2e-3)


def test_fp32_matmul_stays_in_pytorch_at_highest_precision() -> None:
    """At PyTorch's default fp32 matmul precision ("highest": full fp32) a region with an fp32 matmul
    stays in PyTorch, saying why: our kernels compute it in TF32, about 1e3 times less precise. At
    "high" (PyTorch's own TF32) and in half precision it is compiled."""

    def f(x, w):
        return torch.relu(x @ w).sum(-1)

    xs = (torch.randn(8, 64), torch.randn(64, 32))
    torch.set_float32_matmul_precision("highest")  # (the module's fixture restores "high" after)
    [region] = ct.explain(f, xs, quiet=True).regions
    assert not region.worth and "TF32" in region.reason and "'highest'" in region.reason
    m2 = ct.optimize(f, xs, compiler=ct.interpreted_graph, timer=faster)
    [row] = m2.cleave_report.rows
    assert row.decision == "pytorch" and "set_float32_matmul_precision('high')" in row.reason
    assert ct.explain(f, tuple(x.half() for x in xs), quiet=True).regions[0].worth
    torch.set_float32_matmul_precision("high")
    assert ct.explain(f, xs, quiet=True).regions[0].worth
