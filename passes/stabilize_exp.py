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
`cleave-schedule` applies this to every kernel it builds (`schedule.build_kernel`), and
`cleave-drop-unstable` then removes the candidates whose softmax spans kernels with no shared max.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from cleave_ir.dialects import cleave
from cleave_ir.dialects.cleave import Stage
from cleave_ir.dialects import itgraph, tgraph
from cleave_ir.passes.homogeneity import is_invariant


def _shifted_by_max(exp: tgraph.ExpOp) -> bool:
    """Whether `exp` reads `x - max(x)` (the max over some axis of x, possibly of a partial)."""
    sub = exp.input.owner
    if not isinstance(sub, tgraph.SubOp):
        return False
    mx = sub.rhs.owner
    return isinstance(mx, tgraph.ReduceOp) and mx.kind.data == tgraph.ReduceKind.MAX


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


def stabilize_exps(root: Operation) -> int:
    """Shift every exp under `root` whose block normalizes its scale away; the number shifted."""
    n = 0
    for exp in [op for op in root.walk() if isinstance(op, tgraph.ExpOp)]:
        axis = stable_axis(exp)
        if axis is None:
            continue
        x = exp.input
        row_max = tgraph.ReduceOp(tgraph.ReduceKind.MAX, x, axis)
        row_max.result.name_hint = "row_max"
        shifted = tgraph.SubOp(x, row_max.result)
        block = exp.parent_block()
        assert block is not None
        block.insert_ops_before([row_max, shifted], exp)
        exp.operands[0] = shifted.result
        n += 1
    return n


def stabilize_kernel(kernel: itgraph.KernelOp) -> itgraph.KernelOp:
    """`kernel` with its exps stabilized (in place)."""
    stabilize_exps(kernel)
    return kernel


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
    shift by. Only candidates go, and only when a stable unit of the same input graph is left (the
    input graph itself, or another candidate); the names of the dropped graphs are returned.
    """
    ops = list(module.body.block.ops)
    graphs = {g.sym_name.data: g for g in ops if isinstance(g, tgraph.GraphOp)}
    kernels: dict[str, list[itgraph.KernelOp]] = {}
    for k in ops:
        if isinstance(k, itgraph.KernelOp):
            kernels.setdefault(tgraph.referenced_symbol(k, "cleave.schedule_of") or "", []).append(k)

    def unit(g: tgraph.GraphOp) -> list[str]:
        """The graph and its partner (split and combine go together)."""
        other = tgraph.referenced_symbol(g, "cleave.combine") or tgraph.referenced_symbol(g, "cleave.split")
        return [g.sym_name.data, *([other] if other in graphs else [])]

    def unstable(name: str) -> bool:
        ks = kernels.get(name, [])
        return bool(ks) and all(unshifted_exps(k) for k in ks)

    def cut(name: str) -> bool:
        """A piece of a graph that cleave-schedule cut into kernels: computed as the user wrote it."""
        g = graphs[name]
        return "cleave.next" in g.attributes or cleave.stage(g) == Stage.PART

    dropped: set[str] = set()
    families: dict[str, list[list[str]]] = {}
    for g in graphs.values():
        if tgraph.referenced_symbol(g, "cleave.split") is not None:
            continue  # listed with its split graph
        family = tgraph.referenced_symbol(g, "cleave.candidate_of") or g.sym_name.data
        families.setdefault(family, []).append(unit(g))
    for family, units in families.items():
        root = graphs.get(family)
        if root is None or not normalizes_exp(root):
            continue
        bad = [u for u in units if u[0] != family and not any(cut(n) for n in u) and any(unstable(n) for n in u)]
        good = [u for u in units if u not in bad and any(kernels.get(n) for n in u)]
        if good:
            dropped.update(n for u in bad for n in u)
    for x in ops:
        if (isinstance(x, tgraph.GraphOp) and x.sym_name.data in dropped) or (
            isinstance(x, itgraph.KernelOp) and tgraph.referenced_symbol(x, "cleave.schedule_of") in dropped
        ):
            x.detach()
            x.erase()
    return sorted(dropped)


@dataclass(frozen=True)
class DropUnstablePass(ModulePass):
    """`cleave-drop-unstable`: after `cleave-schedule`, remove candidates with an unshifted softmax exp."""

    name = "cleave-drop-unstable"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        dropped = drop_unstable_candidates(op)
        if dropped:
            print(f"cleave-drop-unstable: dropped {len(dropped)} graphs computing exp of unshifted logits across kernels", file=sys.stderr)
