"""`cleave-canonicalize`: write softmax and norms the way the search expects them.

Run before `cleave-symbolize`/`cleave-superoptimize`; every rewrite is an identity in exact arithmetic.

- A cancelled shift: `exp(x - m)` (or `exp(a * (x - m))`) becomes `exp(x)` (`exp(a * x)`) when the
  graph's outputs are provably unchanged by it: `exp(x - m) = exp(x) * c` with `c = exp(-m) > 0`,
  which varies only along the dims where `m` is not size 1, and the degree analysis
  (`homogeneity.is_invariant`) shows that every output has degree 0 in `c` (softmax: the shifted exp
  is only summed over the dims where `c` is constant and divided by that sum). Where the proof fails
  (the exp itself is an output, a nonlinear op reads it, a sum runs along a dim where `m` varies)
  the graph is left as written. Numerical safety is the schedule's job (online softmax, log-sum-exp
  Split-K, `stabilize_exp` in every other kernel).
- Norms: `a / sqrt(b)` -> `a * rsqrt(b)`, `reciprocal(sqrt(b))` -> `rsqrt(b)`,
  `a * reciprocal(b)` -> `a / b`, `x * x` -> `square(x)`, and a product whose left operand is
  broadcast onto the right one is swapped (`rs * x` -> `x * rs`), as `examples/rmsnorm_matmul.mlir`.
- A graph of several outputs, which the search does not take, gets FlashAttention's form as the search
  would write it: `(e / r) @ v` -> `(e @ v) / r` for a row sum `r` (attention returning its log-sum-exp
  too is then one streaming kernel, not two).
- Reshapes that only add or drop size-1 dims move out of the graph's inside, through elementwise
  ops, to its inputs and output where that leaves fewer of them inside (`unit_reshapes`): decode's
  `[B, 1, N]` elementwise ops between `[B, N]` matmuls run on `[B, N]`. The search rebuilds no
  reshape of an input but a leading 1, so a graph keeping one finds few candidates; the torch front
  end passes such inputs as views instead (`cleave_ir.torch.partition`).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.traits import Pure

from cleave_ir.dialects import tgraph
from cleave_ir.passes.homogeneity import is_invariant
from cleave_ir.passes.options import CleavePass
from cleave_ir.passes.unit_reshapes import move_unit_reshapes


def _erase_dead(rewriter: PatternRewriter, value: SSAValue) -> None:
    """Erase the pure op defining `value` once nothing uses it, and then its dead producers."""
    op = value.owner
    if not isinstance(op, Operation) or op.has_trait(Pure) is False or any(r.uses for r in op.results):
        return
    operands = list(op.operands)
    rewriter.erase(op)
    for o in dict.fromkeys(operands):
        _erase_dead(rewriter, o)


def _shifted(value: SSAValue) -> tuple[SSAValue, SSAValue, float | None] | None:
    """(x, m, a) for `x - m` (a None) or `scale(x - m, a)`."""
    scale = None
    op = value.owner
    if isinstance(op, tgraph.ScaleOp):
        scale = op.value
        op = op.input.owner
    if isinstance(op, tgraph.SubOp):
        return op.lhs, op.rhs, scale
    return None


class RemoveCancelledShift(RewritePattern):
    """`exp(x - m)` -> `exp(x)` where the outputs are homogeneous of degree 0 in `exp(-m)`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tgraph.ExpOp, rewriter: PatternRewriter) -> None:
        found = _shifted(op.input)
        if found is None:
            return
        x, m, scale = found
        m_shape, e_shape = tgraph.tensor_type(m).shape, tgraph.tensor_type(op.result).shape
        if tgraph.tensor_type(x).shape != e_shape:  # x itself broadcast: exp(x) alone has another shape
            return
        cdims = [d for d, n in enumerate(m_shape) if n != 1]
        block = op.parent_block()
        if block is None or len(cdims) == len(e_shape) or not is_invariant(block, op.result, cdims):
            return
        new: list[Operation] = []
        arg = x
        if scale is not None:
            new.append(tgraph.ScaleOp(x, scale))
            arg = new[-1].results[0]
            arg.name_hint = op.input.name_hint
        new.append(tgraph.ExpOp(arg))
        new[-1].results[0].name_hint = op.result.name_hint
        old_input = op.input
        rewriter.replace(op, new)
        _erase_dead(rewriter, old_input)


class DivBySqrtToMulRsqrt(RewritePattern):
    """`a / sqrt(b)` -> `a * rsqrt(b)`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tgraph.DivOp, rewriter: PatternRewriter) -> None:
        sqrt = op.rhs.owner
        if not isinstance(sqrt, tgraph.SqrtOp):
            return
        rs = tgraph.RsqrtOp(sqrt.input)
        mul = tgraph.MulOp(op.lhs, rs.result)
        rs.result.name_hint = sqrt.result.name_hint
        mul.result.name_hint = op.result.name_hint
        rewriter.replace(op, [rs, mul])
        _erase_dead(rewriter, sqrt.result)


class ReciprocalSqrtToRsqrt(RewritePattern):
    """`reciprocal(sqrt(b))` -> `rsqrt(b)`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tgraph.ReciprocalOp, rewriter: PatternRewriter) -> None:
        sqrt = op.input.owner
        if not isinstance(sqrt, tgraph.SqrtOp):
            return
        rs = tgraph.RsqrtOp(sqrt.input)
        rs.result.name_hint = op.result.name_hint
        rewriter.replace(op, rs)
        _erase_dead(rewriter, sqrt.result)


