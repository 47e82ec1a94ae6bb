"""`cleave-split-shared-inputs`: a graph input read in two roles around a matmul is read as two inputs.

The scheduler gives every value one tile per kernel. A graph input that both operands of a matmul read
(`x @ x^T`, a Gram matrix; `a @ a`; self-attention `softmax(x x^T) x`, whose values are its queries and
keys) would need two tiles of it in one kernel, [rows of the output block, K] on the left and [K, columns
of the output block] on the right; one that an operand reads and an op that computes no matmul operand
reads too (a residual `silu(x W) + x`, a gate `x * sigmoid(x W)`, an output `2 x` beside `x @ W`) needs
[rows, K] and [rows, columns of the block].
The schedule then fails with "two paths need different tiles", or only cuts the graph into a kernel per
matmul. Here the second role reads its own copy: a new graph input that is the same tensor (an identity
`#cleave.view` of the same input in `cleave.boundary`, so the emitted `run` passes the tensor the caller
gave twice, a view, not a copy), and the ops between that input and the right operand that the left
side shares are computed again for it. Reads that compute another matmul's operand keep sharing the
input (swiglu's `x @ w1` and `x @ w3`: one tile of x serves both). Exact: every element is computed by
the same ops from the same elements.

`cleave-pipeline` keeps the split only where the graph did not schedule otherwise, or the split fuses
more and is estimated faster, or it is estimated 2x faster with as many kernels (`pipeline._split_wins`;
where the shared tiles agree, as attention over keys and values that are one tensor, one load serves both): lit `passes/split_shared_inputs.mlir`, `tests/test_split_shared_inputs.py`.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, FunctionType, ModuleOp
from xdsl.ir import BlockArgument, Operation, SSAValue

from cleave_ir.dialects import tgraph
from cleave_ir.dialects.cleave import BoundaryAttr, JoinAttr, PartAttr, ViewAttr
from cleave_ir.passes.fold_structural import drop_dead
from cleave_ir.passes.options import CleavePass


def _upstream(v: SSAValue) -> set[SSAValue]:
    """`v` and every value it is computed from, within its graph."""
    out: set[SSAValue] = set()
    stack = [v]
    while stack:
        x = stack.pop()
        if x in out:
            continue
        out.add(x)
        if isinstance(x.owner, Operation):
            stack.extend(x.owner.operands)
    return out


def _boundary(graph: tgraph.GraphOp) -> tuple[list[ViewAttr | JoinAttr], list[PartAttr]]:
    """The graph's boundary entries; the identity where it has none."""
    b = graph.attributes.get("cleave.boundary")
    if isinstance(b, BoundaryAttr):
        return list(b.inputs.data), list(b.outputs.data)
    return [ViewAttr(i) for i in range(len(graph.block.args))], [PartAttr(j) for j in range(len(graph.output_op.outputs))]


def _operand_ops(block) -> set[Operation]:  # noqa: ANN001
    """The matmuls of `block` and every op computing one of their operands."""
    out: set[Operation] = set()
    for mm in [op for op in block.ops if isinstance(op, tgraph.MatmulOp)]:
        out.add(mm)
        out.update(v.owner for operand in mm.operands for v in _upstream(operand) if isinstance(v.owner, Operation))
    return out


def split_shared_inputs(graph: tgraph.GraphOp) -> bool:
    """Give the right operand of each matmul its own copy of the inputs both operands read, and the
    reads of an input an operand reads by ops that compute no matmul operand their own (see the module docstring), in
    place; True where the graph changed. Inputs promising a causal mask are never copied (kernels
    compute their tiles from indices, so they have no tile to share)."""
    inputs, outputs = _boundary(graph)
    names = graph.input_names()
    attrs = list(graph.arg_attrs.data) if graph.arg_attrs is not None else [DictionaryAttr({})] * len(names)
    causal = graph.causal_inputs()
    block = graph.block

    def copy_of(a: BlockArgument, suffix: str) -> BlockArgument:
        arg = block.insert_arg(a.type, len(block.args))
        arg.name_hint = next(n for k in range(len(names) + 1) if (n := f"{names[a.index]}_{suffix}{k or ''}") not in names)
        inputs.append(inputs[a.index])
        names.append(arg.name_hint)
        attrs.append(attrs[a.index])
        return arg

    changed = False
    for mm in [op for op in block.ops if isinstance(op, tgraph.MatmulOp)]:
        left, right = _upstream(mm.operands[0]), _upstream(mm.operands[1])
        shared = [v for v in block.args if v in left and v in right and v.index not in causal]
        if shared:
            copies: dict[SSAValue, SSAValue] = {a: copy_of(a, "r") for a in shared}
            # the right side's ops that read a shared input, directly or not, computed again from the copies
            for op in [op for op in block.ops if op.results and op.results[0] in right]:
                if not any(o in copies for o in op.operands):
                    continue
                clone = op.clone()
                for i, o in enumerate(op.operands):
                    if o in copies:
                        clone.operands[i] = copies[o]
                block.insert_op_before(clone, mm)
                for r, c in zip(op.results, clone.results):
                    c.name_hint = f"{r.name_hint}_r" if r.name_hint else None
                    copies[r] = c
            mm.operands[1] = copies[mm.operands[1]]
            changed = True
    # an operand's input read by an op that computes no matmul operand (`silu(x W) + x`, `x * sigmoid(x W)`,
    # an output `2 x`): its tile there is [rows, columns of the block], not [rows, K]. Reads that compute a
    # matmul operand (swiglu's x @ w3 beside x @ w1) keep sharing: their tiles agree or the rule above splits them.
    operands = _operand_ops(block)
    for a in [v for v in block.args if v.index not in causal and any(u.operation in operands for u in v.uses)]:
        late = [u for u in a.uses if u.operation not in operands]
        if late:
            copy = copy_of(a, "e")
            for u in late:
                u.operation.operands[u.index] = copy
            changed = True
    if not changed:
        return False
    drop_dead(graph)
    graph.function_type = FunctionType.from_lists([a.type for a in block.args], [v.type for v in graph.output_op.outputs])
    graph.arg_attrs = ArrayAttr(attrs) if any(a.data for a in attrs) else None
    graph.attributes["cleave.boundary"] = BoundaryAttr(inputs, outputs)
    return True


class SplitSharedInputsPass(CleavePass):
    """Each matmul's right operand reads its own copy of the graph inputs both its operands read, and the
    ops that compute no matmul operand their own copy of the inputs its operands read."""

    name = "cleave-split-shared-inputs"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for g in [g for g in op.body.block.ops if isinstance(g, tgraph.GraphOp)]:
            if split_shared_inputs(g):
                g.verify()
