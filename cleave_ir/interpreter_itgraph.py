"""numpy interpreter for `itgraph` kernels: loops run literally, tmaps slice whole tiles.

Output tensors start as NaN, so a tile the schedule never writes shows up in the comparison.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from itertools import product
from typing import Any

import numpy as np
import sympy
from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    ReturnedValues,
    impl,
    impl_terminator,
    register_impls,
)

from cleave_ir.dialects import itgraph, tgraph
from cleave_ir.dialects.itgraph import AccumulateKind as Acc
from cleave_ir.interpreter import InterpretationError, TGraphFunctions, concrete_shape
from cleave_ir.shapes import Dim, evaluate

_Exact = int | Fraction
_Evaluator = Callable[[Mapping[str, int]], _Exact]


def _compile(e: Dim) -> _Evaluator:
    """`e` as a function of its symbols' values, in exact int/Fraction arithmetic (sympy's values)."""
    if e.is_Integer:
        n = int(e)
        return lambda env: n
    if e.is_Rational:
        q = Fraction(int(e.p), int(e.q))  # type: ignore[attr-defined]
        return lambda env: q
    if e.is_Symbol:
        name = e.name  # type: ignore[attr-defined]
        return lambda env: env[name]
    if e.is_Add:
        terms = [_compile(t) for t in e.args]
        return lambda env: sum(t(env) for t in terms)
    if e.is_Mul:
        factors = [_compile(f) for f in e.args]

        def mul(env: Mapping[str, int]) -> _Exact:
            out: _Exact = 1
            for f in factors:
                out = out * f(env)
            return out

        return mul
    if e.is_Pow and e.exp.is_Integer:  # type: ignore[attr-defined]
        base, k = _compile(e.base), int(e.exp)  # type: ignore[attr-defined]
        if k >= 0:
            return lambda env: base(env) ** k
        return lambda env: Fraction(1) / base(env) ** -k
    unary = {sympy.floor: math.floor, sympy.ceiling: math.ceil}.get(type(e))  # type: ignore[call-overload]
    if unary is not None:
        (arg,) = (_compile(a) for a in e.args)
        return lambda env: unary(arg(env))
    nary = {sympy.Min: min, sympy.Max: max}.get(type(e))  # type: ignore[call-overload]
    if nary is not None:
        args = [_compile(a) for a in e.args]
        return lambda env: nary(a(env) for a in args)
    if isinstance(e, sympy.Mod):  # sympy's Mod is a - b*floor(a/b), as Python's %
        a, b = (_compile(x) for x in e.args)
        return lambda env: a(env) % b(env)

    def substitute(env: Mapping[str, int]) -> _Exact:  # anything else: sympy itself
        value = e.subs({s: env[s.name] for s in e.free_symbols})  # type: ignore[attr-defined]
        return Fraction(int(value.p), int(value.q)) if value.is_Rational else int(value)  # type: ignore[attr-defined]

    return substitute


_COMPILED: dict[Dim, _Evaluator] = {}


def offset_value(e: Dim, values: Mapping[str, int]) -> int:
    """`int(e.subs(values))` (an offset or bound; truncated as sympy's int() does), without sympy."""
    f = _COMPILED.get(e)
    if f is None:
        f = _COMPILED[e] = _compile(e)
    try:
        return int(f(values))
    except KeyError as k:
        raise InterpretationError(f"unbound symbol {k.args[0]} in {e}") from None


@register_impls
class ITGraphFunctions(InterpreterFunctions):
    """Loops, loads and stores; tile computations are TGraphFunctions'."""

    def __init__(
        self, globals_: dict[Any, np.ndarray], bindings: Mapping[str, int], sizes: Mapping[str, int] | None = None
    ) -> None:
        self.globals = globals_  # block argument of the kernel -> its array
        self.bindings = dict(bindings)  # loop and offset arithmetic (dynamic dims padded)
        self.sizes = dict(sizes) if sizes is not None else None  # true dynamic sizes; None: static kernel
        self.env: dict[str, int] = {}

    def _window(self, tmap: itgraph.TmapAttr) -> tuple[slice, ...]:
        values = {**self.bindings, **self.env}
        out = []
        for off, size in zip(tmap.offset_exprs, tmap.tile_shape):
            o = offset_value(off, values)
            out.append(slice(o, o + evaluate(size, values)))
        return tuple(out)

    @impl(itgraph.LoadOp)
    def run_load(self, interpreter: Interpreter, op: itgraph.LoadOp, args: tuple[Any, ...]):
        window = self._window(op.tmap)
        if (offset := op.causal_offset) is not None:  # the mask it promises, from the tile's indices
            rows, cols = np.arange(window[-2].start, window[-2].stop)[:, None], np.arange(window[-1].start, window[-1].stop)[None, :]
            want = concrete_shape(tgraph.tensor_type(op.result), self.bindings)
            return (np.broadcast_to((cols <= rows + offset).astype(np.float64), want).copy(),)
        tile = args[0][window]
        want = concrete_shape(tgraph.tensor_type(op.result), self.bindings)
        if tile.shape != want:
            if self.sizes is None:
                raise InterpretationError(f"itgraph.load: tile {tile.shape} read out of bounds (expected {want})")
            # a dynamic dim's last tile reaches past the tensor: the padding reads as zeros
            padded = np.zeros(want, dtype=tile.dtype)
            padded[tuple(slice(0, n) for n in tile.shape)] = tile
            return (padded,)
        return (tile.copy(),)

    @impl(itgraph.StoreOp)
    def run_store(self, interpreter: Interpreter, op: itgraph.StoreOp, args: tuple[Any, ...]):
        value, dest = args
        window = self._window(op.tmap)
        target = dest[window]
        if target.shape != value.shape:
            if self.sizes is None:
                raise InterpretationError(f"itgraph.store: tile {value.shape} written out of bounds")
            value = value[tuple(slice(0, n) for n in target.shape)]  # padding is not written
        dest[window] = value
        return ()

    @impl(itgraph.MaskOp)
    def run_mask(self, interpreter: Interpreter, op: itgraph.MaskOp, args: tuple[Any, ...]):
        (x,) = args
        values = {**self.bindings, **self.env}  # offsets run over the padded sizes
        start = offset_value(op.offset_expr, values)
        bound = evaluate(op.bound_dim, {**self.bindings, **(self.sizes or {})})
        axis = op.axis.value.data
        keep = (start + np.arange(x.shape[axis])) < bound
        shape = [1] * x.ndim
        shape[axis] = x.shape[axis]
        return (np.where(keep.reshape(shape), x, op.fill_value),)

    @impl(itgraph.ParallelOp)
    def run_parallel(self, interpreter: Interpreter, op: itgraph.ParallelOp, args: tuple[Any, ...]):
        extents = [evaluate(e, self.bindings) for e in op.extent_dims]
        for index in product(*(range(e) for e in extents)):
            self.env.update(zip(op.var_names, index))
            interpreter.run_ssacfg_region(op.body, (), "parallel")
        for name in op.var_names:
            self.env.pop(name, None)
        return ()

    @impl(itgraph.SequentialOp)
    def run_sequential(self, interpreter: Interpreter, op: itgraph.SequentialOp, args: tuple[Any, ...]):
        kinds = op.accumulate_kinds
        m_index = kinds.index(Acc.MAX) if Acc.RESCALED_SUM in kinds else None
        acc: list[np.ndarray] | None = None
        for j in range(evaluate(op.extent_dim, {**self.bindings, **self.env})):
            self.env[op.var_name] = j
            part = list(interpreter.run_ssacfg_region(op.body, (), "sequential"))
            if acc is None:
                acc = part
                continue
            if m_index is not None:
                m_new = np.maximum(acc[m_index], part[m_index])
                ref = itgraph.rescale_reference(m_new)  # rows with nothing yet (m = -inf): factors 0, not NaN
                old_scale, new_scale = np.exp(acc[m_index] - ref), np.exp(part[m_index] - ref)
            for i, kind in enumerate(kinds):
                if kind == Acc.SUM:
                    acc[i] = acc[i] + part[i]
                elif kind == Acc.MAX:
                    acc[i] = np.maximum(acc[i], part[i])
                else:  # rescaled_sum: both sides brought to the new running max
                    acc[i] = acc[i] * old_scale + part[i] * new_scale
        self.env.pop(op.var_name, None)
        if acc is None:
            raise InterpretationError("itgraph.sequential: zero iterations")
        return tuple(acc)

    @impl_terminator(itgraph.YieldOp)
    def run_yield(self, interpreter: Interpreter, op: itgraph.YieldOp, args: tuple[Any, ...]):
        return ReturnedValues(args), ()


def run_kernel(
    kernel: itgraph.KernelOp,
    inputs: Sequence[np.ndarray],
    bindings: Mapping[str, int] | None = None,
) -> tuple[np.ndarray, ...]:
    """Run one kernel in float64: inputs in, freshly allocated (NaN-poisoned) outputs out.

    A kernel with dynamic dims (`cleave.dynamic`) takes their sizes from the inputs' shapes; loops
    run over the sizes rounded up to the dims' quanta (see dynamic_sizes).
    """
    b = dict(bindings or {})
    if len(inputs) != len(kernel.inputs):
        raise InterpretationError(f"@{kernel.sym_name.data} takes {len(kernel.inputs)} inputs, got {len(inputs)}")
    arrays = [np.asarray(x, dtype=np.float64) for x in inputs]
    sizes = None
    if itgraph.dynamic_quanta(kernel):
        sizes = {**dynamic_sizes(kernel, [a.shape for a in arrays]), **b}
        b = {**b, **itgraph.padded_sizes(kernel, sizes)}
    outs = [np.full(concrete_shape(tgraph.tensor_type(o), {**b, **(sizes or {})}), np.nan) for o in kernel.outputs]
    interpreter = Interpreter(ModuleOp([]))
    interpreter.register_implementations(TGraphFunctions("float64", b))
    interpreter.register_implementations(ITGraphFunctions({}, b, sizes))
    interpreter.push_scope("kernel")
    interpreter.set_values(zip(kernel.body.block.args, [*arrays, *outs]))
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for op in kernel.body.block.ops:
            interpreter.run_op(op, interpreter.get_values(op.operands))
    return tuple(outs)


def dynamic_sizes(kernel: itgraph.KernelOp, shapes: Sequence[Sequence[int]]) -> dict[str, int]:
    """The size of every dynamic dim of `kernel`, read from the shapes of its inputs."""
    out: dict[str, int] = {}
    for arg, shape in zip(kernel.inputs, shapes):
        dims = tgraph.tensor_type(arg).shape
        if len(dims) != len(shape):
            raise InterpretationError(f"@{kernel.sym_name.data}: input of rank {len(shape)} for a rank-{len(dims)} argument")
        for d, n in zip(dims, shape):
            if d.is_Symbol and d.name in itgraph.dynamic_quanta(kernel):  # type: ignore[attr-defined]
                if out.setdefault(d.name, n) != n:  # type: ignore[attr-defined]
                    raise InterpretationError(f"@{kernel.sym_name.data}: dynamic dim {d} is {out[d.name]} and {n}")  # type: ignore[attr-defined]
    missing = set(itgraph.dynamic_quanta(kernel)) - set(out)
    if missing:
        raise InterpretationError(f"@{kernel.sym_name.data}: no input gives the size of {', '.join(sorted(missing))}")
    return out
