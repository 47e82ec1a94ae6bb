"""`cleave-superoptimize`: find graphs equivalent to the input by bottom-up enumeration (paper §4).

Method (ARCHITECTURE.md's recommendation, classic enumerative synthesis with observational
equivalence):
- the symbolized graph is instantiated at small sizes (distinct values per symbol, multiples of 6
  for eventually-reduced dims so that split counts 2 and 3 divide them) and run on random float64
  inputs;
- terms (tensors) are built from the inputs by applying one op at a time to existing classes; a term
  whose shape and values (rounded to ~1e-7 relative) match an existing class joins it as another
  construction, so every sub-result is computed once and no graph is enumerated once per
  permutation of its ops;
- pruning before evaluation: symbolic shape constraints (the verifiers), the eventually-reduced rule
  (split and reduce only over dims whose symbols come from eventually-reduced input dims or split
  counts), and an abstract-expression bound: the multiset of op kinds and of input leaves in a term's
  tree expansion must fit inside the output's (plus `max-splits` splits, the reductions over split
  counts and one reshape), since a sub-expression of the output cannot use more of them (algebraic
  identities used by the targets - moving a division or scaling across a matmul, reducing before a
  matmul, Split-K - all preserve these multisets). Ops whose form is their operand's (scale, `x - c`,
  cast: "forgetful") are bounded otherwise: no more of each along one path than in the input graph,
  `x + c` and `max(x, c)` only on operands of the form they have there, none over a select unless
  the input graph has it there; and terms whose form is a bare constant (x / x) are not built;
- element-wise ops compute only tensors of shapes the input graph has, or of split forms (a split
  count in the shape, or the rank a combine leaves): a weight raised to meet split tensors is not
  a place for row vectors to broadcast into (`Enumerator._elementwise_at`); a `[.., m, 1] @ [.., 1, n]`
  matmul is left to the broadcasting mul that computes it (unless the input graph has one);
- `select(m, a, b)` is enumerated like the binary ops: (condition, picked) pairs are matched against
  the selects of the output's form before a third operand is tried. Its algebra (`condition`) says
  that an elementwise f commutes with it only on both sides and that no reduction does: a candidate
  applying an op to other sides of a select than the input graph, or a select after a reduction, is
  refused whatever the tests say (the -1e4 fill of a causal mask scaled by 0.09 still underflows exp);
- values are computed on three input sets at once (normal, normal shifted by -1.5, integer ties;
  select conditions: 0/1, causal and integer masks, no row all zero):
  a class holds terms equal on all three, so a term that matches the output on one sample only
  (max moved past `square` on mostly-positive inputs) never becomes a candidate;
- the search stops after `budget` constructions considered (explored + pruned), never by the clock,
  so the same input gives the same candidates on any machine; `time_limit` is a safety net that warns;
- every construction of the output's class is a candidate, minus canonical duplicates, split forms
  that recompute a whole matmul in the combine, and moves of an elementwise op (opaque ones
  included: gelu, `tgraph.scalar`, cast; binary ones per operand) across a reduction, either way,
  that the op's declared `Algebra` does not justify (see `_commutes`); the rest is confirmed by
  passes/equivalence.py (six input distributions at three more instantiations, float64, rtol 1e-9);
- besides the enumeration's candidates, the rescale-after-matmul forms of passes/matmul_factors.py
  (a factor that does not vary along a matmul's contracted dim moved past it, by `linear_in`: a
  norm's row scale, a softmax's row sum, under `transpose_b` as a column scale) are candidates, checked
  alike: bottom-up, they come only after every term as deep as them (Qwen3's QK-norm scores: the
  enumeration alone finds none at a budget of 60,000);
- `max-ops` bounds the classes of a construction's DAG; it is raised to what the graph's own forms
  need (`op_limit`: its ops + 1, and for terms of split forms the splits, reshapes and combines
  too), so a large graph is not cut off, and the work budget still bounds the cost;
  a class keeps the lowest op counts over its constructions and passes them on to the classes
  built over it (`_propagate`).
"""

from __future__ import annotations

import hashlib
import sys
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import sympy
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr, SymbolRefAttr
from xdsl.ir import BlockArgument, SSAValue
from xdsl.utils.exceptions import VerifyException

from cleave_ir.builder import GraphBuilder
from cleave_ir.diagnostics import CleaveError
from cleave_ir.dialects import tgraph
from cleave_ir.dialects.semantics import Monotone, Reduction
from cleave_ir.interpreter import run_graph
from cleave_ir.passes import abstract_expr
from cleave_ir.passes.elementwise_cones import find_cone, inline, outline
from cleave_ir.passes.equivalence import Checker, fingerprint_inputs, output_error
from cleave_ir.passes.matmul_factors import rescaled_forms
from cleave_ir.passes.options import CleavePass
from cleave_ir.passes.reduced_dims import eventually_reduced
from cleave_ir.passes.symbolize import symbolize
from cleave_ir.shapes import Dim, evaluate_shape, symbol

SPLIT = symbol("s")
LEADING_ONE = ("leading-one",)  # reshape attribute: add a leading size-1 dim
DEFAULT_BUDGET = 1_500_000  # constructions considered (explored + pruned); ~25 s on one core
# op tables derived from the ops' semantics (dialects/semantics.py), keyed by short name
_UNARY = {c.short_name(): c.SEMANTICS for c in tgraph.UNARY_OPS if not c.get_irdl_definition().properties}
_BINARY = {c.short_name(): c.SEMANTICS for c in tgraph.BINARY_OPS}
_UNARY_FN = {k: sem.numpy for k, sem in _UNARY.items()}
_BINARY_FN = {k: sem.numpy for k, sem in _BINARY.items()}
_COMMUTATIVE = {k for k, sem in _BINARY.items() if sem.algebra.commutative}
# ops that pick one of their operands per element by a condition operand (select)
_SELECT_OPS = {
    c.short_name(): c
    for c in tgraph.ELEMENTWISE_OPS
    if (sem := c.__dict__.get("SEMANTICS")) is not None and sem.algebra.condition is not None
}
_SELECT = {k: c.SEMANTICS for k, c in _SELECT_OPS.items()}
_REDUCE_KINDS = {f"reduce_{k.value}": r for k, r in tgraph.ReduceOp.REDUCTIONS.items()}
OPAQUE = "opaque"
"""Node kind of any other elementwise op of the input graph (gelu, scalar, cast): attr is
`(op name, properties, a cast's target element type or None)`; evaluated, shaped and built from its semantics."""


def op_semantics(node_kind: str, attr: object = None):
    """The Semantics record of an elementwise construction (None for structural kinds)."""
    if node_kind in _UNARY:
        return _UNARY[node_kind]
    if node_kind in _BINARY:
        return _BINARY[node_kind]
    if node_kind in _SELECT:
        return _SELECT[node_kind]
    if node_kind == "scale":
        return tgraph.scalar_semantics(tgraph.ScalarKind.MUL, float(attr))  # type: ignore[arg-type]
    if node_kind == OPAQUE:
        name, props, _ = attr  # type: ignore[misc]
        return tgraph.elementwise_semantics(name, dict(props))
    return None


def _opaque_attr(op: object) -> tuple | None:
    """The OPAQUE node attribute of `op`, or None where `op` has its own node kind."""
    if not isinstance(op, tgraph.ElementwiseOp) or isinstance(op, tgraph.ScaleOp):
        return None
    if op.short_name() in _UNARY or op.short_name() in _BINARY or op.short_name() in _SELECT:
        return None
    target = tgraph.tensor_type(op.results[0]).element_type if isinstance(op, tgraph.CastOp) else None
    return (op.name, tuple(sorted(op.properties.items())), target)


@dataclass(frozen=True)
class Node:
    """One construction: an op kind, its child classes and its attributes."""

    kind: str  # input | matmul | matmul_t | <unary> | <binary> | select | scale | reduce_sum | reduce_max | split | reshape
    args: tuple[int, ...]
    attr: object = None  # input index, dim, factor, or target shape


@dataclass
class EClass:
    id: int
    shape: tuple[Dim, ...]
    value: np.ndarray
    nodes: list[Node]
    counts: int  # op kinds and inputs of the first construction's tree expansion (_Packed)
    dag: frozenset[int]  # classes (non-input) of the first construction's DAG
    form: tuple  # abstract expression of the first construction
    round: int
    best: int = 0  # index of the construction with the smallest DAG (used for extraction)
    elt: str = ""  # element type (a cast makes a class of its own, equal in float64)
    path: tuple[int, ...] = ()  # most forgetful ops of each kind along one path (see _path_limits)


@dataclass
class SearchStats:
    explored: int = 0
    pruned: int = 0
    classes: int = 0
    candidates: int = 0
    seconds: float = 0.0
    stopped_by_budget: bool = False
    stopped_by_time: bool = False
    rejected: int = 0  # candidates the equivalence check refused
    duplicates: int = 0  # candidates identical to an earlier one (or the input) after canonicalization
    unjustified: int = 0  # candidates that need an op property the op lacks (see unjustified_nesting)
    cone_ops: int = 0  # element-wise ops of one input set aside during the search (`elementwise_cones`)

    @property
    def work(self) -> int:
        """Constructions considered: the unit of the search budget (independent of machine load)."""
        return self.explored + self.pruned

    def line(self) -> str:
        stop = " (work budget reached: candidates may be incomplete)" if self.stopped_by_budget else ""
        if self.stopped_by_time:
            stop = " (time limit reached: result depends on machine speed and may be partial)"
        return (
            f"explored {self.explored}, pruned {self.pruned}, classes {self.classes}, "
            f"candidates {self.candidates}, rejected {self.rejected} (tests) {self.unjustified} (op properties), "
            f"duplicates {self.duplicates}, {self.seconds:.1f} s{stop}"
            + (f"; a cone of {self.cone_ops} element-wise ops of one input set aside" if self.cone_ops else "")
        )


