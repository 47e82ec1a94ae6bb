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

A cone of fewer ops is set aside too when its values leave the range the search and its checks sample
in (`out_of_range`): an additive attention mask written `(mask - 1) * 1e4` is -1e4 to 1e4 on standard
normal masks, whose exps overflow float64 in every fingerprint and every trial. Searched through, the
masked decode attention of `bench/probes/masked_decode_l18.mlir` found no candidate in 278 s (38029
classes, 3186 candidates refused: no trial had finite outputs). Such a cone is checked at its root
(`equivalence.Checker`): two graphs that compute the same cone of the same input are equal when the
rest of them is, for any value of its root, so the checks draw the root, not the mask.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

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


EXP_RANGE = math.log(float(np.finfo(np.float64).max))
"""The largest argument float64's exp takes (about 709.8)."""


def _cone_of(graph: tgraph.GraphOp, index: int) -> Cone | None:
    """The cone over input `index` (one or more ops), or None: the input is read outside it, more than
    one of its values is, or it computes a value nothing reads. An input that promises a causal mask
    (`cleave.causal`) has none: the schedule and the checks read that input as the mask itself."""
    arg = graph.inputs[index]
    if index in graph.causal_inputs():
        return None
    members: list[Operation] = []
    inside: set[SSAValue] = {arg}
    for op in graph.block.ops:
        if isinstance(op, tgraph.ElementwiseOp) and op.operands and all(v in inside for v in op.operands):
            members.append(op)
            inside.update(op.results)
    member_set = set(members)
    escaping = {v for op in members for v in op.results if any(u.operation not in member_set for u in v.uses)}
    if not members or len(escaping) != 1 or any(u.operation not in member_set for u in arg.uses):
        return None
    (root,) = escaping
    if tgraph.tensor_type(root) != tgraph.tensor_type(arg):  # a cast: the input would change type
        return None
    # only the ops the root needs (an op whose result nothing reads is not part of it)
    needed: set[Operation] = set()
    work = [root.owner]
    while work:
        op = work.pop()
        if isinstance(op, Operation) and op in member_set and op not in needed:
            needed.add(op)
            work.extend(v.owner for v in op.operands)
    if needed != member_set:
        return None
    return Cone(index, tuple(members), root)


def out_of_range(cone: Cone, samples: int = 256) -> bool:
    """Whether the cone's root on standard normal inputs (fixed seed) reaches past `EXP_RANGE`."""
    x = np.random.default_rng(0).standard_normal(samples)
    values: dict[SSAValue, np.ndarray] = {cone.ops[0].parent_block().args[cone.index]: x}  # type: ignore[union-attr]
    with np.errstate(all="ignore"):
        for op in cone.ops:
            assert isinstance(op, tgraph.ElementwiseOp)
            values[op.results[0]] = np.asarray(op.semantics().numpy(*(values[v] for v in op.operands)), dtype=np.float64)
    root = values[cone.root]
    return not bool(np.all(np.isfinite(root))) or float(np.max(np.abs(root))) > EXP_RANGE


def _cones(graph: tgraph.GraphOp) -> list[tuple[bool, Cone]]:
    """Every input's cone, each with whether it is `out_of_range`."""
    cones = [c for i in range(len(graph.inputs)) if (c := _cone_of(graph, i)) is not None]
    return [(out_of_range(c), c) for c in cones]


def find_cone(graph: tgraph.GraphOp) -> Cone | None:
    """The cone the search sets aside: of MIN_OPS or more element-wise ops of one input, or of any
    size when it is `out_of_range`; such a cone first, then the largest. None when there is none."""
    kept = [(far, len(c.ops), c) for far, c in _cones(graph) if far or len(c.ops) >= MIN_OPS]
    return max(kept, key=lambda r: r[:2])[2] if kept else None


def range_cone(graph: tgraph.GraphOp) -> Cone | None:
    """A cone of `graph` that is `out_of_range` (the largest), or None."""
    far = [c for out, c in _cones(graph) if out]
    return max(far, key=lambda c: len(c.ops)) if far else None


def range_inputs(graph: tgraph.GraphOp) -> set[int]:
    """The inputs of `graph` whose cone is `out_of_range`: the GPU checks draw them as 0/1 masks
    (`runtime.random_inputs`), on which a `(mask - 1) * 1e4` fill is 0 or -1e4 as the model meant."""
    return {c.index for out, c in _cones(graph) if out}


def _signature(cone: Cone) -> tuple:
    """The cone's ops by name, properties and operands (the input, or an earlier op's result)."""
    arg = cone.ops[0].parent_block().args[cone.index]  # type: ignore[union-attr]
    at = {arg: -1} | {op.results[0]: i for i, op in enumerate(cone.ops)}
    return (
        tuple((op.name, tuple(sorted((k, str(v)) for k, v in op.properties.items())), tuple(at[v] for v in op.operands)) for op in cone.ops),
        at[cone.root],
    )


def same_cone(graph: tgraph.GraphOp, cone: Cone) -> Cone | None:
    """The cone of `graph` over the input `cone` reads that computes what `cone` does, or None."""
    mine = _cone_of(graph, cone.index) if cone.index < len(graph.inputs) else None
    return mine if mine is not None and _signature(mine) == _signature(cone) else None


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
