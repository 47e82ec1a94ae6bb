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
  matmul, Split-K - all preserve these multisets);
- every construction of the output's class is a candidate; it is confirmed by re-running it against
  the input graph on other instantiations (split counts 2 and 3) with fresh inputs, rtol 1e-9.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import product

import numpy as np
import sympy
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr, SymbolRefAttr
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import VerifyException

from cleave_ir.builder import GraphBuilder
from cleave_ir.diagnostics import CleaveError
from cleave_ir.dialects import tgraph
from cleave_ir.interpreter import max_relative_error, random_inputs, run_graph
from cleave_ir.passes.reduced_dims import eventually_reduced
from cleave_ir.passes.symbolize import symbolize
from cleave_ir.shapes import Dim, evaluate_shape, symbol

SPLIT = symbol("s")
_UNARY_FN = {
    "exp": np.exp,
    "sqrt": np.sqrt,
    "rsqrt": lambda x: 1.0 / np.sqrt(x),
    "neg": np.negative,
    "silu": lambda x: x / (1.0 + np.exp(-x)),
    "sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x)),
    "square": np.square,
    "reciprocal": np.reciprocal,
}
_BINARY_FN = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "max": np.maximum}
_COMMUTATIVE = {"add", "mul", "max"}


@dataclass(frozen=True)
class Node:
    """One construction: an op kind, its child classes and its attributes."""

    kind: str  # input | matmul | matmul_t | <unary> | <binary> | scale | reduce_sum | reduce_max | split | reshape
    args: tuple[int, ...]
    attr: object = None  # input index, dim, factor, or target shape


@dataclass
class EClass:
    id: int
    shape: tuple[Dim, ...]
    value: np.ndarray
    nodes: list[Node]
    ops: Counter  # op kinds in the tree expansion of the first construction
    leaves: Counter  # inputs in that tree expansion
    dag: frozenset[int]  # classes (non-input) of the first construction's DAG
    round: int


