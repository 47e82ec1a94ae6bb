"""Element-wise cones of one input, set aside while `cleave-superoptimize` searches.

A cone is the element-wise ops computed from one graph input alone (with constants), of which one
value, its root, is used by the rest of the graph, the input by nothing else: a decomposed activation
such as GPT-2's gelu_new, `0.5 * h * (1 + tanh(0.79788 * (h + 0.044715 * h^3)))`, nine ops before the
projection that reads it. The search's work grows with the ops it may rearrange: with that cone in,
GPT-2's MLP output region (12 ops) ran into the 600 s time limit on one core before its work budget.
A cone's ops commute with nothing the search could move past them except the scale and product at
its top, so the search runs on the graph with the cone's root as the input (`outline`), and every
candidate gets the cone back in front (`inline`): each candidate is the searched one composed with
the same cone, and is checked against the whole graph like any other.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import Rewriter

from cleave_ir.dialects import tgraph

MIN_OPS = 4  # fewer: nothing to gain (a scale of attention's Q stays in the search, it may move)


@dataclass(frozen=True)
class Cone:
    """The ops (in graph order) of a cone over input `index`, whose value `root` the rest of the graph reads."""

    index: int
    ops: tuple[Operation, ...]
    root: SSAValue


def find_cone(graph: tgraph.GraphOp) -> Cone | None:
    """The largest cone of MIN_OPS or more element-wise ops of one input of `graph`, or None."""
    best: Cone | None = None
    for index, arg in enumerate(graph.inputs):
        members: list[Operation] = []
        inside: set[SSAValue] = {arg}
        for op in graph.block.ops:
            if isinstance(op, tgraph.ElementwiseOp) and op.operands and all(v in inside for v in op.operands):
                members.append(op)
                inside.update(op.results)
        member_set = set(members)
        escaping = {v for op in members for v in op.results if any(u.operation not in member_set for u in v.uses)}
        if len(members) < MIN_OPS or len(escaping) != 1 or any(u.operation not in member_set for u in arg.uses):
            continue
        (root,) = escaping
        if tgraph.tensor_type(root) != tgraph.tensor_type(arg):  # a cast: the input would change type
            continue
        # only the ops the root needs (an op whose result nothing reads is not part of it)
        needed: set[Operation] = set()
        work = [root.owner]
        while work:
            op = work.pop()
            if isinstance(op, Operation) and op in member_set and op not in needed:
                needed.add(op)
                work.extend(v.owner for v in op.operands)
        if needed != member_set:
            continue
        if best is None or len(members) > len(best.ops):
            best = Cone(index, tuple(members), root)
    return best


def outline(graph: tgraph.GraphOp, cone: Cone) -> tgraph.GraphOp:
    """A copy of `graph` whose input `cone.index` stands for the cone's root (the cone's ops removed)."""
    out = graph.clone()
    position = {op: i for i, op in enumerate(graph.block.ops)}
    ops = list(out.block.ops)
    root = ops[position[cone.root.owner]].results[cone.root.index]  # type: ignore[index, union-attr]
    root.replace_all_uses_with(out.inputs[cone.index])
    for op in reversed([ops[position[o]] for o in cone.ops]):
        Rewriter.erase_op(op)
    return out


def inline(candidate: tgraph.GraphOp, cone: Cone) -> tgraph.GraphOp:
    """`candidate` (a graph over `outline`'s inputs) with the cone computed first from its input, in place."""
    arg = candidate.inputs[cone.index]
    readers = [(u.operation, u.index) for u in arg.uses]
    source = cone.ops[0].parent_block()
    assert source is not None
    mapping: dict[SSAValue, SSAValue] = {source.args[cone.index]: arg}
    first = candidate.block.first_op
    for op in cone.ops:
        new = op.clone(value_mapper=mapping)
        candidate.block.insert_op_before(new, first)  # type: ignore[arg-type]
    for op, i in readers:
        op.operands[i] = mapping[cone.root]
    return candidate
