"""Projection groups (`cleave_ir.torch.groups`): regions that project one input tried as one graph of their outputs.

Kernels run through the tgraph interpreter (`ct.interpreted_graph`) or, in one test, the real pipeline
(`cleave compile`: search, `cleave-split-projections`, schedule, lowering) and the TileLang interpreter.
"""

from __future__ import annotations

import operator

import pytest

torch = pytest.importorskip("torch")
import torch.nn as nn  # noqa: E402

import cleave_ir.torch as ct  # noqa: E402
from cleave_ir.dialects import tgraph  # noqa: E402

from tests.test_torch_frontend import Layer, custom_ops, faster  # noqa: E402

pytestmark = pytest.mark.usefixtures("tf32_allowed")  # fp32 models: TF32 as PyTorch at "high"


@pytest.fixture(scope="module")
def layer():  # type: ignore[no-untyped-def]
    torch.manual_seed(0)
    m = Layer().eval()
    x = torch.randn(2, 8, 32)
    mask = torch.triu(torch.full((8, 8), float("-inf")), 1)
    return m, (x, mask)


def _fresh(xs):  # type: ignore[no-untyped-def]
    gen = torch.Generator().manual_seed(7)
    return (torch.rand(xs[0].shape, generator=gen) * 4 - 2, xs[1])


def test_q_k_v_projections_form_one_group(layer) -> None:  # type: ignore[no-untyped-def]
    """The three projections of the normalized input are regions of their own (it feeds several regions),
    and one group: a graph of three outputs reading the shared input once; explain prints it."""
    m, xs = layer
    plan = ct.explain(m, xs, quiet=True)
    [group] = plan.groups
    assert [r.ops() for r in group.members] == [["aten.linear"]] * 3
    assert group.index == len(plan.regions) and group.outputs == [r.root for r in group.members]
    g = group.graph
    assert len(g.function_type.outputs.data) == 3 and [op.name for op in g.block.ops] == ["tgraph.matmul"] * 3 + ["tgraph.output"]
    assert len(g.inputs) == 4 and group.input_names()[1:] == ["q_weight", "k_weight", "v_weight"]
    assert all(op.lhs is g.inputs[0] for op in g.block.ops if isinstance(op, tgraph.MatmulOp))  # x passed once
    text = plan.text()
    assert "groups: regions that each project one input" in text and f"group {group.index} [try first]: regions 1, 2, 3 project" in text


def test_an_accepted_group_is_one_op_of_three_outputs(layer) -> None:  # type: ignore[no-untyped-def]
    m, xs = layer
    m2 = ct.optimize(m, xs, compiler=ct.interpreted_graph, timer=faster)
    rows = {r.region: r for r in m2.cleave_report.rows}
    [group] = [r for r in rows.values() if r.members]
    assert group.decision == "cleave" and group.members == [1, 2, 3] and group.error is not None and group.error < 1e-3
    assert all(rows[i].decision == "cleave" and rows[i].reason == f"in group {group.region}" for i in group.members)
    assert len(m2.cleave_report.replaced()) == len(custom_ops(m2)) + 2  # three regions, one op
    calls = [n for n in m2.graph.nodes if n.op == "call_function" and n.target is operator.getitem]
    assert len(calls) == 3 and len({c.args[0] for c in calls}) == 1
    with torch.no_grad():
        for x in (xs, _fresh(xs)):
            torch.testing.assert_close(m2(*x), m(*x), rtol=1e-4, atol=1e-5)
        # the op's fake returns the three outputs' shapes: torch.compile traces through it
        torch.testing.assert_close(torch.compile(m2, backend="eager")(*xs), m(*xs), rtol=1e-4, atol=1e-5)


def test_a_group_that_loses_leaves_its_regions_to_the_gate_alone(layer) -> None:  # type: ignore[no-untyped-def]
    """A group slower than PyTorch's three projections keeps them as regions, each compiled and gated
    on its own: grouping never keeps in PyTorch a region that passes alone."""
    m, xs = layer

    def group_slow(fn, inputs, which, region):  # type: ignore[no-untyped-def]
        if which == "cleave":
            return 5.0 if region.members else 1.0
        return 2.0

    m2 = ct.optimize(m, xs, compiler=ct.interpreted_graph, timer=group_slow)
    rows = {r.region: r for r in m2.cleave_report.rows}
    [group] = [r for r in rows.values() if r.members]
    assert group.decision == "pytorch" and group.reason.startswith("correct but not faster") and group.reason.endswith("its regions are tried alone")
    assert all(rows[i].decision == "cleave" and rows[i].reason.startswith("correct on") for i in group.members)
    assert not any(n.target is operator.getitem for n in m2.graph.nodes if n.op == "call_function")
    with torch.no_grad():
        torch.testing.assert_close(m2(*xs), m(*xs), rtol=1e-4, atol=1e-5)


