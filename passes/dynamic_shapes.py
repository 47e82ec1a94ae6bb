"""`cleave-dynamic-shapes`: kernels whose dims declared `dynamic` stay symbolic (paper §6.3).

Scheduling needs concrete sizes, so every kernel is scheduled at the representative shape. For a
kernel whose graph reads a dynamic dim, this pass schedules the same configuration again at three
other sizes of that dim, checks that the kernels have the same structure, and fits every size,
extent and offset that changes as an affine function of the dim (`L/16*p0`, `L/2048`). The kernel
then carries the dim as a symbol; `cleave.dynamic = {k_d2 = 2048}` names it with its quantum: every
expression is integral when the size is a multiple of the quantum, and a kernel given another size
runs over the size rounded up to it. Loads past the end read zeros and stores past it are dropped;
where a reduction (a `reduce` or a matmul's contracting dim) runs over the dynamic dim, an
`itgraph.mask` sets the padding to the reduction's identity first, so the padding never counts.

A dynamic dim is named after the first graph input that has it: dim 2 of `%k` is `k_d2`.

A candidate of several kernels (a Split-K split and its combine, a graph cut into pieces) serves
every size when each of its kernels does: a later kernel reads the dynamic dims of the values it
takes from earlier ones (partials, intermediates named by `cleave.output_names`), and a kernel
none of whose shapes depends on a dynamic dim (a FlashDecoding combine, whose partials have the
split count's shape) stays static and serves every size as it is. When some candidate of a graph
serves every size, kernels that only serve the representative size are dropped; otherwise every
kernel of the graph stays static (with a warning). A padded graph (`padded_dims`: it runs at its
real sizes only) where no candidate serves every size gets its kernels rebuilt with the padded dims
*held* at the padded size (`cleave.bounded`): such a kernel serves every size up to it, masked, so
a LayerNorm's whole 3072-wide row tile serves its real 3000 columns.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

import sympy
from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, FunctionType, IntegerAttr, ModuleOp, StringAttr, i64
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from cleave_ir.diagnostics import CleaveError
from cleave_ir.dialects import cleave
from cleave_ir.dialects.cleave import ExprAttr, Memory, MemoryAttr, Stage
from cleave_ir.dialects import itgraph, tgraph
from cleave_ir.dialects.itgraph import MaskFill
from cleave_ir.passes import partition_kernels
from cleave_ir.passes.options import CleavePass
from cleave_ir.passes.padded_dims import PADDED
from cleave_ir.passes.place_memory import place
from cleave_ir.passes.schedule import Config, build_kernel, plan
from cleave_ir.passes.symbolize import instantiate, retype_graph, symbolize_graph
from cleave_ir.passes.tmap_propagation import Unschedulable
from cleave_ir.shapes import Dim, as_dim, symbol


class NotDynamic(CleaveError):
    """The kernel's structure changes with the dynamic dim: it cannot serve every size."""


def dynamic_inputs(graph: tgraph.GraphOp) -> dict[str, list[int]]:
    """Input name -> its dynamic dims, from the `dynamic` annotations of the graph."""
    out: dict[str, list[int]] = {}
    for i, arg in enumerate(graph.inputs):
        dims = graph.input_annotation(i, "dynamic")
        if dims:
            out[arg.name_hint or f"arg{i}"] = list(dims)
    return out


# ----------------------------------------------------------------------------- fitting
def _fit(values: Sequence[int], points: Sequence[Mapping[sympy.Symbol, int]], where: str) -> Dim:
    """beta + sum(alpha_i * sym_i) through values[j] at points[j]; points[0] is the base, points[1+i]
    moves only symbol i, the last point moves all of them and checks the fit."""
    syms = list(points[0])
    alpha = {}
    for i, s in enumerate(syms):
        dv, ds = values[1 + i] - values[0], points[1 + i][s] - points[0][s]
        alpha[s] = Fraction(dv, ds)
    beta = values[0] - sum(alpha[s] * points[0][s] for s in syms)
    check = beta + sum(alpha[s] * points[-1][s] for s in syms)
    if check != values[-1]:
        raise NotDynamic(f"{where} is not affine in the dynamic dim(s)")
    expr = sympy.Rational(beta.numerator, beta.denominator)
    for s in syms:
        expr += sympy.Rational(alpha[s].numerator, alpha[s].denominator) * s
    return expr


