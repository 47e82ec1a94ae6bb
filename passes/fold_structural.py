"""`cleave-fold-structural`: move transposes, slices and concats out of a graph, to its boundary.

The scheduler and the search work on graphs of matmuls, elementwise ops and reductions. Users write
more: `x @ w.T` as a transpose, rotary embeddings as `cat(-x2, x1)` of two halves, a packed QKV
projection sliced into q, k and v, a KV cache with the new token's keys appended. Every rewrite here
but one is exact (each element is computed by the same ops from the same elements):

- `matmul(a, transpose(b))` swapping the last two dims -> `matmul(a, b)` with `transpose_b` toggled, and
  `matmul(transpose(a), r)` of a computed `a` -> `transpose(matmul(r^T, a))`;
  transposes of transposes compose, identity transposes and full slices vanish, slices of slices
  merge, a slice of a concat is a slice of the part it falls in (or a concat of slices of the parts);
- slices move up (`slice(f(a, b))` -> `f(slice(a), slice(b))`, through reductions along another dim,
  through a matmul's M, N and batch dims, through transposes), until they read graph inputs;
- concats move down (`f(concat(a, b), c)` -> `concat(f(a, slice(c)), f(b, slice(c)))`, likewise
  through reductions along another dim, a matmul's M, N and batch dims and transposes), until they
  feed the graph's outputs; a max over a concat's own dim is the max of the parts' maxes, and a sum
  or mean over it or a matmul contracting it (attention over `cat(past_k, k)`) the sum of the parts'
  in f32 (the one regrouping: as a kernel's f32 accumulator, then cast back);
- an input read whole and in slices that tile one of its dims (an RMSNorm's sum of squares of the x whose
  halves a rotary embedding reads) is read in those slices only (`ReadInParts`), so a kernel loads each
  element once;
- an output (or a concat's part) that would be a view of an input is copied by an identity
  (`scale %v, 1.0`, exact), so a kernel writes it; a transposed output is a permuted view of the
  tensor a kernel writes.

One concat is not moved: a concat of inputs (or views of them) whose joined dim a matmul downstream
contracts (attention over `cat(past_k, k)`): moved, it would split that matmul and every reduction on the
way (a graph twice the size, which the search cannot take), so it stays a join of the inputs, made by a
copy before the kernels (`#cleave.join`), as PyTorch's own concat is. Where the graph cannot be folded
with such a join kept, it is folded without.

What reaches the boundary leaves the graph: a chain of slices and transposes of an input becomes an
input of its own, a view (`#cleave.view`), a kept join an input of its own (`#cleave.join`), and an
output that is a concat becomes one output per part (`#cleave.part`); the graph records both in `cleave.boundary`, which the emitted module's `run`
follows (views of the tensors it is given, the parts concatenated), so its callers pass and receive
the tensors of the graph as written. A graph whose structural ops cannot all reach the boundary (a
concat of concats along two dims, a slice along a dynamic dim) is left as written,
and the pipeline says which op it cannot schedule; in a graph with dynamic dims, slices and concats
move only where the dim they cut or join is tied to no dynamic dim (a rotary embedding's head dim in a
graph of dynamic sequence length moves; a KV cache appended along its dynamic length does not: its cut
points would be fixed at the declared sizes).
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy
from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, DenseArrayBase, DictionaryAttr, FunctionType, IntegerAttr, ModuleOp, UnitAttr, f32, i64
from xdsl.ir import Attribute, Block, BlockArgument, Operation, SSAValue
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.transforms.common_subexpression_elimination import cse

from cleave_ir.dialects import tgraph
from cleave_ir.dialects.cleave import BoundaryAttr, JoinAttr, PartAttr, ViewAttr
from cleave_ir.passes.options import CleavePass
from cleave_ir.passes.unit_reshapes import frame_map


def _shape(v: SSAValue) -> list:
    return list(tgraph.tensor_type(v).shape)


def _int(d: object) -> int | None:
    """A dim's size if it is a plain integer (slices and concats move only over static dims)."""
    return int(d) if isinstance(d, (int, sympy.Integer)) else None


def _slice(rewriter: PatternRewriter, v: SSAValue, dim: int, start: int, size: int) -> SSAValue:
    """`v[start:start + size]` along `dim`, inserted before the matched op (`v` where that is all of it)."""
    if start == 0 and _int(_shape(v)[dim]) == size:
        return v
    s = tgraph.SliceOp(v, dim, start, size)
    rewriter.insert(s)
    return s.result


def _rebuilt(op: Operation, operands: Sequence[SSAValue], shape: Sequence) -> Operation:
    """`op` (an elementwise op or a reduction) on other operands, its result of `shape`."""
    t = tgraph.tensor_type(op.results[0]).with_shape(list(shape))
    return type(op).create(
        operands=list(operands),
        result_types=[t],
        properties=dict(op.properties),
        attributes=dict(op.attributes),
    )


def _matmul_dims(op: tgraph.MatmulOp, dim: int) -> tuple[int | None, int | None]:
    """For result dim `dim` of a matmul: the dim of lhs and of rhs it comes from (None: not that side)."""
    rank = len(_shape(op.result))
    la, lb = len(_shape(op.lhs)), len(_shape(op.rhs))
    if dim == rank - 2:
        return la - 2, None
    if dim == rank - 1:
        return None, lb - 2 if op.transpose_b is not None else lb - 1
    # batch dims align from the right
    return dim - (rank - la), dim - (rank - lb)


