"""A loop-carried row reduction lowered element-wise (passes/lower_tilelang.py, `_defers_reduction`):
the kernels still compute the graph, on inputs of several distributions, for sums and maxima."""

from __future__ import annotations

import numpy as np
import pytest
from cleave_ir.dialects import tgraph
from cleave_ir.dialects import tilelang as tl
from cleave_ir.passes.lower_tilelang import lower_module
from cleave_ir.passes.place_memory import PlaceMemoryPass
from cleave_ir.passes.schedule import SchedulePass
from xdsl.context import Context

from cleave_ir.interpreter import max_relative_error, run_graph
from cleave_ir.interpreter_tilelang import run_kernels
from conftest import graphs_of, parse_text

# x [16, 8192] does not fit one tile: the schedule loops over K and sums (maxes) the row chunks
GRAPHS = {
    "rms": """
tgraph.graph @rms(%x: !tgraph.tensor<[16, 8192], f16>, %w: !tgraph.tensor<[8192, 16], f16>) -> !tgraph.tensor<[16, 16], f16> {
  %o = tgraph.matmul %x, %w : !tgraph.tensor<[16, 8192], f16>, !tgraph.tensor<[8192, 16], f16> -> !tgraph.tensor<[16, 16], f16>
  %sq = tgraph.square %x : !tgraph.tensor<[16, 8192], f16>
  %ss = tgraph.reduce sum %sq dim 1 : !tgraph.tensor<[16, 8192], f16> -> !tgraph.tensor<[16, 1], f16>
  %ms = tgraph.scale %ss, 0.0001220703125 : !tgraph.tensor<[16, 1], f16>
  %rs = tgraph.rsqrt %ms : !tgraph.tensor<[16, 1], f16>
  %n = tgraph.mul %o, %rs : !tgraph.tensor<[16, 16], f16>, !tgraph.tensor<[16, 1], f16> -> !tgraph.tensor<[16, 16], f16>
  tgraph.output %n : !tgraph.tensor<[16, 16], f16>
}""",
    "absmax": """
tgraph.graph @absmax(%x: !tgraph.tensor<[16, 8192], f16>, %w: !tgraph.tensor<[8192, 16], f16>) -> !tgraph.tensor<[16, 16], f16> {
  %o = tgraph.matmul %x, %w : !tgraph.tensor<[16, 8192], f16>, !tgraph.tensor<[8192, 16], f16> -> !tgraph.tensor<[16, 16], f16>
  %a = tgraph.abs %x : !tgraph.tensor<[16, 8192], f16>
  %m = tgraph.reduce max %a dim 1 : !tgraph.tensor<[16, 8192], f16> -> !tgraph.tensor<[16, 1], f16>
  %d = tgraph.div %o, %m : !tgraph.tensor<[16, 16], f16>, !tgraph.tensor<[16, 1], f16> -> !tgraph.tensor<[16, 16], f16>
  tgraph.output %d : !tgraph.tensor<[16, 16], f16>
}""",
}

DISTRIBUTIONS = {
    "normal": lambda rng, s: rng.standard_normal(s),
    "positive": lambda rng, s: rng.uniform(0.5, 2.0, s),
    "wide": lambda rng, s: rng.choice([-1.0, 1.0], s) * np.exp(rng.uniform(-3.0, 3.0, s)),
}


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_deferred_row_reduction_computes_the_graph(name: str) -> None:
    module = parse_text(GRAPHS[name])
    graph = graphs_of(module)[0].clone()
    SchedulePass(top_k=1).apply(Context(), module)
    PlaceMemoryPass().apply(Context(), module)
    lower_module(module)
    kernels = [op for op in module.walk() if isinstance(op, tl.KernelOp)]
    assert len(kernels) == 1
    # the wide accumulator is reduced once, after the K loop, and never inside it
    loop = next(op for op in kernels[0].walk() if isinstance(op, tl.PipelinedOp))
    reduce_kind = tl.ReduceSumOp if name == "rms" else tl.ReduceMaxOp
    assert not any(isinstance(op, reduce_kind) for op in loop.walk())
    wide = [op for op in kernels[0].walk() if isinstance(op, tl.AllocFragmentOp) and op.result.name_hint.endswith("_wide")]
    assert len(wide) == 1
    assert any(isinstance(op, reduce_kind) and op.operands[0] == wide[0].result for op in kernels[0].walk())
    rng = np.random.default_rng(7)
    for dist, draw in DISTRIBUTIONS.items():
        xs = [draw(rng, (16, 8192)), draw(rng, (8192, 16)) * 0.05]
        xs = [x.astype(np.float16).astype(np.float64) for x in xs]
        (ref,) = run_graph(graph, xs)
        (out,) = run_kernels(kernels, xs)
        assert max_relative_error(ref, out) < 2e-2, dist
