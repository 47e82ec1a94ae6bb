"""`tgraph.select` in the search (issue 11): masked attention reaches FlashAttention, soundly."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from xdsl.context import Context

from cleave_ir.builder import GraphBuilder, module_of
from cleave_ir.dialects import tgraph
from cleave_ir.interpreter import input_shapes, run_graph
from cleave_ir.passes.canonicalize import CanonicalizePass
from cleave_ir.passes.equivalence import condition_inputs, equivalent, sample_inputs
from cleave_ir.passes.superoptimize import superoptimize_graph, unjustified_nesting, unjustified_select_move
from cleave_ir.run import load_module

ROOT = Path(__file__).resolve().parent.parent


def _graph(path: Path) -> tgraph.GraphOp:
    module = load_module(str(path))
    CanonicalizePass().apply(Context(), module)  # as cleave-pipeline does before the search
    graph = module.body.block.first_op
    assert isinstance(graph, tgraph.GraphOp)
    return graph


def _fresh_inputs(graph: tgraph.GraphOp, seed: int, kind: str, mask: str) -> list[np.ndarray]:
    """Inputs independent of passes/equivalence.py's samplers: data of `kind`, a mask of `mask`."""
    rng = np.random.default_rng(seed)
    xs = []
    for i, shape in enumerate(input_shapes(graph)):
        if i in condition_inputs(graph):
            if mask == "causal":
                x = np.tril(np.ones(shape[-2:]))
            else:  # random 0/1 with the diagonal kept, so no row is fully masked
                x = np.maximum(rng.integers(0, 2, size=shape[-2:]), np.eye(*shape[-2:]))
            xs.append(np.broadcast_to(x, shape).astype(np.float64))
        elif kind == "uniform":
            xs.append(rng.uniform(-2.0, 2.0, size=shape))
        elif kind == "scaled":
            xs.append(rng.standard_normal(shape) * 4.0 + 1.0)
        else:
            xs.append(rng.standard_normal(shape))
    return xs


def _agree(reference: tgraph.GraphOp, candidate: tgraph.GraphOp) -> None:
    for seed, kind in enumerate(("normal", "uniform", "scaled")):
        for mask in ("causal", "random"):
            xs = _fresh_inputs(reference, seed + 11, kind, mask)
            want = run_graph(reference, xs)[0]
            got = run_graph(candidate, xs, bindings={"s": 2})[0]  # split candidates: 2 chunks
            assert np.allclose(got, want, rtol=1e-7, atol=1e-9), (candidate.sym_name.data, kind, mask)


def _masked_attention_candidates():
    graph = _graph(ROOT / "examples" / "models" / "llama3_causal_attention.mlir")
    cands, stats = superoptimize_graph(graph, max_ops=12)
    return graph, cands, stats


def test_masked_attention_reaches_flash_attention() -> None:
    """The value matmul consumes exp(select(mask, scores, fill)) and the division comes after it:
    the candidate the scheduler turns into one kernel streaming K, V and the mask tile."""
    graph, cands, _ = _masked_attention_candidates()
    flash = [c for c in cands if c.note == "div moved after matmul"]
    assert flash, [c.note for c in cands]
    g = flash[0].graph
    ops = {op.name: op for op in g.block.ops}
    assert "tgraph.select" in ops and "tgraph.reduce" in ops
    pv = next(op for op in g.block.ops if isinstance(op, tgraph.MatmulOp) and op.transpose_b is None)
    assert isinstance(pv.lhs.owner, tgraph.ExpOp)
    assert any(isinstance(u.operation, tgraph.DivOp) for u in pv.result.uses)
    for c in cands:  # every candidate, on inputs where the mask matters
        _agree(graph, c.graph)


def test_masked_search_costs_about_the_unmasked_search() -> None:
    """Masking adds select to the search without multiplying its work (unmasked: same sizes)."""
    _, _, masked = _masked_attention_candidates()
    unmasked_graph = _graph(ROOT / "lit_tests" / "passes" / "Inputs" / "mha_small_max.mlir")
    _, unmasked = superoptimize_graph(unmasked_graph, max_ops=12)
    assert not masked.stopped_by_budget
    assert masked.work <= 3 * unmasked.work, (masked.line(), unmasked.line())


def _masked_sum(name: str, after: bool) -> tgraph.GraphOp:
    """sum_j select(m, exp(x), y) over dim 1 (`after`: the select moved after the sums: wrong)."""
    b = GraphBuilder(name, "f32")
    m, x, y = b.input("m", [6, 12]), b.input("x", [6, 12]), b.input("y", [6, 12])
    if not after:
        return b.build(b.reduce("sum", b.elementwise(tgraph.SelectOp, [m, b.exp(x), y], tgraph.tensor_type(x)), 1))
    ex, sy = b.reduce("sum", b.exp(x), 1), b.reduce("sum", y, 1)
    mm = b.reduce("max", m, 1)
    return b.build(b.elementwise(tgraph.SelectOp, [mm, ex, sy], tgraph.tensor_type(ex)))


def test_select_is_never_moved_across_a_reduction() -> None:
    original, moved = _masked_sum("g", False), _masked_sum("g_moved", True)
    why = unjustified_nesting(original, moved)
    assert why is not None and "select" in why
    # the equivalence check alone rejects it too: its masks have zeros in every row but one
    assert not equivalent(original, moved, [{}])