def test_a_wrong_group_kernel_is_refused_and_its_regions_compile_alone(layer) -> None:  # type: ignore[no-untyped-def]
    """A group kernel with one wrong output (here: the second, zeroed) fails the float64 check."""
    m, xs = layer

    def compiler(graph):  # type: ignore[no-untyped-def]
        kernel = ct.interpreted_graph(graph)
        if len(graph.function_type.outputs.data) == 1:
            return kernel
        return lambda *a: [o if i != 1 else torch.zeros_like(o) for i, o in enumerate(kernel(*a))]

    m2 = ct.optimize(m, xs, compiler=compiler, timer=faster)
    rows = {r.region: r for r in m2.cleave_report.rows}
    [group] = [r for r in rows.values() if r.members]
    assert group.decision == "pytorch" and group.reason.startswith("wrong: rel. error")
    assert all(rows[i].decision == "cleave" for i in group.members)
    with torch.no_grad():
        torch.testing.assert_close(m2(*_fresh(xs)), m(*_fresh(xs)), rtol=1e-4, atol=1e-5)


def test_groups_can_be_turned_off(layer) -> None:  # type: ignore[no-untyped-def]
    m, xs = layer
    seen: list[int] = []

    def compiler(graph):  # type: ignore[no-untyped-def]
        seen.append(len(graph.function_type.outputs.data))
        return ct.interpreted_graph(graph)

    m2 = ct.optimize(m, xs, compiler=compiler, timer=faster, group_projections=False)
    assert seen and set(seen) == {1} and not any(r.members for r in m2.cleave_report.rows)


class Siblings(nn.Module):
    """Projections of one x that are not group members: one inside a region of two matmuls (an MLP's gate
    and up), one whose input is computed in its own region (a norm joined to it); and two plain ones."""

    def __init__(self) -> None:
        super().__init__()
        self.gate, self.up, self.a, self.b = (nn.Linear(32, 48, bias=False) for _ in range(4))
        self.c = nn.Linear(32, 16, bias=False)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        h = torch.relu(x)
        mlp = torch.nn.functional.silu(self.gate(h)) * self.up(h)
        normed = self.c(h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6))
        return mlp, normed, self.a(h), self.b(h) + 1.0


def test_only_single_projection_regions_of_a_shared_input_group() -> None:
    torch.manual_seed(0)
    m, x = Siblings().eval(), torch.randn(4, 32)
    plan = ct.explain(m, (x,), quiet=True)
    [group] = plan.groups
    assert [r.ops() for r in group.members] == [["aten.linear"], ["aten.linear", "aten.add"]]  # the epilogue travels with b
    m2 = ct.optimize(m, (x,), compiler=ct.interpreted_graph, timer=faster)
    with torch.no_grad():
        for got, want in zip(m2(x), m(x)):
            torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)


def test_a_decode_group_through_the_real_pipeline(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """q/k/v of two decode tokens with K = 1024 in fp16 through `cleave compile` (its multi-output graph
    takes `cleave-split-projections`' Split-K candidate) and the TileLang interpreter; the stitched model
    matches eager on fresh inputs."""

    class QKV(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            # (equal widths: the three regions share one graph and one compile; the group is the test's subject)
            self.q, self.k, self.v = (nn.Linear(1024, 32, bias=False) for _ in range(3))

        def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
            return self.q(x), self.k(x), self.v(x)

    torch.manual_seed(0)
    m, x = QKV().half().eval(), torch.randn(2, 1, 1024).half()
    compiler = ct.PipelineCompiler(options=("--cache-dir", str(tmp_path), "-j", "1", "--keep", "2"), gpu=False)
    m2 = ct.optimize(m, (x,), compiler=compiler, timer=faster)
    [group] = [r for r in m2.cleave_report.rows if r.members]
    assert group.decision == "cleave" and group.error < 1e-2, m2.cleave_report
    assert "_split" in compiler.log.getvalue(), compiler.log.getvalue()  # the Split-K form of every projection at once
    with torch.no_grad():
        x2 = (torch.rand(2, 1, 1024) * 2 - 1).half()
        for got, want in zip(m2(x2), m(x2)):
            torch.testing.assert_close(got, want, rtol=1e-2, atol=1e-2)


def test_projections_by_weights_passed_as_inputs_group_too() -> None:
    """Where the weights are inputs, as dynamo lifts a model's parameters in the graphs it hands a backend
    (a mixture of experts taken in pieces), the projections of one x still form a group."""

    def qkv(x: torch.Tensor, wq: torch.Tensor, wk: torch.Tensor, wv: torch.Tensor) -> tuple[torch.Tensor, ...]:
        h = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)
        return torch.nn.functional.linear(h, wq), torch.nn.functional.linear(h, wk), torch.nn.functional.linear(h, wv)

    class Fn(nn.Module):
        def forward(self, *xs: torch.Tensor) -> tuple[torch.Tensor, ...]:
            return qkv(*xs)

    torch.manual_seed(0)
    xs = (torch.randn(4, 32), torch.randn(48, 32), torch.randn(16, 32), torch.randn(16, 32))
    plan = ct.explain(Fn(), xs, quiet=True)
    [group] = plan.groups
    assert group.input_names()[1:] == ["xs_1", "xs_2", "xs_3"]  # the weights, inputs of the module
    m2 = ct.optimize(Fn(), xs, compiler=ct.interpreted_graph, timer=faster)
    assert [r.decision for r in m2.cleave_report.rows if r.members] == ["cleave"]
    with torch.no_grad():
        for got, want in zip(m2(*xs), qkv(*xs)):
            torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)