def _fit_dims(dims: Sequence[Sequence[Dim]], points: Sequence[Mapping[sympy.Symbol, int]], where: str) -> list[Dim]:
    if len({len(d) for d in dims}) != 1:
        raise NotDynamic(f"{where}: the rank changes with the dynamic dim")
    return [_fit([int(d[k]) for d in dims], points, f"{where} dim {k}") for k in range(len(dims[0]))]


def _fit_offset(exprs: Sequence[Dim], points: Sequence[Mapping[sympy.Symbol, int]], where: str) -> Dim:
    loop_vars = sorted(set().union(*(e.free_symbols for e in exprs)), key=str)
    out = _fit([int(e.subs({v: 0 for v in loop_vars})) for e in exprs], points, where)
    for v in loop_vars:
        out += _fit([int(sympy.expand(e).coeff(v)) for e in exprs], points, f"{where} ({v})") * v
    return out


# ----------------------------------------------------------------------------- the kernel
@dataclass
class _Family:
    """What a dynamic kernel is rebuilt from: its graph made symbolic along the dynamic dims."""

    graph: tgraph.GraphOp  # symbolic along every dim (d0, d1, ...), with its bindings
    dynamic: dict[sympy.Symbol, str]  # symbol of the graph -> the dynamic dim's name
    representative: dict[sympy.Symbol, int]


def _symbolic(graph: tgraph.GraphOp, lifted: dict[str, list[int]], names: dict[str, list[str | None]]) -> _Family | None:
    """The graph with symbols for its dims; None when none of its dims is dynamic.

    `lifted[input] = dims` marks dynamic dims (also of size 1); `names[input][dim]` names them.
    """
    lift = {(i, d) for i, a in enumerate(graph.inputs) for d in lifted.get(a.name_hint or "", ())}
    if not lift:
        return None
    sg = symbolize_graph(graph, lift)
    work = graph.clone()
    retype_graph(work, {w: sg.shapes[v] for w, v in zip(work.values(), graph.values())})
    dynamic: dict[sympy.Symbol, str] = {}
    rep: dict[sympy.Symbol, int] = {}
    for i, d in sorted(lift):
        s = sg.shapes[graph.inputs[i]][d]
        if not isinstance(s, sympy.Symbol):
            raise NotDynamic(f"the graph needs dim {d} of %{graph.inputs[i].name_hint} to be {s}")
        name = names.get(graph.inputs[i].name_hint or "", [None] * (d + 1))[d] or f"{graph.inputs[i].name_hint}_d{d}"
        dynamic.setdefault(s, name)
        rep[s] = sg.bindings[s.name]
    work.bindings = DictionaryAttr(
        {k: IntegerAttr(v, i64) for k, v in sorted(sg.bindings.items()) if symbol(k) not in dynamic}
    )
    return _Family(work, dynamic, rep)


def _schedule_at(family: _Family, config: Config, sizes: Mapping[sympy.Symbol, int], name: str) -> itgraph.KernelOp:
    binding = {s.name: sizes[symbol(n)] for s, n in family.dynamic.items()}
    try:
        concrete = instantiate(family.graph, binding)
        kernel = build_kernel(plan(concrete, config), name)
    except (Unschedulable, CleaveError) as e:
        raise NotDynamic(f"at {', '.join(f'{n}={v}' for n, v in sizes.items())} the schedule fails: {e}") from None
    place(kernel)
    return kernel


def _sample_points(family: _Family, held: Sequence[str] = ()) -> list[dict[sympy.Symbol, int]]:
    """Sizes (per dynamic dim name) to schedule at: multiples of the representative, so every tile
    still divides; the base, then each dim moved alone, then all of them (the check). Dims in `held`
    are left out (scheduled at their representative size only)."""
    rep: dict[sympy.Symbol, int] = {}
    for s, n in family.dynamic.items():
        if n not in held:
            rep[symbol(n)] = family.representative[s]
    base = {n: 2 * r for n, r in rep.items()}
    points = [base]
    for n, r in rep.items():
        points.append({**base, n: 3 * r})
    points.append({n: 5 * r for n, r in rep.items()})
    return points


