"""`cleave-split-projections`: a Split-K candidate for graphs of several projections, which the search does not take.

The search builds terms of one output, so a graph of several outputs (q, k and v projections of one x,
MLA's down projections, a linear beside its LoRA down projection) is scheduled as written: one kernel for
all of them (`schedule.proportional_tile`) or one per matmul. With few rows and a long contracting dim
such kernels have one block per 16-32 output columns, each looping over the whole K: MLA's down
projections at 32 tokens (K 7168, 2112 columns) ran 28.1 us on the H100 where torch.compile's GEMMs
took 13.1.

This pass writes the form the search writes for one projection (`split %x dim 1 by s, split %w dim 0 by
s`, a batched product, a sum over the parts) for every matmul of such a graph at once, with one split
count: the split kernel computes every projection's partial products in one grid, the combine kernel
sums them and runs the epilogues. It applies where every matmul reads two graph inputs and contracts one
dim of at least `MIN_K` (binding size), and every other op reads a matmul's result (directly or through
other ops), so that all of them run in the combine. Its values keep the graph's symbolic dims, and
`cleave-concretize` checks each split count against the input graph like any candidate.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr, SymbolRefAttr
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import VerifyException

from cleave_ir.dialects import tgraph
from cleave_ir.passes.concretize import SPLIT_SYMBOL
from cleave_ir.passes.options import CleavePass
from cleave_ir.passes.split_rows import input_graphs_without_split
from cleave_ir.shapes import evaluate_shape

MIN_K = 1024
"""The shortest contracting dim worth splitting (binding size): shorter loops keep every block busy enough."""


def _one_long_contracting_dim(graph: tgraph.GraphOp, matmuls: list[tgraph.MatmulOp]) -> bool:
    """Whether `matmuls` read rank-2 graph inputs and contract one dim, of MIN_K or more."""
    inputs = set(graph.inputs)
    if any(mm.lhs not in inputs or mm.rhs not in inputs or tgraph.tensor_type(mm.lhs).rank != 2 or tgraph.tensor_type(mm.rhs).rank != 2 for mm in matmuls):
        return False
    dims = {tgraph.tensor_type(mm.lhs).shape[1] for mm in matmuls}
    if len(dims) != 1:
        return False
    try:
        return evaluate_shape(list(dims), graph.binding_values())[0] >= MIN_K
    except Exception:  # noqa: BLE001 - a dim the bindings do not fix: not a static projection
        return False


def _all_read_a_product(graph: tgraph.GraphOp) -> bool:
    """Whether every op other than a matmul reads a matmul's result, directly or through other ops."""
    downstream: set[SSAValue] = set()
    for op in graph.block.ops:
        if isinstance(op, tgraph.OutputOp):
            return all(v in downstream for v in op.operands)
        if isinstance(op, tgraph.MatmulOp) or any(o in downstream for o in op.operands):
            downstream.update(op.results)
        else:
            return False
    return False


def split_projections_graph(graph: tgraph.GraphOp, name: str) -> tgraph.GraphOp | None:
    """The Split-K candidate of `graph`'s projections (symbolic split count `s`), or None (one output: the
    search's to find)."""
    matmuls = [op for op in graph.block.ops if isinstance(op, tgraph.MatmulOp)]
    if len(graph.function_type.outputs.data) < 2 or not matmuls or not _one_long_contracting_dim(graph, matmuls) or not _all_read_a_product(graph):
        return None
    cand = graph.clone()
    parts: dict[tuple[SSAValue, int], SSAValue] = {}

    def split(x: SSAValue, dim: int, user: Operation) -> SSAValue:
        if (x, dim) not in parts:  # (x is a graph input: the first user's place dominates the others)
            op = tgraph.SplitOp(x, dim, SPLIT_SYMBOL)
            Rewriter.insert_op(op, InsertPoint.before(user))
            parts[(x, dim)] = op.results[0]
        return parts[(x, dim)]

    try:
        for mm in [op for op in cand.block.ops if isinstance(op, tgraph.MatmulOp)]:
            transposed = mm.transpose_b is not None
            lhs, rhs = split(mm.lhs, 1, mm), split(mm.rhs, 1 if transposed else 0, mm)
            t = tgraph.tensor_type(mm.result)
            shape = tgraph.MatmulOp.infer_shape(tgraph.tensor_type(lhs).shape, tgraph.tensor_type(rhs).shape, transposed)
            product = tgraph.MatmulOp(lhs, rhs, t.with_shape(shape), transposed)
            total = tgraph.ReduceOp(tgraph.ReduceKind.SUM, product.result, 0)
            back = tgraph.ReshapeOp(total.results[0], t)
            Rewriter.insert_op([product, total, back], InsertPoint.before(mm))
            product.result.name_hint, back.results[0].name_hint = (f"{mm.result.name_hint}_parts" if mm.result.name_hint else None), mm.result.name_hint
            mm.result.replace_all_uses_with(back.results[0])
            Rewriter.erase_op(mm)
        cand.sym_name = StringAttr(name)
        cand.attributes["cleave.candidate_of"] = SymbolRefAttr(graph.sym_name.data)
        splits = ", ".join(f"split %{x.name_hint or 'arg'} dim {d} by s" for x, d in parts)
        cand.attributes["cleave.note"] = StringAttr(f"{splits}, {len(matmuls)} partial products combined over s (cleave-split-projections)")
        cand.verify()
    except VerifyException:  # (an optimization: a form it cannot write is no candidate)
        return None
    return cand


@dataclass(frozen=True)
class SplitProjectionsPass(CleavePass):
    """Add `split_projections_graph`'s candidate for every input graph of several outputs that has no Split-K
    candidate yet."""

    name = "cleave-split-projections"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for g in input_graphs_without_split(op):
            cand = split_projections_graph(g, f"{g.sym_name.data}_split")
            if cand is not None:
                op.body.block.insert_op_after(cand, g)
                print(f"cleave-split-projections @{g.sym_name.data}: a Split-K candidate of its projections (@{cand.sym_name.data})", file=sys.stderr)