SIBLING_CASES = [
    (shape, bias, epilogue, n)
    for shape in ((4, 32), (2, 1, 32), (2, 3, 32))
    for bias in (False, True)
    for epilogue in ("none", "relu", "residual")
    for n in (2, 3)
]
DEFAULT_SIBLINGS = SIBLING_CASES[::3]  # 12 of the 36 by default; all under -m slow


class SiblingLinears(nn.Module):
    """n linears of one normalized x, of different widths, each with the epilogue (none, relu, + a residual)."""

    def __init__(self, n: int, bias: bool, epilogue: str) -> None:
        super().__init__()
        self.epilogue = epilogue
        self.ps = nn.ModuleList(nn.Linear(32, 32 if epilogue == "residual" else 16 * (i + 1), bias=bias) for i in range(n))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        h = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)
        outs = []
        for p in self.ps:
            y = p(h)
            outs.append(torch.relu(y) if self.epilogue == "relu" else y + x if self.epilogue == "residual" else y)
        return tuple(outs)


def _sibling_case(shape, bias, epilogue, n) -> None:  # type: ignore[no-untyped-def]
    torch.manual_seed(0)
    m, x = SiblingLinears(n, bias, epilogue).eval(), torch.randn(*shape)
    m2 = ct.optimize(m, (x,), compiler=ct.interpreted_graph, timer=faster)
    groups = [r for r in m2.cleave_report.rows if r.members]
    assert [r.decision for r in groups] == ["cleave"] and len(groups[0].members) == n, m2.cleave_report
    with torch.no_grad():
        for x2 in (x, torch.rand(*shape) * 4 - 2, torch.randn(*shape) * 0.1):
            for got, want in zip(m2(x2), m(x2), strict=True):
                torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(("shape", "bias", "epilogue", "n"), DEFAULT_SIBLINGS)
def test_sibling_projections_of_several_shapes_group_correctly(shape, bias, epilogue, n) -> None:  # type: ignore[no-untyped-def]
    """Sibling projections of prefill rows, decode [B, 1, K] rows and batched [B, S, K] inputs, with and without
    bias, with an epilogue that travels with each (relu, a residual): one group, outputs equal to eager on three
    input distributions."""
    _sibling_case(shape, bias, epilogue, n)


@pytest.mark.slow
@pytest.mark.parametrize(("shape", "bias", "epilogue", "n"), [c for c in SIBLING_CASES if c not in DEFAULT_SIBLINGS])
def test_sibling_projections_every_case(shape, bias, epilogue, n) -> None:  # type: ignore[no-untyped-def]
    _sibling_case(shape, bias, epilogue, n)


def test_a_group_over_a_dynamic_batch_stays_dynamic() -> None:
    """Decode q/k/v over a batch marked dynamic: the group's shared input keeps its `dynamic` dim, the gate
    checks it at another batch too, and the stitched model serves other batch sizes."""
    from cleave_ir.compile import graph_text

    class QKV(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.q, self.k, self.v = nn.Linear(64, 48, bias=False), nn.Linear(64, 16, bias=False), nn.Linear(64, 16, bias=False)

        def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
            h = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)
            return self.q(h), self.k(h), self.v(h)

    torch.manual_seed(0)
    m, x = QKV().eval(), torch.randn(6, 1, 64)
    dims = {"x": {0: torch.export.Dim("b", min=2, max=64)}}
    [group] = ct.explain(m, (x,), dims, quiet=True).groups
    assert "%in0: !tgraph.tensor<[6, 64], f32> {dynamic = array<i64: 0>}" in graph_text(group.graph)
    m2 = ct.optimize(m, (x,), dims, compiler=ct.interpreted_graph, timer=faster)
    [row] = [r for r in m2.cleave_report.rows if r.members]
    assert row.decision == "cleave" and row.reason.startswith("correct on 7 input sets"), row  # one set at another batch
    with torch.no_grad():
        for batch in (3, 17):
            x2 = torch.randn(batch, 1, 64)
            for got, want in zip(m2(x2), m(x2), strict=True):
                torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)