def test_dropping_the_mask_is_rejected() -> None:
    """A candidate that ignores the mask agrees wherever the mask is all ones, and nowhere else."""
    b = GraphBuilder("nomask", "f32")
    b.input("m", [6, 12])
    x, y = b.input("x", [6, 12]), b.input("y", [6, 12])
    del y
    nomask = b.build(b.reduce("sum", b.exp(x), 1))
    verdict = equivalent(_masked_sum("g", False), nomask, [{}])
    assert not verdict and verdict.failure


@pytest.mark.parametrize("dist", ["normal", "shifted", "negative", "positive", "ties", "wide"])
def test_mask_inputs_have_zeros_and_no_empty_row(dist: str) -> None:
    graph = _masked_sum("g", False)
    m = sample_inputs(graph, dist, 3, {})[0]
    assert np.all(np.any(m != 0, axis=-1)), "a fully masked row"
    if dist != "wide":  # the wide sample: nonzero reals, every element takes the first side
        assert np.any(m == 0)
    if dist == "shifted":
        assert np.array_equal(m, np.tril(np.ones_like(m)))


def test_small_masked_graphs_every_candidate_is_equivalent() -> None:
    """Searches over select graphs (select under exp, before a sum and a matmul) accept no wrong graph."""
    b = GraphBuilder("sm", "f32")
    m, x, w = b.input("m", [6, 12]), b.input("x", [6, 12]), b.input("w", [12, 5])
    s = b.elementwise(tgraph.SelectOp, [m, b.scale(x, 0.5), m], tgraph.tensor_type(x))
    e = b.exp(s)
    graph = b.build(b.div(b.matmul(e, w), b.reduce("sum", e, 1)))
    module = module_of(graph)
    graph = module.body.block.first_op
    cands, stats = superoptimize_graph(graph, max_ops=8)
    assert cands, stats.line()
    for c in cands:
        _agree(graph, c.graph)


def _scaled_select(name: str, scale_after: bool) -> tgraph.GraphOp:
    """exp(select(m, 0.5 x, m - 1e4)) summed (`scale_after`: the scale moved over the select, which
    scales the fill too: equal in float64 where exp underflows either way, not as real numbers)."""
    b = GraphBuilder(name, "f32")
    m, x = b.input("m", [6, 12]), b.input("x", [6, 12])
    t = tgraph.tensor_type(x)
    fill = b.elementwise(tgraph.ScalarOp, [m], tgraph.tensor_type(m), {
        "kind": tgraph.ScalarKindAttr(tgraph.ScalarKind.SUB),
        "constant": tgraph.FloatAttr(1e4, tgraph.Float64Type()),
    })
    if scale_after:
        s = b.scale(b.elementwise(tgraph.SelectOp, [m, x, fill], t), 0.5)
    else:
        s = b.elementwise(tgraph.SelectOp, [m, b.scale(x, 0.5), fill], t)
    return b.build(b.reduce("sum", b.exp(s), 1))


def test_scale_is_not_moved_onto_one_side_of_a_select() -> None:
    original, moved = _scaled_select("g", False), _scaled_select("g_moved", True)
    why = unjustified_select_move(original, moved)
    assert why is not None and "scale" in why
    assert unjustified_select_move(original, original) is None
    # the values agree on every input the check draws (exp(-5000) and exp(-1e4) are both 0): only
    # the op property tells them apart
    assert equivalent(original, moved, [{}])
    cands, stats = superoptimize_graph(original, max_ops=6)
    for c in cands:
        assert unjustified_select_move(original, c.graph) is None
        _agree(original, c.graph)


def _column_mask_graph() -> tgraph.GraphOp:
    """Corpus graph 38: select(m, x3, -2 x1) with a mask of one column ([7, 1], broadcast along the
    rows); the search accepted plain `x3`, as its masks had no zero in any row, so were all ones."""
    b = GraphBuilder("g38", "f32")
    x1, m, x3 = b.input("x1", [7, 2]), b.input("mask2", [7, 1]), b.input("x3", [7, 2])
    a = b.scalar("mul", x1, -2.0)
    return b.build(b.elementwise(tgraph.SelectOp, [m, x3, a], tgraph.tensor_type(x3)))


def test_a_mask_of_one_column_keeps_its_zeros() -> None:
    graph = _column_mask_graph()
    b = GraphBuilder("just_x3", "f32")
    b.input("x1", [7, 2]), b.input("mask2", [7, 1])
    ignored = b.build(b.input("x3", [7, 2]))
    verdict = equivalent(graph, ignored, [{}])
    assert not verdict and verdict.failure
    for dist in ("normal", "negative", "positive", "ties"):  # (causal of one column: all ones)
        m = sample_inputs(graph, dist, 5, {})[1]
        assert np.any(m == 0) and np.any(m != 0), dist
    cands, _ = superoptimize_graph(graph, max_ops=5)
    for c in cands:
        assert any(isinstance(op, tgraph.SelectOp) for op in c.graph.block.ops), str(c.graph)
        _agree(graph, c.graph)