def _operand_piece(rewriter: PatternRewriter, v: SSAValue | None, dim: int | None, start: int, size: int) -> SSAValue | None:
    """Operand `v` restricted to `[start, start + size)` of its `dim` (unless it broadcasts there)."""
    if v is None:
        return None
    if dim is None or dim < 0 or _shape(v)[dim] == 1:
        return v
    return _slice(rewriter, v, dim, start, size)


def _piece(rewriter: PatternRewriter, op: Operation, dim: int, start: int, size: int) -> SSAValue | None:
    """`op`'s result restricted to `[start, start + size)` along `dim`, computed from restricted
    operands (None where `op` cannot be restricted that way)."""
    shape = _shape(op.results[0])
    shape[dim] = size
    if isinstance(op, tgraph.ElementwiseOp):
        if any(len(_shape(v)) != len(shape) for v in op.operands):
            return None
        operands = [_operand_piece(rewriter, v, dim, start, size) for v in op.operands]
        new = _rebuilt(op, operands, shape)
    elif isinstance(op, tgraph.ReduceOp):
        if dim == op.axis:
            return None
        new = _rebuilt(op, [_slice(rewriter, op.input, dim, start, size)], shape)
    elif isinstance(op, tgraph.MatmulOp):
        dl, dr = _matmul_dims(op, dim)
        lhs = _operand_piece(rewriter, op.lhs, dl, start, size)
        rhs = _operand_piece(rewriter, op.rhs, dr, start, size)
        new = tgraph.MatmulOp(lhs, rhs, tgraph.tensor_type(op.result).with_shape(shape), transpose_b=op.transpose_b is not None)
        new.attributes.update(op.attributes)
    elif isinstance(op, tgraph.TransposeOp):
        src = op.permutation[dim]
        new = tgraph.TransposeOp(_slice(rewriter, op.input, src, start, size), op.permutation)
    elif isinstance(op, tgraph.ReshapeOp):
        m = _unit_map(op)
        if m is None or m[dim] is None:
            return None
        new = tgraph.ReshapeOp(_slice(rewriter, op.input, m[dim], start, size), tgraph.tensor_type(op.result).with_shape(shape))
    else:
        return None
    rewriter.insert(new)
    return new.results[0]


def _unit_map(op: tgraph.ReshapeOp) -> list[int | None] | None:
    """For a reshape that only adds or drops size-1 dims: each result dim's input dim (None: an added
    1); None for other reshapes."""
    src, dst = _shape(op.input), _shape(op.result)
    if [d for d in src if d != 1] != [d for d in dst if d != 1]:
        return None
    return frame_map(src, dst)


def _swap_of_last_two(rank: int) -> list[int]:
    return [*range(rank - 2), rank - 1, rank - 2]


def _is_swap_of_last_two(perm: Sequence[int]) -> bool:
    return len(perm) >= 2 and list(perm) == _swap_of_last_two(len(perm))


class TransposeIntoMatmul(RewritePattern):
    """`matmul(a, transpose(b))` swapping b's last two dims -> `matmul(a, b)`, `transpose_b` toggled."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tgraph.MatmulOp, rewriter: PatternRewriter) -> None:
        t = op.rhs.owner
        if not isinstance(t, tgraph.TransposeOp) or not _is_swap_of_last_two(t.permutation):
            return
        new = tgraph.MatmulOp(op.lhs, t.input, tgraph.tensor_type(op.result), transpose_b=op.transpose_b is None)
        new.attributes.update(op.attributes)
        rewriter.replace(op, new)


class TransposedLhs(RewritePattern):
    """`matmul(transpose(a), r)` of a computed `a` (its last two dims swapped) -> `transpose(matmul(r^T, a))`
    (A^T R = (R^T A)^T) where `r^T` needs no new transpose of a computed value: `r` read with transpose_b,
    a view of an input, or itself such a transpose. The transpose then sinks to the outputs or into the next
    matmul's transpose_b (linear attention's `phi(k)^T @ v`)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tgraph.MatmulOp, rewriter: PatternRewriter) -> None:
        t = op.lhs.owner
        if not isinstance(t, tgraph.TransposeOp) or not _is_swap_of_last_two(t.permutation) or _view_of(t.input) is not None:
            return
        rhs = op.rhs
        rank = len(_shape(rhs))
        if op.transpose_b is not None:
            r_t = rhs
        elif isinstance(rhs.owner, tgraph.TransposeOp) and _is_swap_of_last_two(rhs.owner.permutation):
            r_t = rhs.owner.input
        elif _view_of(rhs) is not None:
            swap = tgraph.TransposeOp(rhs, _swap_of_last_two(rank))
            rewriter.insert(swap)
            r_t = swap.result
        else:
            return
        shape = _shape(op.result)
        shape[-2], shape[-1] = shape[-1], shape[-2]
        new = tgraph.MatmulOp(r_t, t.input, tgraph.tensor_type(op.result).with_shape(shape))
        new.attributes.update(op.attributes)
        rewriter.insert(new)
        rewriter.replace(op, tgraph.TransposeOp(new.result, _swap_of_last_two(len(shape))))


