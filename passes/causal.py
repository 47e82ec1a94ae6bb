"""Where a causal mask ends an online-softmax loop early: the KV blocks above the diagonal.

A FlashAttention loop (`itgraph.sequential ... accumulate (rescaled_sum, ..., max)`) whose logits get
a `cleave.causal` mask tile as `x + (keep - 1) * c` or `select(keep, x, keep - c)` (c >= 1e4) needs
only the KV blocks up to the diagonal of its query rows. Exact in fp32: the mask keeps key 0 of every
row (offset >= 0), so after block 0 the running max is a kept logit; a block whose keys are all
masked has a chunk max about c below it, so it leaves the max unchanged and its rescaled parts
are weighted by exp(chunk max - running max) = 0 (for logits within +-c/2, as the fill assumes).

`diagonal_extent(loop)` proves that pattern on the itgraph loop and returns the iteration count
as an expression of the parallel variables, else None (the full loop stays). The lowering bounds
the pipelined loop with it; the cost model counts the iterations it leaves.
"""

from __future__ import annotations

from collections.abc import Mapping

import sympy
from xdsl.ir import Operation, SSAValue

from cleave_ir.dialects import itgraph, tgraph
from cleave_ir.dialects.itgraph import AccumulateKind
from cleave_ir.shapes import Dim, evaluate, symbol

MIN_FILL = 1.0e4
"""The smallest magnitude of a masked logit's penalty that makes a masked block's weight exp(-c/2) = 0 in fp32."""


def _through_casts(v: SSAValue) -> SSAValue:
    while isinstance(v.owner, tgraph.CastOp):
        v = v.owner.input
    return v


def _past_key_masks(v: SSAValue) -> SSAValue:
    """`v` before the `itgraph.mask`s of a dynamic kernel that drop keys past the end (last axis):
    they only remove keys, which a block's causal argument does not depend on."""
    while isinstance(v.owner, itgraph.MaskOp) and v.owner.axis.value.data == tgraph.tensor_type(v).rank - 1:
        v = v.owner.input
    return v


def _causal_load(v: SSAValue) -> itgraph.LoadOp | None:
    v = _through_casts(v)
    return v.owner if isinstance(v.owner, itgraph.LoadOp) and v.owner.causal_offset is not None else None


def _penalty_load(p: SSAValue) -> itgraph.LoadOp | None:
    """The causal load of `p = (keep - 1) * c`, c >= MIN_FILL (0 where kept, -c where masked)."""
    p = _through_casts(p)
    if not isinstance(p.owner, tgraph.ScaleOp) or p.owner.value < MIN_FILL:
        return None
    s = _through_casts(p.owner.input)
    if not isinstance(s.owner, tgraph.ScalarOp) or s.owner.scalar_kind != tgraph.ScalarKind.ADD or s.owner.value != -1.0:
        return None
    return _causal_load(s.owner.input)


def masked_logits(v: SSAValue) -> itgraph.LoadOp | None:
    """The causal load whose masked keys `v` pushes down by at least MIN_FILL, else None."""
    op = v.owner
    if isinstance(op, tgraph.AddOp):
        for pen, x in ((op.rhs, op.lhs), (op.lhs, op.rhs)):
            ld = _penalty_load(pen)
            if ld is not None and tgraph.tensor_type(x).shape == tgraph.tensor_type(v).shape:
                return ld
    if isinstance(op, tgraph.SelectOp):
        cond, picked, fill = op.operands
        ld = _causal_load(cond)
        f = _through_casts(fill)
        if (
            ld is not None
            and tgraph.tensor_type(picked).shape == tgraph.tensor_type(v).shape
            and isinstance(f.owner, tgraph.ScalarOp)
            and f.owner.scalar_kind == tgraph.ScalarKind.SUB
            and f.owner.value >= MIN_FILL
            and _causal_load(f.owner.input) is ld
        ):
            return ld
    return None


def _shifted_exp(v: SSAValue, logits: SSAValue, chunk_max: SSAValue) -> bool:
    """`v` is exp(logits - chunk_max)."""
    v = _past_key_masks(_through_casts(v))
    if not isinstance(v.owner, tgraph.ExpOp):
        return False
    d = v.owner.input
    return isinstance(d.owner, tgraph.SubOp) and d.owner.lhs is logits and d.owner.rhs is chunk_max


def _rescaled_part(v: SSAValue, logits: SSAValue, chunk_max: SSAValue) -> bool:
    """A rescaled sum's part is a row sum of exp(logits - chunk max), or that times a tile (P V)."""
    op = v.owner
    last = tgraph.tensor_type(logits).rank - 1
    if isinstance(op, tgraph.ReduceOp):
        return op.kind.data == tgraph.ReduceKind.SUM and op.axis == last and _shifted_exp(op.input, logits, chunk_max)
    if isinstance(op, tgraph.MatmulOp):
        return op.transpose_b is None and _shifted_exp(op.lhs, logits, chunk_max)
    return False


def _max_value(e: Dim, extents: Mapping[sympy.Symbol, int]) -> int | None:
    """The largest value of the affine `e` over 0 <= var < extent, or None if it is not affine there."""
    e = sympy.expand(e)
    poly = sympy.Poly(e, *extents) if extents else None
    if poly is not None and poly.total_degree() > 1:
        return None
    best = e
    for var, n in extents.items():
        c = e.coeff(var)
        if not c.is_Integer:
            return None
        best = best.subs(var, n - 1 if c > 0 else 0)
    return int(best) if best.is_Integer else None


