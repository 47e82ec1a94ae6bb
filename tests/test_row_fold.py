"""A row reduction too wide for one warp (768, 5120 columns) of an element-wise expression: the split
rows' fold computes the expression from its leaves' tiles (`LowerTileLang._reduce_rows_inlined`), with
no fp32 tile of it staged in shared memory (a [4, 5120] norm's squares: 80 KiB, one block an SM).
Each kernel runs in the tilelang interpreter on fresh inputs of three distributions against float64."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import f32
from xdsl.parser import Parser

from cleave_ir.builder import module_of
from cleave_ir.dialects import tgraph
from cleave_ir.dialects import tilelang as tl
from cleave_ir.interpreter import max_relative_error, run_graph
from cleave_ir.interpreter_tilelang import candidate_kernels, run_kernels
from cleave_ir.passes.lower_tilelang import lower_module
from cleave_ir.passes.pipeline import PipelinePass
from cleave_ir.run import make_context

RMSNORM = """
tgraph.graph @rmsnorm(%x: !tgraph.tensor<[8, 768], f16>, %g: !tgraph.tensor<[1, 768], f16>) -> !tgraph.tensor<[8, 768], f16> {
  %sq = tgraph.square %x : !tgraph.tensor<[8, 768], f16>
  %ms = tgraph.reduce mean %sq dim 1 : !tgraph.tensor<[8, 768], f16> -> !tgraph.tensor<[8, 1], f16>
  %e = tgraph.scalar add %ms, 1.000000e-06 : !tgraph.tensor<[8, 1], f16>
  %r = tgraph.rsqrt %e : !tgraph.tensor<[8, 1], f16>
  %n = tgraph.mul %x, %r : !tgraph.tensor<[8, 768], f16>, !tgraph.tensor<[8, 1], f16> -> !tgraph.tensor<[8, 768], f16>
  %y = tgraph.mul %n, %g : !tgraph.tensor<[8, 768], f16>, !tgraph.tensor<[1, 768], f16> -> !tgraph.tensor<[8, 768], f16>
  tgraph.output %y : !tgraph.tensor<[8, 768], f16>
}
"""

# mean |x - c| over rows of 1536: an inlined abs of a difference of a row and a broadcast one
MEAN_ABS = """
tgraph.graph @row_stats(%x: !tgraph.tensor<[8, 1536], f16>, %c: !tgraph.tensor<[1, 1536], f16>) -> !tgraph.tensor<[8, 1], f16> {
  %d = tgraph.sub %x, %c : !tgraph.tensor<[8, 1536], f16>, !tgraph.tensor<[1, 1536], f16> -> !tgraph.tensor<[8, 1536], f16>
  %a = tgraph.abs %d : !tgraph.tensor<[8, 1536], f16>
  %s = tgraph.reduce mean %a dim 1 : !tgraph.tensor<[8, 1536], f16> -> !tgraph.tensor<[8, 1], f16>
  tgraph.output %s : !tgraph.tensor<[8, 1], f16>
}
"""


@pytest.fixture(scope="module", params=[RMSNORM, MEAN_ABS], ids=["rmsnorm_768", "abs_mean_1536"])
def lowered(request: pytest.FixtureRequest):  # noqa: ANN201 - (graph, candidates)
    graph = Parser(make_context(), request.param).parse_module().body.block.first_op
    module = module_of(graph.clone())
    PipelinePass(search_budget=50_000, split_counts=(2,), top_k=1).apply(Context(), module)
    lower_module(module)
    return graph, candidate_kernels(module)


def test_no_fp32_tile_of_the_expression_in_shared_memory(lowered) -> None:  # noqa: ANN001
    _, candidates = lowered
    folded = 0
    for _, kernels in candidates:
        for k in kernels:
            allocs = [op.result for op in k.walk() if isinstance(op, (tl.AllocSharedOp, tl.AllocFragmentOp))]
            wide = [tl.buffer_type(a) for a in allocs if isinstance(a.owner, tl.AllocSharedOp)]
            wide = [t for t in wide if t.element_type == f32 and t.rank >= 2 and int(t.shape[-1]) >= 768]
            assert not wide, f"{k.sym_name.data}: fp32 shared tiles {[list(t.shape) for t in wide]}"
            folded += any((a.name_hint or "").endswith("_part") for a in allocs)
    assert folded, "no split-row fold in any candidate"


@pytest.mark.parametrize("dist", ["normal", "uniform_x100", "offset_rows"])
def test_kernels_match_float64(lowered, dist: str) -> None:  # noqa: ANN001
    graph, candidates = lowered
    rng = np.random.default_rng(7)
    shapes = [tuple(int(d) for d in tgraph.tensor_type(a).shape) for a in graph.inputs]
    if dist == "normal":
        xs = [rng.standard_normal(s) for s in shapes]
    elif dist == "uniform_x100":
        xs = [rng.uniform(-100, 100, s) for s in shapes]
    else:  # rows far from 0 with a small spread (a norm's cancellation-prone case)
        xs = [rng.standard_normal(s) * 0.1 + rng.uniform(-30, 30, (s[0], 1)) for s in shapes]
    xs = [x.astype(np.float16).astype(np.float64) for x in xs]
    want = run_graph(graph, xs)
    for name, kernels in candidates:
        got = run_kernels(kernels, xs)
        err = max(max_relative_error(w, g) for w, g in zip(want, got, strict=True))
        assert err < 5e-3, f"{name}: {err:.3g} at {dist}"
