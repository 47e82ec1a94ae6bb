"""Directed rewrites for the search: move factors that do not vary along a matmul's contracted dim
past the matmul (the rescale after a matmul: a norm's row scale, a softmax's row sum).

The rule is justified by the ops' declared algebra, not by the op kinds: a binary op `g` linear in
one operand (`Algebra.linear_in`: additive and homogeneous in it, the other held fixed) is
`g(x, f) = x * g(1, f)` elementwise, so

- a chain of such ops over a matmul operand is its base times the product of the chain's factors,
  in any order (`(x * r) * w = (x * w) * r`, `(x / r) * w = (x * w) / r`);
- a factor `f` of size 1 along the contracted dim K is the same for every term of the matmul's sum,
  so it moves out of the sum: `sum_k g(x_k, f) b_k = g(sum_k x_k b_k, f)`.

A factor of the left operand `[.., M, K]` has shape `[.., M|1, 1]` and scales the product's rows;
one of a right operand `[.., K, N]` has shape `[.., 1, N|1]` and scales its columns; one of a
`transpose_b` right operand `[.., N, K]` has shape `[.., N|1, 1]`, so it scales the product's
columns once its two last dims are swapped, which is a reshape (one of them is 1: the non-1 dims
keep their order). Ops that are not linear in the chain operand (`add`, `sub` of a bias,
a select) end the chain: nothing below them moves.

Bottom-up enumeration reaches these forms only after building every term as deep as them (about
seven ops over two normalized operands for Qwen3's QK-norm scores), which a work budget of tens of
thousands of constructions does not cover; the rewrites give them directly, and the search checks
them like its own candidates (canonical duplicates, op-property moves, the equivalence checks).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from xdsl.ir import SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from cleave_ir.dialects import tgraph
from cleave_ir.shapes import Dim


class _Refused(Exception):
    """A rewrite that does not apply after all (its copy is dropped)."""


@dataclass(frozen=True)
class Link:
    """One op of a matmul operand's chain: `op` applied with the chain at operand `chain`."""

    op: tgraph.BinaryOp
    chain: int

    @property
    def factor(self) -> SSAValue:
        return self.op.operands[1 - self.chain]


def _is_one(d: Dim) -> bool:
    return d == 1


def _strip(rewriter: Rewriter, at: InsertPoint, value: SSAValue, axis: int, moved: list[Link]) -> SSAValue:
    """`value` without the factors that have size 1 along `axis` (the contracted dim), which are
    appended to `moved` (innermost first); new ops go before `at`.

    Through a binary op, a factor is dropped where the op is linear in its other operand, which has
    the contracted size (`x * r`, `x / r`); where both operands have it, each one the op is linear
    in is stripped in turn (`(x * r) * w`: both factors of a bilinear op come out). Any other op
    (`x + b`, `r / x`, a unary op, a reduction) keeps its factors."""
    op = value.owner
    if not isinstance(op, tgraph.BinaryOp):
        return value
    linear_in = op.semantics().algebra.linear_in
    linear = [i < len(linear_in) and linear_in[i] for i in (0, 1)]
    full = [not _is_one(tgraph.tensor_type(o).shape[axis]) for o in op.operands]
    if full == [True, False] or full == [False, True]:
        chain = full.index(True)
        if not linear[chain]:
            return value
        inner = _strip(rewriter, at, op.operands[chain], axis, moved)
        moved.append(Link(op, chain))
        return inner
    if full == [True, True]:
        operands = [_strip(rewriter, at, o, axis, moved) if linear[i] else o for i, o in enumerate(op.operands)]
        if operands == list(op.operands):
            return value
        new = type(op)(*operands)
        rewriter.insert_op(new, at)
        return new.results[0]
    return value


def _apply(rewriter: Rewriter, at: InsertPoint, link: Link, chain: SSAValue, factor: SSAValue) -> SSAValue:
    """`link`'s op over `chain` and `factor`, each at the operand it has in `link`."""
    operands = [factor, factor]
    operands[link.chain] = chain
    op = type(link.op)(*operands)
    rewriter.insert_op(op, at)
    return op.results[0]


