"""`cleave-concretize`: bind the original shapes back, enumerate split counts, re-check (paper §4).

For every symbolic graph of the module (the input graph and its candidates), the symbols take the
sizes in the graph's `bindings`. A candidate with Split gets one concrete graph per split count
(divisors of the split dim, within `split-counts`). Every concrete candidate is re-checked against the
concrete input graph with fresh float64 inputs at the original sizes; a candidate that fails is
dropped with a warning naming it.

The check (passes/equivalence.py) has two parts: at the original sizes, one trial on mixed-sign
inputs (shifted normal) and one on standard-normal inputs; at small sizes with the same split count,
the full check (six input distributions, two instantiations; at least two trials must have finite
outputs there, while the original-size trials may all leave the domain, e.g. rsqrt of negative
inputs). The reference outputs are computed
once per size and shared by all candidates.

Interpreting a whole attention graph at its original sizes in float64 takes tens of GiB, so when the
check would need more than `max-check-gb`, dims that no output reduces (batch, heads, query rows)
are sampled down to a few indices; every reduced dim - where reassociation and Split change the
arithmetic - keeps its original size. The graph records which sizes were checked.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, ModuleOp, StringAttr, i64
from xdsl.rewriter import Rewriter

from cleave_ir.diagnostics import CleaveError
from cleave_ir.dialects import tgraph
from cleave_ir.passes.equivalence import Checker
from cleave_ir.passes.options import CleavePass
from cleave_ir.passes.reduced_dims import eventually_reduced
from cleave_ir.passes.symbolize import instantiate
from cleave_ir.shapes import evaluate_shape

SPLIT_SYMBOL = "s"


def _symbols(graph: tgraph.GraphOp) -> set[str]:
    values = graph.values()
    return {s.name for v in values for d in tgraph.tensor_type(v).shape for s in d.free_symbols}  # type: ignore[attr-defined]


def split_counts(graph: tgraph.GraphOp, allowed: tuple[int, ...]) -> list[int]:
    """The counts in `allowed` that divide every dim the graph splits (at its bindings)."""
    b = graph.binding_values()
    sizes = []
    for op in graph.block.ops:
        if isinstance(op, tgraph.SplitOp):
            sizes.append(evaluate_shape([tgraph.tensor_type(op.input).shape[op.axis]], b)[0])
    return [c for c in allowed if all(size % c == 0 for size in sizes)]


def check_bindings(graph: tgraph.GraphOp, b: dict[str, int], max_gb: float) -> dict[str, int]:
    """`b`, with dims sampled down if checking `graph` would exceed `max_gb`: never-reduced dims
    first (largest first), then, where those are not enough (a contraction over 10^8), the reduced
    ones; a split dim keeps a multiple of the split count."""
    if _bytes(graph, b) <= max_gb * 2**30:
        return b
    reduced: set[str] = set()
    for arg, dims in zip(graph.inputs, eventually_reduced(graph)):
        for d in dims:
            reduced |= {s.name for s in tgraph.tensor_type(arg).shape[d].free_symbols}  # type: ignore[attr-defined]
    split = _split_symbols(graph)
    sampled = dict(b)
    for name in sorted((n for n in b if n != SPLIT_SYMBOL), key=lambda n: (n in reduced, -b[n])):
        sampled[name] = min(b[name], 4 * (b.get(SPLIT_SYMBOL, 1) if name in split else 1))
        if _bytes(graph, sampled) <= max_gb * 2**30:
            break
    return sampled


def _bytes(graph: tgraph.GraphOp, bindings: dict[str, int]) -> int:
    values = graph.values()
    try:
        return sum(8 * int(np.prod(evaluate_shape(tgraph.tensor_type(v).shape, bindings))) for v in values)
    except ValueError:
        return 0


def _split_symbols(graph: tgraph.GraphOp) -> set[str]:
    """The symbols of the dims `graph` splits."""
    return {
        s.name
        for op in graph.block.ops
        if isinstance(op, tgraph.SplitOp)
        for s in tgraph.tensor_type(op.input).shape[op.axis].free_symbols  # type: ignore[attr-defined]
    }


def small_bindings(graph: tgraph.GraphOp, count: int | None, n: int = 2) -> list[dict[str, int]]:
    """`n` small instantiations of the symbols of `graph`, split dims divisible by `count` parts."""
    split_syms = _split_symbols(graph)
    plain = [2, 3, 5, 4, 7]
    out = []
    for k in range(n):
        b = {name: (count or 1) * (k + 2) if name in split_syms else plain[(i + k) % len(plain)]
             for i, name in enumerate(sorted(_symbols(graph) - {SPLIT_SYMBOL}))}
        if count is not None:
            b[SPLIT_SYMBOL] = count
        out.append(b)
    return out


@dataclass(frozen=True)
class ConcretizePass(CleavePass):
    """Bind original shapes, one graph per split count, re-check every candidate at those shapes."""

    name = "cleave-concretize"

    split_counts: tuple[int, ...] = (2, 4, 8, 16, 32)
    max_check_gb: float = 2.0
    seed: int = 1
    rtol: float = 1e-9

    def check_options(self) -> None:
        if not self.split_counts or any(c < 2 for c in self.split_counts):
            raise CleaveError("error: cleave-concretize: split-counts must be integers >= 2")
        if not self.max_check_gb > 0:
            raise CleaveError(f"error: cleave-concretize: max-check-gb must be positive, got {self.max_check_gb}")
        if not self.rtol > 0:
            raise CleaveError(f"error: cleave-concretize: rtol must be positive, got {self.rtol}")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        self.check_options()
        graphs = [g for g in op.body.block.ops if isinstance(g, tgraph.GraphOp)]
        inputs = {g.sym_name.data: g for g in graphs if "cleave.candidate_of" not in g.attributes}
        kept: dict[str, int] = {}
        dropped: dict[str, int] = {}
        checkers: dict[tuple, Checker] = {}
        for g in graphs:
            ref = inputs.get(_origin(g))
            if ref is None:
                raise CleaveError(f"error: cleave-concretize: @{g.sym_name.data} names a missing input @{_origin(g)}")
            if g is ref:
                continue
            instances, failed = self._checked_instances(ref, g, checkers)
            for concrete in instances:
                op.body.block.insert_op_before(concrete, g)
            kept[_origin(g)] = kept.get(_origin(g), 0) + len(instances)
            dropped[_origin(g)] = dropped.get(_origin(g), 0) + failed
            Rewriter.erase_op(g)
        for name in inputs:
            print(
                f"cleave-concretize @{name}: {kept.get(name, 0)} concrete candidates checked at the "
                f"original shapes, {dropped.get(name, 0)} dropped",
                file=sys.stderr,
            )
        for ref in inputs.values():  # the input graphs become concrete last: the checks need them
            if _symbols(ref):
                Rewriter.replace_op(ref, instantiate(ref, {}))

    def _checked_instances(
        self, ref: tgraph.GraphOp, graph: tgraph.GraphOp, checkers: dict[tuple, Checker]
    ) -> tuple[list[tgraph.GraphOp], int]:
        """The concrete instances of `graph` that agree with `ref`, and how many did not."""
        has_split = any(isinstance(o, tgraph.SplitOp) for o in graph.block.ops)
        counts: list[int | None] = list(split_counts(graph, tuple(self.split_counts))) if has_split else [None]
        out = []
        failed = 0
        for count in counts:
            extra = {} if count is None else {SPLIT_SYMBOL: count}
            name = graph.sym_name.data + ("" if count is None else f"_s{count}")
            bindings = {**graph.binding_values(), **extra}
            checked = check_bindings(graph, bindings, self.max_check_gb)
            verdict = self._checker(checkers, ref, [checked], ("shifted", "normal"), 0).check(graph, extra)
            where = "at the original shapes"
            if verdict:
                verdict = self._checker(checkers, ref, small_bindings(graph, count), None, 2).check(graph, extra)
                where = "at small shapes"
            if not verdict:
                print(
                    f"warning: cleave-concretize: dropped @{name}: differs from @{ref.sym_name.data} "
                    f"{where} ({verdict.failure})",
                    file=sys.stderr,
                )
                failed += 1
                continue
            concrete = instantiate(graph, extra)
            concrete.sym_name = StringAttr(name)
            if count is not None:
                concrete.attributes["cleave.split_count"] = IntegerAttr(count, i64)
            if checked != bindings:
                concrete.attributes["cleave.checked_at"] = DictionaryAttr(
                    {k: IntegerAttr(v, i64) for k, v in sorted(checked.items())}
                )
            out.append(concrete)
        return out, failed

    def _checker(self, checkers: dict[tuple, Checker], ref: tgraph.GraphOp, bindings: list[dict[str, int]], distributions: tuple[str, ...] | None,
                 min_informative: int) -> Checker:
        """A checker per reference and sizes (the split count does not change the reference)."""
        key = (tuple(_reference_key(ref, b) for b in bindings), distributions)
        if key not in checkers:
            kwargs = {} if distributions is None else {"distributions": distributions}
            checkers[key] = Checker(ref, bindings, seed=self.seed, rtol=self.rtol,
                                          min_informative=min_informative, **kwargs)  # type: ignore[arg-type]
        return checkers[key]


def _reference_key(ref: tgraph.GraphOp, bindings: dict[str, int]) -> tuple:
    used = _symbols(ref)
    return (ref.sym_name.data, tuple(sorted((k, v) for k, v in bindings.items() if k in used)))


def _origin(graph: tgraph.GraphOp) -> str:
    return tgraph.referenced_symbol(graph, "cleave.candidate_of") or graph.sym_name.data
