"""cleave-split-rows: a Split-K candidate for row statistics the search found none for (the entropy
of softmax rows), and the schedule's online softmax over sums of `exp * y` (one kernel for the graph
as given: before, it was cut in two). Candidates and kernels run in the interpreters against float64
on fresh inputs of several distributions; graphs outside the form get no candidate."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.parser import Parser

from cleave_ir.builder import GraphBuilder, module_of
from cleave_ir.dialects import itgraph, tgraph
from cleave_ir.interpreter import max_relative_error, run_graph
from cleave_ir.interpreter_tilelang import candidate_kernels, run_kernels
from cleave_ir.passes.concretize import ConcretizePass
from cleave_ir.passes.lower_tilelang import lower_module
from cleave_ir.passes.pipeline import PipelinePass
from cleave_ir.passes.split_rows import SplitRowsPass, split_rows_graph
from cleave_ir.passes.symbolize import SymbolizePass
from cleave_ir.run import make_context

ROWS, N = 4, 8192


def entropy(rows: int = ROWS, n: int = N) -> tgraph.GraphOp:
    """H = log(sum exp(x - m)) + m - sum(exp(x - m) x) / sum exp(x - m) over each row of x [rows, n]."""
    b = GraphBuilder("entropy")
    x = b.input("x", [rows, n])
    m = b.reduce("max", x, 1)
    e = b.exp(b.sub(x, m))
    s = b.reduce("sum", e, 1)
    t = b.reduce("sum", b.mul(e, x), 1)
    return b.build(b.sub(b.add(b.log(s), m), b.div(t, s)))


def reference(x: np.ndarray) -> np.ndarray:
    m = x.max(1, keepdims=True)
    e = np.exp(x - m)
    s = e.sum(1, keepdims=True)
    return np.log(s) + m - (e * x).sum(1, keepdims=True) / s


def inputs(dist: str, shape: tuple[int, int] = (ROWS, N), seed: int = 11) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dist == "normal":
        x = rng.standard_normal(shape)
    elif dist == "huge":  # exp of the unshifted logits overflows
        x = rng.standard_normal(shape) * 2000.0
    elif dist == "peaked":
        x = rng.uniform(-3, 3, shape) + rng.uniform(-50, 50, (shape[0], 1))
        x[np.arange(shape[0]), rng.integers(0, shape[1], shape[0])] += 6.0  # (a peak far above every other logit leaves an entropy of ~1e-11: all cancellation)
    else:  # masked as a model masks logits before an entropy (finite: exp(-inf) * -inf is NaN in the graph too)
        x = rng.standard_normal(shape) * 3.0
        x[rng.random(shape) < 0.6] = -30000.0
        x[0, : shape[1] // 2] = -30000.0
    return x.astype(np.float16).astype(np.float64)


def with_candidate(graph: tgraph.GraphOp, counts: tuple[int, ...] = (4,)) -> list[tgraph.GraphOp]:
    module = module_of(graph.clone())
    for p in (SymbolizePass(), SplitRowsPass(), ConcretizePass(split_counts=counts)):
        p.apply(Context(), module)
    return [g for g in module.body.block.ops if isinstance(g, tgraph.GraphOp)]


@pytest.mark.parametrize("dist", ["normal", "peaked"])
def test_the_candidate_equals_the_graph(dist: str) -> None:
    graphs = with_candidate(entropy())
    assert sorted(g.sym_name.data for g in graphs) == ["entropy", "entropy_rows_s4"]
    x = inputs(dist)
    for g in graphs:
        assert max_relative_error(reference(x), run_graph(g, [x])[0]) < 1e-9, g.sym_name.data


def test_graphs_outside_the_form_get_no_candidate() -> None:
    b = GraphBuilder("norm")  # its output runs along the rows
    x = b.input("x", [4, 8192])
    norm = b.build(b.mul(x, b.rsqrt(b.reduce("sum", b.square(x), 1))))
    b = GraphBuilder("variance")  # a sum the rows read back (not a max): no chunk-local form
    x = b.input("x", [4, 8192])
    xc = b.sub(x, b.scale(b.reduce("sum", x, 1), 1 / 8192))
    variance = b.build(b.reduce("sum", b.square(xc), 1))
    b = GraphBuilder("gemv_max")  # a matmul
    x, w = b.input("x", [4, 512]), b.input("w", [512, 8192])
    gemv = b.build(b.reduce("max", b.matmul(x, w), 1))
    for g in (norm, variance, gemv, entropy(n=2048)):
        assert split_rows_graph(g, "c") is None, g.sym_name.data
        assert [h.sym_name.data for h in with_candidate(g)] == [g.sym_name.data]


@cache
def _pipeline() -> str:
    module = module_of(entropy())
    PipelinePass(search_budget=2_000, split_counts=(4,), keep=3).apply(Context(), module)
    lower_module(module)
    return str(module)


def test_the_graph_is_one_online_softmax_kernel_and_a_split_is_kept() -> None:
    """The input graph's sums of e and of e x form one loop with the max as its running max (not two
    kernels), and the split candidate is kept beside it."""
    module = Parser(make_context(), _pipeline()).parse_module()
    names = [name for name, _ in candidate_kernels(module)]
    assert "entropy" in names and any(n.startswith("entropy_rows_s4") for n in names), names
    (kernels,) = [ks for name, ks in candidate_kernels(module) if name == "entropy"]
    assert len(kernels) == 1


@pytest.mark.parametrize("dist", ["normal", "huge", "peaked", "masked"])
def test_kept_kernels_match_float64(dist: str) -> None:
    module = Parser(make_context(), _pipeline()).parse_module()
    x = inputs(dist)
    want = reference(x)
    for name, kernels in candidate_kernels(module):
        got = np.asarray(run_kernels(kernels, [x])[0], dtype=np.float64)
        assert np.all(np.isfinite(got)), name
        assert max_relative_error(want, got) < 5e-3, name


def test_the_graph_kernel_is_an_online_softmax_loop() -> None:
    """`exp * x` summed beside `exp` (`schedule._exp_sums`): the max is the loop's running max."""
    module = module_of(entropy())
    PipelinePass(search_budget=2_000, split_counts=(4,), keep=3).apply(Context(), module)
    (kernel,) = [k for k in module.body.block.ops if isinstance(k, itgraph.KernelOp) and k.sym_name.data == "entropy_k0"]
    (loop,) = [op for op in kernel.walk() if isinstance(op, itgraph.SequentialOp)]
    assert sorted(k.value for k in loop.accumulate_kinds) == ["max", "rescaled_sum", "rescaled_sum"]


