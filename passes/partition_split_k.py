"""`cleave-partition-split-k`: cut a Split-K graph into a split graph and a combine graph (paper §4).

The cut is at the reductions over a split's parts dim ("combine" reductions). The split graph keeps
everything upstream of them and returns the partial tensors they read; the combine graph takes those
partials (and any original input used after the cut) and computes the original outputs. Everything
forward of a combine reduction is on the combine side (a stabilized graph rescales its partials by
the max over the parts there), even when a later combine reduction reads it. Each becomes
its own kernel; `cleave-run` and `run_split_k` run the pair in order.

Reduced partials (a chunk max, a chunk's row sum) of a narrower float type cross in f32: the split
graph casts them up, and the combine graph computes in f32 from them and casts its outputs back to
their declared types (a matmul in the combine reads its widened operands narrowed again). Partial
products of a matmul (P.V, a split-K GEMM's partial sums) keep their type, unless the combine does
more with them than sums, scalings and products (q k^T split over the head dim before a softmax), or
may scale them down (`_scaled_down`: a norm's rsqrt or a constant under 1 applied after the sum).

A weighted sum `E @ V` of non-negative weights `E` whose row sum `W` also crosses the cut (attention's
unnormalized P.V beside its chunk's sum of exps) crosses divided by `W`: a convex combination of V's
rows, bounded by max |V|, where `E @ V` itself grows with the chunk length (256 keys of values 300, or
2048 keys of values 32, overflow f16). The combine multiplies it back by `W` in f32.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, BFloat16Type, Float16Type, ModuleOp, StringAttr, SymbolRefAttr, f32
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.rewriter import Rewriter

from cleave_ir.dialects.cleave import Stage, StageAttr
from cleave_ir.dialects import tgraph
from cleave_ir.passes.options import CleavePass


def parts_dims(graph: tgraph.GraphOp) -> dict[SSAValue, frozenset[int]]:
    """For every value, the positions of its dims that index split parts."""
    parts: dict[SSAValue, frozenset[int]] = {a: frozenset() for a in graph.inputs}
    for op in graph.block.ops:
        if isinstance(op, tgraph.OutputOp):
            continue
        ins = [parts[o] for o in op.operands]
        if isinstance(op, tgraph.SplitOp):
            out = frozenset({0} | {p + 1 for p in ins[0]})
        elif isinstance(op, tgraph.MatmulOp):
            rank = tgraph.tensor_type(op.result).rank
            out = frozenset(p for s in ins for p in s if p < rank - 2)
        elif isinstance(op, tgraph.ReduceOp):
            out = ins[0] - {op.axis}
        elif isinstance(op, tgraph.ReshapeOp):
            src = [i for i, d in enumerate(tgraph.tensor_type(op.input).shape) if d != 1]
            dst = [i for i, d in enumerate(tgraph.tensor_type(op.result).shape) if d != 1]
            remap = dict(zip(src, dst))
            out = frozenset(remap[p] for p in ins[0] if p in remap)
        else:
            out = frozenset().union(*ins)
        parts[op.results[0]] = out
    return parts


def combine_ops(graph: tgraph.GraphOp) -> list[tgraph.ReduceOp]:
    """The reductions over a parts dim: where the split kernel ends."""
    parts = parts_dims(graph)
    return [
        op
        for op in graph.block.ops
        if isinstance(op, tgraph.ReduceOp) and op.axis in parts[op.input]
    ]


def partition(graph: tgraph.GraphOp) -> tuple[tgraph.GraphOp, tgraph.GraphOp] | None:
    """(split graph, combine graph) for a Split-K graph; None when it has no combine reduction."""
    cuts = combine_ops(graph)
    if not cuts:
        return None
    # everything forward of a combine reduction is the combine's (a rescale by the max over the
    # parts, say); the split kernel computes exactly what the rest needs from before the cut
    forward: set[Operation] = set()
    stack: list[Operation] = list(cuts)
    while stack:
        op = stack.pop()
        if op not in forward and not isinstance(op, tgraph.OutputOp):
            forward.add(op)
            stack.extend(u.operation for r in op.results for u in r.uses)
    needed: set[Operation] = set()
    seen: set[Operation] = set()
    stack = [o.owner for cut in cuts for o in cut.operands]  # type: ignore[misc]
    while stack:
        op = stack.pop()
        if isinstance(op, Operation) and op.parent is graph.block and op not in seen:
            seen.add(op)
            if op not in forward:
                needed.add(op)
            stack.extend(o.owner for o in op.operands)  # type: ignore[misc]
    upstream = [op for op in graph.block.ops if op in needed]
    downstream = {op for op in graph.block.ops if op not in needed and not isinstance(op, tgraph.OutputOp)}
    # values crossing the cut, in first-use order: partials (from upstream ops) and graph inputs
    crossing: list[SSAValue] = []
    for op in [*downstream_in_order(graph, downstream), graph.output_op]:
        for o in op.operands:
            if o not in crossing and (o.owner in upstream or o in graph.inputs):
                crossing.append(o)
    partials = [v for v in crossing if v not in graph.inputs]
    passthrough = [v for v in crossing if v in graph.inputs]
    name = graph.sym_name.data

    # split graph: the graph's inputs, the upstream ops, the partials as outputs
    split_block = Block(arg_types=[a.type for a in graph.inputs])
    mapping: dict[SSAValue, SSAValue] = {}
    for old, new in zip(graph.inputs, split_block.args):
        new.name_hint = old.name_hint
        mapping[old] = new
    weighted = weighted_sums(partials, upstream)
    for op in upstream:
        if op.results and op.results[0] in weighted:  # the weighted sum in f32, to be normalized
            x = tgraph.tensor_type(op.results[0])
            split_block.add_op(new := tgraph.MatmulOp(
                mapping[op.operands[0]], mapping[op.operands[1]], x.with_element_type(f32),
                transpose_b=op.transpose_b is not None,  # type: ignore[attr-defined]
            ))
            new.result.name_hint = op.results[0].name_hint
            mapping[op.results[0]] = new.result
        else:
            split_block.add_op(op.clone(value_mapper=mapping))
    stored_as: dict[SSAValue, SSAValue] = {}  # a partial -> its value in the split graph as stored
    for p in sorted(partials, key=lambda p: p in weighted):  # sums first: the weighted ones divide by them
        v = mapping[p]
        if (isinstance(p.owner, tgraph.ReduceOp) or _needs_absolute_precision(p, downstream) or _scaled_down(p, downstream)) \
                and _wide(tgraph.tensor_type(v)) != tgraph.tensor_type(v):
            widen = tgraph.CastOp(v, f32)
            split_block.add_op(widen)
            v = widen.result
        if p in weighted:
            v = _normalized(split_block, v, stored_as[weighted[p]], tgraph.tensor_type(p).element_type)
        stored_as[p] = v
    stored = [stored_as[p] for p in partials]
    split_block.add_op(tgraph.OutputOp(stored))
    split = tgraph.GraphOp(
        f"{name}_split",
        [tgraph.tensor_type(a) for a in graph.inputs],
        [tgraph.tensor_type(v) for v in stored],
        Region(split_block),
        arg_attrs=graph.arg_attrs,
    )

    # combine graph: partials, then the inputs still needed, to the original outputs
    combine_types = [*(tgraph.tensor_type(v) for v in stored), *(tgraph.tensor_type(v) for v in passthrough)]
    combine_block = Block(arg_types=combine_types)
    mapping = {}
    for i, (old, new) in enumerate(zip([*partials, *passthrough], combine_block.args)):
        new.name_hint = old.name_hint if old in passthrough else f"partial{i}"
        mapping[old] = new
    for x, w in weighted.items():  # back to the weighted sum, in f32
        widen = tgraph.CastOp(mapping[x], f32)
        combine_block.add_op(widen)
        combine_block.add_op(back := tgraph.MulOp(widen.result, mapping[w]))
        mapping[x] = back.result
    for op in downstream_in_order(graph, downstream):
        _add_widened(combine_block, op, mapping)
    outs = []
    for o in graph.output_op.outputs:
        v = mapping[o]
        if tgraph.tensor_type(v) != tgraph.tensor_type(o):  # the combine computes in f32, returns the declared type
            narrow = tgraph.CastOp(v, tgraph.tensor_type(o).element_type)
            combine_block.add_op(narrow)
            v = narrow.result
        outs.append(v)
    combine_block.add_op(tgraph.OutputOp(outs))
    combine = tgraph.GraphOp(
        f"{name}_combine",
        combine_types,
        list(graph.function_type.outputs.data),  # type: ignore[arg-type]
        Region(combine_block),
    )
    for g in (split, combine):
        for key in ("cleave.candidate_of", "cleave.note", "cleave.split_count"):
            if key in graph.attributes:
                g.attributes[key] = graph.attributes[key]
    split.attributes["cleave.stage"] = StageAttr(Stage.SPLIT)
    split.attributes["cleave.combine"] = SymbolRefAttr(combine.sym_name.data)
    combine.attributes["cleave.stage"] = StageAttr(Stage.COMBINE)
    combine.attributes["cleave.split"] = SymbolRefAttr(split.sym_name.data)
    combine.attributes["cleave.passthrough"] = ArrayAttr(
        StringAttr(v.name_hint or f"arg{graph.inputs.index(v)}") for v in passthrough
    )
    return split, combine


def weighted_sums(partials: list[SSAValue], upstream: list[Operation]) -> dict[SSAValue, SSAValue]:
    """Partials `E @ V` with non-negative weights `E` whose row sum `reduce sum E` (over the
    contracted dim) is a partial too, each mapped to that sum. Only a matmul used by no split op
    (its f32 form replaces it there)."""
    sums = {
        p.owner.input: p
        for p in partials
        if isinstance(p.owner, tgraph.ReduceOp) and p.owner.kind.data == tgraph.ReduceKind.SUM
        and p.owner.axis == tgraph.tensor_type(p.owner.input).rank - 1
    }
    inside = set(upstream)
    return {
        p: sums[p.owner.lhs]
        for p in partials
        if isinstance(p.owner, tgraph.MatmulOp) and p.owner.lhs in sums and _nonnegative(p.owner.lhs)
        and isinstance(tgraph.tensor_type(p).element_type, (Float16Type, BFloat16Type))
        and not any(u.operation in inside for u in p.uses)
    }


def _nonnegative(v: SSAValue) -> bool:
    """Whether every element of `v` is >= 0 by its ops' declared algebra (exp, a square, a select
    or product of such)."""
    op = v.owner
    if isinstance(op, (tgraph.SelectOp, tgraph.MulOp)):
        return all(_nonnegative(o) for o in op.operands[-2:])
    if isinstance(op, tgraph.CastOp):
        return _nonnegative(op.input)
    return isinstance(op, tgraph.ElementwiseOp) and op.semantics().algebra.nonnegative


def _normalized(block: Block, x: SSAValue, w: SSAValue, element_type) -> SSAValue:
    """`x / max(w, 1e-30)` cast to `element_type`: a weighted sum over its weights' sum (0 where the
    weights are all 0, as in a chunk past a dynamic length)."""
    block.add_op(safe := tgraph.ScalarOp(tgraph.ScalarKind.MAX, w, 1e-30))
    block.add_op(div := tgraph.DivOp(x, safe.result))
    block.add_op(narrow := tgraph.CastOp(div.result, element_type))
    return narrow.result


def _combine_ops(partial: SSAValue, downstream: set[Operation]) -> Iterator[Operation]:
    """The combine's ops that read `partial`, directly or through other combine ops."""
    stack, seen = [partial], set()
    while stack:
        for use in stack.pop().uses:
            op = use.operation
            if op in downstream and op not in seen:
                seen.add(op)
                yield op
                stack.extend(op.results)