class FoldTranspose(RewritePattern):
    """An identity transpose vanishes; a transpose of a transpose is one transpose; a transpose that only
    moves size-1 dims is a reshape."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tgraph.TransposeOp, rewriter: PatternRewriter) -> None:
        perm = op.permutation
        shape = _shape(op.input)
        if list(perm) == list(range(len(perm))):
            rewriter.replace(op, [], [op.input])
        elif _moves_only_ones(shape, perm):
            rewriter.replace(op, tgraph.ReshapeOp(op.input, tgraph.tensor_type(op.result)))
        elif isinstance(inner := op.input.owner, tgraph.TransposeOp):
            rewriter.replace(op, tgraph.TransposeOp(inner.input, [inner.permutation[p] for p in perm]))


class SinkTranspose(RewritePattern):
    """An elementwise op or a reduction reading a transpose of a computed value computes in that value's
    frame and is transposed after (`f(transpose(a), c)` -> `transpose(f(a, transpose^-1(c)))`, `c` an
    input's view or a transpose by the same perm; `reduce(transpose(a), d)` -> `transpose(reduce(a,
    perm[d]))`): the transpose moves down towards the outputs, where it is a view."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, tgraph.ReduceOp):
            t = op.input.owner
            if _sinks(t):
                axis = t.permutation[op.axis]
                shape = _shape(t.input)
                shape[axis] = 1
                new = _rebuilt(op, [t.input], shape)
                new.properties["dim"] = IntegerAttr(axis, i64)
                rewriter.insert(new)
                rewriter.replace(op, tgraph.TransposeOp(new.results[0], t.permutation))
            return
        if not isinstance(op, tgraph.ElementwiseOp):
            return
        rank = len(_shape(op.results[0]))
        moved = [v for v in op.operands if _sinks(v.owner)]
        if not moved:
            return
        perm = moved[0].owner.permutation
        inverse = [perm.index(i) for i in range(rank)]
        operands: list[SSAValue] = []
        for v in op.operands:
            t = v.owner
            if isinstance(t, tgraph.TransposeOp) and t.permutation == perm:
                operands.append(t.input)
            elif len(_shape(v)) == rank and (_view_of(v) is not None or _moves_only_ones(_shape(v), inverse)):
                back = tgraph.TransposeOp(v, inverse)  # a view of an input, or a reshape (FoldTranspose)
                rewriter.insert(back)
                operands.append(back.result)
            else:
                return
        new = _rebuilt(op, operands, _shape(operands[0]) if len(operands) == 1 else _frame(operands))
        rewriter.insert(new)
        rewriter.replace(op, tgraph.TransposeOp(new.results[0], perm))


def _sinks(t: Operation | None) -> bool:
    """Whether `t` is a transpose `SinkTranspose` moves down: of a computed value (a view of an input stays
    at the input), and not one that only moves size-1 dims (`FoldTranspose` makes that a reshape; sunk,
    each op it passes would make a new one, without end)."""
    return isinstance(t, tgraph.TransposeOp) and _view_of(t.input) is None and not _moves_only_ones(_shape(t.input), t.permutation)


def _moves_only_ones(shape: Sequence, perm: Sequence[int]) -> bool:
    """Whether permuting `shape` by `perm` keeps its dims over 1 in order (it is a reshape)."""
    big = [p for p in perm if shape[p] != 1]
    return big == sorted(big)


def _frame(values: Sequence[SSAValue]) -> list:
    """The broadcast shape of same-rank `values` (a size-1 dim takes the others' size)."""
    shapes = [_shape(v) for v in values]
    return [next((d for d in ds if d != 1), 1) for ds in zip(*shapes)]


class FoldSlice(RewritePattern):
    """A full slice vanishes, slices of slices merge, a slice of a concat reads the parts it covers,
    and a slice moves up through the op that computes its input (`_piece`)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tgraph.SliceOp, rewriter: PatternRewriter) -> None:
        dim, start = op.axis, op.offset
        size, full = _int(_shape(op.result)[dim]), _int(_shape(op.input)[dim])
        if size is None or full is None:
            return
        if start == 0 and size == full:
            rewriter.replace(op, [], [op.input])
            return
        src = op.input.owner
        if isinstance(src, tgraph.SliceOp) and src.axis == dim:
            rewriter.replace(op, tgraph.SliceOp(src.input, dim, src.offset + start, size))
        elif isinstance(src, tgraph.ConcatOp):
            rewriter.replace(op, [], [self._of_concat(src, dim, start, size, rewriter)])
        elif isinstance(src, Operation) and not isinstance(src, tgraph.SliceOp):
            piece = _piece(rewriter, src, dim, start, size)
            if piece is not None:
                rewriter.replace(op, [], [piece])

    @staticmethod
    def _of_concat(cat: tgraph.ConcatOp, dim: int, start: int, size: int, rewriter: PatternRewriter) -> SSAValue:
        if dim != cat.axis:
            parts = [_slice(rewriter, v, dim, start, size) for v in cat.operands]
            new = tgraph.ConcatOp(parts, cat.axis)
            rewriter.insert(new)
            return new.result
        pieces, at = [], 0
        for v in cat.operands:
            n = _int(_shape(v)[dim])
            assert n is not None
            lo, hi = max(start, at), min(start + size, at + n)
            if lo < hi:
                pieces.append(_slice(rewriter, v, dim, lo - at, hi - lo))
            at += n
        if len(pieces) == 1:
            return pieces[0]
        new = tgraph.ConcatOp(pieces, dim)
        rewriter.insert(new)
        return new.result


class ReadInParts(RewritePattern):
    """An input read whole and also in slices that tile one of its dims (a rotary embedding's halves of
    the x a norm reads whole) is read in those parts only: its whole reads become the concat of the
    parts, which `SinkConcat` then moves down (a sum over that dim, the sum of the parts' sums). A kernel
    then loads each element once, not the whole tile and its halves again. Not where a matmul contracts
    that dim (it would be split in two)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tgraph.SliceOp, rewriter: PatternRewriter) -> None:
        x = op.input
        if not isinstance(x, BlockArgument):
            return
        whole = [u for u in x.uses if not isinstance(u.operation, (tgraph.SliceOp, tgraph.TransposeOp, tgraph.ConcatOp))]
        if not whole:
            return
        size = _int(_shape(x)[op.axis])
        ranges = sorted({(s.offset, _int(_shape(s.result)[op.axis])) for u in x.uses if isinstance(s := u.operation, tgraph.SliceOp) and s.axis == op.axis})
        if size is None or len(ranges) < 2 or any(n is None for _, n in ranges):
            return
        at = 0
        for start, n in ranges:
            if start != at:
                return  # overlapping or leaving a gap: the parts do not tile the dim
            at += n  # type: ignore[operator]
        if at != size or _contracted(x, op.axis, set()):
            return  # (read in parts, a matmul contracting that dim would be split in two)
        block = x.owner
        assert isinstance(block, Block)
        parts = [tgraph.SliceOp(x, op.axis, start, n) for start, n in ranges]
        joined = tgraph.ConcatOp([p.result for p in parts], op.axis)
        rewriter.insert([*parts, joined], InsertPoint.at_start(block))
        for use in whole:
            use.operation.operands[use.index] = joined.result


class SinkConcat(RewritePattern):
    """An op reading a concat computes each part separately (`_piece`), and the parts are concatenated
    after it: the concat moves down towards the graph's outputs. Parts of concats along one dim merge."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, tgraph.ConcatOp):
            flat: list[SSAValue] = []
            for v in op.operands:
                inner = v.owner
                flat.extend(inner.operands if _moving_concat(v) and inner.axis == op.axis else [v])
            if len(flat) != len(op.operands):
                rewriter.replace(op, tgraph.ConcatOp(flat, op.axis))
            return
        if not isinstance(op, (tgraph.ElementwiseOp, tgraph.ReduceOp, tgraph.MatmulOp, tgraph.TransposeOp, tgraph.ReshapeOp)):
            return
        if self._regroup(op, rewriter):
            return
        shape = _shape(op.results[0])
        for dim in range(len(shape)):
            cuts = self._cuts(op, dim)
            if cuts is None:
                continue
            pieces = []
            for lo, hi in zip(cuts, cuts[1:]):
                piece = _piece(rewriter, op, dim, lo, hi - lo)
                if piece is None:
                    return
                pieces.append(piece)
            rewriter.replace(op, tgraph.ConcatOp(pieces, dim))
            return

    @staticmethod
    def _regroup(op: Operation, rewriter: PatternRewriter) -> bool:
        """A reduction over a concat's own dim, or a matmul contracting it: one per part, combined
        (max: exact; sums, means and products: partial sums in f32, as the kernels accumulate, then
        cast back)."""
        if isinstance(op, tgraph.ReduceOp):
            sides, dims = [op.input], [op.axis]
        elif isinstance(op, tgraph.MatmulOp):
            sides, dims = [op.lhs, op.rhs], [len(_shape(op.lhs)) - 1, len(_shape(op.rhs)) - (1 if op.transpose_b is not None else 2)]
        else:
            return False
        cuts = {0, _int(_shape(sides[0])[dims[0]])}
        for v, d in zip(sides, dims):
            if _moving_concat(v) and v.owner.axis == d:
                at = 0
                for part in v.owner.operands:
                    n = _int(_shape(part)[d])
                    if n is None:
                        return False
                    at += n
                    cuts.add(at)
        if len(cuts) <= 2 or None in cuts:
            return False
        bounds = sorted(cuts)  # type: ignore[type-var]
        result = tgraph.tensor_type(op.results[0])
        exact = isinstance(op, tgraph.ReduceOp) and op.kind.data == tgraph.ReduceKind.MAX
        wide = result.element_type if exact or result.element_type == f32 else f32
        pieces: list[SSAValue] = []
        for lo, hi in zip(bounds, bounds[1:]):
            args = [_slice(rewriter, v, d, lo, hi - lo) for v, d in zip(sides, dims)]
            if isinstance(op, tgraph.ReduceOp):
                x = args[0]
                if wide != result.element_type:
                    cast = tgraph.CastOp(x, wide)
                    rewriter.insert(cast)
                    x = cast.result
                new = tgraph.ReduceOp(tgraph.ReduceKind.MAX if exact else tgraph.ReduceKind.SUM, x, op.axis)
            else:
                new = tgraph.MatmulOp(args[0], args[1], result.with_element_type(wide), transpose_b=op.transpose_b is not None)
            rewriter.insert(new)
            pieces.append(new.results[0])
        total = pieces[0]
        for piece in pieces[1:]:
            combined = (tgraph.MaxOp if exact else tgraph.AddOp)(total, piece)
            rewriter.insert(combined)
            total = combined.result
        if isinstance(op, tgraph.ReduceOp) and op.kind.data == tgraph.ReduceKind.MEAN:
            mean = tgraph.ScaleOp(total, 1.0 / (bounds[-1] - bounds[0]))
            rewriter.insert(mean)
            total = mean.result
        if wide != result.element_type:
            rewriter.replace(op, tgraph.CastOp(total, result.element_type))
        else:
            rewriter.replace(op, [], [total])
        return True

    @staticmethod
    def _cuts(op: Operation, dim: int) -> list[int] | None:
        """The boundaries along result dim `dim` of the concats `op` reads there (None: it reads none)."""
        size = _int(_shape(op.results[0])[dim])
        if size is None or size == 1:
            return None
        if isinstance(op, tgraph.ReduceOp) and dim == op.axis:
            return None
        if isinstance(op, tgraph.MatmulOp):
            dl, dr = _matmul_dims(op, dim)
            sides = [(v, d) for v, d in ((op.lhs, dl), (op.rhs, dr)) if d is not None and d >= 0]
        elif isinstance(op, tgraph.TransposeOp):
            sides = [(op.input, op.permutation[dim])]
        elif isinstance(op, tgraph.ReshapeOp):
            m = _unit_map(op)
            if m is None or m[dim] is None:
                return None
            sides = [(op.input, m[dim])]
        else:
            sides = [(v, dim) for v in op.operands if len(_shape(v)) == len(_shape(op.results[0]))]
        cuts = {0, size}
        for v, d in sides:
            cat = v.owner
            if _moving_concat(v) and cat.axis == d and _shape(v)[d] != 1:
                at = 0
                for part in cat.operands:
                    n = _int(_shape(part)[d])
                    if n is None:
                        return None
                    at += n
                    cuts.add(at)
        return sorted(cuts) if len(cuts) > 2 else None


JOIN = "cleave.join"
"""Marks a concat that stays a join of inputs (`_mark_joins`): `SinkConcat` leaves it, `to_boundary` makes it
an input (`#cleave.join`)."""