def cross_entropy(rows: int = ROWS, n: int = N) -> tgraph.GraphOp:
    """log(sum exp(x - m)) + m - sum(x * onehot): a plain sum beside the softmax's."""
    b = GraphBuilder("xent")
    x, onehot = b.input("x", [rows, n]), b.input("onehot", [rows, n])
    m = b.reduce("max", x, 1)
    lse = b.add(b.log(b.reduce("sum", b.exp(b.sub(x, m)), 1)), m)
    return b.build(b.sub(lse, b.reduce("sum", b.mul(x, onehot), 1)))


@pytest.mark.parametrize("dist", ["normal", "huge", "masked"])
def test_a_plain_sum_beside_the_softmax_sums(dist: str) -> None:
    """The cross-entropy's sum of x times its one-hot target joins the online softmax loop as a plain
    `sum` (before, the loop was refused and the graph cut in two): one kernel, lane by lane with the
    plain sum deferred element-wise, and the Split-K form; every kept candidate against float64."""
    module = module_of(cross_entropy())
    PipelinePass(search_budget=2_000, split_counts=(4,), keep=3).apply(Context(), module)
    loops = [op for op in module.walk() if isinstance(op, itgraph.SequentialOp) and itgraph.AccumulateKind.RESCALED_SUM in op.accumulate_kinds]
    assert any(itgraph.AccumulateKind.SUM in op.accumulate_kinds for op in loops)
    lower_module(module)
    candidates = candidate_kernels(module)
    assert [len(ks) for name, ks in candidates if name == "xent"] == [1]
    assert any(name.startswith("xent_rows_s4") for name, _ in candidates)
    x = inputs(dist)
    target = np.random.default_rng(2).integers(0, N, ROWS)
    onehot = np.zeros_like(x)
    onehot[np.arange(ROWS), target] = 1.0
    m = x.max(1, keepdims=True)
    want = np.log(np.exp(x - m).sum(1, keepdims=True)) + m - x[np.arange(ROWS), target][:, None]
    for name, kernels in candidate_kernels(module):
        got = np.asarray(run_kernels(kernels, [x, onehot])[0], dtype=np.float64)
        assert max_relative_error(want, got) < 5e-3, name
