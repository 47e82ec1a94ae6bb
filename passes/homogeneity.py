"""Degree analysis: is a block's result invariant when one value is scaled by a positive per-row factor?

Scale a value `e` (the seed) by `c > 0`, a tensor that varies only along some dims of `e` (`cdims`,
size 1 along the others, broadcast). Every value downstream of `e` is then `c^k * v` for a degree
`k` (a fraction: sqrt halves it), with c's dims sitting at known dims of that value, or it is not
of that form and the analysis fails. The rules:

- `e` has degree 1; values that do not depend on `e` have degree 0;
- scale, neg, reshape, mask and a sum or max over a dim where c is constant keep the degree (c > 0);
- matmul adds the degrees of its operands; its contracted dim must be one where c is constant;
- mul adds, div subtracts, square doubles, reciprocal negates, sqrt halves, rsqrt halves and negates;
- add, sub and max need equal degrees with c at the same dims;
- any other op (exp, silu, split, ...) and every sink (`tgraph.output`, `itgraph.store`,
  `itgraph.yield`, an op in another block) needs degree 0.

When every sink sees degree 0, the block computes the same thing whatever `c` is: `exp(x - m)` may
become `exp(x)` (c = exp(m)) and `exp(x)` may become `exp(x - max x)` (c = exp(-max x)).
"""

from __future__ import annotations

from collections.abc import Iterable
from fractions import Fraction

from xdsl.ir import Block, Operation, SSAValue

from cleave_ir.dialects import itgraph, tgraph

# c's dim (a dim of the seed) -> the dim of the value where it sits
CMap = tuple[tuple[int, int], ...]

_KEEP = (tgraph.ScaleOp, tgraph.NegOp, itgraph.MaskOp)
_POWER: dict[type[Operation], Fraction] = {
    tgraph.SquareOp: Fraction(2),
    tgraph.ReciprocalOp: Fraction(-1),
    tgraph.SqrtOp: Fraction(1, 2),
    tgraph.RsqrtOp: Fraction(-1, 2),
}


class _Fail(Exception):
    """The value is not homogeneous in c (or reaches a sink with a nonzero degree)."""


def _rank(v: SSAValue) -> int:
    return tgraph.tensor_type(v).rank


def _combine(a: tuple[Fraction, CMap], b: tuple[Fraction, CMap], ka: int, kb: int) -> tuple[Fraction, CMap]:
    """Degree of a product `a^ka * b^kb` (elementwise, same rank, broadcast)."""
    (da, ma), (db, mb) = a, b
    if da and db and ma != mb:
        raise _Fail
    degree = ka * da + kb * db
    return degree, (ma if da else mb) if degree else ()


def _matmul(op: tgraph.MatmulOp, degrees: dict[SSAValue, tuple[Fraction, CMap]]) -> tuple[Fraction, CMap]:
    rank = _rank(op.result)
    zero: tuple[Fraction, CMap] = (Fraction(0), ())
    (dl, ml), (dr, mr) = degrees.get(op.lhs, zero), degrees.get(op.rhs, zero)
    batch = set(range(rank - 2))
    lhs_place = {**{d: d for d in batch}, rank - 2: rank - 2}  # K (rank-1) is contracted
    rhs_place = {**{d: d for d in batch}, (rank - 2 if op.transpose_b else rank - 1): rank - 1}
    mapped = []
    for degree, cmap, place in ((dl, ml, lhs_place), (dr, mr, rhs_place)):
        if not degree:
            mapped.append((degree, ()))
            continue
        if any(at not in place for _, at in cmap):  # c varies along the contracted dim
            raise _Fail
        mapped.append((degree, tuple((c, place[at]) for c, at in cmap)))
    return _combine(mapped[0], mapped[1], 1, 1)


def _reshape(op: tgraph.ReshapeOp, degree: Fraction, cmap: CMap) -> tuple[Fraction, CMap]:
    src = [i for i, d in enumerate(tgraph.tensor_type(op.input).shape) if d != 1]
    dst = [i for i, d in enumerate(tgraph.tensor_type(op.result).shape) if d != 1]
    remap = dict(zip(src, dst))
    if any(at not in remap for _, at in cmap):
        raise _Fail
    return degree, tuple((c, remap[at]) for c, at in cmap)


