"""`cleave-split-rows`: a Split-K candidate for row statistics the search found none for.

A graph of row statistics (a log-sum-exp, the entropy of a softmax, a norm's moments: element-wise
ops and reductions over one long dim, its outputs reduced over that dim) runs one block per few
rows, so a few rows stream through a few SMs (the entropy of 4 softmax rows over 32000 words: two
kernels of 4 blocks, 17.3 us on the H100 against torch.compile's 6.8). The search splits such a dim
itself (`split %x dim 1 by s`), but an 11-op graph exhausts its budget before it finds the form.

This pass writes that form directly, next to what the search found, for an input graph with no
Split-K candidate: every input that spans the long dim is split into `s` chunks along it; a sum or
max over the long dim whose result only reduced values read becomes a sum or max over each chunk
(the split kernel's partial) and then over the chunks (the combine); a max over the long dim of an
input that the rows read back (a softmax's shift) is computed whole, as the search writes it, and
`cleave-stabilize-split-k` then shifts each chunk by its own max (`match_row_max`). Its values keep
the input graph's symbolic dims (`cleave-symbolize`), and `cleave-concretize` checks each split
count against the input graph like any candidate; a graph outside this form gets none.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import sympy
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr, SymbolRefAttr
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import VerifyException

from cleave_ir.dialects import tgraph
from cleave_ir.passes.concretize import SPLIT_SYMBOL
from cleave_ir.passes.options import CleavePass
from cleave_ir.shapes import evaluate_shape

MIN_ROW = 4096
"""The shortest long dim worth splitting (binding size): shorter rows fit one block's tile."""


class _NotRows(Exception):
    """The graph is not in the row-statistics form."""


@dataclass
class _Rows:
    """The long dim: its axis in every value and its symbolic length."""

    axis: int
    length: sympy.Expr


def _long_dim(graph: tgraph.GraphOp) -> _Rows | None:
    """The one axis every reduction of `graph` reduces, of a length of MIN_ROW or more, or None."""
    reductions = [op for op in graph.block.ops if isinstance(op, tgraph.ReduceOp)]
    axes = {(op.axis, tgraph.tensor_type(op.input).shape[op.axis]) for op in reductions}
    if len(axes) != 1:
        return None
    ((axis, length),) = axes
    try:
        bound = evaluate_shape([length], graph.binding_values())[0]
    except Exception:  # noqa: BLE001 - a dim the bindings do not fix: not a static row
        return None
    if bound < MIN_ROW:
        return None
    return _Rows(axis, length)


def _row_read(graph: tgraph.GraphOp, rows: _Rows) -> set[SSAValue]:
    """The values that a computation along the long dim reads (transitively, through row values)."""
    out: set[SSAValue] = set()
    for op in reversed(list(graph.block.ops)):
        if isinstance(op, tgraph.OutputOp):
            continue
        r = op.results[0]
        along = tgraph.tensor_type(r).shape[rows.axis] == rows.length
        if along or r in out:
            out.update(op.operands)
    return out


def split_rows_graph(graph: tgraph.GraphOp, name: str) -> tgraph.GraphOp | None:
    """The Split-K candidate of `graph` over its long dim (symbolic split count `s`), or None."""
    rows = _long_dim(graph)
    if rows is None:
        return None
    try:
        return _build(graph, rows, name)
    except (_NotRows, VerifyException):  # (an optimization: a form it cannot write is no candidate)
        return None


