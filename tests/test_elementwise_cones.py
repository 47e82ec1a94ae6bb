"""Element-wise cones of one input set aside during the search (`passes/elementwise_cones.py`)."""

from __future__ import annotations

import numpy as np
import pytest
from cleave_ir.dialects import tgraph
from cleave_ir.passes.elementwise_cones import find_cone, inline, out_of_range, outline, range_cone
from cleave_ir.passes.equivalence import Checker
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


S = "!tgraph.tensor<[1, 2, 1, 18], f16>"
MASK = "!tgraph.tensor<[1, 1, 1, 18], f16>"
KV = "!tgraph.tensor<[1, 2, 18, 16], f16>"
Q = "!tgraph.tensor<[1, 2, 1, 16], f16>"
R = "!tgraph.tensor<[1, 2, 1, 1], f16>"
# decode attention with an additive 0/1 mask, as older transformers models write it: (mask - 1) * 1e4
MASKED_DECODE = f"""
tgraph.graph @masked_decode(%q: {Q}, %k: {KV}, %v: {KV}, %mask: {MASK}) -> {Q} {{
  %s = tgraph.matmul %q, %k transpose_b : {Q}, {KV} -> {S}
  %t = tgraph.scale %s, 2.500000e-01 : {S}
  %m0 = tgraph.scalar add %mask, -1.000000e+00 : {MASK}
  %m1 = tgraph.scale %m0, 1.000000e+04 : {MASK}
  %u = tgraph.add %t, %m1 : {S}, {MASK} -> {S}
  %e = tgraph.exp %u : {S}
  %r = tgraph.reduce sum %e dim 3 : {S} -> {R}
  %p = tgraph.div %e, %r : {S}, {R} -> {S}
  %o = tgraph.matmul %p, %v : {S}, {KV} -> {Q}
  tgraph.output %o : {Q}
}}
"""


def _masked_inputs(graph: tgraph.GraphOp, seed: int, shift: float) -> list[np.ndarray]:
    """q, k, v drawn around `shift`, the mask 0/1 with its last key kept."""
    rng = np.random.default_rng(seed)
    q, k, v, mask = input_shapes(graph)
    m = (rng.uniform(size=mask) < 0.6).astype(np.float64)
    m[..., -1] = 1.0
    return [rng.standard_normal(q) + shift, rng.standard_normal(k) - shift, rng.standard_normal(v) * 3, m]


def test_an_additive_mask_of_two_ops_is_a_cone_out_of_range() -> None:
    """(mask - 1) * 1e4 reaches -1e4..1e4 on normal masks: set aside whatever its size; a scale of Q
    (in range) and an input promising a causal mask (the schedule reads it as the mask) are not."""
    graph = _graph(MASKED_DECODE)
    cone = find_cone(graph)
    assert cone is not None and cone.index == 3 and [op.name for op in cone.ops] == ["tgraph.scalar", "tgraph.scale"]
    assert out_of_range(cone) and range_cone(graph) == cone
    assert find_cone(_graph(MASKED_DECODE.replace("1.000000e+04", "2.000000e+00"))) is None
    causal = MASKED_DECODE.replace(f"%mask: {MASK})", f"%mask: {MASK} {{cleave.causal = #cleave.causal<offset = 0>}})")
    assert find_cone(_graph(causal)) is None


def test_a_masked_decode_attention_is_searched_past_its_mask() -> None:
    """With the mask's cone in, the search ran 278 s into its work budget and confirmed no candidate
    (every trial's exps overflowed); with it set aside and the checks drawn at its root, the candidates
    come in seconds and compute the graph on 0/1 masks."""
    graph = _graph(MASKED_DECODE)
    cands, stats = superoptimize_graph(graph, max_ops=12)
    assert stats.cone_ops == 2 and not stats.stopped_by_budget and not stats.stopped_by_time, stats.line()
    assert cands and all("tgraph.scalar" in [op.name for op in c.graph.block.ops] for c in cands)
    plain = [c for c in cands if not any(op.name == "tgraph.split" for op in c.graph.block.ops)]
    assert plain
    for c in plain:
        for seed, shift in ((1, 0.0), (2, 2.5), (3, -1.5)):
            xs = _masked_inputs(graph, seed, shift)
            assert max_relative_error(run_graph(graph, xs)[0], run_graph(c.graph, xs)[0]) < 1e-9


def test_the_check_at_the_cone_root_refuses_what_differs() -> None:
    """Compared at the mask's root: a candidate that drops the row sum's division disagrees there; one
    whose mask cone differs (a 2e4 fill) is compared whole, where no trial is finite: refused too."""
    graph = _graph(MASKED_DECODE)
    checker = Checker(graph, [{}])
    assert checker.check(graph.clone())
    no_div = _graph(MASKED_DECODE.replace("%o = tgraph.matmul %p, %v", "%o = tgraph.matmul %e, %v"))
    verdict = checker.check(no_div)
    assert not verdict and "relative error" in verdict.failure
    other_fill = checker.check(_graph(MASKED_DECODE.replace("1.000000e+04", "2.000000e+04")))
    assert not other_fill and "finite" in other_fill.failure


def test_gpu_check_draws_the_mask_as_0_1_and_its_reference_is_finite() -> None:
    """`cleave compile --gpu` checks kernels on `runtime.random_inputs`: a normal draw of the mask made
    the float64 reference's exps overflow (nothing to check against); the mask is now 0/1 with its last
    key kept, q, k, v stay normal, and the reference is finite."""
    torch = pytest.importorskip("torch")
    from cleave_ir.runtime import random_inputs, torch_reference

    graph = _graph(MASKED_DECODE)
    xs = random_inputs(graph, seed=3, device="cpu")
    mask = xs[3]
    assert set(mask.unique().tolist()) == {0.0, 1.0} and bool((mask[..., -1] == 1).all())
    assert all(bool((x != x.round()).any()) for x in xs[:3])
    (ref,) = torch_reference(graph, xs)
    assert bool(torch.isfinite(ref).all())
