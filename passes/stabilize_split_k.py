"""`cleave-stabilize-split-k`: keep the exp of Split-K (FlashDecoding) candidates finite.

A Split-K candidate computes `exp(x)` of the raw logits in every chunk, sums it (P.V and the row
sum) per chunk, combines the partials over the parts dim and divides. For logits above ~88 the fp32
exp overflows in the split kernel (inf / inf = NaN). This pass rewrites such an exp into the
log-sum-exp form, mathematically equal and finite for any logits:

    m  = reduce max x dim a          (the chunk max: one more partial of the split kernel)
    e' = exp(x - m)                  (the chunk sums read e')
    M  = reduce max m dim <parts>    (combine side)
    w  = exp(m - M)
    every chunk sum is multiplied by w before its combine reduction

Both sides of the final division scale by exp(-M), so the ratio is unchanged. It applies to an exp
over a value with a parts dim (`parts_dims`) whose every use is a sum over one chunk axis `a` (a
`reduce sum` over `a`, or a matmul contracting `a` with the exp on the left), each sum then reduced
over one parts dim, and the combined sums meeting only in one division (through reshapes). Run it
after `cleave-concretize` and before `cleave-partition-split-k`; `cleave-schedule` turns the split
graph into one online-softmax pass (`rescaled_sum` with the chunk max as the running max).
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import VerifyException

from cleave_ir.dialects import tgraph
from cleave_ir.passes.partition_split_k import parts_dims

NOTE = "exp shifted by the chunk max (log-sum-exp combine)"


@dataclass
class Match:
    """One stabilizable exp: its chunk axis, its parts dim and the per-chunk sums."""

    exp: tgraph.ExpOp
    axis: int  # the chunk axis `a` the sums reduce
    parts: int  # the parts dim the combine reductions reduce
    sums: list[Operation]  # the per-chunk sums (reduce sum over a, or matmul with exp on the left)
    combines: list[tgraph.ReduceOp]  # their combine reductions, one per sum


def _chunk_axis(exp: tgraph.ExpOp, user: Operation, index: int) -> int | None:
    """The axis of exp's result that `user` sums over, if `user` is a chunk sum reading it."""
    if isinstance(user, tgraph.ReduceOp) and user.kind.data == tgraph.ReduceKind.SUM:
        return user.axis
    if isinstance(user, tgraph.MatmulOp) and index == 0 and user.rhs is not exp.result:
        return tgraph.tensor_type(exp.result).rank - 1
    return None


def _through_reshapes(value: SSAValue) -> tuple[SSAValue, Operation] | None:
    """The value `value` reaches through single-use reshapes, and its only user."""
    while True:
        uses = list(value.uses)
        if len(uses) != 1:
            return None
        user = uses[0].operation
        if not isinstance(user, tgraph.ReshapeOp):
            return value, user
        value = user.result


def match(graph: tgraph.GraphOp, exp: tgraph.ExpOp, parts: dict[SSAValue, frozenset[int]] | None = None) -> Match | None:
    """The rewrite `exp` allows in `graph`, or None."""
    parts = parts_dims(graph) if parts is None else parts
    x = exp.input
    if not parts[x]:
        return None
    uses = list(exp.result.uses)
    axes = {_chunk_axis(exp, u.operation, u.index) for u in uses}
    if not uses or len(axes) != 1 or None in axes:
        return None
    (axis,) = axes
    if axis in parts[x]:
        return None
    sums = list(dict.fromkeys(u.operation for u in uses))
    m_shape = list(tgraph.tensor_type(x).shape)
    m_shape[axis] = sympy.Integer(1)
    combines: list[tgraph.ReduceOp] = []
    for s in sums:
        r = s.results[0]
        r_shape = tgraph.tensor_type(r).shape
        try:  # w (shaped like m) must broadcast onto the sum without growing it
            if len(r_shape) != len(m_shape) or tuple(tgraph.broadcast_shapes(r_shape, m_shape, "w")) != tuple(r_shape):
                return None
        except VerifyException:
            return None
        r_uses = list(r.uses)
        if len(r_uses) != 1:
            return None
        c = r_uses[0].operation
        if not (isinstance(c, tgraph.ReduceOp) and c.kind.data == tgraph.ReduceKind.SUM and c.axis in parts[r] & parts[x]):
            return None
        combines.append(c)
    if len({c.axis for c in combines}) != 1 or len(combines) != 2:
        return None
    # the combined sums meet only in one division (numerator / denominator): the scale cancels
    ends = [_through_reshapes(c.result) for c in combines]
    if None in ends:
        return None
    divs = {user for _, user in ends}  # type: ignore[misc]
    if len(divs) != 1:
        return None
    (div,) = divs
    if not isinstance(div, tgraph.DivOp) or {div.lhs, div.rhs} != {v for v, _ in ends}:  # type: ignore[misc]
        return None
    return Match(exp, axis, combines[0].axis, sums, combines)


def rewrite(graph: tgraph.GraphOp, m: Match) -> None:
    """Rewrite a matched exp into the log-sum-exp form (in place)."""
    block = graph.block
    x = m.exp.input
    chunk_max = tgraph.ReduceOp(tgraph.ReduceKind.MAX, x, m.axis)
    shifted = tgraph.SubOp(x, chunk_max.result)
    chunk_max.result.name_hint = "chunk_max"
    block.insert_ops_before([chunk_max, shifted], m.exp)
    m.exp.operands[0] = shifted.result
    first = next(op for op in block.ops if op in m.combines)
    global_max = tgraph.ReduceOp(tgraph.ReduceKind.MAX, chunk_max.result, m.parts)
    delta = tgraph.SubOp(chunk_max.result, global_max.result)
    weight = tgraph.ExpOp(delta.result)
    global_max.result.name_hint = "global_max"
    weight.result.name_hint = "rescale"
    block.insert_ops_before([global_max, delta, weight], first)
    for s, c in zip(m.sums, m.combines):
        scaled = tgraph.MulOp(s.results[0], weight.result)
        block.insert_op_before(scaled, c)
        c.operands[0] = scaled.result
    note = graph.attributes.get("cleave.note")
    text = note.data if isinstance(note, StringAttr) else ""
    if NOTE not in text:
        graph.attributes["cleave.note"] = StringAttr(f"{text}, {NOTE}" if text else NOTE)


def stabilize(graph: tgraph.GraphOp) -> int:
    """Rewrite every stabilizable exp of `graph` in place; the number rewritten."""
    n = 0
    for exp in [op for op in graph.block.ops if isinstance(op, tgraph.ExpOp)]:
        found = match(graph, exp)
        if found is not None:
            rewrite(graph, found)
            n += 1
    if n:
        graph.verify()
    return n


@dataclass(frozen=True)
class StabilizeSplitKPass(ModulePass):
    """Rewrite the exp sums of every unpartitioned Split-K graph into the log-sum-exp form."""

    name = "cleave-stabilize-split-k"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for graph in [g for g in op.body.block.ops if isinstance(g, tgraph.GraphOp)]:
            if graph.attributes.get("cleave.stage") is None:
                stabilize(graph)
