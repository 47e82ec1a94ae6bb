"""Stable exp in every kernel: an exp whose scale the kernel normalizes away reads `x - max(x)`.

A kernel that holds a whole softmax row in one tile (no sequential loop over it: a no-split
attention with short rows, the combine of a head-dim split) would compute `exp` of the raw logits,
which overflows for logits of ~11 in f16 and ~88 in f32. Within one threadblock iteration, the
tile ops are the whole computation: if every value the iteration stores (or yields, or hands to a
nested loop) is unchanged when the exp's result is scaled by any positive factor that is constant
along one axis of the tile (`homogeneity.is_invariant`, softmax: sums over that axis and a
division by them), the exp may read `x - max(x over that axis)` instead: the factor is
`exp(-max)`, the largest exp is 1, and the result is exactly the same in exact arithmetic. The
max is a computed tile (an fp32 fragment after `cleave-lower-tilelang`).

Exps that already read `x - max(x)` (online softmax's loop body, a stabilized Split-K) are left as
they are; an exp whose sums a sequential loop accumulates is the schedule's (`rescaled_sum`).
`cleave-schedule` applies this to every kernel it builds (`schedule.build_kernel`); a graph it cuts
into a chain of kernels is shifted as a whole first (`shifted_for_cut`: the max becomes an op of the
chain, so no kernel stores or reads an unshifted exp), and `cleave-drop-unstable` then removes the
candidates whose softmax spans kernels with no shared max (`chain_unshifted_exps` follows a chain's
values from kernel to kernel).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint

from cleave_ir.dialects import cleave
from cleave_ir.dialects.cleave import Stage
from cleave_ir.dialects import itgraph, tgraph
from cleave_ir.passes import partition_kernels
from cleave_ir.passes.homogeneity import is_invariant
from cleave_ir.passes.options import CleavePass


def _shifted_by_max(exp: tgraph.ExpOp) -> bool:
    """Whether `exp` reads `x - max(x)` (the max over some axis of that same x, possibly of a partial).
    A shift by the max of another value is not one: the search may write softmax's `c s - max(c s)`
    as `c s - max(s)` (equal after the normalization, any row constant cancels), whose exps underflow
    for c < 1 (d 112 attention: every P of a row 0 in f16, the output 0). The max may read x with a
    dynamic dim's padding masked to -inf (`itgraph.mask`, `cleave-dynamic-shapes`): the max of the
    elements that exist, which masks to 0 again after the exp."""
    sub = exp.input.owner
    if not isinstance(sub, tgraph.SubOp):
        return False
    mx = sub.rhs.owner
    if not (isinstance(mx, tgraph.ReduceOp) and mx.kind.data == tgraph.ReduceKind.MAX):
        return False
    read = mx.input
    if isinstance(read.owner, itgraph.MaskOp) and read.owner.fill.data == itgraph.MaskFill.NEG_INF and read.owner.axis.value.data == mx.axis:
        read = read.owner.input
    return _same_value(read, sub.lhs)


def _same_value(a: SSAValue, b: SSAValue, depth: int = 4) -> bool:
    """Whether `a` and `b` compute the same thing: one value, or results of ops of one kind and
    properties over the same values (a kernel may hold two copies of `scale(s, c)`)."""
    if a == b:
        return True
    x, y = a.owner, b.owner
    return (
        depth > 0 and isinstance(x, Operation) and isinstance(y, Operation) and type(x) is type(y)
        and x.properties == y.properties and list(x.results).index(a) == list(y.results).index(b)
        and len(x.operands) == len(y.operands)
        and all(_same_value(p, q, depth - 1) for p, q in zip(x.operands, y.operands))
    )


def stable_axis(exp: tgraph.ExpOp) -> int | None:
    """The axis whose max `exp` may subtract without changing what its block computes, or None."""
    block = exp.parent_block()
    if block is None or _shifted_by_max(exp):
        return None
    shape = tgraph.tensor_type(exp.input).shape
    for axis in reversed(range(len(shape))):
        if shape[axis] == 1:
            continue
        cdims = [d for d, n in enumerate(shape) if d != axis and n != 1]
        if is_invariant(block, exp.result, cdims):
            return axis
    return None


@dataclass
class ShiftExpByMax(RewritePattern):
    """`exp(x)` -> `exp(x - max(x))` over the axis `stable_axis` finds (the block normalizes the scale away)."""

    shifted: int = 0  # the number of exps rewritten

    @op_type_rewrite_pattern
    def match_and_rewrite(self, exp: tgraph.ExpOp, rewriter: PatternRewriter) -> None:
        axis = stable_axis(exp)
        if axis is None:
            return
        x = exp.input
        row_max = tgraph.ReduceOp(tgraph.ReduceKind.MAX, x, axis)
        row_max.result.name_hint = "row_max"
        shifted = tgraph.SubOp(x, row_max.result)
        for new in (row_max, shifted):
            rewriter.insert(new, InsertPoint.before(exp))
        rewriter.replace_uses_with_if(x, shifted.result, lambda use: use.operation is exp)
        self.shifted += 1


def stabilize_exps(root: Operation) -> int:
    """Shift every exp under `root` whose block normalizes its scale away; the number shifted.

    One walk in program order: each exp is judged on the IR as the earlier rewrites left it (a
    shifted exp reads `x - max` and is not matched again)."""
    pattern = ShiftExpByMax()
    for region in root.regions:
        PatternRewriteWalker(pattern, apply_recursively=False).rewrite_region(region)
    return pattern.shifted


def stabilize_kernel(kernel: itgraph.KernelOp) -> itgraph.KernelOp:
    """`kernel` with its exps stabilized (in place)."""
    stabilize_exps(kernel)
    return kernel


def shifted_for_cut(graph: tgraph.GraphOp) -> tgraph.GraphOp:
    """A copy of `graph` whose normalized exps read `x - max(x)`, to be cut into a chain of kernels.

    Once a graph is cut, an exp and the sum that normalizes it may sit in different kernels, with
    exp(x) stored in global memory between them: each kernel alone no longer normalizes it, so
    `stabilize_kernel` cannot shift it. Shifting the whole graph first puts the max into the chain
    (its own op, computed once, passed on by name like any intermediate); every piece then reads
    `exp(x - m)` (at most 1) whatever the logits. `graph` itself when it has no such exp.
    """
    copy = graph.clone()
    return copy if stabilize_exps(copy) else graph


def chain_unshifted_exps(graphs: list[tgraph.GraphOp]) -> list[tgraph.ExpOp]:
    """The exps of a chain of graphs (a candidate's pieces, in launch order) that do not read `x - m`
    with `m` a max, following a piece's inputs to the earlier piece that computed them."""
    origin: dict[str, Operation | None] = {}  # a chain value's name -> the op that computed it
    out: list[tgraph.ExpOp] = []
    prev: list[Operation | None] = []
    for g in graphs:
        through = [n.data for n in getattr(g.attributes.get("cleave.passthrough"), "data", ())]  # type: ignore[attr-defined]
        leading = len(g.inputs) - len(through)
        source: dict[SSAValue, Operation | None] = {}
        for i, (arg, name) in enumerate(zip(g.inputs, g.input_names())):
            source[arg] = (prev[i] if i < len(prev) else None) if i < leading else origin.get(name)
        for op in g.block.ops:
            if not isinstance(op, tgraph.ExpOp):
                continue
            sub = op.input.owner
            m = sub.rhs.owner if isinstance(sub, tgraph.SubOp) else None
            if m is None and isinstance(sub, tgraph.SubOp):
                m = source.get(sub.rhs)
            if not (isinstance(m, tgraph.ReduceOp) and m.kind.data == tgraph.ReduceKind.MAX):
                out.append(op)
        results = [v.owner if isinstance(v.owner, Operation) else source.get(v) for v in g.output_op.outputs]
        names = [n.data for n in getattr(g.attributes.get("cleave.output_names"), "data", ())]  # type: ignore[attr-defined]
        origin.update(zip(names, results))
        origin.update((n, source[a]) for a, n in zip(g.inputs, g.input_names()) if n not in origin)
        prev = results  # type: ignore[assignment]
    return out


def unshifted_exps(kernel: itgraph.KernelOp) -> list[tgraph.ExpOp]:
    """The exps of `kernel` that read raw values (not `x - max(x)`)."""
    return [op for op in kernel.walk() if isinstance(op, tgraph.ExpOp) and not _shifted_by_max(op)]


def normalizes_exp(graph: tgraph.GraphOp) -> bool:
    """Whether `graph` normalizes an exp's scale away (a softmax): its value is then independent of
    shifting the logits, and a kernel computing an unshifted exp of them is a numerical defect."""
    return any(
        isinstance(op, tgraph.ExpOp) and (_shifted_by_max(op) or stable_axis(op) is not None)
        for op in graph.block.ops
    )


def drop_unstable_candidates(module: ModuleOp) -> list[str]:
    """Remove the candidates (with their kernels) that compute an unshifted exp of a softmax's logits.

    A candidate whose normalization spans two kernels (a Split-K whose combine recomputes the row
    sum, a head-dim split whose combine exponentiates summed partial logits) has no tile-local max to
    shift by. A candidate is a chain of graphs (one graph, a split and its combine, or the pieces of
    a graph cut into kernels); one of its graphs is unstable when every kernel of it holds an exp
    that reads neither `x - max` of that kernel nor `x - m` with `m` a max an earlier graph of the
    chain computed (`chain_unshifted_exps`). Only candidates go, and only when a stable candidate of
    the same input graph is left (the input graph itself, or another); the names of the dropped
    graphs are returned.
    """
    ops = list(module.body.block.ops)
    graphs = {g.sym_name.data: g for g in ops if isinstance(g, tgraph.GraphOp)}
    kernels: dict[str, list[itgraph.KernelOp]] = {}
    for k in ops:
        if isinstance(k, itgraph.KernelOp):
            kernels.setdefault(tgraph.referenced_symbol(k, "cleave.schedule_of") or "", []).append(k)

    def unstable(unit: list[tgraph.GraphOp]) -> bool:
        raw = set(chain_unshifted_exps(unit))
        return any(
            any(op in raw for op in g.block.ops)
            and bool(kernels.get(g.sym_name.data))
            and all(unshifted_exps(k) for k in kernels[g.sym_name.data])
            for g in unit
        )

    dropped: set[str] = set()
    families: dict[str, list[list[tgraph.GraphOp]]] = {}
    for g in graphs.values():
        if not partition_kernels.chain_head(g):
            continue  # listed with the graph its chain starts at
        family = tgraph.referenced_symbol(g, "cleave.candidate_of") or g.sym_name.data
        families.setdefault(family, []).append(partition_kernels.chain(g, graphs) or [g])
    for family, units in families.items():
        root = graphs.get(family)
        if root is None or not normalizes_exp(root):
            continue
        bad = [u for u in units if u[0].sym_name.data != family and unstable(u)]
        good = [u for u in units if u not in bad and any(kernels.get(g.sym_name.data) for g in u)]
        if good:
            dropped.update(g.sym_name.data for u in bad for g in u)
    for x in ops:
        if (isinstance(x, tgraph.GraphOp) and x.sym_name.data in dropped) or (
            isinstance(x, itgraph.KernelOp) and tgraph.referenced_symbol(x, "cleave.schedule_of") in dropped
        ):
            x.detach()
            x.erase()
    return sorted(dropped)


@dataclass(frozen=True)
class DropUnstablePass(CleavePass):
    """`cleave-drop-unstable`: after `cleave-schedule`, remove candidates with an unshifted softmax exp."""

    name = "cleave-drop-unstable"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        dropped = drop_unstable_candidates(op)
        if dropped:
            print(f"cleave-drop-unstable: dropped {len(dropped)} graphs computing exp of unshifted logits across kernels", file=sys.stderr)