def _needs_absolute_precision(partial: SSAValue, downstream: set[Operation]) -> bool:
    """Whether the combine does more with `partial` than ops that keep its relative precision (sums,
    scalings and products: `tgraph.keeps_relative_error`, declared on the ops). A product's partial sums in f16 are each off by
    |partial| * 2^-11; their sum then feeds e.g. `exp(s - max s)` (a split of attention's q k^T over
    the head dim), which turns that absolute error at logits of 1000 into a relative error of
    e^0.5. Such partials cross in f32 (measured on the H200: mla_decode's c2_s2 split at logits
    +-1000 was 5e-2 off in f16)."""
    return any(not tgraph.keeps_relative_error(op) for op in _combine_ops(partial, downstream))


def _shrinks(op: Operation) -> bool:
    """Whether `op` may make its first operand smaller: a scaling by less than 1, a product or a quotient."""
    if isinstance(op, (tgraph.MulOp, tgraph.DivOp)):
        return True
    if isinstance(op, tgraph.ScaleOp):
        return abs(op.factor.value.data) < 1
    if isinstance(op, tgraph.ScalarOp):
        kind, c = op.scalar_kind, abs(op.value)
        return kind == tgraph.ScalarKind.RDIV or (kind == tgraph.ScalarKind.MUL and c < 1) or (kind == tgraph.ScalarKind.DIV and c > 1)
    return False