def _is_join(v: SSAValue) -> bool:
    return isinstance(v.owner, tgraph.ConcatOp) and JOIN in v.owner.attributes


def _moving_concat(v: SSAValue) -> bool:
    """Whether `v` is a concat that `SinkConcat` moves (any but a kept join)."""
    return isinstance(v.owner, tgraph.ConcatOp) and not _is_join(v)


def _contracted(v: SSAValue, dim: int, seen: set[tuple[SSAValue, int]]) -> bool:
    """Whether dim `dim` of `v` reaches a matmul that contracts it, through the ops that carry it (elementwise
    ops, transposes, reshapes of size-1 dims, concats, reductions and slices along other dims, a matmul's
    M, N and batch dims)."""
    if (v, dim) in seen:
        return False
    seen.add((v, dim))
    for use in v.uses:
        op = use.operation
        nxt: int | None = None
        if isinstance(op, tgraph.MatmulOp):
            rank, side = len(_shape(op.result)), len(_shape(v))
            k, mn = (side - 1, side - 2) if use.index == 0 or op.transpose_b is not None else (side - 2, side - 1)
            if dim == k:
                return True
            nxt = (rank - 2 if use.index == 0 else rank - 1) if dim == mn else dim + rank - side
        elif isinstance(op, tgraph.ElementwiseOp):
            r = op.results[0]
            nxt = dim + len(_shape(r)) - len(_shape(v))
        elif isinstance(op, (tgraph.ReduceOp, tgraph.SliceOp)):
            nxt = None if op.axis == dim else dim
        elif isinstance(op, tgraph.TransposeOp):
            nxt = list(op.permutation).index(dim)
        elif isinstance(op, tgraph.ConcatOp):
            nxt = dim
        elif isinstance(op, tgraph.ReshapeOp) and (m := _unit_map(op)) is not None and dim in m:
            nxt = m.index(dim)
        if nxt is not None and _contracted(op.results[0], nxt, seen):
            return True
    return False


