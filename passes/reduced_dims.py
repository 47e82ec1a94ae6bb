"""Eventually-reduced dims, inferred by data-dependency analysis (paper §4, automated).

An input dim is eventually-reduced when some output element depends on every index of it. For
every value we track, per (input, dim), the positions of the value's own dims that still index
that input dim; a reduction over such a position removes it, and when none is left (after at least
one reduction) each element depends on all indices of the input dim. A split turns one position
into two (the parts dim and the piece dim), so only reducing both covers the whole dim.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import SSAValue

from cleave_ir.dialects import tgraph

# (input index, dim) -> positions in the value's shape that index it; empty = fully reduced
Deps = dict[tuple[int, int], frozenset[int]]


def _merge(into: Deps, other: Deps) -> None:
    for key, pos in other.items():
        if key not in into:
            into[key] = pos
        elif not into[key] or not pos:
            into[key] = frozenset()  # one path already depends on every index
        else:
            into[key] = into[key] | pos


def _broadcast_positions(deps: Deps, rank: int, out_rank: int) -> Deps:
    """Right-align a value of `rank` inside a result of `out_rank` (numpy broadcasting)."""
    shift = out_rank - rank
    return {k: frozenset(p + shift for p in pos) for k, pos in deps.items()}


def analyse(graph: tgraph.GraphOp) -> dict[SSAValue, Deps]:
    """Dependency map of every value of `graph`."""
    deps: dict[SSAValue, Deps] = {}
    for i, arg in enumerate(graph.inputs):
        shape = tgraph.tensor_type(arg).shape
        deps[arg] = {(i, d): frozenset({d}) for d, size in enumerate(shape) if size != 1}
    for op in graph.block.ops:
        if isinstance(op, tgraph.OutputOp):
            continue
        out_rank = tgraph.tensor_type(op.results[0]).rank
        ins = [deps[o] for o in op.operands]
        result: Deps = {}
        if isinstance(op, tgraph.MatmulOp):
            a, b = ins
            ra, rb = tgraph.tensor_type(op.lhs).rank, tgraph.tensor_type(op.rhs).rank
            b_contract = rb - 1 if op.transpose_b is not None else rb - 2
            b_free = rb - 2 if op.transpose_b is not None else rb - 1
            a_contract, a_free = ra - 1, ra - 2
            b_contract = rb - 1 if op.transpose_b is not None else rb - 2
            b_free = rb - 2 if op.transpose_b is not None else rb - 1

            def place(pos: frozenset[int], rank: int, contract: int, free: int, free_out: int):
                # the contracting position disappears; batch dims are right-aligned
                return frozenset(
                    free_out if p == free else p + out_rank - rank for p in pos if p != contract
                )

            la = {k: place(pos, ra, a_contract, a_free, out_rank - 2) for k, pos in a.items()}
            lb = {k: place(pos, rb, b_contract, b_free, out_rank - 1) for k, pos in b.items()}
            _merge(result, la)
            _merge(result, lb)
        elif isinstance(op, tgraph.ReduceOp):
            result = {k: pos - {op.axis} for k, pos in ins[0].items()}
        elif isinstance(op, tgraph.SplitOp):
            ax = op.axis
            for k, pos in ins[0].items():
                new = {p + 1 for p in pos}
                if ax in pos:
                    new.add(0)
                result[k] = frozenset(new)
        elif isinstance(op, tgraph.ReshapeOp):
            src = tgraph.tensor_type(op.input).shape
            dst = tgraph.tensor_type(op.result).shape
            src_pos = [i for i, d in enumerate(src) if d != 1]
            dst_pos = [i for i, d in enumerate(dst) if d != 1]
            remap = dict(zip(src_pos, dst_pos))
            result = {k: frozenset(remap[p] for p in pos if p in remap) for k, pos in ins[0].items()}
        else:  # elementwise: unary, scale, binary (numpy broadcasting)
            for operand, d in zip(op.operands, ins):
                _merge(result, _broadcast_positions(d, tgraph.tensor_type(operand).rank, out_rank))
        deps[op.results[0]] = result
    return deps


def eventually_reduced(graph: tgraph.GraphOp) -> list[frozenset[int]]:
    """For each input, the dims that are eventually-reduced (analysis, then `reduced` overrides)."""
    deps = analyse(graph)
    found: list[set[int]] = [set() for _ in graph.inputs]
    for out in graph.output_op.outputs:
        for (i, d), pos in deps[out].items():
            if not pos:
                found[i].add(d)
    for i in range(len(found)):
        found[i] |= set(graph.input_annotation(i, "reduced"))
    return [frozenset(s) for s in found]


def describe(graph: tgraph.GraphOp, reduced: Sequence[frozenset[int]] | None = None) -> str:
    """`%q: dims 3; %k: dims 2, 3; ...` for messages and lit tests."""
    reduced = eventually_reduced(graph) if reduced is None else reduced
    parts = []
    for name, dims in zip(graph.input_names(), reduced):
        parts.append(f"%{name}: " + (", ".join(map(str, sorted(dims))) if dims else "none"))
    return "; ".join(parts)