def _columns(rewriter: Rewriter, at: InsertPoint, factor: SSAValue) -> SSAValue:
    """A `[.., N, 1]` factor of a `transpose_b` operand as the `[.., 1, N]` column factor of the product."""
    t = tgraph.tensor_type(factor)
    if _is_one(t.shape[-2]):
        return factor
    op = tgraph.ReshapeOp(factor, t.with_shape([*t.shape[:-2], t.shape[-1], t.shape[-2]]))
    rewriter.insert_op(op, at)
    return op.results[0]


def move_factors(matmul: tgraph.MatmulOp, sides: tuple[int, ...]) -> list[str]:
    """Rewrite `matmul` (in place) with the movable factors of its operands `sides` (0: lhs, 1: rhs)
    applied to its product instead; what moved (`mul:rows`, `div:columns`), empty where nothing
    did (then nothing changed)."""
    transpose_b = matmul.transpose_b is not None
    axes = (-1, -1 if transpose_b else -2)
    result_type = tgraph.tensor_type(matmul.result)
    rewriter = Rewriter()
    at = InsertPoint.before(matmul)
    operands = list(matmul.operands)
    moved: dict[int, list[Link]] = {}
    for s in sides:
        moved[s] = []
        operands[s] = _strip(rewriter, at, operands[s], axes[s], moved[s])
    factors = [link.factor for links in moved.values() for link in links]
    if not factors:
        return []
    if any(tgraph.tensor_type(f).element_type != result_type.element_type for f in factors):
        raise _Refused("a product of another element type than its factors")
    shape = tgraph.MatmulOp.infer_shape(
        tgraph.tensor_type(operands[0]).shape, tgraph.tensor_type(operands[1]).shape, transpose_b
    )
    product = tgraph.MatmulOp(operands[0], operands[1], result_type.with_shape(shape), transpose_b)
    rewriter.insert_op(product, at)
    value = product.results[0]
    for s, links in moved.items():
        for link in links:
            factor = _columns(rewriter, at, link.factor) if s == 1 and transpose_b else link.factor
            value = _apply(rewriter, at, link, value, factor)
    assert tgraph.tensor_type(value) == result_type, "a factor moved past a matmul changed its result type"
    matmul.result.replace_all_uses_with(value)
    rewriter.erase_op(matmul)
    return [f"{link.op.short_name()}:{'columns' if s else 'rows'}" for s, links in moved.items() for link in links]


def _erase_dead(graph: tgraph.GraphOp) -> None:
    for op in reversed(list(graph.block.ops)):
        if not isinstance(op, tgraph.OutputOp) and all(not r.uses for r in op.results):
            Rewriter.erase_op(op)


def rescaled_forms(graph: tgraph.GraphOp) -> Iterator[tuple[tgraph.GraphOp, str]]:
    """Copies of `graph` with factors moved past its matmuls, each with a note on what moved: for
    each matmul, those of its left operand, of its right operand and of both; then, with several
    matmuls, those of every matmul in order (a factor moved past one can move past the next one
    too). Each copy verifies; the same moves are given once."""
    count = sum(isinstance(op, tgraph.MatmulOp) for op in graph.block.ops)
    variants = [((i, sides),) for i in range(count) for sides in ((0,), (1,), (0, 1))]
    if count > 1:
        variants.append(tuple((i, (0, 1)) for i in range(count)))
    done: set[tuple[tuple[int, str], ...]] = set()
    for variant in variants:
        copy = graph.clone()
        moves: list[tuple[int, str]] = []
        try:
            for i, sides in variant:
                matmul = [op for op in copy.block.ops if isinstance(op, tgraph.MatmulOp)][i]
                moves += [(i, m) for m in move_factors(matmul, sides)]
        except _Refused:
            continue
        if moves and tuple(moves) not in done:  # (the factors of one side only, asked for both)
            done.add(tuple(moves))
            _erase_dead(copy)
            copy.verify()
            yield copy, _note([m for _, m in moves])


def _note(moves: list[str]) -> str:
    """`mul moved after matmul (rows, columns)` for the moves `mul:rows`, `mul:columns`."""
    sides: dict[str, list[str]] = {}
    for m in moves:
        kind, side = m.split(":")
        if side not in sides.setdefault(kind, []):
            sides[kind].append(side)
    return ", ".join(f"{kind} moved after matmul ({', '.join(s)})" for kind, s in sides.items())