def _mark_joins(graph: tgraph.GraphOp) -> None:
    """Mark (`JOIN`) each concat of inputs or their views that a matmul downstream contracts (see the
    module docstring). Its dims are dynamic where its parts' are: a cache of dynamic length appended to
    is a join of dynamic length (`run` concatenates whatever lengths it is given)."""
    causal = set(graph.causal_inputs())
    for op in graph.block.ops:
        if not isinstance(op, tgraph.ConcatOp):
            continue
        views = [_view_of(v) for v in op.operands]
        if any(view is None or view[0] in causal or any(view[1][d] in graph.input_annotation(view[0], "dynamic") for d in view[2]) for view in views):
            continue
        if _contracted(op.result, op.axis, set()):
            op.attributes[JOIN] = UnitAttr()


def _view_attr(view: tuple[int, list[int], dict[int, tuple[int, int]]]) -> ViewAttr:
    index, perm, ranges = view
    identity = perm == list(range(len(perm)))
    return ViewAttr(index, [] if identity else perm, [[d, s, n] for d, (s, n) in sorted(ranges.items())])


def drop_dead(graph: tgraph.GraphOp) -> None:
    """Erase the ops of `graph` whose results nothing reads."""
    for op in reversed(list(graph.block.ops)):
        if not isinstance(op, tgraph.OutputOp) and not any(r.uses for r in op.results):
            Rewriter.erase_op(op)