class MulByReciprocalToDiv(RewritePattern):
    """`a * reciprocal(b)` -> `a / b` (a reciprocal of a sqrt is left to become an rsqrt)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tgraph.MulOp, rewriter: PatternRewriter) -> None:
        rec = op.rhs.owner
        if not isinstance(rec, tgraph.ReciprocalOp) or isinstance(rec.input.owner, tgraph.SqrtOp):
            return
        if tgraph.tensor_type(op.result).shape != tgraph.tensor_type(op.lhs).shape:
            return  # a / b must keep the result's shape
        div = tgraph.DivOp(op.lhs, rec.input)
        div.result.name_hint = op.result.name_hint
        rewriter.replace(op, div)
        _erase_dead(rewriter, rec.result)


class MulSelfToSquare(RewritePattern):
    """`x * x` -> `square(x)`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tgraph.MulOp, rewriter: PatternRewriter) -> None:
        if op.lhs is op.rhs:
            sq = tgraph.SquareOp(op.lhs)
            sq.result.name_hint = op.result.name_hint
            rewriter.replace(op, sq)


class BroadcastOperandLast(RewritePattern):
    """`a * b` with `a` broadcast onto `b` (and `b` not onto `a`) -> `b * a`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tgraph.MulOp, rewriter: PatternRewriter) -> None:
        out = tgraph.tensor_type(op.result).shape
        if tgraph.tensor_type(op.rhs).shape == out and tgraph.tensor_type(op.lhs).shape != out:
            mul = tgraph.MulOp(op.rhs, op.lhs)
            mul.result.name_hint = op.result.name_hint
            rewriter.replace(op, mul)


class RowScaleAfterMatmul(RewritePattern):
    """`(e / r) @ v` -> `(e @ v) / r` for `r` constant along the contracted dim (one value per row of `e`:
    a softmax's row sum): the division by the sum then follows the weighted sum, FlashAttention's form,
    which the schedule streams with a running max. The search finds it too, but a graph it does not
    search (attention that also returns its log-sum-exp: two outputs) is scheduled as written."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tgraph.MatmulOp, rewriter: PatternRewriter) -> None:
        div = op.lhs.owner
        if not isinstance(div, tgraph.DivOp) or not div.result.has_one_use() or op.rhs is div.result:
            return
        e, r = tgraph.tensor_type(div.lhs), tgraph.tensor_type(div.rhs)
        if e.shape != tgraph.tensor_type(div.result).shape or len(r.shape) != len(e.shape) or r.shape[-1] != 1:
            return
        mm = tgraph.MatmulOp(div.lhs, op.rhs, tgraph.tensor_type(op.result), op.transpose_b is not None)
        scaled = tgraph.DivOp(mm.result, div.rhs)
        scaled.result.name_hint = op.result.name_hint
        rewriter.replace(op, [mm, scaled])
        rewriter.erase(div)


PATTERNS: tuple[type[RewritePattern], ...] = (
    RemoveCancelledShift,
    DivBySqrtToMulRsqrt,
    ReciprocalSqrtToRsqrt,
    MulByReciprocalToDiv,
    MulSelfToSquare,
    BroadcastOperandLast,
)


UNSEARCHED_PATTERNS: tuple[type[RewritePattern], ...] = (RowScaleAfterMatmul,)
"""Rewrites the search would find, for graphs it does not search (several outputs: `superoptimize`)."""


def canonicalize(op: Operation) -> bool:
    """Move unit-dim reshapes out and apply the patterns to every graph under `op` (and
    `UNSEARCHED_PATTERNS` to those of several outputs); whether anything changed."""
    graphs = [op] if isinstance(op, tgraph.GraphOp) else [g for g in op.walk() if isinstance(g, tgraph.GraphOp)]
    moved = [move_unit_reshapes(g) for g in graphs]
    walker = PatternRewriteWalker(GreedyRewritePatternApplier([p() for p in PATTERNS]))
    changed = any(moved) | any([walker.rewrite_region(r) for r in op.regions])
    unsearched = PatternRewriteWalker(GreedyRewritePatternApplier([p() for p in UNSEARCHED_PATTERNS]))
    return changed | any([unsearched.rewrite_region(g.body) for g in graphs if len(g.output_op.outputs) > 1])


@dataclass(frozen=True)
class CanonicalizePass(CleavePass):
    """Canonical softmax and norm forms (identities in exact arithmetic, proven before applied)."""

    name = "cleave-canonicalize"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        graphs = [g for g in op.body.block.ops if isinstance(g, tgraph.GraphOp)]
        for g in graphs:
            if canonicalize(g):
                g.verify()
