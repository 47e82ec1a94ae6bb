"""`cleave-symbolize`: every dim that is not 1 becomes a symbol (paper §4).

Dims that the ops force to be equal (matmul contracting dims, broadcast partners, ...) share one
symbol; a split's part count is a symbol `s` that must divide the split dim. The original sizes are
kept in the graph's `bindings` attribute and the divisibility constraints in `constraints`
(`"s | d3"`: s divides d3), so the concrete graph can be restored and small instantiations chosen.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
import sympy
from xdsl.context import Context
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FunctionType,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    i64,
)
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import VerifyException

from cleave_ir.dialects import tgraph
from cleave_ir.passes.options import CleavePass
from cleave_ir.shapes import Dim, evaluate, evaluate_shape, symbol
from cleave_ir.diagnostics import CleaveError


class _Unifier:
    """Substitution over dim symbols, built by unifying dims the ops require equal."""

    def __init__(self) -> None:
        self.subst: dict[sympy.Symbol, Dim] = {}

    def resolve(self, d: Dim) -> Dim:
        for _ in range(64):
            new = d.xreplace(self.subst)
            if new == d:
                return sympy.simplify(d) if not d.is_Atom else d
            d = new
        return d

    def unify(self, a: Dim, b: Dim, where: str) -> None:
        a, b = self.resolve(a), self.resolve(b)
        if a == b:
            return
        if isinstance(a, sympy.Symbol) and a not in b.free_symbols:
            self.subst[a] = b
        elif isinstance(b, sympy.Symbol) and b not in a.free_symbols:
            self.subst[b] = a
        else:
            # e.g. k/s1 == k/s2 (two splits feeding one matmul): solve for one of the symbols
            for sym in sorted(a.free_symbols | b.free_symbols, key=lambda x: x.name):
                solutions = sympy.solve(sympy.Eq(a, b), sym)
                if len(solutions) == 1 and sym not in solutions[0].free_symbols:
                    self.subst[sym] = solutions[0]
                    return
            raise CleaveError(f"error: {where}: cannot make the dims {a} and {b} equal")


@dataclass
class SymbolicGraph:
    """Symbolic shapes of every value of a graph plus the constraints and the original binding."""

    shapes: dict[SSAValue, tuple[Dim, ...]]
    bindings: dict[str, int]
    divides: list[tuple[Dim, Dim]]


def symbolize_graph(graph: tgraph.GraphOp, lift_ones: Collection[tuple[int, int]] = ()) -> SymbolicGraph:
    """Infer symbolic shapes for `graph` (without changing it).

    `lift_ones` names (input index, dim) pairs of size 1 that get a symbol anyway (dynamic dims whose
    representative size is 1); a reshape keeps such a dim where the result has a 1 at the same
    position counted from the right.
    """
    original = graph.binding_values()
    u = _Unifier()
    fresh = iter(symbol(f"_t{i}") for i in range(1 << 30))
    origin: dict[sympy.Symbol, int] = {}  # temporary symbol -> original size
    shapes: dict[SSAValue, tuple[Dim, ...]] = {}
    divides: list[tuple[Dim, Dim]] = []

    def lift(d: Dim, force: bool = False) -> Dim:
        if d == 1 and not force:
            return d
        if d.is_Integer:
            s = next(fresh)
            origin[s] = int(d)
            return s
        return d  # already symbolic: keep the user's symbol

    for i, arg in enumerate(graph.inputs):
        shapes[arg] = tuple(lift(d, (i, j) in lift_ones) for j, d in enumerate(tgraph.tensor_type(arg).shape))

    op: Operation | None = None
    try:
        for op in graph.block.ops:
            where = f"{op.name} in @{graph.sym_name.data}"
            if isinstance(op, tgraph.OutputOp):
                continue
            ins = [shapes[o] for o in op.operands]
            if isinstance(op, tgraph.MatmulOp):
                a, b = ins
                if op.transpose_b is not None:
                    n, k2 = b[-2], b[-1]
                else:
                    k2, n = b[-2], b[-1]
                u.unify(a[-1], k2, where)
                batch = [_broadcast(u, x, y, where) for x, y in zip(a[:-2], b[:-2])]
                out = (*batch, a[-2], n)
            elif isinstance(op, tgraph.ElementwiseOp):  # size-1 broadcasting between all operands
                out = ins[0]
                for other in ins[1:]:
                    out = tuple(_broadcast(u, x, y, where) for x, y in zip(out, other))
            elif isinstance(op, tgraph.ReduceOp):
                out = tuple(sympy.Integer(1) if i == op.axis else d for i, d in enumerate(ins[0]))
            elif isinstance(op, tgraph.ReshapeOp):
                in_shape, res_shape = tgraph.tensor_type(op.input).shape, tgraph.tensor_type(op.result).shape
                src = iter(d for d, c in zip(ins[0], in_shape) if c != 1)
                lifted = {len(in_shape) - i: d for i, (d, c) in enumerate(zip(ins[0], in_shape)) if c == 1 and d != 1}
                out = tuple(
                    lifted.pop(len(res_shape) - i, sympy.Integer(1)) if c == 1 else next(src)
                    for i, c in enumerate(res_shape)
                )
                if lifted:
                    raise CleaveError(f"error: {where}: a dynamic dim of size 1 is dropped by this reshape")
            elif isinstance(op, tgraph.SplitOp):
                parts = lift(op.parts)
                k = ins[0][op.axis]
                divides.append((parts, k))
                out = (parts, *(k / parts if i == op.axis else d for i, d in enumerate(ins[0])))
            elif isinstance(op, tgraph.TransposeOp):
                out = tuple(ins[0][p] for p in op.permutation)
            elif isinstance(op, tgraph.SliceOp):
                # a window of fixed elements: the dim it cuts keeps its size, the result has its own
                u.unify(ins[0][op.axis], tgraph.tensor_type(op.input).shape[op.axis], where)
                size = tgraph.tensor_type(op.result).shape[op.axis]
                out = tuple(size if i == op.axis else d for i, d in enumerate(ins[0]))
            elif isinstance(op, tgraph.ConcatOp):
                for other in ins[1:]:
                    for i, (a, b) in enumerate(zip(ins[0], other)):
                        if i != op.axis:
                            u.unify(a, b, where)
                out = tuple(sympy.Add(*(x[op.axis] for x in ins)) if i == op.axis else d for i, d in enumerate(ins[0]))
            else:
                raise CleaveError(f"error: cleave-symbolize: unsupported op {op.name} in @{graph.sym_name.data}")
            shapes[op.results[0]] = tuple(out)
    except CleaveError as e:  # located at the op it is about
        raise CleaveError(str(e), op=e.op or op) from None

    # name the surviving temporaries d0, d1, ... in order of first appearance; split parts s, s1, ...
    taken = {
        s.name
        for v in graph.values()
        for s in _syms(tgraph.tensor_type(v).shape)
    }
    split_parts = {u.resolve(p) for p, _ in divides}
    rename: dict[sympy.Symbol, sympy.Symbol] = {}
    counters = {"d": 0, "s": 0}
    bindings = dict(original)
    for value_shape in shapes.values():
        for d in value_shape:
            for s in sorted(_syms((u.resolve(d),)), key=lambda x: x.name):
                if s in rename or not s.name.startswith("_t"):
                    continue
                prefix = "s" if s in split_parts else "d"
                while True:
                    n = counters[prefix]
                    counters[prefix] += 1
                    name = f"{prefix}{n}" if prefix == "d" or n else "s"
                    if name not in taken:
                        break
                taken.add(name)
                rename[s] = symbol(name)
    for tmp, size in origin.items():
        r = u.resolve(tmp)
        if isinstance(r, sympy.Symbol) and r in rename:
            bindings[rename[r].name] = size

    def final(d: Dim) -> Dim:
        r = u.resolve(d).xreplace(rename)
        return r if r.is_Atom else sympy.simplify(r)

    return SymbolicGraph(
        shapes={v: tuple(final(d) for d in s) for v, s in shapes.items()},
        bindings=bindings,
        divides=[(final(p), final(k)) for p, k in divides],
    )


def reduces_dynamic_dim(graph: tgraph.GraphOp) -> bool:
    """Whether a dim `graph` declares `dynamic` does not reach its output (it is reduced over: an
    attention's key length). A schedule serving every size of it must then loop over it."""
    lift = {(i, d) for i in range(len(graph.inputs)) for d in (graph.input_annotation(i, "dynamic") or ())}
    if not lift:
        return False
    try:
        sg = symbolize_graph(graph, lift)
    except CleaveError:
        return False
    dynamic = set().union(*(sympy.sympify(sg.shapes[graph.inputs[i]][d]).free_symbols for i, d in lift))
    reached = set().union(*(sympy.sympify(d).free_symbols for out in graph.output_op.outputs for d in sg.shapes[out]))
    return bool(dynamic - reached)


def _syms(dims: Sequence[Dim]) -> list[sympy.Symbol]:
    out: list[sympy.Symbol] = []
    for d in dims:
        out.extend(s for s in d.free_symbols if isinstance(s, sympy.Symbol))
    return out


def _broadcast(u: _Unifier, a: Dim, b: Dim, where: str) -> Dim:
    if a == 1:
        return b
    if b == 1:
        return a
    u.unify(a, b, where)
    return a


def retype_graph(graph: tgraph.GraphOp, shape_of: Mapping[SSAValue, Sequence[Dim]]) -> None:
    """Give every value of `graph` the shape `shape_of[value]` (element types unchanged)."""
    for v in graph.values():
        t = tgraph.tensor_type(v)
        new = t.with_shape(shape_of[v])
        if new != t:
            Rewriter.replace_value_with_new_type(v, new)
    outs = [o.type for o in graph.output_op.outputs]
    graph.function_type = FunctionType.from_lists(list(graph.block.arg_types), outs)


def constraint_strings(divides: Sequence[tuple[Dim, Dim]]) -> list[str]:
    return [f"{p} | {k}" for p, k in divides]


def _bindings_attr(bindings: Mapping[str, int]) -> DictionaryAttr:
    return DictionaryAttr({k: IntegerAttr(v, i64) for k, v in sorted(bindings.items())})


def symbolize(graph: tgraph.GraphOp) -> None:
    """Rewrite `graph` in place to its symbolic form (see module docstring)."""
    sg = symbolize_graph(graph)
    before = graph.binding_values()
    for v, shape in sg.shapes.items():  # the new binding must reproduce every original shape
        old = tgraph.tensor_type(v).shape
        if all(s.name in before for s in _syms(old)):
            if evaluate_shape(shape, sg.bindings) != evaluate_shape(old, before):
                raise CleaveError(
                    f"cleave-symbolize: @{graph.sym_name.data}: {sg.bindings} does not restore {old}"
                )
    try:
        retype_graph(graph, sg.shapes)
    except VerifyException:
        # a concat of unequal parts (4095 + 1 rows) has a dim that no product of symbols is
        concat = next((op for op in graph.block.ops if isinstance(op, tgraph.ConcatOp)), None)
        if concat is None:
            raise
        raise CleaveError(
            f"error: cleave-symbolize: {concat.name} in @{graph.sym_name.data} is not symbolized (nor searched); "
            "run cleave-fold-structural first, as cleave-pipeline does, to move it to the graph's boundary",
            op=concat,
        ) from None
    graph.bindings = _bindings_attr(sg.bindings)
    if sg.divides:
        graph.attributes["constraints"] = ArrayAttr(StringAttr(c) for c in constraint_strings(sg.divides))


def instantiate(graph: tgraph.GraphOp, bindings: Mapping[str, int]) -> tgraph.GraphOp:
    """A concrete copy of `graph` with every symbol replaced by its value (graph's own bindings first)."""
    values = {**graph.binding_values(), **bindings}
    clone = graph.clone()
    shapes: dict[SSAValue, tuple[Dim, ...]] = {}
    for v in clone.values():
        try:
            shapes[v] = tuple(sympy.Integer(evaluate(d, values)) for d in tgraph.tensor_type(v).shape)
        except ValueError as e:
            raise CleaveError(f"error: @{graph.sym_name.data}: {e}") from None
    retype_graph(clone, shapes)
    clone.bindings = None
    clone.attributes.pop("constraints", None)
    return clone


@dataclass(frozen=True)
class SymbolizePass(CleavePass):
    """Replace every non-1 dim by a symbol; record the original binding and the constraints."""

    name = "cleave-symbolize"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for graph in list(op.walk()):
            if isinstance(graph, tgraph.GraphOp):
                symbolize(graph)


@dataclass(frozen=True)
class BindSymbolsPass(CleavePass):
    """Replace symbols by integers: `cleave-bind{values="d1=64 d3=32"}`, or the graph's own bindings."""

    name = "cleave-bind"

    values: str = ""

    def overrides(self) -> dict[str, int]:
        """The `values` option as a dict."""
        overrides: dict[str, int] = {}
        for item in self.values.replace(",", " ").split():
            name, _, value = item.partition("=")
            if not value.isdigit() or int(value) < 1:
                raise CleaveError(f"error: cleave-bind: expected NAME=POSITIVE_INT, got '{item}'")
            overrides[name] = int(value)
        return overrides

    def check_options(self) -> None:
        self.overrides()

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        overrides = self.overrides()
        for graph in [g for g in op.walk() if isinstance(g, tgraph.GraphOp)]:
            concrete = instantiate(graph, overrides)
            Rewriter.replace_op(graph, concrete)