def _view_of(v: SSAValue) -> tuple[int, list[int], dict[int, tuple[int, int]]] | None:
    """`v` as a view of a graph input: (input index, perm, {dim: (start, size)} in the permuted frame),
    or None where `v` is not a chain of slices and transposes of an input."""
    chain: list[Operation] = []
    while not isinstance(v, BlockArgument):
        op = v.owner
        if not isinstance(op, (tgraph.SliceOp, tgraph.TransposeOp)):
            return None
        chain.append(op)
        v = op.operands[0]
    rank = len(_shape(v))
    perm, ranges = list(range(rank)), {}
    for op in reversed(chain):
        if isinstance(op, tgraph.TransposeOp):
            perm = [perm[p] for p in op.permutation]
            ranges = {op.permutation.index(d): r for d, r in ranges.items()}
        else:
            size = _int(_shape(op.result)[op.axis])
            if size is None:
                return None
            lo = ranges.get(op.axis, (0, None))[0]
            ranges[op.axis] = (lo + op.offset, size)
    return v.index, perm, ranges


def to_boundary(graph: tgraph.GraphOp) -> bool:
    """Move the slices and transposes of inputs and the concats of outputs out of `graph` (see the
    module docstring); False, and `graph` unchanged, where some structural op is not of that kind."""
    block = graph.block
    structural = [op for op in block.ops if isinstance(op, tgraph.StructuralOp)]
    if not structural:
        return False
    output = graph.output_op
    views: dict[SSAValue, tuple] = {}
    for op in structural:
        if _output_transpose(op, output):
            continue
        if _is_join(op.result):
            if any(_view_of(v) is None for v in op.operands) or any(u.operation is output for u in op.result.uses):
                return False
            continue
        if isinstance(op, tgraph.ConcatOp):
            if any(u.operation is not output for u in op.result.uses):
                return False
            if any(isinstance(v, BlockArgument) or (isinstance(v.owner, tgraph.StructuralOp) and not _output_transpose(v.owner, output)) for v in op.operands):
                return False
            continue
        view = _view_of(op.results[0])
        if view is None:
            return False
        if any(_reads(u.operation) for u in op.results[0].uses):
            if any(u.operation is output for u in op.results[0].uses):
                return False
            if view[0] in graph.causal_inputs():
                return False
            dynamic = graph.input_annotation(view[0], "dynamic")
            if any(view[1][d] in dynamic for d in view[2]):  # a view would fix that dim's size
                return False
            views[op.results[0]] = view
    if any(isinstance(v, BlockArgument) or v.owner is None for v in output.operands):
        return False
    # the new inputs: the inputs read as they are, then each distinct view, in input order
    old_args = list(block.args)
    names = graph.input_names()
    attrs = list(graph.arg_attrs.data) if graph.arg_attrs is not None else [DictionaryAttr({})] * len(old_args)
    entries: list[tuple[SSAValue, ViewAttr | JoinAttr, str, DictionaryAttr, list[SSAValue]]] = []
    for a in old_args:
        direct = [u for u in a.uses if _reads(u.operation)]
        if direct:
            entries.append((a, ViewAttr(a.index), names[a.index], attrs[a.index], [a]))
        seen: dict[tuple, int] = {}
        mine = [((tuple(perm), tuple(sorted(ranges.items()))), v) for v, (index, perm, ranges) in views.items() if index == a.index]
        for key, v in sorted(mine, key=lambda kv: kv[0]):  # views in the order of their dims and offsets
            perm, ranges = list(key[0]), dict(key[1])
            index = a.index
            if key in seen:
                entries[seen[key]][4].append(v)
                continue
            view = _view_attr((index, perm, ranges))
            seen[key] = len(entries)
            entries.append((v, view, f"{names[index]}_v{len(seen)}", _permuted(attrs[index], perm), [v]))
    # then each kept join, a copy `run` makes of the views it joins
    for op in structural:
        if _is_join(op.results[0]):
            views = [_view_of(v) for v in op.operands]
            parts = [view for view in views if view is not None]
            name = "_".join(names[view[0]] for view in parts) + "_cat"
            annotated: dict[str, set[int]] = {}
            for index, perm, _ in parts:
                for key, value in _permuted(attrs[index], perm).data.items():
                    if key in tgraph.GraphOp.ANNOTATIONS and isinstance(value, DenseArrayBase):
                        annotated.setdefault(key, set()).update(value.get_values())
            join_attrs = DictionaryAttr({key: DenseArrayBase.from_list(i64, sorted(dims)) for key, dims in annotated.items()})
            entries.append((op.results[0], JoinAttr(op.axis, [_view_attr(view) for view in parts]), name, join_attrs, [op.results[0]]))
    for i, (v, _, name, _, _) in enumerate(entries):
        arg = block.insert_arg(v.type, i)
        arg.name_hint = name
    for i, (_, _, _, _, values) in enumerate(entries):
        for v in values:
            v.replace_all_uses_with(block.args[i])
    # the new outputs: each part of a concat feeding the output, else the value itself
    outs: list[SSAValue] = []
    parts: list[PartAttr] = []
    for j, v in enumerate(output.operands):
        for u, dim in [(u, v.owner.axis) for u in v.owner.operands] if isinstance(v.owner, tgraph.ConcatOp) else [(v, None)]:
            perm: Sequence[int] = ()
            if isinstance(u.owner, tgraph.TransposeOp):  # a transposed output: a permuted view of what the kernel writes
                u, perm = u.owner.input, u.owner.permutation
            outs.append(u)
            parts.append(PartAttr(j, dim, perm))
    Rewriter.replace_op(output, tgraph.OutputOp(outs))
    drop_dead(graph)
    for a in old_args:
        block.erase_arg(a)
    graph.function_type = FunctionType.from_lists([a.type for a in block.args], [v.type for v in outs])
    graph.arg_attrs = ArrayAttr(tuple(e[3] for e in entries)) if any(e[3].data for e in entries) else None
    graph.res_attrs = None
    graph.attributes["cleave.boundary"] = BoundaryAttr([e[1] for e in entries], parts)
    return True


