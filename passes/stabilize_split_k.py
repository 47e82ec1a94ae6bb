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

A second form (`match_row_max`, `rewrite_row_max`): an exp of split chunks shifted by the max of the
whole split input over the split dim, `exp(split(x) - max x)` (the search's split of a logsumexp or a
softmax's statistics). Computed whole, that max makes the split kernel read every chunk's whole row,
and the combine again. Each chunk then shifts by its own max and each chunk sum is rescaled as above
before its combine; as the max over the chunks equals the row max exactly, the graph reads it wherever
it read the row max after the combines (the `+ m` of `log(sum exp(x - m)) + m`). The combined sums are
the original ones, whatever reads them.

The rewrite is one `RewritePattern` (`StabilizeSplitKExp`, on each exp of a graph that is not yet
partitioned) driven by a `PatternRewriteWalker` in one walk in program order (what the pattern
creates never matches: the shifted exp's sums feed the rescaling products, not the combines).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import VerifyException

from cleave_ir.dialects import cleave, tgraph
from cleave_ir.passes.homogeneity import linear_sum
from cleave_ir.passes.options import CleavePass
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


def _linear_chunk_sum(exp: tgraph.ExpOp, user: Operation, index: int, axis: int) -> Operation | None:
    """The chunk sum over `axis` that a use of `exp` feeds linearly (`homogeneity.linear_sum`: the
    user, or the sum of `exp * y`): scaling the exp by a factor per row scales that sum by it too."""
    s = linear_sum(exp.result, user, index)
    return s if s is not None and s.axis == axis else None


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


def _row_max_of(value: SSAValue, x: SSAValue, dim: int) -> bool:
    """Whether `value` is `reduce max` over dim `dim` of `x`, `x` seen through reshapes that only add or
    drop unit dims (the same non-unit dims in the same order)."""
    op = value.owner
    if not (isinstance(op, tgraph.ReduceOp) and op.kind.data == tgraph.ReduceKind.MAX):
        return False
    y = op.input
    while isinstance(y.owner, tgraph.ReshapeOp) and y is not x:
        y = y.owner.input
    if y is not x:
        return False
    shape = tgraph.tensor_type(op.input).shape
    non_unit = [i for i, d in enumerate(shape) if d != 1]
    x_non_unit = [i for i, d in enumerate(tgraph.tensor_type(x).shape) if d != 1]
    if [shape[i] for i in non_unit] != [tgraph.tensor_type(x).shape[i] for i in x_non_unit]:
        return False
    return op.axis in non_unit and dict(zip(non_unit, x_non_unit))[op.axis] == dim


@dataclass
class RowMaxMatch:
    """An exp of split chunks shifted by the whole row's max: `exp(split(x) - max(x))`, whose sums are
    combined over the parts."""

    exp: tgraph.ExpOp
    split: tgraph.SplitOp
    axis: int  # the chunk axis of the split value
    parts: int  # the parts dim the combines reduce
    sums: list[Operation]
    combines: list[tgraph.ReduceOp]


def match_row_max(graph: tgraph.GraphOp, exp: tgraph.ExpOp, parts: dict[SSAValue, frozenset[int]] | None = None) -> RowMaxMatch | None:
    """The chunk-max rewrite `exp` allows in `graph`, or None: `exp` reads `c - M` with `c` a split
    value and `M` the max of the split's input over the split dim (computed whole, so the split
    kernel would read every chunk's whole row), and its every use is a sum over the chunk axis whose
    only use is one sum over the parts dim."""
    sub = exp.input.owner
    if not isinstance(sub, tgraph.SubOp) or not isinstance(sub.lhs.owner, tgraph.SplitOp):
        return None
    split = sub.lhs.owner
    parts = parts_dims(graph) if parts is None else parts
    axis, c_shape = split.axis + 1, tgraph.tensor_type(split.result).shape
    m_shape = tgraph.tensor_type(sub.rhs).shape
    if parts[sub.rhs] or not _row_max_of(sub.rhs, split.input, split.axis) or len(m_shape) != len(c_shape):
        return None
    if m_shape[0] != 1 or m_shape[axis] != 1:
        return None
    uses = list(exp.result.uses)
    found = [_linear_chunk_sum(exp, u.operation, u.index, axis) for u in uses]
    if not uses or None in found:
        return None
    sums = list(dict.fromkeys(found))  # type: ignore[arg-type]
    combines: list[tgraph.ReduceOp] = []
    for s in sums:
        r = s.results[0]
        r_uses = list(r.uses)
        if tgraph.tensor_type(r).rank != len(c_shape) or tgraph.tensor_type(r).shape[axis] != 1 or len(r_uses) != 1:
            return None
        c = r_uses[0].operation
        if not (isinstance(c, tgraph.ReduceOp) and c.kind.data == tgraph.ReduceKind.SUM and c.axis == 0):
            return None
        combines.append(c)
    return RowMaxMatch(exp, split, axis, 0, sums, combines)


def _shift_by_chunk_max(
    graph: tgraph.GraphOp, exp: tgraph.ExpOp, x: SSAValue, axis: int, parts: int,
    sums: list[Operation], combines: list[tgraph.ReduceOp], rewriter: PatternRewriter,
) -> tuple[tgraph.ReduceOp, Operation]:
    """`exp` reads `x - chunk max` (the max of `x` over `axis`), and each chunk sum is multiplied by
    `exp(chunk max - max over the chunks)` before its combine; returns (the max over the chunks, the
    first combine)."""
    chunk_max = tgraph.ReduceOp(tgraph.ReduceKind.MAX, x, axis)
    shifted = tgraph.SubOp(x, chunk_max.result)
    chunk_max.result.name_hint = "chunk_max"
    for new in (chunk_max, shifted):
        rewriter.insert(new, InsertPoint.before(exp))
    rewriter.replace_uses_with_if(exp.input, shifted.result, lambda use: use.operation is exp)
    first = next(op for op in graph.block.ops if op in combines)
    global_max = tgraph.ReduceOp(tgraph.ReduceKind.MAX, chunk_max.result, parts)
    delta = tgraph.SubOp(chunk_max.result, global_max.result)
    weight = tgraph.ExpOp(delta.result)
    global_max.result.name_hint = "global_max"
    weight.result.name_hint = "rescale"
    for new in (global_max, delta, weight):
        rewriter.insert(new, InsertPoint.before(first))
    for s, c in zip(sums, combines):
        scaled = tgraph.MulOp(s.results[0], weight.result)
        rewriter.insert(scaled, InsertPoint.before(c))
        rewriter.replace_uses_with_if(s.results[0], scaled.result, lambda use, c=c: use.operation is c)
    return global_max, first


def rewrite_row_max(graph: tgraph.GraphOp, m: RowMaxMatch, rewriter: PatternRewriter) -> None:
    """Shift a matched exp by its chunk's max, rescale each chunk's sum by `exp(chunk max - max over
    the chunks)` before its combine, and read that max over the chunks (equal to the row max: a max is
    exact) wherever the graph reads a row max of the split's input after the combines."""
    old_sub = m.exp.input.owner
    assert isinstance(old_sub, tgraph.SubOp)
    global_max, first = _shift_by_chunk_max(graph, m.exp, m.split.result, m.axis, m.parts, m.sums, m.combines, rewriter)
    if not old_sub.result.uses:
        rewriter.erase(old_sub)
    ops = list(graph.block.ops)
    start = ops.index(first)
    for op in ops:
        if not (isinstance(op, tgraph.ReduceOp) and _row_max_of(op.result, m.split.input, m.split.axis)):
            continue
        late = [u for u in op.result.uses if ops.index(u.operation) > start]
        if not late:
            continue
        same = global_max.result
        if tgraph.tensor_type(same).shape != tgraph.tensor_type(op.result).shape:
            reshape = tgraph.ReshapeOp(global_max.result, tgraph.tensor_type(op.result))
            rewriter.insert(reshape, InsertPoint.before(first))
            same = reshape.result
        rewriter.replace_uses_with_if(op.result, same, lambda use, late=late: use in late)
    for op in reversed(list(graph.block.ops)):
        if isinstance(op, (tgraph.ReduceOp, tgraph.ReshapeOp)) and not any(r.uses for r in op.results):
            rewriter.erase(op)
    _note(graph, rewriter)


def _note(graph: tgraph.GraphOp, rewriter: PatternRewriter) -> None:
    note = graph.attributes.get("cleave.note")
    text = note.data if isinstance(note, StringAttr) else ""
    if NOTE not in text:
        graph.attributes["cleave.note"] = StringAttr(f"{text}, {NOTE}" if text else NOTE)
        rewriter.notify_op_modified(graph)


def rewrite(graph: tgraph.GraphOp, m: Match, rewriter: PatternRewriter) -> None:
    """Rewrite a matched exp into the log-sum-exp form."""
    _shift_by_chunk_max(graph, m.exp, m.exp.input, m.axis, m.parts, m.sums, m.combines, rewriter)
    _note(graph, rewriter)


@dataclass
class StabilizeSplitKExp(RewritePattern):
    """Rewrite an exp of an unpartitioned graph that `match` or `match_row_max` accepts into the log-sum-exp form."""

    rewritten: list[tgraph.GraphOp] = field(default_factory=list)  # the graph of each rewrite, in order

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tgraph.ExpOp, rewriter: PatternRewriter) -> None:
        graph = op.parent_op()
        if not isinstance(graph, tgraph.GraphOp) or cleave.stage(graph) is not None:
            return
        found = match(graph, op)
        if found is not None:
            rewrite(graph, found, rewriter)
            self.rewritten.append(graph)
            return
        by_row_max = match_row_max(graph, op)
        if by_row_max is not None:
            rewrite_row_max(graph, by_row_max, rewriter)
            self.rewritten.append(graph)


def _apply(root: Operation) -> int:
    """Rewrite every stabilizable exp under `root` (each rewritten graph is verified); the number rewritten."""
    pattern = StabilizeSplitKExp()
    for region in root.regions:
        PatternRewriteWalker(pattern, apply_recursively=False).rewrite_region(region)
    for g in dict.fromkeys(pattern.rewritten):
        g.verify()
    return len(pattern.rewritten)


def stabilize(graph: tgraph.GraphOp) -> int:
    """Rewrite every stabilizable exp of `graph` in place; the number rewritten."""
    return _apply(graph)


@dataclass(frozen=True)
class StabilizeSplitKPass(CleavePass):
    """Rewrite the exp sums of every unpartitioned Split-K graph into the log-sum-exp form."""

    name = "cleave-stabilize-split-k"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        _apply(op)