def _result_degree(op: Operation, degrees: dict[SSAValue, tuple[Fraction, CMap]]) -> tuple[Fraction, CMap]:
    zero: tuple[Fraction, CMap] = (Fraction(0), ())
    ins = [degrees.get(o, zero) for o in op.operands]
    if isinstance(op, tgraph.MatmulOp):
        return _matmul(op, degrees)
    if isinstance(op, _KEEP):
        return ins[0]
    if type(op) in _POWER:
        degree = ins[0][0] * _POWER[type(op)]
        return degree, ins[0][1] if degree else ()
    if isinstance(op, tgraph.ReduceOp):
        if any(at == op.axis for _, at in ins[0][1]):  # c varies along the reduced dim
            raise _Fail
        return ins[0]
    if isinstance(op, tgraph.ReshapeOp):
        return _reshape(op, *ins[0])
    if isinstance(op, tgraph.MulOp):
        return _combine(ins[0], ins[1], 1, 1)
    if isinstance(op, tgraph.DivOp):
        return _combine(ins[0], ins[1], 1, -1)
    if isinstance(op, (tgraph.AddOp, tgraph.SubOp, tgraph.MaxOp)):
        if ins[0] != ins[1]:
            raise _Fail
        return ins[0]
    raise _Fail  # nonlinear or unknown: only a degree-0 input passes


def is_invariant(block: Block, seed: SSAValue, cdims: Iterable[int]) -> bool:
    """Whether every result `block` makes of `seed` is unchanged when `seed` is scaled by any c > 0
    that varies only along `cdims` (dims of `seed`)."""
    cmap = tuple((d, d) for d in sorted(cdims))
    degrees: dict[SSAValue, tuple[Fraction, CMap]] = {seed: (Fraction(1), cmap)}
    started = seed.owner is block or not isinstance(seed.owner, Operation)
    try:
        for op in block.ops:
            if not started:
                started = op is seed.owner
                continue
            if not any(o in degrees for o in op.operands):
                continue
            if isinstance(op, (tgraph.OutputOp, itgraph.StoreOp, itgraph.YieldOp)) or op.regions:
                raise _Fail
            degree, where = _result_degree(op, degrees)
            if degree:
                degrees[op.results[0]] = (degree, where)
        # a use outside the block (inside a nested loop, say) is a sink too
        for value in degrees:
            if any(u.operation.parent_block() is not block for u in value.uses):
                return False
    except _Fail:
        return False
    return True


def depends_on(value: SSAValue, source: SSAValue) -> bool:
    """Whether `value` is computed from `source` (in one block)."""
    seen: set[SSAValue] = set()
    todo = [value]
    while todo:
        v = todo.pop()
        if v is source:
            return True
        if v in seen or not isinstance(v.owner, Operation):
            continue
        seen.add(v)
        todo.extend(v.owner.operands)
    return False


def linear_sum(value: SSAValue, user: Operation, index: int) -> tgraph.ReduceOp | None:
    """The `reduce sum` that `value`, operand `index` of `user`, reaches with degree 1: `user` itself, or
    the one use of `user = value * y` with `y` computed without `value` and shaped like it (the entropy's
    sum of p x). Scaling `value` by a factor constant along that sum's dim scales the sum by it."""
    if isinstance(user, tgraph.ReduceOp):
        return user if user.kind.data == tgraph.ReduceKind.SUM else None
    if not isinstance(user, tgraph.MulOp) or not user.result.has_one_use():
        return None
    other = user.operands[1 - index]
    if depends_on(other, value) or tgraph.tensor_type(other).shape != tgraph.tensor_type(value).shape:
        return None
    s = next(iter(user.result.uses)).operation
    return s if isinstance(s, tgraph.ReduceOp) and s.kind.data == tgraph.ReduceKind.SUM else None