@dataclass
class Candidate:
    graph: tgraph.GraphOp
    note: str


def _kind(op: object) -> str:
    if isinstance(op, tgraph.MatmulOp):
        return "matmul_t" if op.transpose_b is not None else "matmul"
    if isinstance(op, tgraph.ReduceOp):
        return f"reduce_{op.kind.data.value}"
    if _opaque_attr(op) is not None:
        return op.name  # type: ignore[attr-defined]
    return op.name.split(".")[1]  # type: ignore[attr-defined]


def _agrees_on_samples(target: np.ndarray, value: np.ndarray, rtol: float = 1e-9) -> bool:
    """`value` matches `target` on every fingerprint sample (axis 0) where the target is defined."""
    for want, got in zip(target, value):
        err = output_error(want, got)
        if err is not None and not err < rtol:
            return False
    return True


def _tree_counts(graph: tgraph.GraphOp) -> tuple[Counter, Counter, set[float]]:
    """Op kinds and input leaves of the output's tree expansion; the scale constants used."""
    ops: dict[SSAValue, Counter] = {}
    leaves: dict[SSAValue, Counter] = {}
    for i, a in enumerate(graph.inputs):
        ops[a], leaves[a] = Counter(), Counter({i: 1})
    factors: set[float] = set()
    for op in graph.block.ops:
        if isinstance(op, tgraph.OutputOp):
            continue
        c, l = Counter({_kind(op): 1}), Counter()
        for o in op.operands:
            c += ops[o]
            l += leaves[o]
        if isinstance(op, tgraph.ScaleOp):
            factors.add(op.value)
        ops[op.results[0]], leaves[op.results[0]] = c, l
    total_ops, total_leaves = Counter(), Counter()
    for o in graph.output_op.outputs:
        total_ops += ops[o]
        total_leaves += leaves[o]
    return total_ops, total_leaves, factors


def small_instantiations(
    graph: tgraph.GraphOp, reducible: set[sympy.Symbol], count: int = 3
) -> list[dict[str, int]]:
    """Small distinct sizes for the graph's symbols; split counts 2 then 3.

    Reducible symbols (candidates for a split) get multiples of 6 so that both counts divide them.
    """
    syms = sorted(
        {s for a in graph.inputs for d in tgraph.tensor_type(a).shape for s in d.free_symbols},
        key=lambda s: s.name,
    )
    plain = [2, 3, 4, 5, 7]
    red = [6, 12, 18, 24]
    out: list[dict[str, int]] = []
    for k in range(count):
        b: dict[str, int] = {"s": 2 if k % 2 == 0 else 3}
        pi = ri = k
        for s in syms:
            if s in reducible:
                b[s.name] = red[ri % len(red)]
                ri += 1
            else:
                b[s.name] = plain[pi % len(plain)]
                pi += 1
        out.append(b)
    return out


def _form(kind: str, children: Sequence[abstract_expr.Form], size: Dim | None = None, leaf: int = 0, attr: object = None) -> abstract_expr.Form:
    """Abstract expression of a construction (see abstract_expr), from the op's semantics."""
    ax = abstract_expr
    if kind == "input":
        return ax.leaf(leaf)
    if kind in ("matmul", "matmul_t"):
        return ax.total(ax.mul(children[0], children[1]), size)  # type: ignore[arg-type]
    if kind in _REDUCE_KINDS:
        return _REDUCE_KINDS[kind].abstract(ax, children[0], size)
    sem = op_semantics(kind, attr)
    if sem is not None:
        if sem.abstract is None:
            return ax.fn(kind if kind != OPAQUE else attr[0], children[0]) if len(children) == 1 else ax.add(*children)  # type: ignore[index]
        return sem.abstract(ax, *children)
    return children[0]  # split, reshape


def _node_kind(op: object) -> str:
    """The Node kind of `op` (OPAQUE for the elementwise ops without a kind of their own)."""
    return OPAQUE if _opaque_attr(op) is not None else _kind(op)


def _node_attr(op: object) -> object:
    if isinstance(op, tgraph.ScaleOp):
        return op.value
    return _opaque_attr(op)


def _graph_form(graph: tgraph.GraphOp) -> abstract_expr.Form:
    return _value_forms(graph)[graph.output_op.outputs[0]]


def _pinned_operands(graph: tgraph.GraphOp) -> dict[tuple, set[abstract_expr.Form]]:
    """The operand forms of each opaque op that the search applies only where the input graph does.

    These are the ops whose form is their operand's (constants are forgotten) that are neither
    linear nor odd: `x + c`, `x - c`, `max(x, c)`. Such an op commutes with no sum and no matmul
    (sum(x + c) = sum(x) + n c: another constant), so no target rewrite moves it onto a term of
    another form; applied freely, it would be built over every term, as the form bound cannot see it.
    """
    forms = _value_forms(graph)
    out: dict[tuple, set[abstract_expr.Form]] = {}
    for op in graph.block.ops:
        attr = _opaque_attr(op)
        if attr is None or len(op.operands) != 1 or not _forgetful(OPAQUE, attr):
            continue
        alg = op_semantics(OPAQUE, attr).algebra  # type: ignore[union-attr]
        if not (alg.linear or alg.odd):
            out.setdefault(attr, set()).add(forms[op.operands[0]])
    return out


def _forgetful_over_select(graph: tgraph.GraphOp) -> set[object]:
    """The forgetful ops (budget keys) that `graph` applies over a select.

    The form bound cannot see a forgetful op move onto a select: f(select(m, a, b)) has the form
    of select(m, f(a), b), although they differ where m is 0 (select commutes with f only when f
    goes to both sides). So a forgetful op is applied over a select only where the graph does it.
    """
    forms = _value_forms(graph)
    return {
        _budget_key(_node_kind(op), _node_attr(op))
        for op in graph.block.ops
        if isinstance(op, tgraph.ElementwiseOp) and len(op.operands) == 1
        and _forgetful(_node_kind(op), _node_attr(op)) and abstract_expr.has_select(forms[op.operands[0]])
    }


def _value_forms(graph: tgraph.GraphOp) -> dict[SSAValue, abstract_expr.Form]:
    """The abstract expression of every value of `graph`."""
    forms: dict[SSAValue, abstract_expr.Form] = {a: abstract_expr.leaf(i) for i, a in enumerate(graph.inputs)}
    for op in graph.block.ops:
        if isinstance(op, tgraph.OutputOp):
            continue
        size = None
        if isinstance(op, tgraph.MatmulOp):
            size = tgraph.tensor_type(op.lhs).shape[-1]
        elif isinstance(op, tgraph.ReduceOp):
            size = tgraph.tensor_type(op.input).shape[op.axis]
        forms[op.results[0]] = _form(_node_kind(op), [forms[o] for o in op.operands], size, attr=_node_attr(op))
    return forms


def _budget_key(kind: str, attr: object) -> object:
    """The key of a construction in the op-count budget (an opaque op counts under its name)."""
    return attr[0] if kind == OPAQUE else kind  # type: ignore[index]


def _forgetful(kind: str, attr: object) -> bool:
    """An elementwise op whose abstract form is its operand's (a scale, `x - c`, a cast)."""
    if kind not in ("scale", OPAQUE) and kind not in _UNARY:
        return False
    sem = op_semantics(kind, attr)
    x = abstract_expr.leaf(-1)
    return sem is not None and sem.abstract is not None and sem.abstract(abstract_expr, x) == x


def _path_limits(graph: tgraph.GraphOp) -> dict[object, int]:
    """For each forgetful op kind of `graph`: the most times it applies along one input-output path.

    The form bound cannot limit such ops (they leave the form unchanged), so without this bound
    the search builds every chain of them (`scale(x - c)`, `(scale(x) - c) - c`, ...) under every
    term. The rewrites it looks for move such an op (across a matmul or a reduction) or share it,
    but never apply it more often along a path than the input graph does.
    """
    along: dict[SSAValue, Counter] = {a: Counter() for a in graph.inputs}
    for op in graph.block.ops:
        if isinstance(op, tgraph.OutputOp):
            break
        c: Counter = Counter()
        for o in op.operands:
            c |= along[o]
        kind, attr = _node_kind(op), _node_attr(op)
        if _forgetful(kind, attr):
            c[_budget_key(kind, attr)] += 1
        along[op.results[0]] = c
    out: Counter = Counter()
    for o in graph.output_op.outputs:
        out |= along[o]
    return dict(out)


def op_limit(graph: tgraph.GraphOp, used_inputs: int, max_splits: int) -> tuple[int, int]:
    """The ops a candidate of `graph` may need, so that `max-ops` never cuts off a graph's own forms:
    without a split, the graph's ops and a reshape; with one, a split or a leading-one reshape of
    each input the output reads, a combine reduction per split allowed and the final reshape too
    (attention with a mask, 8 ops: 3 splits, a reshape of q, 2 combines and the reshape back make 15)."""
    own = sum(not isinstance(op, tgraph.OutputOp) for op in graph.block.ops)
    return own + 1, own + (used_inputs + max_splits + 1 if max_splits else 1)


