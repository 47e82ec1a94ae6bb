"""`cleave-decompose`: ops with no kernel form of their own become ops that have one.

- `reduce mean` over a dim of static size n becomes `reduce sum` then `scale 1/n`, so the search
  sees the sum (and finds the same rescale-after-matmul forms as for a norm written with sum) and
  the scheduler's running sums apply. A mean over a symbolic dim, or over one that varies with the
  graph's declared dynamic dims, is refused: `1/n` would hold at one size only.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from cleave_ir.diagnostics import CleaveError
from cleave_ir.dialects import tgraph
from cleave_ir.passes.options import CleavePass


class MeanToSumScale(RewritePattern):
    """`reduce mean %x dim d` -> `scale (reduce sum %x dim d), 1/n`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tgraph.ReduceOp, rewriter: PatternRewriter) -> None:
        if op.kind.data != tgraph.ReduceKind.MEAN:
            return
        n = tgraph.tensor_type(op.input).shape[op.axis]
        if not n.is_Integer:
            raise CleaveError(
                f"error: cleave-decompose: tgraph.reduce mean over dim {op.axis} of symbolic size {n}: "
                "only static sizes are supported (write reduce sum and a scale)",
                op=op,
            )
        total = tgraph.ReduceOp(tgraph.ReduceKind.SUM, op.input, op.axis)
        scale = tgraph.ScaleOp(total.result, 1.0 / int(n))
        total.result.name_hint = op.result.name_hint
        scale.result.name_hint = op.result.name_hint
        rewriter.replace(op, [total, scale], [scale.result])


def decompose(module: ModuleOp) -> None:
    PatternRewriteWalker(MeanToSumScale(), apply_recursively=False).rewrite_module(module)


def decompose_graph(graph: tgraph.GraphOp) -> None:
    """`decompose` of one graph, in place (its means divided by the sizes it has now)."""
    PatternRewriteWalker(MeanToSumScale(), apply_recursively=False).rewrite_region(graph.body)


@dataclass(frozen=True)
class DecomposePass(CleavePass):
    """Rewrite ops without a kernel form (reduce mean) into ops that have one."""

    name = "cleave-decompose"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from cleave_ir.passes.dynamic_shapes import refuse_varying_means  # it imports the scheduler

        for graph in op.body.block.ops:
            if isinstance(graph, tgraph.GraphOp):
                refuse_varying_means(graph)
        decompose(op)