def _build(graph: tgraph.GraphOp, rows: _Rows, name: str) -> tgraph.GraphOp:
    a, n = rows.axis, rows.length
    rank = tgraph.tensor_type(graph.inputs[0]).rank
    if any(tgraph.tensor_type(v).rank != rank for v in graph.values()):
        raise _NotRows
    read_by_rows = _row_read(graph, rows)
    cand = graph.clone()
    block = cand.block
    ops = [op for op in block.ops if not isinstance(op, tgraph.OutputOp)]
    if not ops or any(not isinstance(op, (tgraph.ElementwiseOp, tgraph.ReduceOp)) for op in ops):
        raise _NotRows
    first = ops[0]
    new: list[Operation] = []
    vmap: dict[SSAValue, SSAValue] = {}
    along: set[SSAValue] = set()  # the mapped values that are chunks of rows: [s, ..., n/s, ...]
    whole: dict[SSAValue, SSAValue] = {}  # inputs as one part: [1, ...]

    def add(op: Operation) -> SSAValue:
        new.append(op)
        return op.results[0]

    def one_part(v: SSAValue) -> SSAValue:
        if v not in whole:
            t = tgraph.tensor_type(v)
            whole[v] = add(tgraph.ReshapeOp(v, t.with_shape((sympy.Integer(1), *t.shape))))
        return whole[v]

    originals = {new_arg: old_arg for new_arg, old_arg in zip(cand.inputs, graph.inputs)}
    split_any = False
    for x in cand.inputs:
        if tgraph.tensor_type(x).shape[a] == n:
            vmap[x] = add(tgraph.SplitOp(x, a, SPLIT_SYMBOL))
            along.add(vmap[x])
            split_any = True
        elif tgraph.tensor_type(x).shape[a] == 1:
            vmap[x] = one_part(x)
        else:
            raise _NotRows
    if not split_any:
        raise _NotRows
    old_of = {c: g for c, g in zip(ops, [op for op in graph.block.ops if not isinstance(op, tgraph.OutputOp)])}
    for op in ops:
        r = op.results[0]
        if isinstance(op, tgraph.ReduceOp):
            src = op.input
            kind = op.kind.data
            if kind not in (tgraph.ReduceKind.SUM, tgraph.ReduceKind.MAX) or vmap[src] not in along or op.axis != a:
                raise _NotRows
            if old_of[op].results[0] in read_by_rows:
                # a max the rows read back (a softmax's shift): over the whole input, as the search writes it
                if kind != tgraph.ReduceKind.MAX or src not in originals:
                    raise _NotRows
                vmap[r] = add(tgraph.ReduceOp(kind, one_part(src), a + 1))
                vmap[r].name_hint = r.name_hint
                continue
            part = add(tgraph.ReduceOp(kind, vmap[src], a + 1))
            vmap[r] = add(tgraph.ReduceOp(kind, part, 0))
            part.name_hint, vmap[r].name_hint = (f"{r.name_hint}_part" if r.name_hint else None), r.name_hint
            continue
        assert isinstance(op, tgraph.ElementwiseOp)
        operands = [vmap[o] for o in op.operands]
        shape: tuple = tuple(tgraph.tensor_type(operands[0]).shape)
        for o in operands[1:]:
            shape = tgraph.broadcast_shapes(shape, tgraph.tensor_type(o).shape, op.name)
        t = tgraph.tensor_type(r).with_shape(shape)
        vmap[r] = add(type(op).create(operands=operands, result_types=[t], properties=dict(op.properties), attributes=dict(op.attributes)))
        vmap[r].name_hint = r.name_hint
        if any(o in along for o in operands):
            along.add(vmap[r])
    outs = []
    for v in cand.output_op.outputs:
        if vmap[v] in along:
            raise _NotRows  # an output along the rows: not row statistics
        outs.append(add(tgraph.ReshapeOp(vmap[v], tgraph.tensor_type(v))))
    for op in new:
        block.insert_op_before(op, first)
    cand.output_op.operands = outs
    for op in reversed(ops):
        Rewriter.erase_op(op)
    cand.sym_name = StringAttr(name)
    cand.attributes["cleave.candidate_of"] = SymbolRefAttr(graph.sym_name.data)
    split = ", ".join(f"split %{x.name_hint} dim {a} by s" for x in cand.inputs if vmap[x] in along)
    combined = sum(isinstance(op, tgraph.ReduceOp) and op.axis == 0 for op in new)
    cand.attributes["cleave.note"] = StringAttr(f"{split}, {combined} partial results combined over s (cleave-split-rows)")
    cand.verify()
    return cand


def input_graphs_without_split(module: ModuleOp) -> list[tgraph.GraphOp]:
    """The module's input graphs (not candidates) that no Split-K candidate (one with a `tgraph.split`) comes with."""
    graphs = [g for g in module.body.block.ops if isinstance(g, tgraph.GraphOp)]
    split_of = {tgraph.referenced_symbol(g, "cleave.candidate_of") for g in graphs if any(isinstance(o, tgraph.SplitOp) for o in g.block.ops)}
    return [g for g in graphs if "cleave.candidate_of" not in g.attributes and g.sym_name.data not in split_of]


@dataclass(frozen=True)
class SplitRowsPass(CleavePass):
    """Add `split_rows_graph`'s candidate for every input graph that no Split-K candidate comes with."""

    name = "cleave-split-rows"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for g in input_graphs_without_split(op):
            cand = split_rows_graph(g, f"{g.sym_name.data}_rows")
            if cand is not None:
                op.body.block.insert_op_after(cand, g)
                print(f"cleave-split-rows @{g.sym_name.data}: a Split-K candidate over its rows (@{cand.sym_name.data})", file=sys.stderr)
