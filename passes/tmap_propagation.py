"""Backward tmap propagation through tgraph ops (Welder-style range analysis, paper §5.3).

Given the tile of an op's result that one iteration computes, each rule returns the tile of every
operand it needs. A tile is (offsets, shape): one sympy offset per dim over loop variables, and
integer tile sizes. Rules raise Unschedulable when a tile cannot be expressed.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from cleave_ir.dialects import tgraph


class Unschedulable(Exception):
    """A configuration that cannot be scheduled; the message says which op and why."""


@dataclass(frozen=True)
class Tile:
    offsets: tuple[sympy.Expr, ...]
    shape: tuple[int, ...]

    @staticmethod
    def full(shape: tuple[int, ...]) -> Tile:
        return Tile(tuple(sympy.Integer(0) for _ in shape), shape)

    def with_dim(self, d: int, offset: sympy.Expr, size: int) -> Tile:
        offs, shape = list(self.offsets), list(self.shape)
        offs[d], shape[d] = offset, size
        return Tile(tuple(offs), tuple(shape))


def concrete(value) -> tuple[int, ...]:
    shape = tgraph.tensor_type(value).shape
    if any(not d.is_Integer for d in shape):
        raise Unschedulable(f"symbolic shape {[str(d) for d in shape]}: concretize the graph first")
    return tuple(int(d) for d in shape)


def _broadcast_operand(out: Tile, operand_shape: tuple[int, ...]) -> Tile:
    offs, shape = [], []
    for o, t, size in zip(out.offsets, out.shape, operand_shape):
        if size == 1:
            offs.append(sympy.Integer(0))
            shape.append(1)
        else:
            offs.append(o)
            shape.append(t)
    return Tile(tuple(offs), tuple(shape))


def operand_tiles(op, out: Tile) -> list[Tile]:
    """The tile of each operand of `op` that computing tile `out` of its result reads."""
    shapes = [concrete(o) for o in op.operands]
    if isinstance(op, tgraph.ElementwiseOp):
        return [out] if len(shapes) == 1 else [_broadcast_operand(out, s) for s in shapes]
    if isinstance(op, tgraph.MatmulOp):
        a, b = shapes
        batch = Tile(out.offsets[:-2], out.shape[:-2])
        zero = sympy.Integer(0)
        ta = _broadcast_operand(batch, a[:-2])
        tb = _broadcast_operand(batch, b[:-2])
        lhs = Tile((*ta.offsets, out.offsets[-2], zero), (*ta.shape, out.shape[-2], a[-1]))
        if op.transpose_b is not None:
            rhs = Tile((*tb.offsets, out.offsets[-1], zero), (*tb.shape, out.shape[-1], b[-1]))
        else:
            rhs = Tile((*tb.offsets, zero, out.offsets[-1]), (*tb.shape, b[-2], out.shape[-1]))
        return [lhs, rhs]
    if isinstance(op, tgraph.ReduceOp):
        return [out.with_dim(op.axis, sympy.Integer(0), shapes[0][op.axis])]
    if isinstance(op, tgraph.ReshapeOp):
        src = shapes[0]
        dst = concrete(op.result)
        src_pos = [i for i, d in enumerate(src) if d != 1]
        dst_pos = [i for i, d in enumerate(dst) if d != 1]
        tile = Tile.full(src)
        for s, d in zip(src_pos, dst_pos):
            tile = tile.with_dim(s, out.offsets[d], out.shape[d])
        return [tile]
    if isinstance(op, tgraph.SplitOp):
        k = op.axis
        src = shapes[0]
        parts = concrete(op.result)[0]
        piece = src[k] // parts
        p_off, p_size = out.offsets[0], out.shape[0]
        q_off, q_size = out.offsets[k + 1], out.shape[k + 1]
        rest = Tile(out.offsets[1:], out.shape[1:])
        if p_size == 1:
            return [rest.with_dim(k, p_off * piece + q_off, q_size)]
        if p_size == parts and q_size == piece:
            return [rest.with_dim(k, sympy.Integer(0), src[k])]
        raise Unschedulable(f"tgraph.split: a tile of {p_size} parts x {q_size} elements is not contiguous")
    raise Unschedulable(f"{op.name}: no tmap rule")


def reduced_dims(op) -> list[tuple[int, int]]:
    """(operand index, dim) pairs that `op` reduces: matmul contracting dims, a reduce's dim."""
    if isinstance(op, tgraph.MatmulOp):
        rank_b = tgraph.tensor_type(op.rhs).rank
        return [(0, tgraph.tensor_type(op.lhs).rank - 1), (1, rank_b - 1 if op.transpose_b is not None else rank_b - 2)]
    if isinstance(op, tgraph.ReduceOp):
        return [(0, op.axis)]
    return []