def make_dynamic(kernel: itgraph.KernelOp, family: _Family, held: Sequence[str] = ()) -> itgraph.KernelOp:
    """The dynamic version of `kernel` (same configuration, symbolic along the dynamic dims).

    Dims named in `held` are *bounded*: the kernel is scheduled at their representative size only,
    its tiles and loops do not move with them, and it serves every size up to that one (loads past
    the end read zeros, reductions mask the padding), none above (`cleave.bounded` names them; their
    quantum is the representative size). Only a padded graph's padded dims are held (`padded_dims`:
    it runs at its real sizes, which its padded sizes bound), and only where none of its candidates
    serves every size otherwise (`_bounded`)."""
    tiles = cleave.tiles(kernel)
    if tiles is None:
        raise CleaveError(f"error: cleave-dynamic-shapes: kernel @{kernel.sym_name.data} has no cleave.tiles configuration")
    config = Config.of(tiles)
    points = _sample_points(family, held)
    at_rep = {symbol(n): family.representative[s] for s, n in family.dynamic.items() if n in held}
    ks = [_schedule_at(family, config, {**p, **at_rep}, kernel.sym_name.data) for p in points]
    dims = {symbol(n) for n in family.dynamic.values()}  # the kernel's dynamic symbols
    walks = [list(k.walk()) for k in ks]
    if len({len(w) for w in walks}) != 1 or any(
        len({op.name for op in ops}) != 1 for ops in zip(*walks)
    ):
        raise NotDynamic("the kernel's ops change with the dynamic dim")
    out = ks[0]
    quanta: dict[str, int] = {n.name: 1 for n in dims}

    def note(e: Dim) -> Dim:
        for s in e.free_symbols & dims:
            den = sympy.fraction(sympy.together(sympy.expand(e).coeff(s)))[1]
            quanta[s.name] = math.lcm(quanta[s.name], int(den))  # type: ignore[attr-defined]
        return e

    def retype(values: Sequence[Sequence[SSAValue]], where: str) -> None:
        for vs in zip(*values):
            t = tgraph.tensor_type(vs[0])
            shape = [note(d) for d in _fit_dims([tgraph.tensor_type(v).shape for v in vs], points, where)]
            if any(d.free_symbols for d in shape) or list(shape) != list(t.shape):
                Rewriter.replace_value_with_new_type(vs[0], t.with_shape(shape))

    retype([k.body.block.args for k in ks], f"@{kernel.sym_name.data} arguments")
    if held:
        _bound_arguments(out, family, held)
        quanta.update({n: family.representative[s] for s, n in family.dynamic.items() if n in held})
    for ops in zip(*walks):
        op = ops[0]
        where = f"{op.name} in @{kernel.sym_name.data}"
        retype([o.results for o in ops], where)
        if isinstance(op, (itgraph.LoadOp, itgraph.StoreOp)):
            tmaps = [o.tmap for o in ops]  # type: ignore[attr-defined]
            shape = _fit_dims([t.tile_shape for t in tmaps], points, where)
            if any(d.free_symbols for d in shape):
                raise NotDynamic(f"{where}: the tile size depends on the dynamic dim")
            offs = [note(_fit_offset([t.offset_exprs[d] for t in tmaps], points, f"{where} offset")) for d in range(len(shape))]
            op.properties["tmap"] = itgraph.TmapAttr(offs, shape)
        elif isinstance(op, itgraph.ParallelOp):
            ext = [note(e) for e in _fit_dims([o.extent_dims for o in ops], points, where)]  # type: ignore[attr-defined]
            op.properties["extents"] = ArrayAttr(ExprAttr(as_dim(e)) for e in ext)
        elif isinstance(op, itgraph.SequentialOp):
            (ext,) = _fit_dims([[o.extent_dim] for o in ops], points, where)  # type: ignore[attr-defined]
            op.properties["extent"] = ExprAttr(as_dim(note(ext)))
    out.function_type = FunctionType.from_lists([a.type for a in out.body.block.args], [])
    for key, value in kernel.attributes.items():
        out.attributes[key] = value
    out.attributes["cleave.dynamic"] = DictionaryAttr({k: IntegerAttr(v, i64) for k, v in sorted(quanta.items())})
    rep = {n: family.representative[s] for s, n in family.dynamic.items()}
    out.attributes["cleave.representative"] = DictionaryAttr({k: IntegerAttr(v, i64) for k, v in sorted(rep.items())})
    if held:
        out.attributes["cleave.bounded"] = ArrayAttr(StringAttr(n) for n in sorted(held))
    insert_masks(out)
    out.verify()
    return out


