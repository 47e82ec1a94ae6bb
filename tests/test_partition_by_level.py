"""A graph that no single kernel schedules is also cut by reduction level (`partition_kernels.partition_by_level`).

The KL divergence of two logit rows needs both rows' maxes before either exp sum: no one loop holds
two running maxes. The greedy cut in graph order made three kernels that stored shifted rows
([T, V] tensors) in global memory between them; the level cut makes two, the maxes and then every
exp sum shifted by them, and nothing of the rows' size leaves a kernel.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

from cleave_ir.builder import GraphBuilder, module_of
from cleave_ir.dialects import tgraph
from cleave_ir.interpreter import max_relative_error, random_inputs, run_graph
from cleave_ir.interpreter_tilelang import candidate_kernels, run_kernels
from cleave_ir.passes.lower_tilelang import lower_module
from cleave_ir.passes.partition_kernels import partition, partition_by_level
from cleave_ir.passes.pipeline import PipelinePass
from cleave_ir.passes.schedule import unschedulable
from cleave_ir.run import make_context

ROWS, VOCAB = 4, 32000  # rows too long for one tile: no single kernel holds both maxes


def kl_logits() -> tgraph.GraphOp:
    """KL(softmax(p) || softmax(q)) per row, as bench/probes/unseen/kl_logits_t4_v32000.mlir writes it."""
    b = GraphBuilder("kl")
    p, q = b.input("p", [ROWS, VOCAB]), b.input("q", [ROWS, VOCAB])
    mp, mq = b.reduce("max", p, 1), b.reduce("max", q, 1)
    zp, zq = b.sub(p, mp), b.sub(q, mq)
    ep, eq = b.exp(zp), b.exp(zq)
    sp, sq = b.reduce("sum", ep, 1), b.reduce("sum", eq, 1)
    t = b.reduce("sum", b.mul(ep, b.sub(zp, zq)), 1)
    kl = b.add(b.sub(b.div(t, sp), b.log(sp)), b.log(sq))
    return b.build(b.cast(kl, "f32"))


def can_schedule(graph: tgraph.GraphOp) -> str | None:
    return unschedulable(graph, True, True)


def row_sized_inputs(piece: tgraph.GraphOp) -> list[str]:
    return [n for n, v in zip(piece.input_names(), piece.inputs) if tgraph.tensor_type(v).shape[-1] == VOCAB]


def test_level_cut_reads_the_rows_only_from_the_inputs() -> None:
    """Two pieces: the two maxes, then every sum and the epilogue; the rows a later piece reads are
    p and q themselves. The greedy cut passes a shifted row between its pieces."""
    graph = kl_logits()
    assert can_schedule(graph) is not None  # two running maxes in one loop
    pieces = partition_by_level(graph, can_schedule)
    assert pieces is not None and len(pieces) == 2
    first_ops = [o for o in pieces[0].block.ops if not isinstance(o, tgraph.OutputOp)]
    assert [o.kind.data for o in first_ops] == [tgraph.ReduceKind.MAX] * 2
    assert sorted(row_sized_inputs(pieces[1])) == ["p", "q"]
    assert sum(isinstance(o, tgraph.ReduceOp) for o in pieces[1].block.ops) == 3
    greedy = partition(graph, can_schedule)
    assert len(greedy) == 3 and any(set(row_sized_inputs(g)) - {"p", "q"} for g in greedy[1:])


def test_one_level_is_no_cut() -> None:
    """A graph whose reductions all read the inputs (a row's max and sum) has one level: no cut."""
    b = GraphBuilder("stats")
    x = b.input("x", [ROWS, VOCAB])
    assert partition_by_level(b.build(b.reduce("max", x, 1), b.reduce("sum", x, 1)), can_schedule) is None


@functools.cache
def compiled() -> ModuleOp:
    module = module_of(kl_logits())
    PipelinePass(no_search=True, top_k=1, keep=4).apply(make_context(), module)
    lower_module(module)
    return module


@pytest.mark.parametrize("draw", ["normal", "wide", "peaked"])
def test_every_candidate_of_the_kl_graph_computes_it(draw: str) -> None:
    """The level cut is a candidate beside the greedy one, and every candidate's kernels, interpreted,
    give the graph's result on logits of unit scale, of scale 8 and with one large logit a row."""
    graph = kl_logits()
    names = [name for name, _ in candidate_kernels(compiled())]
    assert any(n.endswith("_lv") for n in names) and any(n.endswith("_p0") for n in names), names
    xs = random_inputs(graph, 11)
    if draw == "wide":
        xs = [8 * x for x in xs]
    elif draw == "peaked":
        xs = [x.copy() for x in xs]
        for x in xs:
            x[np.arange(ROWS), np.arange(ROWS) * 7] = 30.0
    (ref,) = run_graph(graph, xs)
    for name, kernels in candidate_kernels(compiled()):
        (got,) = run_kernels(kernels, xs)
        err = max_relative_error(ref, np.asarray(got, dtype=np.float64).reshape(ref.shape))
        assert err <= 2e-2, f"@{name} on {draw} logits: max relative error {err:.3g}"
