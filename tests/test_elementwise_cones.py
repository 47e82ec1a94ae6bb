"""Element-wise cones of one input set aside during the search (`passes/elementwise_cones.py`)."""

from __future__ import annotations

import numpy as np
import pytest
from cleave_ir.dialects import tgraph
from cleave_ir.passes.elementwise_cones import find_cone, inline, outline
from cleave_ir.passes.superoptimize import superoptimize_graph

from cleave_ir.interpreter import input_shapes, max_relative_error, run_graph
from conftest import parse_text

T = "!tgraph.tensor<[16, 256], f16>"
# GPT-2's MLP output region as transformers writes it: gelu_new of the c_fc result, c_proj, bias, residual
GELU_NEW = f"""
tgraph.graph @gelu_new_proj(%h: {T}, %w: !tgraph.tensor<[256, 64], f16>, %b: !tgraph.tensor<[1, 64], f16>, %x: !tgraph.tensor<[16, 64], f16>) -> !tgraph.tensor<[16, 64], f16> {{
  %0 = tgraph.scale %h, 5.000000e-01 : {T}
  %1 = tgraph.square %h : {T}
  %2 = tgraph.mul %h, %1 : {T}, {T} -> {T}
  %3 = tgraph.scale %2, 4.471500e-02 : {T}
  %4 = tgraph.add %h, %3 : {T}, {T} -> {T}
  %5 = tgraph.scale %4, 0.79788456080286541 : {T}
  %6 = tgraph.tanh %5 : {T}
  %7 = tgraph.scalar add %6, 1.000000e+00 : {T}
  %8 = tgraph.mul %0, %7 : {T}, {T} -> {T}
  %9 = tgraph.matmul %8, %w : {T}, !tgraph.tensor<[256, 64], f16> -> !tgraph.tensor<[16, 64], f16>
  %10 = tgraph.add %9, %b : !tgraph.tensor<[16, 64], f16>, !tgraph.tensor<[1, 64], f16> -> !tgraph.tensor<[16, 64], f16>
  %11 = tgraph.add %x, %10 : !tgraph.tensor<[16, 64], f16>, !tgraph.tensor<[16, 64], f16> -> !tgraph.tensor<[16, 64], f16>
  tgraph.output %11 : !tgraph.tensor<[16, 64], f16>
}}
"""


def _graph(text: str) -> tgraph.GraphOp:
    return next(op for op in parse_text(text).walk() if isinstance(op, tgraph.GraphOp))


def _inputs(graph: tgraph.GraphOp, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s) * (1 + i) for i, s in enumerate(input_shapes(graph))]


def test_a_decomposed_activation_is_outlined_and_inlined_back_unchanged() -> None:
    graph = _graph(GELU_NEW)
    cone = find_cone(graph)
    assert cone is not None and cone.index == 0 and len(cone.ops) == 9
    searched = outline(graph, cone)
    assert [op.name for op in searched.block.ops] == ["tgraph.matmul", "tgraph.add", "tgraph.add", "tgraph.output"]
    back = inline(searched.clone(), cone)
    for seed in range(3):
        xs = _inputs(graph, seed)
        assert max_relative_error(run_graph(graph, xs)[0], run_graph(back, xs)[0]) == 0.0


M = "!tgraph.tensor<[16, 64], f16>"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # the input is read outside the cone too (a row sum of %h beside the activation)
        ("%11 = tgraph.add %x, %10", f"%r = tgraph.matmul %h, %w : {T}, !tgraph.tensor<[256, 64], f16> -> {M}\n  %11 = tgraph.add %r, %10"),
        # two values of the cone are read by the rest (%8 and %4)
        ("%11 = tgraph.add %x, %10", f"%r = tgraph.matmul %4, %w : {T}, !tgraph.tensor<[256, 64], f16> -> {M}\n  %11 = tgraph.add %r, %10"),
        # an op of the cone whose result nothing reads (not a cone: the ops must all lead to its root)
        ("%8 = tgraph.mul %0, %7", "%8 = tgraph.mul %h, %1"),
    ],
)
def test_no_cone_where_the_input_or_a_second_value_leaves_it(old: str, new: str) -> None:
    text = GELU_NEW.replace(old, new)
    assert find_cone(_graph(text)) is None


def test_no_cone_of_fewer_than_four_ops() -> None:
    """tanh(0.8 h) + 1 before a matmul (3 ops) stays in the search, which may move its scale."""
    lines = GELU_NEW.splitlines()
    short = "\n".join(
        line for line in lines if not any(line.strip().startswith(f"%{i} ") for i in (0, 1, 2, 3, 4, 8))
    ).replace("%5 = tgraph.scale %4,", "%5 = tgraph.scale %h,").replace("tgraph.matmul %8, %w", "tgraph.matmul %7, %w")
    graph = _graph(short)
    assert [op.name for op in graph.block.ops][:3] == ["tgraph.scale", "tgraph.tanh", "tgraph.scalar"]
    assert find_cone(graph) is None


def test_the_search_sets_the_cone_aside_and_checks_candidates_against_the_whole_graph() -> None:
    """With the cone in, this region's search ran into the 600 s time limit; without it the search is a
    few hundred constructions, and every candidate (the cone put back) computes the graph."""
    graph = _graph(GELU_NEW)
    cands, stats = superoptimize_graph(graph, max_ops=12)
    assert stats.cone_ops == 9 and stats.work < 5000 and not stats.stopped_by_time
    assert all(sum(op.name == "tgraph.tanh" for op in c.graph.block.ops) == 1 for c in cands)
    # the Split-K forms hold a split count symbol (bound later, by cleave-concretize): run the others
    plain = [c for c in cands if not any(op.name == "tgraph.split" for op in c.graph.block.ops)]
    assert plain and len(plain) < len(cands)
    for c in plain:
        xs = _inputs(graph, 11)
        assert max_relative_error(run_graph(graph, xs)[0], run_graph(c.graph, xs)[0]) < 1e-9


def test_a_graph_that_is_all_cone_searches_to_itself() -> None:
    """Only the activation (its root is the graph's output): the search runs on a graph of no ops and
    offers nothing but the input graph, without failing."""
    lines = [line for line in GELU_NEW.strip().splitlines() if not any(line.strip().startswith(f"%{i} ") for i in (9, 10, 11))]
    text = "\n".join(lines).replace("tgraph.output %11 : !tgraph.tensor<[16, 64], f16>", f"tgraph.output %8 : {T}")
    graph = _graph(text.replace("-> !tgraph.tensor<[16, 64], f16> {", f"-> {T} {{", 1))
    cands, stats = superoptimize_graph(graph, max_ops=12)
    assert stats.cone_ops == 9 and cands == []