def _bound_arguments(kernel: itgraph.KernelOp, family: _Family, held: Sequence[str]) -> None:
    """Give `kernel`'s global arguments (the graph's inputs, then its outputs) the held dims' symbols
    where the family's graph has them: its tiles stay at the representative size."""
    graph = family.graph
    types = [tgraph.tensor_type(v) for v in [*graph.inputs, *graph.output_op.outputs]]
    names = {s: symbol(n) for s, n in family.dynamic.items() if n in held}
    for arg, t in zip(kernel.body.block.args, types, strict=True):
        at = tgraph.tensor_type(arg)
        shape = list(at.shape)
        for d, e in enumerate(t.shape):
            if e.free_symbols & set(names):
                if e not in names:
                    raise NotDynamic(f"dim {d} of %{arg.name_hint} is {e}, not a held dim itself")
                shape[d] = names[e]  # type: ignore[index]
        if shape != list(at.shape):
            Rewriter.replace_value_with_new_type(arg, at.with_shape(shape))


# ----------------------------------------------------------------------------- masks
Origin = tuple[Dim, Dim] | None  # (global offset of the tile's first element, dynamic bound)


def insert_masks(kernel: itgraph.KernelOp) -> int:
    """Mask padding before every reduction over a dynamic dim; returns how many masks were added."""
    dyn = {symbol(n) for n in itgraph.dynamic_quanta(kernel)}
    origin: dict[SSAValue, list[Origin]] = {}
    made: dict[tuple[SSAValue, int, str], SSAValue] = {}
    added = 0

    def of(v: SSAValue) -> list[Origin]:
        return origin.get(v) or [None] * tgraph.tensor_type(v).rank

    def mask(user: Operation, index: int, axis: int, fill: MaskFill) -> None:
        nonlocal added
        v = user.operands[index]
        o = of(v)[axis]
        assert o is not None
        if (v, axis, fill) in made and made[v, axis, fill].owner.parent_block() is user.parent_block():  # type: ignore[union-attr]
            user.operands[index] = made[v, axis, fill]
            return
        m = itgraph.MaskOp(v, axis, o[0], o[1], fill)
        made[v, axis, fill] = m.result
        m.attributes["cleave.mem"] = MemoryAttr(Memory.FRAGMENT)
        Rewriter.insert_op(m, InsertPoint.before(user))
        user.operands[index] = m.result
        origin[m.result] = of(v)
        added += 1

    for op in list(kernel.walk()):
        if isinstance(op, itgraph.LoadOp):
            full = tgraph.tensor_type(op.source).shape
            origin[op.result] = [
                (off, d) if d in dyn else None for off, d in zip(op.tmap.offset_exprs, full)
            ]
        elif isinstance(op, itgraph.MaskOp) or (isinstance(op, tgraph.ElementwiseOp) and len(op.operands) == 1):
            origin[op.results[0]] = of(op.operands[0])
        elif isinstance(op, tgraph.ElementwiseOp):
            origin[op.results[0]] = [next((x for x in xs if x), None) for xs in zip(*(of(o) for o in op.operands))]
        elif isinstance(op, tgraph.ReshapeOp):
            src = iter(o for o, d in zip(of(op.input), tgraph.tensor_type(op.input).shape) if d != 1)
            origin[op.result] = [None if d == 1 else next(src) for d in tgraph.tensor_type(op.result).shape]
        elif isinstance(op, tgraph.ReduceOp):
            if of(op.input)[op.axis] is not None:
                mask(op, 0, op.axis, MaskFill.ZERO if op.kind.data == tgraph.ReduceKind.SUM else MaskFill.NEG_INF)
            origin[op.result] = [None if i == op.axis else o for i, o in enumerate(of(op.input))]
        elif isinstance(op, tgraph.MatmulOp):
            a, b = of(op.lhs), of(op.rhs)
            tb = op.transpose_b is not None
            kb = -1 if tb else -2
            if a[-1] is not None or b[kb] is not None:
                # loads read zeros past the end; a computed operand may hold anything there
                for i, axis in ((0, -1), (1, kb)):
                    v = op.operands[i]
                    if not _loaded(v) and of(v)[axis] is not None:
                        mask(op, i, len(of(v)) + axis, MaskFill.ZERO)
                    elif not _loaded(v):
                        raise NotDynamic(f"{op.name}: cannot tell where the padding of a computed operand is")
            rank = tgraph.tensor_type(op.result).rank
            batch = [x or y for x, y in zip(a[:-2][-(rank - 2):] if rank > 2 else [], b[:-2][-(rank - 2):] if rank > 2 else [])]
            origin[op.result] = [*batch, a[-2], b[-2] if tb else b[-1]]
        elif isinstance(op, itgraph.SequentialOp):
            term = op.body.block.last_op
            assert isinstance(term, itgraph.YieldOp)
            var = symbol(op.var_name)
            for r, y in zip(op.results, term.values):
                origin[r] = [o if o is not None and var not in o[0].free_symbols else None for o in of(y)]
        elif isinstance(op, tgraph.SplitOp):
            if any(o is not None for o in of(op.input)):
                raise NotDynamic("tgraph.split of a dynamic dim inside a kernel")
    return added