class _Packed:
    """Op-kind and leaf counts packed into one int (7-bit fields, guard bits): add is `+`."""

    def __init__(self, budget: dict[object, int]) -> None:
        self.index = {k: i for i, k in enumerate(budget)}
        self.guard = sum(1 << (8 * i + 7) for i in range(len(budget)))
        self.limit = sum(min(v, 127) << (8 * self.index[k]) for k, v in budget.items()) | self.guard

    def one(self, key: object) -> int:
        return 1 << (8 * self.index[key])

    def fits(self, counts: int) -> bool:
        return (self.limit - counts) & self.guard == self.guard

    def minimum(self, a: int, b: int) -> int:
        out = 0
        for i in range(len(self.index)):
            shift = 8 * i
            out |= min((a >> shift) & 127, (b >> shift) & 127) << shift
        return out

    def fields(self, counts: int) -> np.ndarray:
        """The counts one per field: `fits(a + b)` is `all(fields(a) + fields(b) <= fields(limit))`."""
        return np.array([(counts >> (8 * i)) & 127 for i in range(len(self.index))], dtype=np.int16)


def _matmul_shape(a: tuple[Dim, ...], b: tuple[Dim, ...], transpose_b: bool) -> tuple[Dim, ...] | None:
    if len(a) < 2 or len(b) < 2 or len(a) != len(b):
        return None
    k2, n = (b[-1], b[-2]) if transpose_b else (b[-2], b[-1])
    if a[-1] != k2:
        return None
    batch = _broadcast(a[:-2], b[:-2])
    return None if batch is None else (*batch, a[-2], n)


def value_shapes(graph: tgraph.GraphOp) -> frozenset[tuple[Dim, ...]]:
    """The shapes of the graph's inputs and op results."""
    values = [*graph.inputs, *(r for op in graph.block.ops for r in op.results)]
    return frozenset(tuple(tgraph.tensor_type(v).shape) for v in values if isinstance(v.type, tgraph.TensorType))


def _broadcast(a: tuple[Dim, ...], b: tuple[Dim, ...]) -> tuple[Dim, ...] | None:
    if len(a) != len(b):
        return None
    out = []
    for x, y in zip(a, b):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            return None
    return tuple(out)


