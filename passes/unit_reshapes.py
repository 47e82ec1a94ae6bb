"""Move reshapes that only add or drop size-1 dims out of a graph, to its inputs and output.

A decode-shaped graph (activations `[B, 1, H]`) computes its matmuls on `[B, H]` rows and its
elementwise ops on `[B, 1, N]` values, with reshapes in between (torch.export's linear viewed to
2-D and back, or `cleave_ir.torch`'s row inputs). Inside a graph those reshapes split the matmuls
from the elementwise ops around them, and the search finds no candidate. Every such reshape can
move through elementwise ops: an elementwise op computes the same elements in any frame of its dims
that differs by size-1 dims, its operands reshaped alike (a broadcast operand still broadcasts along
the same dims).

Moves, each carried as far as it goes:
- hoist: `reshape(f(a, b))` -> `f(reshape(a), reshape(b))`, then on up through the operands' single-use
  elementwise producers;
- sink: `f(reshape(x), b)` -> `reshape(f(x, reshape(b)))`, then on down through the users; a reduction
  too, over the same dim at its place in x's frame (`sum(reshape(x), 3)` -> `reshape(sum(x, 2))`), so
  a softmax between a reshape of its logits and one of its probabilities (Bloom's attention, the mask
  added in 4-D) is computed in one frame;
- fold: `reshape(reshape(x))` -> `reshape(x)`, or `x` where the shapes are equal.
A move is kept only when it lowers the number of interior reshapes (those that neither read a graph
input nor only feed the graph's output), so graphs without them are left as they are and the rewrite
terminates. Matmuls and splits are not crossed, nor is a reduction hoisted over.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from cleave_ir.dialects import tgraph


def _shape(v: SSAValue) -> tuple:
    return tuple(tgraph.tensor_type(v).shape)


def _squeezed(shape: Sequence) -> list:
    return [d for d in shape if d != 1]


def frame_map(src: Sequence, dst: Sequence) -> list[int | None]:
    """For each dim of `dst`, the dim of `src` it is (None: an added size-1 dim); the shapes have the
    same dims over 1, in order."""
    big = [i for i, d in enumerate(src) if d != 1]
    it = iter(big)
    return [next(it) if d != 1 else None for d in dst]


def reframed(shape: Sequence, m: Sequence[int | None]) -> list:
    """An operand `shape` (broadcast onto the frame `m` maps from) in the new frame."""
    return [shape[i] if i is not None else 1 for i in m]


def interior(block: Block) -> int:
    """Reshapes that neither read a graph input nor only feed the graph's output."""
    return sum(
        1
        for op in block.ops
        if isinstance(op, tgraph.ReshapeOp)
        and not isinstance(op.input, BlockArgument)
        and not all(isinstance(u.operation, tgraph.OutputOp) for u in op.result.uses)
    )


def _erase_if_dead(op: Operation) -> None:
    if op.parent is not None and not any(r.uses for r in op.results):
        Rewriter.erase_op(op)


def _reshape_before(where: Operation, v: SSAValue, shape: Sequence) -> SSAValue:
    """`v` in `shape`: `v` itself, its reshape's source, or a new reshape inserted before `where`."""
    if _shape(v) == tuple(shape):
        return v
    if isinstance(v.owner, tgraph.ReshapeOp):  # fold
        return _reshape_before(where, v.owner.input, shape)
    r = tgraph.ReshapeOp(v, tgraph.tensor_type(v).with_shape(list(shape)))
    Rewriter.insert_op(r, InsertPoint.before(where))
    return r.result


def _rebuilt(op: tgraph.ElementwiseOp, m: Sequence[int | None], shape: Sequence, name: str | None) -> Operation:
    """`op` computed in the frame `m` maps into (result `shape`, named `name`), its operands reshaped before it."""
    operands = [_reshape_before(op, o, reframed(_shape(o), m)) for o in op.operands]
    new = type(op).create(
        operands=operands,
        result_types=[tgraph.tensor_type(op.results[0]).with_shape(list(shape))],
        properties=dict(op.properties),
        attributes=dict(op.attributes),
    )
    Rewriter.insert_op(new, InsertPoint.before(op))
    new.results[0].name_hint = name
    return new


def fold(r: tgraph.ReshapeOp) -> bool:
    """`reshape(reshape(x))` -> one reshape of x (or x); an identity reshape -> its input."""
    inner = r.input.owner
    if _shape(r.input) != _shape(r.result) and not isinstance(inner, tgraph.ReshapeOp):
        return False
    new = _reshape_before(r, r.input, _shape(r.result))
    r.result.replace_all_uses_with(new)
    Rewriter.erase_op(r)
    if isinstance(inner, tgraph.ReshapeOp):
        _erase_if_dead(inner)
    return True