def _loaded(v: SSAValue) -> bool:
    """`v` is a loaded tile (or a reshape of one): its padding reads as zeros."""
    owner = v.owner
    while isinstance(owner, tgraph.ReshapeOp):
        owner = owner.input.owner
    return isinstance(owner, itgraph.LoadOp)


def _computed_inputs(
    graph: tgraph.GraphOp,
    graphs: Mapping[str, tgraph.GraphOp],
    before: Mapping[str, str],
    family_of: Callable[[str], _Family | None],
) -> dict[str, tuple[_Family, Sequence[Dim]]]:
    """Inputs of `graph` that an earlier kernel of its chain computes (a combine's partials, the
    values a piece of a cut graph reads), with the family of the graph computing each and the
    value's symbolic shape there; values of graphs without dynamic dims are left out.

    The leading inputs are the previous graph's outputs in order; the passthrough ones are named
    by an earlier piece's `cleave.output_names` (or are graph inputs, not listed here).
    """
    out: dict[str, tuple[_Family, Sequence[Dim]]] = {}
    names = graph.input_names()
    prev = before.get(graph.sym_name.data)
    if prev is None or prev not in graphs:
        return out
    lead = len(graphs[prev].output_op.outputs)
    passthrough = set(names[lead:])
    earlier, seen = prev, set()
    while earlier is not None and earlier in graphs and earlier not in seen:
        seen.add(earlier)
        fam = family_of(earlier)
        if fam is not None:
            shapes = [tgraph.tensor_type(v).shape for v in fam.graph.output_op.outputs]
            if earlier == prev:
                out.update((n, (fam, s)) for n, s in zip(names[:lead], shapes))
            labels = graphs[earlier].attributes.get("cleave.output_names")
            for label, s in zip([a.data for a in labels.data] if isinstance(labels, ArrayAttr) else [], shapes):  # type: ignore[attr-defined]
                if label in passthrough:
                    out.setdefault(label, (fam, s))
        earlier = before.get(earlier)
    return out


def _dim_names(graph: tgraph.GraphOp, dyn: Mapping[str, Sequence[int]]) -> dict[str, list[str | None]]:
    """Names of the dynamic dims per input; dims the graph ties together (K's and V's sequence
    length) share the name of the first one."""
    if not dyn:
        return {}
    lift = {(i, d) for i, a in enumerate(graph.inputs) for d in dyn.get(a.name_hint or "", ())}
    sg = symbolize_graph(graph, lift)
    first: dict[Dim, str] = {}
    names: dict[str, list[str | None]] = {}
    for i, d in sorted(lift):
        arg = graph.inputs[i].name_hint or f"arg{i}"
        name = first.setdefault(sg.shapes[graph.inputs[i]][d], f"{arg}_d{d}")
        names.setdefault(arg, [None] * tgraph.tensor_type(graph.inputs[i]).rank)[d] = name
    return names