def _scaled_down(partial: SSAValue, downstream: set[Operation]) -> bool:
    """Whether the combine may make `partial` smaller before it is an output (`_shrinks`). Such a partial
    can exceed fp16 where the output does not, so it crosses in f32: linear attention's
    `(phi(Q) phi(K)^T) V / 1024`, split over the keys with the scale moved to the combine, stored inf for
    83% of its elements with V at 1e3 (outputs under 820); RMSNorm's `(x @ W) * rsqrt(mean(x^2))` the same
    with x and W at 1e3 (`bench/range_sweep.py`, session 49). Sums alone keep a partial within a few
    times the output."""
    return any(_shrinks(op) for op in _combine_ops(partial, downstream))


def _wide(t: tgraph.TensorType) -> tgraph.TensorType:
    """f32 for a narrower float type: a reduced partial is stored so (a chunk max in f16 is off by up
    to |max| * 2^-11, which exp(m - M) in the combine turns into a relative error; a row sum of a
    chunk loses the digits the other chunks' sums add). Partial outputs of a matmul (P.V, a split-K
    product) keep their type: their relative precision is what the combine needs, and they are the
    large partials whose traffic f32 would double."""
    return t.with_element_type(f32) if isinstance(t.element_type, (Float16Type, BFloat16Type)) else t