@dataclass
class SearchStats:
    explored: int = 0
    pruned: int = 0
    classes: int = 0
    candidates: int = 0
    seconds: float = 0.0
    stopped_by_time: bool = False

    def line(self) -> str:
        stop = " (time limit reached)" if self.stopped_by_time else ""
        return (
            f"explored {self.explored}, pruned {self.pruned}, classes {self.classes}, "
            f"candidates {self.candidates}, {self.seconds:.1f} s{stop}"
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
    return op.name.split(".")[1]  # type: ignore[attr-defined]


_NONLINEAR = {"exp", "sqrt", "rsqrt", "silu", "sigmoid", "square", "reciprocal"}
_TRANSPARENT = {"split", "reshape"}  # ops a candidate may add under a nonlinear op


def _signature(ops: Counter, leaves: Counter) -> tuple:
    kept = tuple(sorted((k, n) for k, n in ops.items() if k not in _TRANSPARENT))
    return kept, tuple(sorted(leaves.items()))


def _barriers(graph: tgraph.GraphOp) -> dict[str, set[tuple]]:
    """For each nonlinear op kind, the (op kinds, leaves) signatures of its arguments in the graph.

    Nonlinear ops are barriers for the identities the search is after: an equivalent graph applies
    them to the same arguments, up to Split. A term applying one to anything else is pruned.
    """
    ops: dict[SSAValue, Counter] = {}
    leaves: dict[SSAValue, Counter] = {}
    for i, a in enumerate(graph.inputs):
        ops[a], leaves[a] = Counter(), Counter({i: 1})
    out: dict[str, set[tuple]] = {}
    for op in graph.block.ops:
        if isinstance(op, tgraph.OutputOp):
            continue
        k = _kind(op)
        if k in _NONLINEAR:
            out.setdefault(k, set()).add(_signature(ops[op.operands[0]], leaves[op.operands[0]]))
        c, l = Counter({k: 1}), Counter()
        for o in op.operands:
            c += ops[o]
            l += leaves[o]
        ops[op.results[0]], leaves[op.results[0]] = c, l
    return out


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
    ) -> None:
        self.graph = graph
        self.max_ops = max_ops
        self.max_splits = max_splits
        self.deadline = time.monotonic() + time_limit
        self.progress = progress
        self.stats = SearchStats()
        self.budget_ops, self.budget_leaves, self.factors = _tree_counts(graph)
        self.barriers = _barriers(graph)
        reduced = eventually_reduced(graph)
        self.reducible: set[sympy.Symbol] = {SPLIT}
        for arg, dims in zip(graph.inputs, reduced):
            shape = tgraph.tensor_type(arg).shape
            for d in dims:
                self.reducible |= shape[d].free_symbols  # type: ignore[arg-type]
        self.reduced_inputs = reduced
        self.instantiations = small_instantiations(graph, self.reducible)
        self.bindings = self.instantiations[0]
        self.out_type = tgraph.tensor_type(graph.function_type.outputs.data[0])
        self.inputs = random_inputs(graph, seed, self.bindings)
        self.target = run_graph(graph, self.inputs, bindings=self.bindings)[0]
        self.classes: list[EClass] = []
        self.by_key: dict[tuple, int] = {}
        self.seen: set[Node] = set()
        self.start = time.monotonic()

    # ------------------------------------------------------------------ bookkeeping
    def _key(self, shape: tuple[Dim, ...], value: np.ndarray) -> tuple:
        # ~7 significant digits per element: equivalent constructions differ by ~1e-15
        mantissa, exponent = np.frexp(value)
        q = np.round(mantissa * (1 << 23)).astype(np.int64)
        return (shape, q.tobytes(), exponent.astype(np.int16).tobytes())

    def _allowed(self, kind: str, ops: Counter, leaves: Counter) -> bool:
        for i, n in leaves.items():
            if n > self.budget_leaves[i]:
                return False
        for k, n in ops.items():
            extra = {"split": self.max_splits, "reshape": 1}.get(k, 0)
            if k == "reduce_sum":
                extra = self.max_splits  # reductions over split counts
            if n > self.budget_ops[k] + extra:
                return False
        return True

    def _add(self, node: Node, shape: tuple[Dim, ...], value: np.ndarray, round_: int) -> None:
        self.stats.explored += 1
        if not np.all(np.isfinite(value)):
            self.stats.pruned += 1
            return
        key = self._key(shape, value)
        if key in self.by_key:
            cls = self.classes[self.by_key[key]]
            if node not in cls.nodes:
                cls.nodes.append(node)
            return
        children = [self.classes[a] for a in node.args]
        ops = Counter({node.kind: 1}) if node.kind != "input" else Counter()
        leaves = Counter({node.attr: 1}) if node.kind == "input" else Counter()
        dag: frozenset[int] = frozenset()
        for c in children:
            ops += c.ops
            leaves += c.leaves
            dag |= c.dag
        cid = len(self.classes)
        if node.kind != "input":
            dag = dag | {cid}
        self.classes.append(EClass(cid, shape, value, [node], ops, leaves, dag, round_))
        self.by_key[key] = cid
        self.stats.classes = len(self.classes)

    # ------------------------------------------------------------------ one step
    def _constructions(self, round_: int) -> Iterator[Node]:
        """Constructions with at least one child created in the previous round (semi-naive)."""
        new = [c for c in self.classes if c.round == round_ - 1]
        all_ = list(self.classes)
        for c in new:
            for k in _UNARY_FN:
                if not self.budget_ops[k]:
                    continue
                if k in _NONLINEAR and _signature(c.ops, c.leaves) not in self.barriers.get(k, ()):
                    continue
                yield Node(k, (c.id,))
            for f in sorted(self.factors):
                yield Node("scale", (c.id,), f)
            for d in range(len(c.shape)):
                yield Node("reduce_sum", (c.id,), d)
                yield Node("reduce_max", (c.id,), d)
            if len(c.nodes) == 1 and c.nodes[0].kind == "input":
                i = c.nodes[0].attr
                for d in sorted(self.reduced_inputs[i]):  # type: ignore[index]
                    yield Node("split", (c.id,), d)
            yield Node("reshape", (c.id,), self.out_type.shape)
        for c in new:
            for o in all_:
                if o.round == round_ - 1 and o.id < c.id:
                    continue  # the pair (o, c) is yielded when o is `c`
                if not self._allowed("", c.ops + o.ops, c.leaves + o.leaves) or len(c.dag | o.dag) >= self.max_ops:
                    continue  # no op over this pair can fit the budget
                pairs = [(c.id, o.id), (o.id, c.id)] if o.id != c.id else [(c.id, c.id)]
                for a, b in pairs:
                    for k in ("matmul", "matmul_t"):
                        if self.budget_ops["matmul"] + self.budget_ops["matmul_t"]:
                            yield Node(k, (a, b))
                    for k in _BINARY_FN:
                        if not self.budget_ops[k] or (k in _COMMUTATIVE and a > b):
                            continue
                        yield Node(k, (a, b))

    def _evaluate(self, node: Node) -> tuple[tuple[Dim, ...], np.ndarray] | None:
        cs = [self.classes[a] for a in node.args]
        k = node.kind
        try:
            if k in ("matmul", "matmul_t"):
                shape = tgraph.MatmulOp.infer_shape(cs[0].shape, cs[1].shape, k == "matmul_t")
                b = np.swapaxes(cs[1].value, -1, -2) if k == "matmul_t" else cs[1].value
                return shape, np.matmul(cs[0].value, b)
            if k in _BINARY_FN:
                shape = tgraph.broadcast_shapes(cs[0].shape, cs[1].shape, k)
                return shape, _BINARY_FN[k](cs[0].value, cs[1].value)
            if k in _UNARY_FN:
                return cs[0].shape, _UNARY_FN[k](cs[0].value)
            if k == "scale":
                return cs[0].shape, cs[0].value * node.attr  # type: ignore[operator]
            if k.startswith("reduce_"):
                d = node.attr
                size = cs[0].shape[d]  # type: ignore[index]
                if size == 1 or not size.free_symbols <= self.reducible:
                    return None  # eventually-reduced rule
                shape = tuple(sympy.Integer(1) if i == d else x for i, x in enumerate(cs[0].shape))
                fn = np.sum if k == "reduce_sum" else np.max
                return shape, fn(cs[0].value, axis=d, keepdims=True)  # type: ignore[call-overload]
            if k == "split":
                d = node.attr
                shape = tgraph.SplitOp.infer_shape(cs[0].shape, d, SPLIT)  # type: ignore[arg-type]
                x = cs[0].value
                parts = self.bindings["s"]
                if x.shape[d] % parts:  # type: ignore[index]
                    return None
                new = (*x.shape[:d], parts, x.shape[d] // parts, *x.shape[d + 1 :])  # type: ignore[index, operator]
                return shape, np.moveaxis(x.reshape(new), d, 0)  # type: ignore[arg-type]
            if k == "reshape":
                target = node.attr
                src = [x for x in cs[0].shape if x != 1]
                if src != [x for x in target if x != 1] or tuple(target) == cs[0].shape:  # type: ignore[union-attr]
                    return None
                conc = evaluate_shape(target, self.bindings)  # type: ignore[arg-type]
                return tuple(target), cs[0].value.reshape(conc)  # type: ignore[arg-type]
        except VerifyException:
            return None
        return None

    def run(self) -> list[int]:
        """Enumerate; return the ids of classes equal to the output (the output's class)."""
        for i, arg in enumerate(self.graph.inputs):
            self._add(Node("input", (), i), tgraph.tensor_type(arg).shape, self.inputs[i], 0)
        for round_ in range(1, self.max_ops + 1):
            for node in self._constructions(round_):
                if time.monotonic() > self.deadline:
                    self.stats.stopped_by_time = True
                    break
                if node in self.seen:
                    continue
                self.seen.add(node)
                cs = [self.classes[a] for a in node.args]
                ops = Counter({node.kind: 1})
                leaves: Counter = Counter()
                dag: frozenset[int] = frozenset()
                for c in cs:
                    ops += c.ops
                    leaves += c.leaves
                    dag |= c.dag
                if len(dag) + 1 > self.max_ops or not self._allowed(node.kind, ops, leaves):
                    self.stats.pruned += 1
                    continue
                with np.errstate(all="ignore"):
                    res = self._evaluate(node)
                if res is None:
                    self.stats.pruned += 1
                    continue
                self._add(node, res[0], res[1], round_)
                self._report()
            if self.stats.stopped_by_time:
                break
        self.stats.seconds = time.monotonic() - self.start
        return [
            c.id
            for c in self.classes
            if c.shape == self.out_type.shape and max_relative_error(self.target, c.value) < 1e-9
        ]

    def _report(self) -> None:
        if self.progress and self.stats.explored % 2000 == 0:
            s = self.stats
            print(
                f"\r  explored {s.explored} pruned {s.pruned} classes {s.classes} "
                f"{time.monotonic() - self.start:.1f}s",
                end="",
                file=sys.stderr,
                flush=True,
            )

    # ------------------------------------------------------------------ extraction
    def build(self, root: Node, name: str) -> tgraph.GraphOp:
        """The graph of construction `root`, children by their first construction."""
        g = self.graph
        elt = self.out_type.element_type
        b = GraphBuilder(name, elt)
        args = [
            b.input(n, tgraph.tensor_type(a).shape, tgraph.tensor_type(a).element_type)
            for n, a in zip(g.input_names(), g.inputs)
        ]
        memo: dict[int, SSAValue] = {}

        def emit(node: Node) -> SSAValue:
            xs = [value(a) for a in node.args]
            k = node.kind
            if k == "input":
                return args[node.attr]  # type: ignore[index]
            if k in ("matmul", "matmul_t"):
                return b.matmul(xs[0], xs[1], transpose_b=k == "matmul_t")
            if k in _BINARY_FN:
                return b.binary(k, xs[0], xs[1])
            if k in _UNARY_FN:
                return b.unary(k, xs[0])
            if k == "scale":
                return b.scale(xs[0], node.attr)  # type: ignore[arg-type]
            if k.startswith("reduce_"):
                return b.reduce(k.removeprefix("reduce_"), xs[0], node.attr)  # type: ignore[arg-type]
            if k == "split":
                return b.split(xs[0], node.attr, SPLIT)  # type: ignore[arg-type]
            return b.reshape(xs[0], node.attr)  # type: ignore[arg-type]

        def value(cid: int) -> SSAValue:
            if cid not in memo:
                memo[cid] = emit(self.classes[cid].nodes[0])
            return memo[cid]

        graph = b.build(emit(root))
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
    if not notes:
        notes.append("reassociated")
    return ", ".join(notes)


def _same_structure(a: tgraph.GraphOp, b: tgraph.GraphOp) -> bool:
    def text(g: tgraph.GraphOp) -> list[str]:
        return [f"{op.name}{dict(op.properties)}{[str(o.type) for o in op.operands]}" for op in g.block.ops]

    return sorted(text(a)) == sorted(text(b))


def superoptimize_graph(
    graph: tgraph.GraphOp,
    *,
    max_ops: int,
    max_splits: int = 2,
    time_limit: float = 60.0,
    seed: int = 0,
    progress: bool = False,
    max_candidates: int = 16,
) -> tuple[list[Candidate], SearchStats]:
    """Equivalent graphs of (a symbolized copy of) `graph`, confirmed on other instantiations."""
    work = graph.clone()
    if any(d.is_Integer and d != 1 for a in work.inputs for d in tgraph.tensor_type(a).shape):
        symbolize(work)
    if len(work.function_type.outputs.data) != 1:
        raise CleaveError(f"cleave-superoptimize: @{graph.sym_name.data} must have exactly one output")
    en = Enumerator(work, max_ops=max_ops, max_splits=max_splits, time_limit=time_limit, seed=seed, progress=progress)
    hits = en.run()
    if progress:
        print(file=sys.stderr)
    found: list[Candidate] = []
    base = graph.sym_name.data
    for cid in hits:
        for node in en.classes[cid].nodes:
            if len(found) >= max_candidates:
                break
            cand = en.build(node, f"{base}_c{len(found) + 1}")
            if _same_structure(cand, work):
                continue
            if not _confirm(work, cand, en.instantiations[1:], seed):
                continue
            found.append(Candidate(cand, describe_change(work, cand)))
    en.stats.candidates = len(found)
    return found, en.stats


def _confirm(reference: tgraph.GraphOp, cand: tgraph.GraphOp, bindings: Sequence[dict[str, int]], seed: int) -> bool:
    for k, b in enumerate(bindings):
        xs = random_inputs(reference, seed + 1000 + k, b)
        with np.errstate(all="ignore"):
            want = run_graph(reference, xs, bindings=b)[0]
            got = run_graph(cand, xs, bindings=b)[0]
        if max_relative_error(want, got) > 1e-9:
            return False
    return True


@dataclass(frozen=True)
class SuperoptimizePass(ModulePass):
    """Add every equivalent graph found (up to `max-ops` ops) next to its input graph."""

    name = "cleave-superoptimize"

    max_ops: int = 8
    max_splits: int = 2
    time_limit: float = 60.0
    seed: int = 0
    max_candidates: int = 16

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.max_ops < 1:
            raise CleaveError("cleave-superoptimize: max-ops must be at least 1")
        graphs = [g for g in op.body.block.ops if isinstance(g, tgraph.GraphOp) and "cleave.candidate_of" not in g.attributes]
        progress = sys.stderr.isatty()
        for g in graphs:
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
            )
            anchor = g
            for c in cands:
                c.graph.attributes["cleave.candidate_of"] = SymbolRefAttr(g.sym_name.data)
                c.graph.attributes["cleave.note"] = StringAttr(c.note)
                op.body.block.insert_op_after(c.graph, anchor)
                anchor = c.graph
            print(f"cleave-superoptimize @{g.sym_name.data}: {stats.line()}", file=sys.stderr)
