"""cleave-stabilize-split-k on a Split-K candidate whose exp is shifted by the whole row's max
(`log(sum exp(x - max x)) + max x` over a vocabulary, split over the vocabulary): each chunk shifts by
its own max, the combine rescales the chunk sums and reads the max over the chunks wherever the graph
read the row max, so neither the split kernel nor the combine reads a whole row (before, both did,
and the pipeline dropped the split forms). Graphs, candidates and kernels run in the interpreters on
inputs of three distributions, logits up to ~1e4 among them, against float64.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.parser import Parser

from cleave_ir.builder import module_of
from cleave_ir.dialects import tgraph
from cleave_ir.dialects import tilelang as tl
from cleave_ir.interpreter import max_relative_error, run_graph, run_split_k
from cleave_ir.interpreter_tilelang import candidate_kernels, run_kernels
from cleave_ir.passes.concretize import ConcretizePass
from cleave_ir.passes.lower_tilelang import lower_module
from cleave_ir.passes.partition_split_k import partition
from cleave_ir.passes.pipeline import PipelinePass
from cleave_ir.passes.stabilize_split_k import StabilizeSplitKPass, stabilize
from cleave_ir.passes.superoptimize import SuperoptimizePass
from cleave_ir.run import make_context

LOGSUMEXP = """
tgraph.graph @lse(%x: !tgraph.tensor<[4, 8192], f16>) -> !tgraph.tensor<[4, 1], f16> {
  %m = tgraph.reduce max %x dim 1 : !tgraph.tensor<[4, 8192], f16> -> !tgraph.tensor<[4, 1], f16>
  %z = tgraph.sub %x, %m : !tgraph.tensor<[4, 8192], f16>, !tgraph.tensor<[4, 1], f16> -> !tgraph.tensor<[4, 8192], f16>
  %e = tgraph.exp %z : !tgraph.tensor<[4, 8192], f16>
  %s = tgraph.reduce sum %e dim 1 : !tgraph.tensor<[4, 8192], f16> -> !tgraph.tensor<[4, 1], f16>
  %l = tgraph.log %s : !tgraph.tensor<[4, 1], f16>
  %o = tgraph.add %l, %m : !tgraph.tensor<[4, 1], f16>, !tgraph.tensor<[4, 1], f16> -> !tgraph.tensor<[4, 1], f16>
  tgraph.output %o : !tgraph.tensor<[4, 1], f16>
}
"""


def graph() -> tgraph.GraphOp:
    g = Parser(make_context(), LOGSUMEXP).parse_module().body.block.first_op
    assert isinstance(g, tgraph.GraphOp)
    return g.clone()


def inputs(dist: str, seed: int = 3) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    shape = (4, 8192)
    if dist == "normal":
        x = rng.standard_normal(shape)
    elif dist == "huge":  # logits of ~1e4: exp of the unshifted logits overflows f32 and f64
        x = rng.standard_normal(shape) * 3000.0
    elif dist == "offset_peaks":  # rows far from 0, one large peak per row
        x = rng.uniform(-5, 5, shape) + rng.uniform(-40, 40, (4, 1))
        x[np.arange(4), rng.integers(0, 8192, 4)] += 60.0
    else:  # masked logits: -inf in most places, whole chunks and whole lanes of some rows among them
        x = rng.standard_normal(shape) * 4.0
        x[rng.random(shape) < 0.7] = -np.inf
        x[0, :6000] = -np.inf
    return [x.astype(np.float16).astype(np.float64)]


def reference(x: np.ndarray) -> np.ndarray:
    m = x.max(1, keepdims=True)
    return np.log(np.exp(x - np.where(np.isfinite(m), m, 0)).sum(1, keepdims=True)) + m


@cache
def _concrete_text() -> str:
    module = module_of(graph())
    for p in (SuperoptimizePass(), ConcretizePass(split_counts=(4,))):
        p.apply(Context(), module)
    return str(module)


def split_candidate() -> tuple[tgraph.GraphOp, tgraph.GraphOp]:
    """(before, after) the rewrite of the one split candidate."""
    module = Parser(make_context(), _concrete_text()).parse_module()
    found = []
    for g in module.body.block.ops:
        assert isinstance(g, tgraph.GraphOp)
        before = g.clone()
        if stabilize(g):
            found.append((before, g))
    assert len(found) == 1, [g.sym_name.data for _, g in found]
    return found[0]


@pytest.mark.parametrize("dist", ["normal", "huge", "offset_peaks"])
def test_rewritten_split_candidate_equals_the_input(dist: str) -> None:
    before, after = split_candidate()
    (x,) = inputs(dist)
    want = reference(x)
    assert max_relative_error(want, run_graph(after, [x])[0]) < 1e-12
    if dist == "normal":
        assert max_relative_error(want, run_graph(before, [x])[0]) < 1e-12


def test_rewrite_shifts_each_chunk_by_its_own_max_and_reads_no_whole_row() -> None:
    _, after = split_candidate()
    assert "exp shifted by the chunk max" in after.attributes["cleave.note"].data  # type: ignore[attr-defined]
    (x,) = after.inputs
    assert [u.operation.name for u in x.uses] == ["tgraph.split"], "a whole-row max of x is left"
    assert stabilize(after) == 0  # idempotent
    split, combine = partition(after)  # type: ignore[misc]
    assert not getattr(combine.attributes.get("cleave.passthrough"), "data", ()), "the combine reads x"
    assert [tgraph.tensor_type(t).shape for t in split.function_type.outputs.data] == [(4, 4, 1), (4, 4, 1)]
    xs = inputs("huge")
    got = run_split_k(split, combine, xs, mode="declared")[0]
    assert np.all(np.isfinite(got))
    assert max_relative_error(reference(xs[0]), got) < 2e-3


def test_pass_leaves_a_split_of_another_value_alone() -> None:
    """The shift is the max of x, but the exp reads chunks of 2x: not the row max of what is split."""
    text = LOGSUMEXP.replace("%z = tgraph.sub %x, %m", "%x2 = tgraph.add %x, %x : !tgraph.tensor<[4, 8192], f16>, !tgraph.tensor<[4, 8192], f16> -> !tgraph.tensor<[4, 8192], f16>\n  %z = tgraph.sub %x2, %m")
    module = module_of(Parser(make_context(), text).parse_module().body.block.first_op.clone())
    for p in (SuperoptimizePass(), ConcretizePass(split_counts=(4,))):
        p.apply(Context(), module)
    before = str(module)
    StabilizeSplitKPass().apply(Context(), module)
    x = inputs("normal")
    for g in module.body.block.ops:
        assert isinstance(g, tgraph.GraphOp)
        xs = [x[0]]
        want = np.log(np.exp(2 * x[0] - x[0].max(1, keepdims=True)).sum(1, keepdims=True)) + x[0].max(1, keepdims=True)
        assert max_relative_error(want, run_graph(g, xs)[0]) < 1e-9, g.sym_name.data
    assert before.count("tgraph.split") == str(module).count("tgraph.split")


@cache
def _pipeline() -> tuple[str, ...]:
    module = module_of(graph())
    PipelinePass(search_budget=50_000, split_counts=(4,), top_k=3).apply(Context(), module)
    lower_module(module)
    return str(module), *(name for name, _ in candidate_kernels(module))


def test_pipeline_keeps_a_split_candidate() -> None:
    names = _pipeline()[1:]
    assert any("split" in n for n in names), names


def test_one_kernel_runs_lane_by_lane() -> None:
    """The one kernel (4 blocks: fewer than SMs) keeps each lane's running max and sum, and reduces no
    row inside its loop (`LowerTileLang._plan_lanes`)."""
    module = Parser(make_context(), _pipeline()[0]).parse_module()
    (name, kernels), *_ = (c for c in candidate_kernels(module) if "split" not in c[0])
    (kernel,) = kernels
    loops = [op for op in kernel.walk() if isinstance(op, tl.PipelinedOp)]
    assert len(loops) == 1
    assert not [op for op in loops[0].walk() if isinstance(op, (tl.ReduceMaxOp, tl.ReduceSumOp))]
    assert {"m_lanes", "alpha_lanes", "ref_lanes"} <= {op.result.name_hint for op in kernel.walk() if isinstance(op, tl.AllocFragmentOp)}


@pytest.mark.parametrize("dist", ["normal", "huge", "offset_peaks", "masked"])
def test_kept_kernels_match_float64(dist: str) -> None:
    module = Parser(make_context(), _pipeline()[0]).parse_module()
    (x,) = inputs(dist)
    want = reference(x)
    for name, kernels in candidate_kernels(module):
        got = run_kernels(kernels, [x])[0]
        assert np.all(np.isfinite(got)), name
        assert max_relative_error(want, got) < 2e-3, name


def test_dynamic_rows_run_lane_by_lane_at_any_count() -> None:
    """With the row count dynamic, the grid is a symbol: the lane-wise form is judged at the sizes the
    kernel was scheduled at (`cleave.representative`; evaluating the grid as written failed with "dim
    x_d0 has unbound symbol(s)"), and the kernels serve other row counts."""
    text = LOGSUMEXP.replace("%x: !tgraph.tensor<[4, 8192], f16>)", "%x: !tgraph.tensor<[4, 8192], f16> {dynamic = array<i64: 0>})")
    g = Parser(make_context(), text).parse_module().body.block.first_op
    assert isinstance(g, tgraph.GraphOp)
    module = module_of(g.clone())
    PipelinePass(search_budget=50_000, split_counts=(4,), top_k=1).apply(Context(), module)
    lower_module(module)
    candidates = candidate_kernels(module)
    assert any(op.result.name_hint == "m_lanes" for _, ks in candidates for k in ks for op in k.walk() if isinstance(op, tl.AllocFragmentOp))
    for rows in (4, 7):
        x = np.random.default_rng(rows).standard_normal((rows, 8192)).astype(np.float16).astype(np.float64) * 30.0
        for name, kernels in candidates:
            got = np.asarray(run_kernels(kernels, [x])[0], dtype=np.float64)
            assert max_relative_error(reference(x), got) < 2e-3, (name, rows)
