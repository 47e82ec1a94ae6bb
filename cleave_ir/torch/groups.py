"""Projection groups: regions that project one input, compiled as one graph of several outputs.

A transformer layer's q, k and v projections (and any sibling linears of one activation) are regions of
their own under the cone rule (`partition.RULE`): the activation they read is used by several regions.
PyTorch runs them as separate GEMMs (three launches, three tails); `cleave compile` takes graphs of
several outputs, and `cleave-split-projections` gives those one Split-K grid over all the weights. A
group is such a graph: its members' graphs side by side, their shared inputs passed once. `optimize`
tries a group before its members and falls back to them where the group fails to compile or loses at
the gate, so grouping never keeps a member in PyTorch that would have passed on its own.

The rule (`GROUP_RULE`): two or more compiled regions, each of one projection of the same input (a linear,
mm, addmm or matmul whose first operand is that input: a matmul by a parameter, or by a graph input where
dynamo lifted the parameters, as in a model taken in pieces), whose graphs have one matmul and no boundary
views, and where every input of the group is computed before the first member's nodes (the group's call
goes there).
"""

from __future__ import annotations

from collections.abc import Sequence

from torch import fx
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr
from xdsl.ir import Block, Region as IrRegion, SSAValue

from cleave_ir.dialects import tgraph
from cleave_ir.torch.aten import SLICED_LINEAR, Input, op_name
from cleave_ir.torch.partition import PROJECTION_ARGS, Region, named_by_content

GROUP_RULE = (
    "regions that each project one input (one matmul, no views at their boundary) and read the same input "
    "are also tried as one graph of their outputs (before them; they stay as they are where the group fails or loses)"
)


def projected_input(region: Region) -> fx.Node | None:
    """The activation `region` projects, where it is a group member: a compiled region whose graph has one
    matmul, a linear, mm, addmm or matmul of a region input, and no boundary views or output reshaping
    beyond size-1 dims; else None."""
    if not region.worth or region.graph is None or region.members:
        return None
    if region.boundary is not None or region.output_like is not None or region.empty_rows is not None:
        return None
    if sum(isinstance(op, tgraph.MatmulOp) for op in region.graph.block.ops) != 1:
        return None
    if any(i.causal is not None or i.group != 1 for i in region.inputs):
        return None
    xs = {x for n in region.nodes if (x := _projected(n)) is not None}
    if len(xs) != 1:
        return None
    [x] = xs
    return x if x in region.tensor_inputs() else None


def _projected(node: fx.Node) -> fx.Node | None:
    """The activation a linear, mm, addmm or matmul node (or a chunked projection's piece) multiplies, else None."""
    if SLICED_LINEAR in node.meta:
        x = node.meta[SLICED_LINEAR][0]
        return x if isinstance(x, fx.Node) else None
    at, w = PROJECTION_ARGS.get(op_name(node), (None, None))
    if at is None or len(node.args) <= max(at, w) or not all(isinstance(node.args[i], fx.Node) for i in (at, w)):
        return None
    return node.args[at]


def projection_groups(regions: Sequence[Region], first_index: int) -> list[Region]:
    """The groups of `regions` (`GROUP_RULE`), numbered from `first_index`, in the order of their first member."""
    by_input: dict[fx.Node, list[Region]] = {}
    for r in regions:
        x = projected_input(r)
        if x is not None:
            by_input.setdefault(x, []).append(r)
    groups = []
    for x, members in by_input.items():
        if len(members) < 2 or not _inputs_before(members):
            continue
        groups.append(group_of(first_index + len(groups), members, x))
    return groups


def _inputs_before(members: Sequence[Region]) -> bool:
    """Whether every tensor the members read is computed before the first member's first node."""
    graph = members[0].nodes[0].graph
    order = {n: i for i, n in enumerate(graph.nodes)}
    first = min(order[n] for m in members for n in m.nodes)
    return all(order[x] < first for m in members for x in m.tensor_inputs())


def group_of(index: int, members: Sequence[Region], x: fx.Node) -> Region:
    """One region computing every member's output: their graphs side by side in one graph, inputs equal
    in every respect (the same node, passed the same way) passed once."""
    order = {n: i for i, n in enumerate(x.graph.nodes)}
    nodes = sorted({n for m in members for n in m.nodes}, key=order.__getitem__)
    group = Region(index, nodes, members=list(members))
    group.graph, group.inputs = merged_graph(members)
    group.worth = True
    names = ", ".join(str(m.index) for m in members)
    group.reason = f"regions {names} project {x.name} ({len(members)} outputs, one graph)"
    return group


def merged_graph(members: Sequence[Region]) -> tuple[tgraph.GraphOp, list[Input]]:
    """The members' graphs as one graph of their outputs (in member order), and its inputs."""
    inputs: list[Input] = []
    types: list[tgraph.TensorType] = []
    attrs: list[DictionaryAttr] = []
    where: list[list[int]] = []
    for m in members:
        assert m.graph is not None
        slots = []
        for i, slot in enumerate(m.inputs):
            j = next((k for k, s in enumerate(inputs) if s == slot), None)
            if j is None:
                j = len(inputs)
                inputs.append(slot)
                types.append(tgraph.tensor_type(m.graph.inputs[i]))
                attrs.append(m.graph.arg_attrs.data[i] if m.graph.arg_attrs is not None else DictionaryAttr({}))
            slots.append(j)
        where.append(slots)
    block = Block(arg_types=types)
    for j, arg in enumerate(block.args):
        arg.name_hint = f"in{j}"
    outputs: list[SSAValue] = []
    for m, slots in zip(members, where):
        assert m.graph is not None
        mapping: dict[SSAValue, SSAValue] = {m.graph.inputs[i]: block.args[j] for i, j in enumerate(slots)}
        for op in m.graph.block.ops:
            if isinstance(op, tgraph.OutputOp):
                outputs += [mapping[o] for o in op.outputs]
                break
            block.add_op(op.clone(value_mapper=mapping))
    block.add_op(tgraph.OutputOp(outputs))
    graph = tgraph.GraphOp(
        "group", types, [tgraph.tensor_type(o) for o in outputs], IrRegion(block),
        arg_attrs=ArrayAttr(attrs) if any(a.data for a in attrs) else None,
    )
    graph.verify()
    return named_by_content(graph), inputs