def diagonal_extent(loop: itgraph.SequentialOp) -> Dim | None:
    """The iterations of `loop` up to the diagonal of a causal mask, when the pattern above holds.

    The mask tile of iteration r covers keys [tn*r, tn*r + tn) for query rows [R, R + tm) (R from
    the parallel variables): the keys past row R + tm - 1 + offset are masked for all of them, so
    the loop needs floor((R + tm - 1 + offset) / tn) + 1 iterations. Only where that never exceeds
    the loop's extent (no min in the loop bound), the loop reads keys from 0, and nothing else
    in the body writes memory. In a dynamic kernel the extent is checked at the representative
    sizes, and the key dim must be dynamic: at other sizes iterations past the end are harmless.
    """
    kinds = loop.accumulate_kinds
    if kinds.count(AccumulateKind.MAX) != 1 or AccumulateKind.RESCALED_SUM not in kinds:
        return None
    if any(k not in (AccumulateKind.MAX, AccumulateKind.RESCALED_SUM) for k in kinds):
        return None
    par = loop.parent_op()
    if not isinstance(par, itgraph.ParallelOp) or any(isinstance(o, (itgraph.StoreOp, itgraph.SequentialOp)) for o in loop.body.walk()):
        return None
    term = loop.body.block.last_op
    assert isinstance(term, itgraph.YieldOp)
    chunk_max = term.values[kinds.index(AccumulateKind.MAX)]
    red = chunk_max.owner
    if not isinstance(red, tgraph.ReduceOp) or red.kind.data != tgraph.ReduceKind.MAX or red.axis != tgraph.tensor_type(red.input).rank - 1:
        return None
    logits = _past_key_masks(red.input)
    ld = masked_logits(logits)
    if ld is None or ld.parent_op() is not loop:
        return None
    for kind, value in zip(kinds, term.values):
        if kind == AccumulateKind.RESCALED_SUM and not _rescaled_part(value, logits, chunk_max):
            return None
    mask_shape = tgraph.tensor_type(ld.result).shape
    if tgraph.tensor_type(logits).rank != len(mask_shape) or mask_shape[-1] != tgraph.tensor_type(logits).shape[-1]:
        return None  # the mask's key axis is the reduced one, not broadcast
    offsets, shape = ld.tmap.offset_exprs, ld.tmap.tile_shape
    r = symbol(loop.var_name)
    tm, tn = shape[-2], shape[-1]
    if not (tm.is_Integer and tn.is_Integer) or sympy.expand(offsets[-1] - tn * r) != 0 or offsets[-2].has(r):
        return None
    extents = dict(zip((symbol(v) for v in par.var_names), par.extent_dims))
    sizes: dict[str, int] = {}
    if any(sympy.sympify(n).free_symbols for n in [*extents.values(), loop.extent_dim]):
        # A dynamic kernel: past the extent at some size, the bound only reads keys past the end,
        # which loads read as zeros and the dynamic mask drops, as long as the key dim is dynamic.
        if not sympy.sympify(loop.extent_dim).free_symbols:
            return None
        kernel = itgraph.enclosing_kernel(loop)
        if kernel is None:
            return None
        sizes = itgraph.representative_sizes(kernel)
    try:
        at = {s: evaluate(sympy.sympify(n), sizes) for s, n in extents.items()}
        trips = evaluate(sympy.sympify(loop.extent_dim), sizes)
    except ValueError:
        return None
    if offsets[-2].free_symbols - set(at):
        return None
    used = {s: n for s, n in at.items() if offsets[-2].has(s)}
    offset = ld.causal_offset
    assert offset is not None
    bound = sympy.floor((offsets[-2] + tm - 1 + offset) / tn) + 1
    top = _max_value(offsets[-2], used)
    if top is None or (top + int(tm) - 1 + offset) // int(tn) + 1 > trips:  # (at the representative sizes)
        return None
    return bound


def mean_trips(loop: itgraph.SequentialOp, bound: Dim) -> float:
    """The iterations a `diagonal_extent` bound leaves, averaged over the parallel grid."""
    par = loop.parent_op()
    assert isinstance(par, itgraph.ParallelOp)
    used = [(symbol(v), int(n)) for v, n in zip(par.var_names, par.extent_dims) if bound.has(symbol(v))]
    total, count = 0, 0

    def walk(i: int, env: dict[sympy.Symbol, int]) -> None:
        nonlocal total, count
        if i == len(used):
            total += int(bound.xreplace(env))
            count += 1
            return
        for j in range(used[i][1]):
            walk(i + 1, {**env, used[i][0]: j})

    walk(0, {})
    return total / count


def computed_in_users(op: Operation) -> bool:
    """Whether `op`'s tile needs no registers of its own: a causal mask tile, or an element-wise op of
    such tiles alone (`keep - 1`, its scale), whose every user is an element-wise op of its block over
    a tile of the same shape. The lowering computes the 0/1 value from its indices where a user reads
    it (as TileLang's causal example masks the scores in the loop that writes them) and inlines the
    element-wise ops into their users, so no [rows, keys] fp32 tile is held beside the scores."""
    if isinstance(op, itgraph.LoadOp):
        if op.causal_offset is None:
            return False
    elif isinstance(op, tgraph.ElementwiseOp) and not isinstance(op, tgraph.CastOp):
        if not all(isinstance(v.owner, Operation) and computed_in_users(v.owner) for v in op.operands):
            return False
        if len(list(op.results[0].uses)) > 1 and not isinstance(op, tgraph.ScaleOp):
            return False  # the lowering inlines an op of several users only when it is cheap
    else:
        return False
    res = op.results[0]
    shape = tgraph.tensor_type(res).shape
    return bool(res.uses) and all(
        isinstance(u.operation, tgraph.ElementwiseOp)
        and not isinstance(u.operation, tgraph.CastOp)
        and u.operation.parent_block() is op.parent_block()
        and tgraph.tensor_type(u.operation.results[0]).shape == shape
        for u in res.uses
    )