class Enumerator:
    """Bottom-up enumeration of the terms of one graph at one small instantiation."""

    def __init__(
        self,
        graph: tgraph.GraphOp,
        *,
        max_ops: int,
        max_splits: int,
        time_limit: float,
        seed: int,
        progress: bool,
        budget: int = 0,
    ) -> None:
        self.graph = graph
        self.max_splits = max_splits
        self.work_budget = budget or DEFAULT_BUDGET
        self.deadline = time.monotonic() + time_limit
        self.progress = progress
        self.stats = SearchStats()
        ops, leaves, self.factors = _tree_counts(graph)
        # terms of split forms get the room their splits, reshapes and combines take; the others
        # keep the plain limit, so a split form's room does not widen (and slow) the plain search
        plain, split = op_limit(graph, len(leaves), max_splits)
        self.plain_ops, self.max_ops = max(max_ops, plain), max(max_ops, split)
        self.max_rank = max(len(tgraph.tensor_type(t).shape) for t in (*graph.inputs, graph.output_op.outputs[0]))
        self.value_shapes = value_shapes(graph)
        self._elementwise_shapes: dict[tuple[Dim, ...], bool] = {}
        self.unit_contractions = any(
            isinstance(op, tgraph.MatmulOp) and tgraph.tensor_type(op.operands[0]).shape[-1] == 1 for op in graph.block.ops
        )
        budget: dict[object, int] = {k: n for k, n in ops.items()}
        # tree expansion counts a shared split (or reshape) once per use
        share = max(leaves.values(), default=1)
        budget["split"] = max_splits * share
        budget["reshape"] = budget.get("reshape", 0) + 1 + (2 * share if max_splits else 0)
        budget["reduce_sum"] = budget.get("reduce_sum", 0) + max_splits  # reductions over split counts
        limits = _path_limits(graph)
        if tgraph.CastOp.name in limits:
            # a cast over a shared term (the fp16 cast of an fp32 softmax's e / r) moves onto it: the
            # FlashAttention form of that softmax sums cast(e) and multiplies it, two uses of one cast
            # that the tree expansion counts twice. The path limit still bounds the casts on each path.
            budget[tgraph.CastOp.name] = max(budget[tgraph.CastOp.name], limits[tgraph.CastOp.name] * sum(leaves.values()))
        # an input the output does not use gets budget 0: no term may use it
        budget.update({("leaf", i): leaves.get(i, 0) for i in range(len(graph.inputs))})
        self.kinds = set(ops) | {"split", "reshape", "reduce_sum"}
        # elementwise ops without a kind of their own, applied as they appear in the input graph
        # (those off the output's path have no budget: no term of the output uses them)
        self.opaque = sorted(
            {a for op in graph.block.ops if len(op.operands) == 1 and (a := _opaque_attr(op)) is not None
             and _budget_key(OPAQUE, a) in ops},
            key=repr,
        )
        self.pinned = _pinned_operands(graph)
        self.over_select = _forgetful_over_select(graph)
        self.packed = _Packed(budget)
        self.path_keys = {k: i for i, k in enumerate(sorted(limits, key=str))}
        self.path_limits = tuple(limits[k] for k in self.path_keys)
        self.goal = abstract_expr.Goal(_graph_form(graph))
        reduced = eventually_reduced(graph)
        self.reducible: set[sympy.Symbol] = {SPLIT}
        for arg, dims in zip(graph.inputs, reduced):
            shape = tgraph.tensor_type(arg).shape
            for d in dims:
                self.reducible |= shape[d].free_symbols  # type: ignore[arg-type]
        self.reduced_inputs = reduced
        self.instantiations = small_instantiations(graph, self.reducible, count=4)
        self.bindings = self.instantiations[0]
        self.out_type = tgraph.tensor_type(graph.function_type.outputs.data[0])
        # the output's shape, and those the graph's own reshapes of its inputs make (a mask [1, 1, 1, n] read
        # as [1, 1, n]); a reshape inside the graph (a norm's [1, 1, h] rows viewed as [1, h] for the LM head)
        # would open a second frame for every term: 42794 classes in 137 s instead of 32246 in 103 s
        self.reshape_targets = [self.out_type.shape] + sorted(
            {tuple(tgraph.tensor_type(op.result).shape) for op in graph.block.ops
             if isinstance(op, tgraph.ReshapeOp) and isinstance(op.input, BlockArgument)}
            - {tuple(self.out_type.shape)}, key=str)
        # the class fingerprint: every term is evaluated on several input sets at once (a leading
        # sample axis), so terms that agree on one sample only stay apart
        samples = fingerprint_inputs(graph, seed, self.bindings)
        self.inputs = [np.stack(xs) for xs in zip(*samples)]
        with np.errstate(all="ignore"):
            self.target = np.stack([run_graph(graph, xs, bindings=self.bindings)[0] for xs in samples])
        self.classes: list[EClass] = []
        self.by_key: dict[tuple, int] = {}
        # every class's counts one per field (row = class id), to test a new class against all its
        # partners at once; `_lowered` counts the times some class's counts went down
        self._fields = np.zeros((256, len(self.packed.index)), dtype=np.int16)
        self._limit_fields = self.packed.fields(self.packed.limit)
        self._lowered = 0
        self._split_side: dict[tuple[Dim, ...], bool] = {}
        # each class's shape as a small int (`_shape_ids`), and the shapes of constructions over them
        self._shape_ids: dict[tuple[Dim, ...], int] = {}
        self._class_shape: list[int] = []
        self._split_class: list[bool] = []  # each class's `_split_shape`
        self._shapes: dict[tuple, tuple[tuple[Dim, ...], Dim | None] | None] = {}
        self._forms: dict[tuple, abstract_expr.Form] = {}
        self._pair_cache: dict[tuple, tuple[tuple[str, ...], tuple[str, ...]]] = {}
        self._broadcasts: dict[tuple, tuple[Dim, ...] | None] = {}
        self._select_pairs: dict[tuple[str, int, int], None] = {}  # (kind, condition, picked): see _selects
        self.seen: set[Node] = set()
        self.parents: dict[int, list[tuple[Node, int]]] = {}  # class -> (construction, its class) using it
        self.start = time.monotonic()

    # ------------------------------------------------------------------ bookkeeping
    def _key(self, shape: tuple[Dim, ...], value: np.ndarray, elt: str = "") -> tuple:
        # ~7 significant digits per element: equivalent constructions differ by ~1e-15; inf and nan
        # (only in the extra samples: sample 0 must be finite) map to fixed codes
        finite = np.isfinite(value)
        mantissa, exponent = np.frexp(np.where(finite, value, 0.0))
        q = np.round(mantissa * (1 << 23)).astype(np.int64)
        bad = value[~finite]
        q[~finite] = np.where(np.isnan(bad), 1 << 40, np.where(bad > 0, 1 << 41, -(1 << 41)))
        return (shape, q.tobytes(), exponent.astype(np.int16).tobytes(), elt)

    def _elt(self, node: Node) -> str | None:
        """Element type of a construction's result; None where its operands' types differ."""
        if node.kind == "input":
            return str(tgraph.tensor_type(self.graph.inputs[node.attr]).element_type)  # type: ignore[index]
        if node.kind == OPAQUE and node.attr[0] == tgraph.CastOp.name:  # type: ignore[index]
            return str(node.attr[2])  # type: ignore[index]
        args = node.args
        if node.kind in _SELECT:  # the condition's element type is its own
            cond = _SELECT[node.kind].algebra.condition
            args = args[:cond] + args[cond + 1 :]  # type: ignore[operator]
        elts = {self.classes[a].elt for a in args}
        return elts.pop() if len(elts) == 1 else None

    def _path(self, node: Node, cs: Sequence[EClass]) -> tuple[int, ...] | None:
        """The construction's forgetful ops per path (see _path_limits); None above the limits."""
        if not self.path_keys:
            return ()
        path = [max(col) for col in zip(*(c.path for c in cs))] if cs else [0] * len(self.path_keys)
        i = self.path_keys.get(_budget_key(node.kind, node.attr)) if node.kind in ("scale", OPAQUE) else None
        if i is not None:
            path[i] += 1
            if path[i] > self.path_limits[i]:
                return None
        return tuple(path)

    def _add(self, node: Node, shape: tuple[Dim, ...], value: np.ndarray, round_: int, counts: int,
             dag: frozenset[int], form: abstract_expr.Form, path: tuple[int, ...] = ()) -> None:
        self.stats.explored += 1
        if not np.all(np.isfinite(value[0])):
            self.stats.pruned += 1
            return
        elt = self._elt(node) or ""
        key = self._key(shape, value, elt)
        if key in self.by_key:
            cls = self.classes[self.by_key[key]]
            if node not in cls.nodes:
                cls.nodes.append(node)
                self._link(node, cls.id)
                if self._improve(cls, node, counts, dag, path, round_):
                    self._propagate(cls.id, round_)
            return
        cid = len(self.classes)
        if node.kind != "input":
            dag = dag | {cid}
        self.classes.append(EClass(cid, shape, value, [node], counts, dag, form, round_, elt=elt, path=path))
        if cid == len(self._fields):
            self._fields = np.concatenate([self._fields, np.zeros_like(self._fields)])
        self._fields[cid] = self.packed.fields(counts)
        self._class_shape.append(self._shape_ids.setdefault(shape, len(self._shape_ids)))
        self._split_class.append(self._split_shape(shape))
        self.by_key[key] = cid
        self._link(node, cid)
        self.stats.classes = len(self.classes)

    def _link(self, node: Node, cid: int) -> None:
        for a in set(node.args):
            self.parents.setdefault(a, []).append((node, cid))

    def _improve(self, cls: EClass, node: Node, counts: int, dag: frozenset[int], path: tuple[int, ...],
                 round_: int) -> bool:
        """Keep a lower bound of the counts and paths over the class's constructions, and its smallest
        DAG; True when one of them improved (then the pairs the budget refused are retried)."""
        lower = self.packed.minimum(cls.counts, counts)
        shorter = tuple(map(min, cls.path, path))
        changed = lower != cls.counts or shorter != cls.path
        if lower != cls.counts:
            self._fields[cls.id] = self.packed.fields(lower)
            self._lowered += 1
        cls.counts, cls.path = lower, shorter
        if len(dag) + 1 < len(cls.dag):
            cls.dag = dag | {cls.id}
            cls.best = cls.nodes.index(node)
            changed = True
        if changed:
            cls.round = round_
        return changed

    def _propagate(self, cid: int, round_: int) -> None:
        """A class got cheaper: so do the classes built over it (their constructions were seen while
        it was dearer, and are never tried again), transitively; else a term reached first through
        a dear construction keeps that cost and a parent of it can exceed the budget or max-ops that
        its cheap construction fits (the attention of deepseek_mla_prefill)."""
        work = [cid]
        while work:
            for node, p in self.parents.get(work.pop(), ()):
                cs = [self.classes[a] for a in node.args]
                path = self._path(node, cs)
                if path is None:
                    continue
                counts = sum(c.counts for c in cs) + self.packed.one(_budget_key(node.kind, node.attr))
                dag: frozenset[int] = frozenset().union(*(c.dag for c in cs))
                if self._improve(self.classes[p], node, counts, dag, path, round_):
                    work.append(p)

    def _limit(self, *cids: int) -> int:
        """The op limit of a construction over these classes: a term of a split form (split parts,
        or the leading dim a combine leaves) gets the split forms' room."""
        return self.max_ops if any(self._split_class[c] for c in cids) else self.plain_ops

    def _split_shape(self, shape: tuple[Dim, ...]) -> bool:
        """Whether `shape` is a split form's (cached: the test compares sympy dims)."""
        side = self._split_side.get(shape)
        if side is None:
            side = self._split_side[shape] = SPLIT in shape or len(shape) > self.max_rank
        return side

    def _form_of(self, node: Node, cs: Sequence[EClass], size: Dim | None) -> abstract_expr.Form:
        """`_form` of a construction, memoized: classes of different values share forms (forms forget
        constants, signs and splits), and sorting a form's parts by their repr is dear."""
        key = (node.kind, node.attr, size, *(c.form for c in cs))
        form = self._forms.get(key)
        if form is None:
            form = self._forms[key] = _form(node.kind, [c.form for c in cs], size, attr=node.attr)
        return form

    def _fitting(self, ids: list[int], counts: int) -> Iterator[int]:
        """The ids (in order) of the classes whose counts fit the budget beside `counts`, tested on all
        of them at once: most pairs do not fit (98% of 7.3M at LayerNorm + projection), and visiting
        each in Python was half of the search's time. Counts only go down (`_improve`), so a class
        left out can fit later: where some class's counts went down after a yield, the remaining
        ids are tested again, and the ids yielded are those a test of each at its visit yields."""
        if len(ids) == 0:
            return
        room = self._limit_fields - self.packed.fields(counts)
        order = np.asarray(ids)
        start = 0
        while start < len(order):
            seen = self._lowered
            rest = order[start:]
            fit = rest[(self._fields[rest] <= room).all(axis=1)]
            for oid in fit.tolist():
                yield oid
                if self._lowered != seen:  # retest what comes after this id
                    start += int(np.searchsorted(rest, oid, side="right"))
                    break
            else:
                return

    # ------------------------------------------------------------------ one step
    def _constructions(self, round_: int) -> Iterator[Node]:
        """Constructions with at least one child created in the previous round (semi-naive)."""
        new = [c for c in self.classes if c.round == round_ - 1]
        all_ = list(self.classes)
        unary = [k for k in _UNARY_FN if k in self.kinds]
        binary = [k for k in _BINARY_FN if k in self.kinds]
        matmuls = [k for k in ("matmul", "matmul_t") if k in self.kinds]
        for c in new:
            for k in unary:
                yield Node(k, (c.id,))
            over_select = abstract_expr.has_select(c.form)
            for f in sorted(self.factors) if "scale" in self.kinds else ():
                if not over_select or "scale" in self.over_select:
                    yield Node("scale", (c.id,), f)
            for a in self.opaque:
                if (a not in self.pinned or c.form in self.pinned[a]) and (not over_select or a[0] in self.over_select):
                    yield Node(OPAQUE, (c.id,), a)
            for d in range(len(c.shape)):
                yield Node("reduce_sum", (c.id,), d)
                for k in _REDUCE_KINDS:
                    if k != "reduce_sum" and k in self.kinds:
                        yield Node(k, (c.id,), d)
            if len(c.nodes) == 1 and c.nodes[0].kind == "input":
                i = c.nodes[0].attr
                for d in sorted(self.reduced_inputs[i]):  # type: ignore[index]
                    yield Node("split", (c.id,), d)
                if self.max_splits:  # to meet split tensors: [..] -> [1, ..]
                    yield Node("reshape", (c.id,), LEADING_ONE)
            for shape in self.reshape_targets:
                yield Node("reshape", (c.id,), shape)
        classes, last = self.classes, round_ - 1
        by_shape: dict[tuple[Dim, ...], list[int]] = {}
        for o in all_:
            by_shape.setdefault(o.shape, []).append(o.id)
        # per shape of a new class: the shapes whose pairs with it admit some op, and their classes'
        # ids in id order (as if all were visited); new classes of one shape share them
        partners: dict[tuple[Dim, ...], tuple[dict[tuple[Dim, ...], tuple[tuple[str, ...], tuple[str, ...]]], list[int]]] = {}
        for c in new:
            if c.shape not in partners:
                ops_with = {}
                for shape in by_shape:
                    kinds = self._pair_ops(c.shape, shape, matmuls, binary)
                    if kinds != ((), ()):
                        ops_with[shape] = kinds
                partners[c.shape] = (ops_with, sorted(oid for shape in ops_with for oid in by_shape[shape]))
            ops_with, ids = partners[c.shape]
            for oid in self._fitting(ids, c.counts):  # the pairs whose op counts fit the budget
                o = classes[oid]
                if o.round == last and oid < c.id:
                    continue  # the pair (o, c) is yielded when o is `c`
                if len(c.dag | o.dag) >= self._limit(c.id, o.id):
                    continue  # no op over this pair fits max-ops
                forward, backward = ops_with[o.shape]
                pairs = [(c.id, o.id, forward), (o.id, c.id, backward)] if o.id != c.id else [(c.id, c.id, forward)]
                for a, b, kinds in pairs:
                    for k in kinds:
                        if not (k in _COMMUTATIVE and a > b):
                            yield Node(k, (a, b))
        for k in _SELECT:
            if k in self.kinds:
                yield from self._selects(k, new, all_, by_shape)

    def _selects(
        self, kind: str, new: list[EClass], all_: list[EClass], by_shape: dict[tuple[Dim, ...], list[int]]
    ) -> Iterator[Node]:
        """`select(m, a, b)` constructions with a child from the previous round.

        A select's abstract form keeps its condition and operands (abstract_expr.select), so a pair
        (condition m, picked a) that no select of the output's form has never leads to an admitted
        select: such pairs are dropped before any third operand is tried. The admitted pairs are
        kept, so later rounds only pair them with new third operands.
        """
        cond = _SELECT[kind].algebra.condition
        assert cond == 0, "select constructions take the condition first"
        fits, one = self.packed.fits, self.packed.one(kind)
        goal = self.goal
        new_ids = {c.id for c in new}
        fresh: list[tuple[int, int]] = []
        for c in new:
            if not fits(c.counts + one):
                continue
            for shape, ids in by_shape.items():
                if self._broadcast_of(c.shape, shape) is None:
                    continue
                for oid in self._fitting(ids, c.counts + one):
                    if oid in new_ids and oid < c.id:
                        continue  # the pairs of (o, c) are tried when o is `c`
                    o = self.classes[oid]
                    if len(c.dag | o.dag) >= self._limit(c.id, o.id):
                        continue
                    for m, a in ((c, o), (o, c)) if oid != c.id else ((c, c),):
                        if goal.admits_select_of(m.form, a.form):
                            fresh.append((m.id, a.id))
        fresh = list(dict.fromkeys(fresh))  # a pair with a cheaper member again meets every third
        retried = set(fresh)
        old = [(m, a) for k, m, a in self._select_pairs if k == kind and (m, a) not in retried]
        self._select_pairs.update(((kind, *p), None) for p in fresh)
        # the ids of each list of third operands by (shape, element type), in id order
        groups = {"all": self._ids_by_shape_and_elt(all_), "new": self._ids_by_shape_and_elt(new)}
        thirds_of: dict[tuple, np.ndarray] = {}
        jobs = [(p, "all") for p in fresh] + [(p, "new") for p in old]
        for (m, a), which in jobs:
            cm, ca = self.classes[m], self.classes[a]
            shape = self._broadcast_of(cm.shape, ca.shape)
            counts, dag = cm.counts + ca.counts + one, cm.dag | ca.dag
            if not fits(counts):
                continue
            key = (which, shape, ca.elt)
            ids = thirds_of.get(key)
            if ids is None:
                parts = [g for (s, elt), g in groups[which].items() if elt == ca.elt and self._broadcast_of(shape, s) is not None]  # type: ignore[arg-type]
                ids = thirds_of[key] = np.sort(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.int64)
            for bid in self._fitting(ids, counts):  # type: ignore[arg-type]
                if len(dag | self.classes[bid].dag) < self._limit(cm.id, ca.id, bid):
                    yield Node(kind, (m, a, bid))

    @staticmethod
    def _ids_by_shape_and_elt(classes: list[EClass]) -> dict[tuple[tuple[Dim, ...], str], np.ndarray]:
        """The ids of `classes` (in order) grouped by shape and element type."""
        out: dict[tuple[tuple[Dim, ...], str], list[int]] = {}
        for c in classes:
            out.setdefault((c.shape, c.elt), []).append(c.id)
        return {k: np.asarray(v, dtype=np.int64) for k, v in out.items()}

    def _broadcast_of(self, x: tuple[Dim, ...], y: tuple[Dim, ...]) -> tuple[Dim, ...] | None:
        """`_broadcast`, memoized (comparing sympy dims is dear)."""
        key = (x, y)
        if key not in self._broadcasts:
            self._broadcasts[key] = _broadcast(x, y)
        return self._broadcasts[key]

    def _pair_ops(
        self, x: tuple[Dim, ...], y: tuple[Dim, ...], matmuls: list[str], binary: list[str]
    ) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The matmul and binary kinds whose shape rules admit (x, y), and those admitting (y, x)."""
        key = (x, y)
        hit = self._pair_cache.get(key)
        if hit is None:
            both = tuple(binary) if _broadcast(x, y) is not None else ()
            hit = self._pair_cache[key] = (
                tuple(k for k in matmuls if _matmul_shape(x, y, k == "matmul_t") is not None) + both,
                tuple(k for k in matmuls if _matmul_shape(y, x, k == "matmul_t") is not None) + both,
            )
        return hit

    def _shape_of(self, node: Node) -> tuple[tuple[Dim, ...], Dim | None] | None:
        """`_shape`, memoized on the op and its operands' shapes and element types (comparing sympy
        dims is dear, and many constructions share them)."""
        key = (node.kind, node.attr, *((self._class_shape[a], self.classes[a].elt) for a in node.args))
        if key not in self._shapes:
            self._shapes[key] = self._shape(node)
        return self._shapes[key]

    def _shape(self, node: Node) -> tuple[tuple[Dim, ...], Dim | None] | None:
        """Result shape (and summed size) of a construction, or None where the shapes forbid it."""
        cs = [self.classes[a] for a in node.args]
        k = node.kind
        if (k in _BINARY_FN or k in ("matmul", "matmul_t")) and cs[0].elt != cs[1].elt:
            return None  # the verifiers want equal element types (a cast comes first)
        if k in ("matmul", "matmul_t"):
            if k == "matmul" and cs[0].shape[-1] == 1 and not self.unit_contractions:
                return None  # [.., m, 1] @ [.., 1, n]: the broadcasting mul computes it (a transposed one it cannot)
            shape = _matmul_shape(cs[0].shape, cs[1].shape, k == "matmul_t")
            return None if shape is None else (shape, cs[0].shape[-1])
        if k in _BINARY_FN:
            shape = _broadcast(cs[0].shape, cs[1].shape)
            return None if shape is None or not self._elementwise_at(shape) else (shape, None)
        if k in _SELECT:
            if self._elt(node) is None:
                return None
            shape = _broadcast(cs[0].shape, cs[1].shape)
            shape = None if shape is None else _broadcast(shape, cs[2].shape)
            return None if shape is None or not self._elementwise_at(shape) else (shape, None)
        if k == OPAQUE and node.attr[2] is not None and str(node.attr[2]) == cs[0].elt:  # type: ignore[index]
            return None  # a cast to the type it has
        if k in _UNARY_FN or k in ("scale", OPAQUE):
            return (cs[0].shape, None) if self._elementwise_at(cs[0].shape) else None
        if k.startswith("reduce_"):
            d = node.attr
            size = cs[0].shape[d]  # type: ignore[index]
            if size == 1 or not size.free_symbols <= self.reducible:
                return None  # eventually-reduced rule
            return tuple(sympy.Integer(1) if i == d else x for i, x in enumerate(cs[0].shape)), size
        if k == "split":
            try:
                return tgraph.SplitOp.infer_shape(cs[0].shape, node.attr, SPLIT), None  # type: ignore[arg-type]
            except VerifyException:
                return None
        if k == "reshape" and node.attr == LEADING_ONE:
            return (sympy.Integer(1), *cs[0].shape), None
        if k == "reshape":
            target = tuple(node.attr)  # type: ignore[arg-type]
            src = [x for x in cs[0].shape if x != 1]
            if src != [x for x in target if x != 1] or target == cs[0].shape:
                return None
            return target, None
        return None

    def _elementwise_at(self, shape: tuple[Dim, ...]) -> bool:
        """Whether an element-wise op may compute a tensor of `shape`: one the input graph has, or a
        split form's (a split count in it, or the rank a combine leaves). A weight raised to meet split
        tensors ([d1, d0] -> [1, d1, d0]) is otherwise a tensor every row-sized term broadcasts into:
        a decode RMSNorm before two projections built 49262 classes (rows x weight, outer products)
        and stopped at the work budget after 153 s; with the rule it finishes in ~20 s."""
        ok = self._elementwise_shapes.get(shape)
        if ok is None:
            ok = self._elementwise_shapes[shape] = (
                shape in self.value_shapes or len(shape) > self.max_rank or any(SPLIT in d.free_symbols for d in shape)
            )
        return ok

    def _evaluate(self, node: Node, shape: tuple[Dim, ...]) -> np.ndarray | None:
        xs = [self.classes[a].value for a in node.args]
        k = node.kind
        if k in ("matmul", "matmul_t"):
            return np.matmul(xs[0], np.swapaxes(xs[1], -1, -2) if k == "matmul_t" else xs[1])
        sem = op_semantics(k, node.attr)
        if sem is not None:
            return sem.numpy(*xs)
        if k in _REDUCE_KINDS:  # axis 0 of the values is the sample axis
            return _REDUCE_KINDS[k].numpy(xs[0], node.attr + 1)  # type: ignore[arg-type, operator]
        if k == "split":
            d, x, parts = node.attr + 1, xs[0], self.bindings["s"]  # type: ignore[operator]
            if x.shape[d] % parts:
                return None
            new = (*x.shape[:d], parts, x.shape[d] // parts, *x.shape[d + 1 :])
            return np.moveaxis(x.reshape(new), d, 1)
        return xs[0].reshape((xs[0].shape[0], *evaluate_shape(shape, self.bindings)))

    def run(self) -> list[int]:
        """Enumerate; return the ids of classes equal to the output (the output's class)."""
        packed = self.packed
        for i, arg in enumerate(self.graph.inputs):
            self._add(Node("input", (), i), tgraph.tensor_type(arg).shape, self.inputs[i], 0,
                      packed.one(("leaf", i)), frozenset(), abstract_expr.leaf(i), (0,) * len(self.path_keys))
        stats = self.stats
        for round_ in range(1, self.max_ops + 1):
            for node in self._constructions(round_):
                work = stats.explored + stats.pruned
                if work >= self.work_budget:
                    stats.stopped_by_budget = True
                    break
                if work % 1024 == 0 and time.monotonic() > self.deadline:
                    stats.stopped_by_time = True  # the safety net: a warning, never the plan
                    break
                if node in self.seen:
                    continue
                cs = [self.classes[a] for a in node.args]
                counts = sum(c.counts for c in cs) + packed.one(_budget_key(node.kind, node.attr))
                dag: frozenset[int] = frozenset().union(*(c.dag for c in cs))
                path = self._path(node, cs)
                limit = self.max_ops if node.kind == "split" or node.attr == LEADING_ONE else self._limit(*node.args)
                if len(dag) + 1 > limit or not packed.fits(counts) or path is None:
                    self.stats.pruned += 1  # not `seen`: a cheaper child construction may admit it later
                    continue
                self.seen.add(node)
                shaped = self._shape_of(node)
                if shaped is None:
                    self.stats.pruned += 1
                    continue
                form = self._form_of(node, cs, shaped[1])
                if not self.goal.admits(form):
                    self.stats.pruned += 1
                    continue
                with np.errstate(all="ignore"):
                    value = self._evaluate(node, shaped[0])
                if value is None:
                    self.stats.pruned += 1
                    continue
                self._add(node, shaped[0], value, round_, counts, dag, form, path)
                self._report()
            if stats.stopped_by_time or stats.stopped_by_budget:
                break
        self.stats.seconds = time.monotonic() - self.start
        return [
            c.id
            for c in self.classes
            if c.shape == self.out_type.shape and c.elt == str(self.out_type.element_type)
            and _agrees_on_samples(self.target, c.value)
        ]

    def _report(self) -> None:
        if self.progress and self.stats.explored % 500 == 0:
            s = self.stats
            print(
                f"\r  explored {s.explored} pruned {s.pruned} classes {s.classes} "
                f"{time.monotonic() - self.start:.1f}s",
                end="",
                file=sys.stderr,
                flush=True,
            )

    # ------------------------------------------------------------------ extraction
    def choose(self) -> None:
        """Cheapest construction of every class per mode: "plain" (no split) and "split:<dim>".

        Costs are tree sizes, computed to a fixpoint. Mode "split:K" uses at least one split, and
        only splits of dims of size K, somewhere below the class; so every Split-K form (e.g. split
        over the KV length or over the head dim) is extracted even where a plain construction of
        the same value is smaller.
        """
        inf = float("inf")
        n = len(self.classes)
        split_dims = {
            str(self.classes[node.args[0]].shape[node.attr])  # type: ignore[index]
            for c in self.classes
            for node in c.nodes
            if node.kind == "split"
        }
        self.modes = ["plain", *(f"split:{d}" for d in sorted(split_dims))]
        self.cost = {m: [inf] * n for m in self.modes}
        self.pick: dict[str, list[tuple[Node, tuple[str, ...]] | None]] = {m: [None] * n for m in self.modes}
        changed = True
        while changed:
            changed = False
            for c in self.classes:
                for node in c.nodes:
                    for mode, (cost, modes) in self._node_costs(node).items():
                        if cost < self.cost[mode][c.id]:
                            self.cost[mode][c.id] = cost
                            self.pick[mode][c.id] = (node, modes)
                            changed = True

    def _node_costs(self, node: Node) -> dict[str, tuple[float, tuple[str, ...]]]:
        if node.kind == "input":
            return {"plain": (0, ())}
        plain = self.cost["plain"]
        kids = node.args
        out = {"plain": (1 + sum(plain[a] for a in kids), ("plain",) * len(kids))}
        if node.kind == "split":
            out[f"split:{self.classes[kids[0]].shape[node.attr]}"] = out["plain"]  # type: ignore[index]
            return out
        for mode in self.modes[1:]:
            # split every operand that can be split over this dim (a Split-K graph splits all the
            # reductions it combines, sharing the split producers), at least one
            split = self.cost[mode]
            modes = tuple(mode if split[a] < float("inf") else "plain" for a in kids)
            best: tuple[float, tuple[str, ...]] = (float("inf"), ())
            if mode in modes:
                # an unsplit non-input operand recomputes work the split form should share
                unsplit = sum(m == "plain" and plain[a] > 0 for m, a in zip(modes, kids))
                best = (1 + sum(self.cost[m][a] for m, a in zip(modes, kids)) + 100 * unsplit, modes)
            out[mode] = best
        return out

    def build(self, root: Node, mode: str, name: str) -> tgraph.GraphOp | None:
        """The graph of construction `root` with its children's cheapest `mode` constructions."""
        g = self.graph
        b = GraphBuilder(name, self.out_type.element_type)
        causal = g.causal_inputs()
        args = [
            b.input(n, tgraph.tensor_type(a).shape, tgraph.tensor_type(a).element_type, causal=causal.get(i))
            for i, (n, a) in enumerate(zip(g.input_names(), g.inputs))
        ]
        memo: dict[tuple[int, str], SSAValue] = {}

        def emit(node: Node, modes: Sequence[str]) -> SSAValue:
            xs = [value(a, m) for a, m in zip(node.args, modes)]
            k = node.kind
            if k == "input":
                return args[node.attr]  # type: ignore[index]
            if k in ("matmul", "matmul_t"):
                return b.matmul(xs[0], xs[1], transpose_b=k == "matmul_t")
            if k in _BINARY_FN:
                return b.binary(k, xs[0], xs[1])
            if k in _UNARY_FN:
                return b.unary(k, xs[0])
            if k in _SELECT:
                shape = _broadcast(_broadcast(*(tgraph.tensor_type(x).shape for x in xs[:2])), tgraph.tensor_type(xs[2]).shape)  # type: ignore[arg-type]
                result = tgraph.tensor_type(xs[1]).with_shape(shape)
                return b.elementwise(_SELECT_OPS[k], xs, result)
            if k == "scale":
                return b.scale(xs[0], node.attr)  # type: ignore[arg-type]
            if k == OPAQUE:
                name, props, elt = node.attr  # type: ignore[misc]
                result = tgraph.tensor_type(xs[0]) if elt is None else tgraph.tensor_type(xs[0]).with_element_type(elt)
                return b.elementwise(tgraph.ELEMENTWISE_BY_NAME[name], xs, result, dict(props))
            if k.startswith("reduce_"):
                return b.reduce(k.removeprefix("reduce_"), xs[0], node.attr)  # type: ignore[arg-type]
            if k == "split":
                return b.split(xs[0], node.attr, SPLIT)  # type: ignore[arg-type]
            if node.attr == LEADING_ONE:
                return b.reshape(xs[0], (1, *tgraph.tensor_type(xs[0]).shape))
            return b.reshape(xs[0], node.attr)  # type: ignore[arg-type]

        def value(cid: int, m: str) -> SSAValue:
            if (cid, m) not in memo:
                picked = self.pick[m][cid]
                assert picked is not None
                memo[(cid, m)] = emit(*picked)
            return memo[(cid, m)]

        costs = self._node_costs(root)
        if mode not in costs or costs[mode][0] == float("inf"):
            return None
        graph = b.build(emit(root, costs[mode][1]))
        graph.bindings = g.bindings
        return graph


def _around_matmuls(graph: tgraph.GraphOp) -> tuple[Counter, Counter]:
    """Op kinds that are direct operands of matmuls, and direct users of matmul results."""
    before, after = Counter(), Counter()
    for op in graph.block.ops:
        if not isinstance(op, tgraph.MatmulOp):
            continue
        for o in op.operands:
            if isinstance(o.owner, tgraph.IRDLOperation) and not isinstance(o.owner, tgraph.MatmulOp):
                before[_kind(o.owner)] += 1
        for use in op.result.uses:
            if not isinstance(use.operation, (tgraph.MatmulOp, tgraph.OutputOp)):
                after[_kind(use.operation)] += 1
    return before, after


def describe_change(original: tgraph.GraphOp, candidate: tgraph.GraphOp) -> str:
    """A short note on what changed, e.g. 'div moved after matmul', 'split %k dim 2 by s'."""
    notes: list[str] = []
    for op in candidate.block.ops:
        if isinstance(op, tgraph.SplitOp):
            src = op.input
            name = src.name_hint if src.name_hint else "value"
            notes.append(f"split %{name} dim {op.axis} by s")
    (b0, a0), (b1, a1) = _around_matmuls(original), _around_matmuls(candidate)
    for k in sorted(set(b0) | set(a0) | set(b1) | set(a1)):
        if k in ("split", "reshape"):
            continue
        label = k.replace("_", " ")
        if b0[k] > b1[k] and a1[k] > a0[k]:
            notes.append(f"{label} moved after matmul")
        elif b1[k] > b0[k] and a0[k] > a1[k]:
            notes.append(f"{label} moved before matmul")
    combined = [
        op
        for op in candidate.block.ops
        if isinstance(op, tgraph.ReduceOp) and tgraph.tensor_type(op.input).shape[op.axis] == SPLIT
    ]
    if combined:
        notes.append(f"{len(combined)} partial result{'s' if len(combined) > 1 else ''} combined over s")
    if not notes:
        notes.append("reassociated")
    return ", ".join(notes)


def canonical_form(graph: tgraph.GraphOp) -> tuple:
    """The graph as a set of terms: each value named by a digest of its op's name, properties and
    result type and its operands' digests (inputs by position, operands of commutative ops sorted).
    Graphs with equal forms compute the same thing the same way, whatever their value names and
    the order of their independent ops (a rewrite and the enumeration build the same graph so)."""
    terms: dict[SSAValue, str] = {a: f"input{i}" for i, a in enumerate(graph.inputs)}
    for op in graph.block.ops:
        if isinstance(op, tgraph.OutputOp):
            return tuple(terms[o] for o in op.operands), tuple(sorted(set(terms.values())))
        args = [terms[o] for o in op.operands]
        if _kind(op) in _COMMUTATIVE:
            args.sort()
        props = tuple(sorted((k, str(v)) for k, v in op.properties.items()))
        key = (op.name, props, tuple(args), str(op.results[0].type))
        terms[op.results[0]] = hashlib.blake2b(repr(key).encode(), digest_size=16).hexdigest()
    raise AssertionError("a graph ends with tgraph.output")


Nesting = tuple[str, object, str, str]  # (node kind, attr, reduction kind, what it reduces)
Positions = frozenset[int]  # the operands of an elementwise op through which a reduction reaches it


def _reduction(kind: str) -> Reduction:
    """The meaning of a reduction kind ("sum", "max", "mean"); a matmul is a "sum"."""
    return tgraph.ReduceOp.REDUCTIONS[tgraph.ReduceKind(kind)]


def _arity(kind: str) -> int:
    return 2 if kind in _BINARY else 3 if kind in _SELECT else 1


def _commutes(kind: str, attr: object, reduction: str, positions: Positions = frozenset({0})) -> bool:
    """May the elementwise construction (`kind`, `attr`) move across a `reduction` that reaches it
    through the operands `positions`, by the op's declared `Algebra` (dialects/semantics.py) and the
    reduction's `Reduction`? Through every operand (a unary op, or sum(a) + sum(b) = sum(a + b)):

    - the reduction is linear (sum, mean) and the op is linear: f(sum x) = sum f(x); or
    - the reduction folds with a semilattice op (commutative, associative, idempotent, increasing
      in both arguments: max, min) and the op is monotone increasing, f(max x) = max f(x), or is
      that fold itself, max(max a, max b) = max(max(a, b)).

    Through some operands only, the others held fixed along the reduced dim (the rescale of a
    softmax after its matmul, sum_k (e_k / r) = (sum_k e_k) / r), each of them needs: the op is
    linear in it for a linear reduction (`linear_in`: mul, the dividend of div), or increasing in it
    for a semilattice fold (max(x + c) = max(x) + c).

    An op without such a property (gelu, silu, square, `x + c` for a sum, a decreasing op or mul for
    a max), an op with a condition operand (select: the reduction would mix both sides) and any op
    whose semantics are unknown move across nothing."""
    sem = op_semantics(kind, attr)
    if sem is None:
        return False
    alg = sem.algebra
    if alg.condition is not None:
        return False
    red = _reduction(reduction)
    fold = tgraph.BINARY_BY_NAME[red.combine].SEMANTICS if red.combine is not None else None
    semilattice = fold is not None and (
        fold.algebra.commutative and fold.algebra.associative and fold.algebra.idempotent
        and fold.algebra.monotone == (Monotone.INCREASING, Monotone.INCREASING)
    )
    arity = _arity(kind)
    if len(positions) == arity:
        if red.linear and alg.linear:
            return True
        if arity == 1:
            return semilattice and alg.monotone is Monotone.INCREASING
        return semilattice and sem is fold
    monotone = alg.monotone if isinstance(alg.monotone, tuple) else ()
    for i in positions:
        linear = red.linear and i < len(alg.linear_in) and alg.linear_in[i]
        if not (linear or (semilattice and i < len(monotone) and monotone[i] is Monotone.INCREASING)):
            return False
    return True


def _reduced(size: Dim) -> str:
    """What a reduction sums over: its size's symbols without the split count (a combine over the
    split count alone, "split", finishes a reduction over the split dim)."""
    names = sorted(x.name for x in size.free_symbols if x != SPLIT)  # type: ignore[attr-defined]
    if names:
        return "*".join(names)
    return "split" if size.free_symbols else str(size)


def _nesting_key(op: tgraph.ElementwiseOp) -> tuple[str, object]:
    return _node_kind(op), _node_attr(op)


def _nestings(graph: tgraph.GraphOp) -> dict[Nesting, set[Positions]]:
    """(kind, attr, reduction kind, what it reduces) for every elementwise op (unary and binary ops,
    select, scale, `tgraph.scalar`, cast, gelu: keyed as the search builds them) that
    consumes a reduction's result (through any ops), with the operands it reaches the op through,
    one set per op (of a commutative op only how many: its operands' order means nothing); matmuls
    count as sums over their contracted dim."""
    below: dict[SSAValue, set[tuple[str, str]]] = {a: set() for a in graph.inputs}
    out: dict[Nesting, set[Positions]] = {}
    for op in graph.block.ops:
        if isinstance(op, tgraph.OutputOp):
            break
        under = set().union(*(below[o] for o in op.operands))
        if isinstance(op, tgraph.ElementwiseOp):
            key = _nesting_key(op)
            for r, dim in under:
                positions = frozenset(i for i, o in enumerate(op.operands) if (r, dim) in below[o])
                if key[0] in _COMMUTATIVE:
                    positions = frozenset(range(len(positions)))
                out.setdefault((*key, r, dim), set()).add(positions)
        if isinstance(op, tgraph.MatmulOp):
            under = under | {("sum", _reduced(tgraph.tensor_type(op.lhs).shape[-1]))}
        elif isinstance(op, tgraph.ReduceOp):
            under = under | {(op.kind.data.value, _reduced(tgraph.tensor_type(op.input).shape[op.axis]))}
        below[op.results[0]] = under
    return out


def _describe(kind: str, attr: object, positions: Positions = frozenset({0})) -> str:
    if kind == "scale":
        return f"scale by {attr}"
    if kind == OPAQUE:  # e.g. "scalar add 1.5", "gelu tanh"
        name, props, _ = attr  # type: ignore[misc]
        values = dict(props)
        shown = [getattr(values[k].data, "value", values[k].data) for k in ("kind", "approximate") if k in values]
        shown += [values["constant"].value.data] if "constant" in values else []
        return " ".join(str(x) for x in (name.split(".")[1], *shown))
    if _arity(kind) > 1:  # "div (operand 0)", "add (operands 0, 1)"
        return f"{kind} (operand{'s' if len(positions) > 1 else ''} {', '.join(map(str, sorted(positions)))})"
    return kind


def _reductions_of(op: object) -> tuple[str, str] | None:
    """(reduction kind, what it reduces) of a reduction or a matmul (a sum); None for other ops."""
    if isinstance(op, tgraph.MatmulOp):
        return ("sum", _reduced(tgraph.tensor_type(op.lhs).shape[-1]))
    if isinstance(op, tgraph.ReduceOp):
        return (op.kind.data.value, _reduced(tgraph.tensor_type(op.input).shape[op.axis]))
    return None


def _nested_under(graph: tgraph.GraphOp) -> set[Nesting]:
    """(kind, attr, reduction kind, what it reduces) for every elementwise op whose result a reduction consumes (through any ops): the mirror of `_nestings`."""
    above: dict[SSAValue, set[tuple[str, str]]] = {}
    out: set[Nesting] = set()
    for op in reversed(list(graph.block.ops)):
        if isinstance(op, tgraph.OutputOp):
            continue
        downstream = set().union(*(above.get(r, set()) for r in op.results))
        if isinstance(op, tgraph.ElementwiseOp):
            key = _nesting_key(op)
            out |= {(*key, r, dim) for r, dim in downstream}
        own = _reductions_of(op)
        passed = downstream | {own} if own is not None else downstream
        for o in op.operands:
            above.setdefault(o, set()).update(passed)
    return out


def unjustified_nesting(original: tgraph.GraphOp, candidate: tgraph.GraphOp) -> str | None:
    """An elementwise op the candidate moves across a reduction although the op's algebra does not
    let it commute with that reduction (moving a max past `square`, a sum past `exp`, anything past
    gelu, a max past a mul by a row vector): a rewrite no op property justifies, whatever the tests
    say. Moves both ways count: an op the candidate applies to a reduction's result through operands
    the original does not, and an op the original applies to a reduction's result through operands
    that the candidate applies before that reduction instead. Binary ops count per operand: the
    division of a softmax moved after its matmul reaches the matmul's sum through its dividend,
    justified by div's linearity in it. None when every move is justified."""
    before = _nestings(original)
    after = _nestings(candidate)
    for (kind, attr, reduction, dim), occurrences in sorted(after.items(), key=str):
        had = before.get((kind, attr, reduction, dim), set())
        if dim == "split":  # the combine of a Split-K finishes a reduction the original already nests
            had = had.union(*(p for n, p in before.items() if n[:3] == (kind, attr, reduction)))
        for positions in sorted(occurrences, key=sorted):
            new = _newly_reached(positions, had)
            if new is not None and not _commutes(kind, attr, reduction, new):
                return f"{_describe(kind, attr, new)} applied after a {reduction} reduction over {dim}"
    moved_under = _nested_under(candidate) - _nested_under(original)
    for (kind, attr, reduction, dim), occurrences in sorted(before.items(), key=str):
        if (kind, attr, reduction, dim) not in moved_under:
            continue
        for positions in sorted(occurrences, key=sorted):
            lost = _newly_reached(positions, after.get((kind, attr, reduction, dim), set()))
            if lost is not None and not _commutes(kind, attr, reduction, lost):
                return f"{_describe(kind, attr, lost)} moved before a {reduction} reduction over {dim}"
    return None


def _newly_reached(positions: Positions, others: set[Positions]) -> Positions | None:
    """The operands through which a reduction reaches an op with `positions` that it reaches in no
    op of `others` (the same op kind in the other graph), or None where the op is reached through
    no more operands than one of those: operands reordered ((mu - x)^2 for (x - mu)^2) cross no
    reduction (the tests judge them). Where every one of them is reached somewhere, all are new."""
    if len(positions) <= max((len(p) for p in others), default=0):
        return None
    return (positions - frozenset().union(*others)) or positions


def _select_sides(graph: tgraph.GraphOp) -> dict[tuple, set[str]]:
    """For each elementwise op (kind and attribute) of `graph` that meets a select: which of the
    select's sides it is applied to ("a", "b", "condition"); an op applied over the select counts
    as applied to both value sides (f(select(m, a, b)) = select(m, f(a), f(b)))."""
    above: dict[SSAValue, bool] = {a: False for a in graph.inputs}  # depends on a select's result
    ops_under: dict[SSAValue, set[tuple]] = {a: set() for a in graph.inputs}  # elementwise ops it depends on
    out: dict[tuple, set[str]] = {}
    for op in graph.block.ops:
        if isinstance(op, tgraph.OutputOp):
            break
        key = (_node_kind(op), _node_attr(op))
        under = set().union(*(ops_under[o] for o in op.operands))
        is_select = key[0] in _SELECT
        if is_select:
            value_sides = iter(("a", "b"))
            cond = _SELECT[key[0]].algebra.condition
            for i, o in enumerate(op.operands):
                side = "condition" if i == cond else next(value_sides)
                for k in ops_under[o]:
                    out.setdefault(k, set()).add(side)
        elif isinstance(op, tgraph.ElementwiseOp):
            if any(above[o] for o in op.operands):
                out.setdefault(key, set()).update(("a", "b"))
            under = under | {key}
        above[op.results[0]] = is_select or any(above[o] for o in op.operands)
        ops_under[op.results[0]] = under
    return out


def unjustified_select_move(original: tgraph.GraphOp, candidate: tgraph.GraphOp) -> str | None:
    """An elementwise op the candidate applies to other sides of a select than the original does
    (a scale moved from the scores onto the masked scores changes the fill): select commutes with
    an elementwise f only when f goes to both value sides (its algebra's `condition`). None when
    every op meets the selects where it did (or no longer meets them)."""
    before = _select_sides(original)
    for key, sides in sorted(_select_sides(candidate).items(), key=str):
        if sides != before.get(key, set()):
            name = key[0] if key[0] != OPAQUE else key[1][0]  # type: ignore[index]
            return f"{name} applied to side(s) {sorted(sides)} of a select (the input graph: {sorted(before.get(key, set()))})"
    return None


def recomputes_whole_matmul(graph: tgraph.GraphOp) -> bool:
    """A split candidate with a matmul over a split dim that no split feeds, or one over the split
    parts that needs a combined result (a layer norm's statistics before its projection): that
    matmul runs whole in the combine, so the split saves nothing on it."""
    split_syms: set[sympy.Symbol] = set()
    after_split: set[SSAValue] = set()
    combined: set[SSAValue] = set()  # results downstream of a reduction over the split parts
    for op in graph.block.ops:
        if isinstance(op, tgraph.SplitOp):
            split_syms |= tgraph.tensor_type(op.input).shape[op.axis].free_symbols  # type: ignore[arg-type]
        if isinstance(op, tgraph.SplitOp) or any(o in after_split for o in op.operands):
            after_split.update(op.results)
        if isinstance(op, tgraph.MatmulOp) and any(o in combined for o in op.operands):
            if any(SPLIT in tgraph.tensor_type(o).shape for o in op.operands):
                return True
        if any(o in combined for o in op.operands) or (
            isinstance(op, tgraph.ReduceOp) and tgraph.tensor_type(op.input).shape[op.axis] == SPLIT
        ):
            combined.update(op.results)
    for op in graph.block.ops:
        if isinstance(op, tgraph.MatmulOp) and not any(o in after_split for o in op.operands):
            if tgraph.tensor_type(op.lhs).shape[-1].free_symbols & split_syms:
                return True
    return False


def superoptimize_graph(
    graph: tgraph.GraphOp,
    *,
    max_ops: int,
    max_splits: int = 2,
    time_limit: float = 600.0,
    seed: int = 0,
    progress: bool = False,
    max_candidates: int = 16,
    budget: int = 0,
) -> tuple[list[Candidate], SearchStats]:
    """Equivalent graphs of (a symbolized copy of) `graph`, confirmed on other instantiations.

    `budget` bounds the constructions considered (0: DEFAULT_BUDGET), so the result does not depend
    on machine load; `time_limit` is only a safety net (the stats say when it cut the search).
    """
    work = graph.clone()
    if any(d.is_Integer and d != 1 for a in work.inputs for d in tgraph.tensor_type(a).shape):
        symbolize(work)
    if len(work.function_type.outputs.data) != 1:
        raise CleaveError(f"error: cleave-superoptimize: @{graph.sym_name.data} must have exactly one output")
    # a decomposed activation of one input is searched as that input, and put back in front of
    # every candidate (passes/elementwise_cones.py); candidates are checked against the whole graph
    cone = find_cone(work)
    searched = outline(work, cone) if cone is not None else work
    en = Enumerator(searched, max_ops=max_ops, max_splits=max_splits, time_limit=time_limit, seed=seed,
                    progress=progress, budget=budget)
    en.stats.cone_ops = len(cone.ops) if cone is not None else 0
    hits = en.run()
    if progress:
        print(file=sys.stderr)
    found: list[Candidate] = []
    base = graph.sym_name.data
    en.choose()
    checker = Checker(work, en.instantiations[1:], seed=seed)
    seen = {canonical_form(work)}

    def consider(cand: tgraph.GraphOp, note: str | None = None) -> None:
        """Keep `cand` unless it repeats one, gains nothing, or a check refuses it; `note` says
        what a rewrite changed (else `describe_change` tells from the graphs)."""
        form = canonical_form(cand)
        if form in seen:
            en.stats.duplicates += 1
            return
        seen.add(form)
        if (note is None and _only_reshaped(cand, work)) or recomputes_whole_matmul(cand):
            return
        if unjustified_nesting(work, cand) is not None or unjustified_select_move(work, cand) is not None:
            en.stats.unjustified += 1
            return
        if not checker.check(cand):
            en.stats.rejected += 1
            return
        found.append(Candidate(cand, note or describe_change(work, cand)))

    for cid, node, mode in [(c, n, m) for m in en.modes for c in hits for n in en.classes[c].nodes]:
        if len(found) >= max_candidates:
            break
        cand = en.build(node, mode, f"{base}_c{len(found) + 1}")
        if cand is not None:
            consider(inline(cand, cone) if cone is not None else cand)
    # the rescale-after-matmul forms (passes/matmul_factors.py), whether or not the budget reached them
    for cand, note in rescaled_forms(work):
        if len(found) >= max_candidates:
            break
        cand.sym_name = StringAttr(f"{base}_c{len(found) + 1}")
        consider(cand, note)
    en.stats.candidates = len(found)
    en.stats.seconds = time.monotonic() - en.start
    return found, en.stats


def _only_reshaped(cand: tgraph.GraphOp, original: tgraph.GraphOp) -> bool:
    """The candidate only adds size-1 dims and drops them again (no split): nothing gained."""
    kinds = [op.name for op in cand.block.ops]
    return "tgraph.split" not in kinds and kinds.count("tgraph.reshape") > sum(
        op.name == "tgraph.reshape" for op in original.block.ops
    )


@dataclass(frozen=True)
class SuperoptimizePass(CleavePass):
    """Add every equivalent graph found (up to `max-ops` ops, or what the graph needs: `op_limit`) next to its input graph."""

    name = "cleave-superoptimize"

    max_ops: int = 12
    max_splits: int = 2
    budget: int = DEFAULT_BUDGET
    time_limit: float = 600.0
    seed: int = 0
    max_candidates: int = 16

    def check_options(self) -> None:
        for option, value, least in (("max-ops", self.max_ops, 1), ("budget", self.budget, 1),
                                     ("max-splits", self.max_splits, 0), ("max-candidates", self.max_candidates, 0)):
            if value < least:
                raise CleaveError(f"error: cleave-superoptimize: {option} must be at least {least}")
        if not self.time_limit > 0:
            raise CleaveError(f"error: cleave-superoptimize: time-limit must be positive, got {self.time_limit}")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        self.check_options()
        graphs = [g for g in op.body.block.ops if isinstance(g, tgraph.GraphOp) and "cleave.candidate_of" not in g.attributes]
        progress = sys.stderr.isatty()
        for g in graphs:
            if len(g.function_type.outputs.data) > 1:  # the search builds terms of one output
                outputs = len(g.function_type.outputs.data)
                print(f"cleave-superoptimize @{g.sym_name.data}: not searched ({outputs} outputs; the search takes one): "
                      "the graph is scheduled as written", file=sys.stderr)
                continue
            symbolize(g) if any(
                d.is_Integer and d != 1 for a in g.inputs for d in tgraph.tensor_type(a).shape
            ) else None
            cands, stats = superoptimize_graph(
                g,
                max_ops=self.max_ops,
                max_splits=self.max_splits,
                time_limit=self.time_limit,
                seed=self.seed,
                progress=progress,
                max_candidates=self.max_candidates,
                budget=self.budget,
            )
            anchor = g
            for c in cands:
                c.graph.attributes["cleave.candidate_of"] = SymbolRefAttr(g.sym_name.data)
                c.graph.attributes["cleave.note"] = StringAttr(c.note)
                op.body.block.insert_op_after(c.graph, anchor)
                anchor = c.graph
            print(f"cleave-superoptimize @{g.sym_name.data}: {stats.line()}", file=sys.stderr)
            if stats.stopped_by_time:
                print(f"warning: cleave-superoptimize @{g.sym_name.data}: time-limit {self.time_limit} s cut the "
                      "search before its work budget: the candidates may be partial and depend on machine load",
                      file=sys.stderr)