def _add_widened(block: Block, op: Operation, mapping: dict[SSAValue, SSAValue]) -> None:
    """Append `op` to `block` over the mapped operands (in place of `op.clone`), computing in f32 when
    an operand is a widened (f32) partial: its other operands are widened too (exactly), except for a
    matmul, whose f32 operands are narrowed back to the op's own type (P in f16 for P.V, as the
    tensor cores read it)."""
    operands = [mapping.get(o, o) for o in op.operands]
    widened = [tgraph.tensor_type(n) != tgraph.tensor_type(o) for n, o in zip(operands, op.operands)]
    result_types = [r.type for r in op.results]
    if any(widened):
        keep = isinstance(op, tgraph.MatmulOp)
        for i, (o, w) in enumerate(zip(op.operands, widened)):
            t = tgraph.tensor_type(o)
            if keep == w and _wide(t) != t:  # narrow a widened matmul operand, widen another op's narrow one
                cast = tgraph.CastOp(operands[i], t.element_type if keep else f32)
                block.add_op(cast)
                operands[i] = cast.result
        if not keep:
            result_types = [_wide(tgraph.tensor_type(r)) for r in op.results]
    new = type(op).create(operands=operands, result_types=result_types, properties=dict(op.properties), attributes=dict(op.attributes))
    for old, r in zip(op.results, new.results):
        r.name_hint = old.name_hint
        mapping[old] = r
    block.add_op(new)


def downstream_in_order(graph: tgraph.GraphOp, downstream: set[Operation]) -> list[Operation]:
    return [op for op in graph.block.ops if op in downstream]


@dataclass(frozen=True)
class PartitionSplitKPass(CleavePass):
    """Replace every Split-K graph by its split graph and its combine graph."""

    name = "cleave-partition-split-k"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for graph in [g for g in op.body.block.ops if isinstance(g, tgraph.GraphOp)]:
            if graph.attributes.get("cleave.stage") is not None:
                continue  # already partitioned
            pair = partition(graph)
            if pair is None:
                continue
            Rewriter.replace_op(graph, list(pair), [])