def at_sizes(graph: tgraph.GraphOp, sizes: Mapping[str, int]) -> tgraph.GraphOp:
    """A concrete copy of `graph` with its dynamic dims (named as the kernels name them: `k_d2`)
    set to `sizes`; the dims the graph ties to them follow."""
    dyn = dynamic_inputs(graph)
    names = _dim_names(graph, dyn)
    fam = _symbolic(graph, dyn, names)
    if fam is None:
        raise CleaveError(f"error: @{graph.sym_name.data} declares no dynamic dims")
    unknown = set(sizes) - set(fam.dynamic.values())
    if unknown:
        raise CleaveError(f"error: @{graph.sym_name.data} has no dynamic dim {', '.join(sorted(unknown))} (it has {', '.join(sorted(set(fam.dynamic.values())))})")
    binding = {s.name: sizes.get(n, fam.representative[s]) for s, n in fam.dynamic.items()}
    out = instantiate(fam.graph, binding)
    out.arg_attrs = graph.arg_attrs
    return out


def sizes_of(graph: tgraph.GraphOp, shapes: Sequence[Sequence[int]]) -> dict[str, int]:
    """The graph's dynamic dims (named as `at_sizes` takes them) read from its inputs' `shapes`."""
    names = _dim_names(graph, dynamic_inputs(graph))
    return {
        name: int(shape[d])
        for i, (arg, shape) in enumerate(zip(graph.inputs, shapes))
        for d, name in enumerate(names.get(arg.name_hint or f"arg{i}", []))
        if name is not None
    }


REPRESENTATIVE_QUANTUM = 256
"""What `rounded_representatives` rounds a dynamic dim's representative size up to a multiple of."""