def _reads(op: Operation) -> bool:
    """Whether `op`, a user of an input or of a view of one, reads it as a tensor of its own (not a
    further slice or transpose of it, nor a kept join of it)."""
    return not isinstance(op, (tgraph.SliceOp, tgraph.TransposeOp)) and not (isinstance(op, tgraph.ConcatOp) and JOIN in op.attributes)


def _output_transpose(op: Operation, output: tgraph.OutputOp) -> bool:
    """Whether `op` transposes a computed value only for the outputs (directly or as a concat's part)."""
    if not isinstance(op, tgraph.TransposeOp):
        return False
    src = op.input
    if isinstance(src, BlockArgument) or isinstance(src.owner, tgraph.StructuralOp):
        return False
    users = [u.operation for u in op.result.uses]
    return all(u is output or (isinstance(u, tgraph.ConcatOp) and all(w.operation is output for w in u.result.uses)) for u in users)


def _permuted(attrs: DictionaryAttr, perm: Sequence[int]) -> DictionaryAttr:
    """An input's annotations (dims listed under `dynamic` / `reduced`) for its view permuted by `perm`."""
    out: dict[str, Attribute] = {}
    for key, value in attrs.data.items():
        if key in tgraph.GraphOp.ANNOTATIONS and isinstance(value, DenseArrayBase):
            out[key] = DenseArrayBase.from_list(i64, sorted(perm.index(d) for d in value.get_values()))
        elif key != "cleave.causal":
            out[key] = value
    return DictionaryAttr(out)


def _dims_tied_to_dynamic(graph: tgraph.GraphOp) -> set[tuple[SSAValue, int]]:
    """The (value, dim) pairs whose size the graph ties to a dim its inputs declare `dynamic`.

    Ops tie the dims they carry through (elementwise ops aligned from the right where neither side
    broadcasts, a reduction's other dims, a matmul's M, N, K and batch dims, a transpose's permuted
    dims, a slice's and a concat's other dims); a reshape or an op this does not know ties all its dims.
    """
    parent: dict[tuple[SSAValue, int], tuple[SSAValue, int]] = {}

    def find(x: tuple[SSAValue, int]) -> tuple[SSAValue, int]:
        while parent.get(x, x) != x:
            x = parent[x]
        return x

    def tie(a: tuple[SSAValue, int], b: tuple[SSAValue, int]) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[ra] = rb

    def aligned(v: SSAValue, r: SSAValue, skip: int | None = None) -> None:
        sv, sr = _shape(v), _shape(r)
        for i in range(1, min(len(sv), len(sr)) + 1):
            dv, dr = len(sv) - i, len(sr) - i
            if dr != skip and not (sv[dv] == 1 and sr[dr] != 1):
                tie((v, dv), (r, dr))

    for op in graph.block.ops:
        if isinstance(op, tgraph.OutputOp):
            continue
        if isinstance(op, tgraph.ElementwiseOp):
            for v in op.operands:
                aligned(v, op.results[0])
        elif isinstance(op, tgraph.ReduceOp):
            aligned(op.input, op.result, skip=op.axis)
        elif isinstance(op, tgraph.MatmulOp):
            r, la, lb = op.result, len(_shape(op.lhs)), len(_shape(op.rhs))
            k_b, n_b = (lb - 1, lb - 2) if op.transpose_b is not None else (lb - 2, lb - 1)
            tie((op.lhs, la - 1), (op.rhs, k_b))
            tie((op.lhs, la - 2), (r, len(_shape(r)) - 2))
            tie((op.rhs, n_b), (r, len(_shape(r)) - 1))
            for side, rank in ((op.lhs, la), (op.rhs, lb)):
                for d in range(rank - 2):
                    rd = d + len(_shape(r)) - rank
                    if not (_shape(side)[d] == 1 and _shape(r)[rd] != 1):
                        tie((side, d), (r, rd))
        elif isinstance(op, tgraph.TransposeOp):
            for i, p in enumerate(op.permutation):
                tie((op.input, p), (op.result, i))
        elif isinstance(op, tgraph.SliceOp):
            aligned(op.input, op.result, skip=op.axis)
        elif isinstance(op, tgraph.ConcatOp):
            for v in op.operands:
                aligned(v, op.result, skip=op.axis)
        else:
            values = [*op.operands, *op.results]
            dims = [(v, d) for v in values for d in range(len(_shape(v)))]
            for a in dims[1:]:
                tie(dims[0], a)
    dynamic = {find((graph.inputs[i], d)) for i in range(len(graph.inputs)) for d in graph.input_annotation(i, "dynamic")}
    values = [*graph.inputs, *(r for op in graph.block.ops for r in op.results)]
    return {(v, d) for v in values for d in range(len(_shape(v))) if find((v, d)) in dynamic}