def hoist(r: tgraph.ReshapeOp) -> bool:
    """Move `r` above the single-use elementwise op it reshapes, and on up through the new reshapes."""
    if fold(r):
        return True
    op = r.input.owner
    if not isinstance(op, tgraph.ElementwiseOp) or len(op.results) != 1 or r.input.uses.get_length() != 1:
        return False
    shape = _shape(r.result)
    new = _rebuilt(op, frame_map(_shape(r.input), shape), shape, r.result.name_hint or r.input.name_hint)
    r.result.replace_all_uses_with(new.results[0])
    Rewriter.erase_op(r)
    Rewriter.erase_op(op)
    for o in new.operands:
        if isinstance(o.owner, tgraph.ReshapeOp):
            hoist(o.owner)
    return True


def _reduced_in(op: tgraph.ReduceOp, r: tgraph.ReshapeOp) -> tgraph.ReduceOp | None:
    """`op`, which reduces the unit reshape `r`, computed on `r`'s source (inserted before `op`): the
    reduced dim is one over 1, at its place in the source; None where `op` reduces a size-1 dim."""
    axis = op.axis
    if _shape(op.input)[axis] == 1:
        return None
    m = frame_map(_shape(r.input), _shape(op.input))  # each dim of the reshape's result: the source dim it is
    new = tgraph.ReduceOp(op.kind.data, r.input, m[axis])  # type: ignore[arg-type]
    new.attributes.update(op.attributes)
    Rewriter.insert_op(new, InsertPoint.before(op))
    new.results[0].name_hint = op.results[0].name_hint
    return new


def sink(r: tgraph.ReshapeOp) -> bool:
    """Compute the elementwise users that read `r` unbroadcast in `r`'s source frame, the result
    reshaped after them, and on down through the new reshapes' users."""
    src = _shape(r.input)
    moved = False
    for use in list(r.result.uses):
        op = use.operation
        if op.parent is None or len(op.results) != 1:
            continue
        if isinstance(op, tgraph.ReduceOp):
            new = _reduced_in(op, r)
            if new is None:
                continue
        elif isinstance(op, tgraph.ElementwiseOp):
            out = _shape(op.results[0])
            if _squeezed(out) != _squeezed(_shape(r.result)):
                continue  # r's value is broadcast here: the op's result has dims r's source lacks
            new = _rebuilt(op, frame_map(out, src), src, op.results[0].name_hint)
        else:
            continue
        back = tgraph.ReshapeOp(new.results[0], tgraph.tensor_type(op.results[0]))
        Rewriter.insert_op(back, InsertPoint.after(new))
        op.results[0].replace_all_uses_with(back.result)
        Rewriter.erase_op(op)
        moved = True
        for u in list(back.result.uses):
            if isinstance(u.operation, tgraph.ReshapeOp):
                fold(u.operation)
        if back.parent is not None and back.result.uses:
            sink(back)
        _erase_if_dead(back)
    if r.parent is not None:
        _erase_if_dead(r)
    return moved


def _erase_dead_reshapes(block: Block) -> None:
    """Reshapes a fold left without uses (the operands they read may be reshapes left dead too)."""
    for op in reversed(list(block.ops)):
        if isinstance(op, tgraph.ReshapeOp):
            _erase_if_dead(op)


MOVES: tuple[Callable[[tgraph.ReshapeOp], bool], ...] = (fold, hoist, sink)


def move_unit_reshapes(graph: tgraph.GraphOp) -> bool:
    """Apply the moves that lower `interior(graph.block)`, best first, until none does; whether any did."""
    changed = False
    while (cost := interior(graph.block)) > 0:
        best: tuple[int, int, Callable[[tgraph.ReshapeOp], bool]] | None = None
        for i, op in enumerate(graph.block.ops):
            if not isinstance(op, tgraph.ReshapeOp):
                continue
            for move in MOVES:
                trial = graph.clone()
                if not move(list(trial.block.ops)[i]):
                    continue
                _erase_dead_reshapes(trial.block)
                if (c := interior(trial.block)) < cost and (best is None or c < best[0]):
                    best = (c, i, move)
        if best is None:
            break
        best[2](list(graph.block.ops)[best[1]])
        _erase_dead_reshapes(graph.block)
        changed = True
    return changed