def rounded_representatives(before: ModuleOp, failing: set[str]) -> dict[str, tgraph.GraphOp]:
    """For each input graph of `before` (a module the pipeline has not run on) named in `failing` (no
    candidate of it serves every size of its dynamic dims) whose dynamic dims' sizes are not all
    multiples of `REPRESENTATIVE_QUANTUM`: a copy with those sizes rounded up to one (at least one
    quantum). A representative size is what the schedule tiles: a decode step's 18 keys
    (the first of `generate`'s dynamic graphs) fit one tile whose size then changes with the length,
    and 514 cut the graph into 5 kernels none of which took a symbolic length; at 256 and 768 the same
    decode attention's kernels stream fixed tiles and serve every length, masked."""
    out: dict[str, tgraph.GraphOp] = {}
    for graph in before.body.block.ops:
        if not isinstance(graph, tgraph.GraphOp) or graph.sym_name.data not in failing or "cleave.candidate_of" in graph.attributes:
            continue
        try:
            dyn = dynamic_inputs(graph)
            fam = _symbolic(graph, dyn, _dim_names(graph, dyn))
            if fam is None:
                continue
            sizes = {fam.dynamic[s]: v for s, v in fam.representative.items()}
            rounded = {n: max(REPRESENTATIVE_QUANTUM, -(-v // REPRESENTATIVE_QUANTUM) * REPRESENTATIVE_QUANTUM) for n, v in sizes.items()}
            if rounded != sizes:
                out[graph.sym_name.data] = at_sizes(graph, rounded)
        except CleaveError:  # the graph's sizes do not follow its dims at other sizes: as it is
            continue
    return out


def varying_means(graph: tgraph.GraphOp) -> list[tgraph.ReduceOp]:
    """The `reduce mean` ops of `graph` over a dim that varies with its dynamic dims: `cleave-decompose`
    divides such a mean by the size the dim has in the graph, which is wrong at every other size."""
    means = [op for op in graph.body.walk() if isinstance(op, tgraph.ReduceOp) and op.kind.data == tgraph.ReduceKind.MEAN]
    dyn = dynamic_inputs(graph)
    if not means or not dyn:
        return []
    fam = _symbolic(graph, dyn, _dim_names(graph, dyn))
    if fam is None:
        return []
    moved = at_sizes(graph, {n: 2 * fam.representative[s] + 1 for s, n in fam.dynamic.items()})
    other = [op for op in moved.body.walk() if isinstance(op, tgraph.ReduceOp) and op.kind.data == tgraph.ReduceKind.MEAN]
    return [
        op for op, o in zip(means, other, strict=True)
        if tgraph.tensor_type(op.input).shape[op.axis] != tgraph.tensor_type(o.input).shape[o.axis]
    ]


def refuse_varying_means(graph: tgraph.GraphOp) -> None:
    """Raise a CleaveError about the first of `varying_means(graph)`, if any (its op attached)."""
    for op in varying_means(graph):
        n = tgraph.tensor_type(op.input).shape[op.axis]
        raise CleaveError(
            f"error: @{graph.sym_name.data}: tgraph.reduce mean over dim {op.axis}, which varies with the graph's dynamic "
            f"dims, is not supported (its kernels would divide by {n} at every size): divide a reduce sum by the size, "
            "passed as an input",
            op=op,
        )


BOUNDED_SPEEDUP = 1.5
"""How much faster than every candidate of a padded graph that serves every size a held kernel must be
estimated to be tried (`_bounded`). Below it the candidates that serve every size are kept alone, as
measured (CLIP's causal attention over 77 tokens: a FlashAttention loop stopping at the diagonal)."""


def _bounded(kernel: itgraph.KernelOp, family: _Family, root: tgraph.GraphOp | None) -> itgraph.KernelOp | None:
    """`kernel` made dynamic with one of its padded graph's padded dims held, else all of them (a
    LayerNorm's whole-row tile of 3072 serves its real 3000 columns, masked, but no other width; its
    rows stay fitted); None where that fails too, or the graph is not padded."""
    padded = root.attributes.get(PADDED) if root is not None else None
    held = [n for n in family.dynamic.values() if isinstance(padded, DictionaryAttr) and n in padded.data]
    for attempt in [*([n] for n in held if len(held) > 1), held] if held else []:
        try:
            return make_dynamic(kernel, family, attempt)
        except CleaveError:
            continue
    return None


# ----------------------------------------------------------------------------- the pass
@dataclass(frozen=True)
class DynamicShapesPass(CleavePass):
    """Make every kernel that reads a dynamic dim symbolic along it (see the module docstring)."""

    name = "cleave-dynamic-shapes"

    strict: bool = False  # a kernel that cannot be made dynamic is an error instead of a warning

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        graphs = {g.sym_name.data: g for g in op.body.block.ops if isinstance(g, tgraph.GraphOp)}
        before = {nxt: g.sym_name.data for g in graphs.values() if (nxt := partition_kernels.successor(g)) is not None}
        families: dict[str, _Family | None] = {}

        def family_of(name: str) -> _Family | None:
            if name in families:
                return families[name]
            g = graphs[name]
            original = graphs.get(tgraph.referenced_symbol(g, "cleave.candidate_of") or name, g)
            dyn = dynamic_inputs(original)
            names = _dim_names(original, dyn)
            lifted = dict(dyn)
            for arg, (fam, shape) in _computed_inputs(g, graphs, before, family_of).items():
                # a later kernel of a chain reads values computed before it: their dynamic dims too
                dims = [d for d, e in enumerate(shape) if e.free_symbols & set(fam.dynamic)]
                for d in dims:
                    if shape[d] not in fam.dynamic:
                        raise NotDynamic(f"dim {d} of %{arg} is {shape[d]}, not a dynamic dim itself")
                if dims:
                    lifted[arg] = dims
                    names[arg] = [fam.dynamic[e] if d in dims else None for d, e in enumerate(shape)]  # type: ignore[index]
            families[name] = _symbolic(g, lifted, names) if lifted else None
            return families[name]

        ok: dict[str, set[str]] = {}  # original graph -> the graphs with a dynamic kernel
        fixed: dict[str, set[str]] = {}  # original graph -> graphs whose shapes do not depend on a dynamic dim
        static: dict[str, list[tuple[itgraph.KernelOp, str]]] = {}
        originals: dict[str, list[tuple[itgraph.KernelOp, itgraph.KernelOp]]] = {}  # (dynamic, static)
        for kernel in [k for k in op.body.block.ops if isinstance(k, itgraph.KernelOp)]:
            src = tgraph.referenced_symbol(kernel, "cleave.schedule_of")
            if src not in graphs:
                continue
            root = tgraph.referenced_symbol(graphs[src], "cleave.candidate_of") or src
            try:
                fam = family_of(src)
                if fam is None:  # a static kernel serves every size (a combine over the split count)
                    fixed.setdefault(root, set()).add(src)
                    continue
                dynamic = make_dynamic(kernel, fam)
            except CleaveError as e:
                reason = str(e).removeprefix("error: ")
                if self.strict:
                    raise CleaveError(f"error: cleave-dynamic-shapes: @{kernel.sym_name.data} cannot be dynamic: {reason}") from None
                kernel.attributes["cleave.static_only"] = StringAttr(reason)
                static.setdefault(root, []).append((kernel, reason))
                continue
            originals.setdefault(root, []).append((dynamic, kernel.clone()))
            Rewriter.replace_op(kernel, dynamic)
            ok.setdefault(root, set()).add(src)

        def serves_all(root: str) -> bool:
            """Some whole candidate (every kernel of its chain: split, pieces, combine) serves every size."""
            serving = ok.get(root, set()) | fixed.get(root, set())
            for name in ok.get(root, ()):
                if partition_kernels.chain_head(graphs[name]):
                    chain = partition_kernels.chain(graphs[name], graphs)
                    if chain is not None and all(g.sym_name.data in serving for g in chain):
                        return True
            return False

        kernel_us = {
            tgraph.referenced_symbol(k, "cleave.schedule_of") or "": k.attributes["cleave.estimated_us"].value.data  # type: ignore[attr-defined]
            for k in op.body.block.ops if isinstance(k, itgraph.KernelOp) and "cleave.estimated_us" in k.attributes
        }

        def fastest_us(root: str, held: set[str] | None) -> float:
            """The estimate of `root`'s fastest whole candidate that serves every size (`held` None), or
            that has a kernel of the graphs in `held`; inf if none."""
            serving = ok.get(root, set()) | fixed.get(root, set())
            best = math.inf
            for name, g in graphs.items():
                if (tgraph.referenced_symbol(g, "cleave.candidate_of") or name) != root or not partition_kernels.chain_head(g):
                    continue
                chain = partition_kernels.chain(g, graphs)
                names = [c.sym_name.data for c in chain or []]
                if chain is None or any(n not in kernel_us for n in names):
                    continue
                if (held is None and all(n in serving for n in names)) or (held is not None and held & set(names)):
                    best = min(best, sum(kernel_us[n] for n in names))
            return best

        for root, kernels in static.items():
            # a padded graph's kernels held at the padded sizes serve the real ones (`make_dynamic`'s held
            # dims): where none of its candidates serves every size, and where those that do are estimated
            # BOUNDED_SPEEDUP times slower than one with a held kernel (Stable Diffusion's attention at head
            # dim 40, padded to 64: its FlashAttention and Split-K kernels serve 40 only held, and the
            # candidate that materializes the scores serves every size at 4x their estimate)
            held = {tgraph.referenced_symbol(k, "cleave.schedule_of") or "" for k, _ in kernels}
            if serves_all(root) and not fastest_us(root, held) * BOUNDED_SPEEDUP < fastest_us(root, None):
                continue
            for kernel, reason in list(kernels):
                src = tgraph.referenced_symbol(kernel, "cleave.schedule_of")
                fam = families.get(src or "")
                bounded = _bounded(kernel, fam, graphs.get(root)) if fam is not None else None
                if bounded is None:
                    continue
                kernels.remove((kernel, reason))
                del kernel.attributes["cleave.static_only"]
                bounded.attributes.pop("cleave.static_only", None)
                originals.setdefault(root, []).append((bounded, kernel.clone()))
                Rewriter.replace_op(kernel, bounded)
                ok.setdefault(root, set()).add(src)  # type: ignore[arg-type]
        for root, pairs in originals.items():
            if not serves_all(root):  # no whole candidate is dynamic: keep them all static, consistently
                for dynamic, original in pairs:
                    original.attributes["cleave.static_only"] = StringAttr("no whole candidate of its graph serves every size")
                    Rewriter.replace_op(dynamic, original)
        for root, kernels in static.items():
            for kernel, reason in kernels:
                if serves_all(root):  # other candidates serve every size: keep only those
                    print(f"cleave-dynamic-shapes: dropped @{kernel.sym_name.data}: it only serves the representative size ({reason})", file=sys.stderr)
                    Rewriter.erase_op(kernel)
                else:
                    print(f"warning: cleave-dynamic-shapes: @{kernel.sym_name.data} stays static: {reason}", file=sys.stderr)