def _cuts_only_static_dims(graph: tgraph.GraphOp) -> bool:
    """Whether every slice and concat of `graph` cuts or joins a dim that no dynamic dim is tied to
    (moving one that does would fix a dynamic size at its declared value)."""
    tied = _dims_tied_to_dynamic(graph) if any(graph.input_annotation(i, "dynamic") for i in range(len(graph.inputs))) else set()
    for op in graph.block.ops:
        if isinstance(op, (tgraph.SliceOp, tgraph.ConcatOp)) and JOIN not in op.attributes:
            if any((v, op.axis) in tied for v in (*op.operands, *op.results)):
                return False
    return True


REWRITES_PER_OP = 200
"""The rewrites `fold_structural` may make per op of the graph before it gives up (a guard: the patterns
reach a fixpoint in far fewer on every graph seen; a cycle between them must not hang a compile)."""


class _NoFixpoint(Exception):
    pass


class _Budgeted(RewritePattern):
    """`inner`, raising `_NoFixpoint` once it has rewritten `left` times."""

    def __init__(self, inner: RewritePattern, left: int) -> None:
        self.inner, self.left = inner, left

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        self.inner.match_and_rewrite(op, rewriter)
        if rewriter.has_done_action:
            self.left -= 1
            if self.left < 0:
                raise _NoFixpoint


def fold_structural(graph: tgraph.GraphOp, joins: bool = True) -> bool:
    """Rewrite `graph` in place (see the module docstring), with `joins` keeping the concats of inputs a
    matmul contracts: True if no structural op is left in it (it may be left partly rewritten otherwise:
    `folded_copy` works on a copy)."""
    if joins:
        _mark_joins(graph)
    patterns: list[RewritePattern] = [TransposeIntoMatmul(), TransposedLhs(), FoldTranspose(), SinkTranspose()]
    if _cuts_only_static_dims(graph):
        patterns += [FoldSlice(), ReadInParts(), SinkConcat()]
    budget = _Budgeted(GreedyRewritePatternApplier(patterns), REWRITES_PER_OP * (len(graph.block.ops) + 1))
    try:
        PatternRewriteWalker(budget, apply_recursively=True).rewrite_region(graph.body)
    except _NoFixpoint:
        return False
    drop_dead(graph)
    cse(graph.body)  # the pieces of one value that several slices asked for, computed once
    if not any(isinstance(op, tgraph.StructuralOp) for op in graph.block.ops):
        return True
    _copy_views(graph)
    return to_boundary(graph)


def folded_copy(graph: tgraph.GraphOp) -> tgraph.GraphOp | None:
    """`graph` folded, as a new graph (its concats of inputs a matmul contracts kept as joins where it
    folds so, else moved like the others), or None where its structural ops cannot all go."""
    for joins in (True, False):
        trial = graph.clone()
        if fold_structural(trial, joins):
            return trial
        if not any(_is_join(op.results[0]) for op in trial.block.ops if isinstance(op, tgraph.ConcatOp)):
            return None  # no join was kept: folding without would do the same
    return None


def _copy_views(graph: tgraph.GraphOp) -> None:
    """An output, or a part of a concat, that is an input or a view of one gets an identity copy
    (`scale %v, 1.0`): a kernel writes it."""
    users = [op for op in graph.block.ops if isinstance(op, tgraph.ConcatOp) and JOIN not in op.attributes] + [graph.output_op]
    for user in users:
        for i, v in enumerate(user.operands):
            if _view_of(v) is not None or _is_join(v):
                copy = tgraph.ScaleOp(v, 1.0)
                Rewriter.insert_op(copy, InsertPoint.before(user))
                user.operands[i] = copy.result


class FoldStructuralPass(CleavePass):
    """Transposes into matmuls, slices up to the inputs, concats down to the outputs, then out of the
    graph; a graph whose structural ops cannot all go is left as written."""

    name = "cleave-fold-structural"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for g in [g for g in op.body.block.ops if isinstance(g, tgraph.GraphOp)]:
            if not any(isinstance(x, tgraph.StructuralOp) for x in g.block.ops):
                continue
            trial = folded_copy(g)
            if trial is not None:
                trial.verify()
                Rewriter.replace_op(g, trial, [])
