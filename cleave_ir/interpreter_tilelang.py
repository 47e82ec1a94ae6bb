"""numpy interpreter for the `tilelang` dialect: whole kernels, block by block, with TileLang's numerics.

Buffers are numpy arrays in their element type (f16 buffers really hold fp16; bf16 is stored as
float32 rounded to bf16 on every write); allocations start as NaN so a read of an unwritten element
shows. `T.gemm` multiplies fp16 operands exactly and accumulates in fp32; scalar ops in a
`T.Parallel` body compute in their declared types (fp16 * fp16 rounds to fp16, as TVM does).

A `T.Parallel` loop runs its body once, on whole tiles: each loop variable is an index array
broadcast along its own axis, so a load is one fancy-indexing gather and a store one scatter.
Serial and pipelined loops run their bodies once per iteration, the grid once per block.
Global reads outside a tensor give zeros and writes outside it are dropped (TileLang's safe
memory access, which predicated tails of dynamic shapes rely on).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from itertools import product
from typing import Any

import numpy as np
import sympy
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import (
    ArrayAttr,
    BFloat16Type,
    Float16Type,
    Float32Type,
    ModuleOp,
)
from xdsl.interpreter import Interpreter, InterpreterFunctions, impl, register_impls
from xdsl.ir import Attribute, Block, Operation, SSAValue

from cleave_ir.dialects import tilelang as tl
from cleave_ir.dialects.semantics import np_erf
from cleave_ir.interpreter import InterpretationError, round_to
from cleave_ir.shapes import Dim

_Env = Mapping[str, Any]
_Step = tuple[Callable[..., Any], Any, Operation, tuple[SSAValue, ...], tuple[SSAValue, ...]]


def storage_dtype(element_type: Attribute) -> type[np.floating]:
    """The numpy dtype a buffer of `element_type` is held in."""
    if isinstance(element_type, Float16Type):
        return np.float16
    if isinstance(element_type, (BFloat16Type, Float32Type)):
        return np.float32
    return np.float64


def to_type(x: Any, element_type: Attribute) -> np.ndarray:
    """`x` rounded to `element_type`, in its storage dtype."""
    if isinstance(element_type, BFloat16Type):
        return round_to(np.asarray(x, dtype=np.float32), element_type)
    return np.asarray(x).astype(storage_dtype(element_type), copy=False)


def _compile(e: Dim) -> Callable[[_Env], Any]:
    """A function evaluating index expression `e` on ints or numpy index arrays."""
    if e.is_Integer:
        value = int(e)
        return lambda env: value
    if e.is_Symbol:
        name = e.name  # type: ignore[attr-defined]

        def var(env: _Env) -> Any:
            try:
                return env[name]
            except KeyError:
                raise InterpretationError(f"unbound variable {name} in an index expression") from None

        return var
    if isinstance(e, (sympy.floor, sympy.ceiling)):
        num, den = (_compile(x) for x in sympy.fraction(sympy.together(e.args[0])))
        if isinstance(e, sympy.floor):
            return lambda env: num(env) // den(env)
        return lambda env: -(-num(env) // den(env))
    if isinstance(e, sympy.Mod):
        a, b = (_compile(x) for x in e.args)
        return lambda env: a(env) % b(env)
    num_e, den_e = sympy.fraction(e)
    if den_e != 1:  # exact quotients of dims (K/s)
        num, den = _compile(num_e), _compile(den_e)
        return lambda env: num(env) // den(env)
    if e.is_Add:
        terms = [_compile(t) for t in e.args]
        return lambda env: sum(t(env) for t in terms)
    if e.is_Mul:
        factors = [_compile(f) for f in e.args]

        def mul(env: _Env) -> Any:
            out = 1
            for f in factors:
                out = out * f(env)
            return out

        return mul
    if e.is_Pow and e.exp.is_Integer and e.exp > 0:  # type: ignore[attr-defined]
        base, exp = _compile(e.base), int(e.exp)  # type: ignore[attr-defined]
        return lambda env: base(env) ** exp
    raise InterpretationError(f"cannot evaluate index expression {e}")


_COMPILED: dict[Dim, Callable[[_Env], Any]] = {}


def compiled(e: Dim) -> Callable[[_Env], Any]:
    f = _COMPILED.get(e)
    if f is None:
        f = _COMPILED[e] = _compile(e)
    return f


def evaluate(e: Dim, env: _Env) -> Any:
    return compiled(e)(env)


def _clipped(offsets: Sequence[int], sizes: Sequence[int], shape: Sequence[int]) -> tuple[tuple[slice, ...], tuple[slice, ...]] | None:
    """(tensor window, tile window) of a region's in-bounds part; None when nothing is in bounds."""
    outer, inner = [], []
    for o, s, n in zip(offsets, sizes, shape):
        lo, hi = max(o, 0), min(o + s, n)
        if hi <= lo:
            return None
        outer.append(slice(lo, hi))
        inner.append(slice(lo - o, hi - o))
    return tuple(outer), tuple(inner)


def _scalar_impl(fn: Callable[..., Any]):
    def run(self: TileLangFunctions, interpreter: Interpreter, op: Any, args: tuple[Any, ...]):
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            return (to_type(fn(*args), op.results[0].type),)

    return run


@register_impls
class TileLangFunctions(InterpreterFunctions):
    """The tilelang ops of one block, plus the arith/math ops of T.Parallel bodies on whole tiles."""

    def __init__(self, bindings: Mapping[str, int], reference: bool = False) -> None:
        self.env: dict[str, Any] = dict(bindings)  # shape symbols, grid and loop variables
        self.reference = reference  # xDSL's region runner and fully broadcast stores (tests compare)
        self.loop_shape: tuple[int, ...] = ()
        self.values: dict[SSAValue, Any] = {}  # SSA values are unique: one flat map, no scopes
        self._plans: dict[Block, list[_Step]] = {}
        self._indices: dict[Operation, tuple[Callable[[_Env], Any], ...]] = {}
        self._loops: dict[Operation, tuple[tuple[str, ...], tuple[Callable[[_Env], Any], ...]]] = {}
        self._aranges: dict[tuple[tuple[int, ...], int], np.ndarray] = {}

    def run_block(self, interpreter: Interpreter, block: Block, args: Sequence[Any] = ()) -> None:
        """Run a single-block region without terminator: the ops' impls called directly.

        As xDSL's `run_ssacfg_region` (same impls, same order), without its per-op scope, listener
        and arity bookkeeping, which dominates on small tiles run once per block and iteration.
        """
        if self.reference:
            interpreter.run_ssacfg_region(block.parent_region(), tuple(args), "reference")  # type: ignore[arg-type]
            return
        plan = self._plans.get(block)
        if plan is None:
            table = interpreter._impls._impl_dict  # pyright: ignore[reportPrivateUsage]
            plan = self._plans[block] = []
            for op in block.ops:
                if type(op) not in table:
                    raise InterpretationError(f"Could not find interpretation function for op {op.name}")
                ft, fn = table[type(op)]
                plan.append((fn, ft, op, tuple(op.operands), tuple(op.results)))
        values = self.values
        values.update(zip(block.args, args))
        for fn, ft, op, operands, results in plan:
            try:
                out = fn(ft, interpreter, op, tuple([values[v] for v in operands])).values
            except Exception as e:
                op.emit_error("Error while interpreting op", e)
            values.update(zip(results, out))

    def extent(self, e: Dim) -> int:
        return int(evaluate(e, self.env))

    def _region(self, region: tl.RegionAttr) -> tuple[list[int], list[int]]:
        return [int(evaluate(o, self.env)) for o in region.offset_exprs], [self.extent(s) for s in region.size_exprs]

    # ------------------------------------------------------------------ buffers
    @impl(tl.AllocSharedOp)
    def run_alloc_shared(self, interpreter: Interpreter, op: tl.AllocSharedOp, args: tuple[Any, ...]):
        return (self._alloc(op.result.type),)

    @impl(tl.AllocFragmentOp)
    def run_alloc_fragment(self, interpreter: Interpreter, op: tl.AllocFragmentOp, args: tuple[Any, ...]):
        return (self._alloc(op.result.type),)

    def _alloc(self, t: Attribute) -> np.ndarray:
        bt = tl.buffer_type(t)
        return np.full([self.extent(d) for d in bt.shape], np.nan, dtype=storage_dtype(bt.element_type))

    @impl(tl.CopyOp)
    def run_copy(self, interpreter: Interpreter, op: tl.CopyOp, args: tuple[Any, ...]):
        src, dst = args
        if op.src_region is not None:  # safe read: out-of-range elements are 0
            offsets, sizes = self._region(op.src_region)
            data = np.zeros(sizes, dtype=src.dtype)
            window = _clipped(offsets, sizes, src.shape)
            if window is not None:
                data[window[1]] = src[window[0]]
        else:
            data = src
        dst_type = tl.buffer_type(op.dst).element_type
        if op.dst_region is not None:  # safe write: out-of-range elements are dropped
            offsets, sizes = self._region(op.dst_region)
            data = to_type(data.reshape(sizes), dst_type)
            window = _clipped(offsets, sizes, dst.shape)
            if window is not None:
                dst[window[0]] = data[window[1]]
        else:
            dst[...] = to_type(data.reshape(dst.shape), dst_type)
        return ()

    @impl(tl.GemmOp)
    def run_gemm(self, interpreter: Interpreter, op: tl.GemmOp, args: tuple[Any, ...]):
        a, b, c = args
        # fp16 products are exact in fp32; the tensor cores accumulate in fp32. einsum rather than
        # matmul: a multithreaded BLAS call per block is far slower on small tiles of a busy machine
        spec = ("km" if op.transpose_a is not None else "mk") + (",nk->mn" if op.transpose_b is not None else ",kn->mn")
        if op.clear is not None:
            c[...] = 0
        c += np.einsum(spec, _tf32(a), _tf32(b))
        return ()

    @impl(tl.WaitGemmOp)
    def run_wait_gemm(self, interpreter: Interpreter, op: tl.WaitGemmOp, args: tuple[Any, ...]):
        return ()  # async gemms run to completion when interpreted: their result is the same

    @impl(tl.WaitPriorGridsOp)
    def run_wait_prior_grids(self, interpreter: Interpreter, op: tl.WaitPriorGridsOp, args: tuple[Any, ...]):
        return ()  # the interpreter runs kernels one after another

    @impl(tl.LaunchDependentsOp)
    def run_launch_dependents(self, interpreter: Interpreter, op: tl.LaunchDependentsOp, args: tuple[Any, ...]):
        return ()  # a launch hint: nothing to compute

    @impl(tl.ClearOp)
    def run_clear(self, interpreter: Interpreter, op: tl.ClearOp, args: tuple[Any, ...]):
        args[0][...] = 0
        return ()

    @impl(tl.FillOp)
    def run_fill(self, interpreter: Interpreter, op: tl.FillOp, args: tuple[Any, ...]):
        args[0][...] = op.fill_value
        return ()

    def _reduce(self, op: tl.ReduceSumOp | tl.ReduceMaxOp, args: tuple[Any, ...], fn, combine) -> tuple[()]:
        src, dst = args
        r = fn(src.astype(np.float32), axis=op.dim.value.data).reshape(dst.shape)
        dst[...] = to_type(r if op.clear is not None else combine(dst, r), tl.buffer_type(op.dst).element_type)
        return ()

    @impl(tl.ReduceSumOp)
    def run_reduce_sum(self, interpreter: Interpreter, op: tl.ReduceSumOp, args: tuple[Any, ...]):
        return self._reduce(op, args, np.sum, np.add)

    @impl(tl.ReduceMaxOp)
    def run_reduce_max(self, interpreter: Interpreter, op: tl.ReduceMaxOp, args: tuple[Any, ...]):
        return self._reduce(op, args, np.max, np.maximum)

    # ------------------------------------------------------------------ loops
    def _sequential(self, interpreter: Interpreter, op: tl.SerialOp | tl.PipelinedOp) -> tuple[()]:
        for j in range(self.extent(op.extent_expr)):
            self.env[op.var_name] = j
            self.run_block(interpreter, op.body.block)
        self.env.pop(op.var_name, None)
        return ()

    @impl(tl.SerialOp)
    def run_serial(self, interpreter: Interpreter, op: tl.SerialOp, args: tuple[Any, ...]):
        return self._sequential(interpreter, op)

    @impl(tl.PipelinedOp)
    def run_pipelined(self, interpreter: Interpreter, op: tl.PipelinedOp, args: tuple[Any, ...]):
        return self._sequential(interpreter, op)

    @impl(tl.ParallelOp)
    def run_parallel(self, interpreter: Interpreter, op: tl.ParallelOp, args: tuple[Any, ...]):
        loop = self._loops.get(op)
        if loop is None:
            loop = self._loops[op] = (tuple(op.var_names), tuple(compiled(e) for e in op.extent_exprs))
        names, extent_fns = loop
        extents = tuple(int(f(self.env)) for f in extent_fns)
        for axis, (name, n) in enumerate(zip(names, extents)):
            index = self._aranges.get((extents, axis))
            if index is None:  # shared by every run of loops of this shape: read only
                shape = [1] * len(extents)
                shape[axis] = n
                index = self._aranges[(extents, axis)] = np.arange(n).reshape(shape)
                index.flags.writeable = False
            self.env[name] = index
        self.loop_shape = extents
        self.run_block(interpreter, op.body.block)
        for name in names:
            self.env.pop(name, None)
        return ()

    def _index(self, op: tl.LoadOp | tl.StoreOp) -> tuple[Any, ...]:
        fns = self._indices.get(op)
        if fns is None:
            fns = self._indices[op] = tuple(compiled(e) for e in op.index_exprs)
        env = self.env
        return tuple([f(env) for f in fns])

    @impl(tl.LoadOp)
    def run_load(self, interpreter: Interpreter, op: tl.LoadOp, args: tuple[Any, ...]):
        try:
            return (np.asarray(args[0][self._index(op)]),)
        except IndexError as e:
            raise InterpretationError(f"tilelang.load: index out of range of a {list(args[0].shape)} buffer: {e}") from None

    @impl(tl.StoreOp)
    def run_store(self, interpreter: Interpreter, op: tl.StoreOp, args: tuple[Any, ...]):
        value, buf = args
        index = self._index(op)
        if self.reference or np.broadcast_shapes(*[np.shape(i) for i in index]) != self.loop_shape:
            # a loop variable no index uses: every iteration writes (the last one wins)
            index = tuple(np.broadcast_to(i, self.loop_shape) for i in index)
            value = np.broadcast_to(value, self.loop_shape)
        try:
            if op.accumulate is not None:
                value = buf[index] + value
            buf[index] = to_type(value, tl.buffer_type(op.buffer).element_type)
        except IndexError as e:
            raise InterpretationError(f"tilelang.store: index out of range of a {list(buf.shape)} buffer: {e}") from None
        return ()

    # ------------------------------------------------------------------ scalar ops (whole tiles)
    @impl(tl.IndexBelowOp)
    def run_index_below(self, interpreter: Interpreter, op: tl.IndexBelowOp, args: tuple[Any, ...]):
        return (np.asarray(evaluate(op.index_expr, self.env) < evaluate(op.bound_expr, self.env)),)

    @impl(tl.Exp2SplitOp)
    def run_exp2_split(self, interpreter: Interpreter, op: tl.Exp2SplitOp, args: tuple[Any, ...]):
        (x,) = args
        columns = evaluate(sympy.Symbol(op.column_var), self.env)
        with np.errstate(over="ignore", invalid="ignore"):
            y = np.where(tl.Exp2SplitOp.on_fma(columns, op.every_count), tl.Exp2SplitOp.exp2_fma(x), np.exp2(np.float32(x)))
        return (to_type(y, op.result.type),)

    @impl(arith.SelectOp)
    def run_select(self, interpreter: Interpreter, op: arith.SelectOp, args: tuple[Any, ...]):
        cond, a, b = args
        return (to_type(np.where(cond, a, b), op.result.type),)

    @impl(arith.ConstantOp)
    def run_constant(self, interpreter: Interpreter, op: arith.ConstantOp, args: tuple[Any, ...]):
        return (to_type(float(op.value.value.data), op.result.type),)  # type: ignore[attr-defined]

    run_extf = impl(arith.ExtFOp)(_scalar_impl(lambda x: x))
    run_truncf = impl(arith.TruncFOp)(_scalar_impl(lambda x: x))
    run_negf = impl(arith.NegfOp)(_scalar_impl(np.negative))
    run_addf = impl(arith.AddfOp)(_scalar_impl(np.add))
    run_subf = impl(arith.SubfOp)(_scalar_impl(np.subtract))
    run_mulf = impl(arith.MulfOp)(_scalar_impl(np.multiply))
    run_divf = impl(arith.DivfOp)(_scalar_impl(np.divide))
    run_maximumf = impl(arith.MaximumfOp)(_scalar_impl(np.maximum))
    run_exp = impl(math.ExpOp)(_scalar_impl(np.exp))
    run_sqrt = impl(math.SqrtOp)(_scalar_impl(np.sqrt))
    run_rsqrt = impl(math.RsqrtOp)(_scalar_impl(lambda x: 1 / np.sqrt(x)))
    @impl(arith.CmpfOp)
    def run_cmpf(self, interpreter: Interpreter, op: arith.CmpfOp, args: tuple[Any, ...]):
        if arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data] != "une":
            raise InterpretationError(f"arith.cmpf: predicate {op.predicate.value.data} is not interpreted")
        return (np.asarray(args[0]) != np.asarray(args[1]),)

    run_minimumf = impl(arith.MinimumfOp)(_scalar_impl(np.minimum))
    run_exp2 = impl(math.Exp2Op)(_scalar_impl(np.exp2))
    run_log = impl(math.LogOp)(_scalar_impl(np.log))
    run_tanh = impl(math.TanhOp)(_scalar_impl(np.tanh))
    run_erf = impl(math.ErfOp)(_scalar_impl(np_erf))
    run_absf = impl(math.AbsFOp)(_scalar_impl(np.abs))


def _bind(kernel: tl.KernelOp, inputs: Sequence[np.ndarray], bindings: Mapping[str, int]) -> dict[str, int]:
    """`bindings` plus the symbols that input shapes determine (a bare symbol dim takes the input's size)."""
    out = dict(bindings)
    for arg, x in zip(kernel.inputs, inputs):
        for d, n in zip(tl.buffer_type(arg).shape, np.shape(x)):
            if d.is_Symbol and d.name not in out:  # type: ignore[attr-defined]
                out[d.name] = int(n)  # type: ignore[attr-defined]
    return out


def run_kernel(
    kernel: tl.KernelOp,
    inputs: Sequence[np.ndarray],
    bindings: Mapping[str, int] | None = None,
    reference: bool = False,
) -> tuple[np.ndarray, ...]:
    """Run one kernel over its whole grid: inputs in (rounded to their types), NaN-poisoned outputs out.

    `reference` runs the literal path (xDSL's region runner, every store broadcast to the loop
    shape) that the default one is tested against, bit for bit.
    An input the kernel reads stored transposed (`tilelang.TRANSPOSED_INPUTS`) is given as the kernel
    declares it (the transpose of the graph's tensor), as to the compiled kernel; `run_kernels` transposes.
    """
    name = f"@{kernel.sym_name.data}"
    if len(inputs) != len(kernel.inputs):
        raise InterpretationError(f"{name} takes {len(kernel.inputs)} inputs, got {len(inputs)}")
    b = _bind(kernel, inputs, bindings or {})
    funcs = TileLangFunctions(b, reference)
    arrays = []
    for i, (arg, x) in enumerate(zip(kernel.params, [*inputs, *([None] * len(kernel.outputs))])):
        t = tl.buffer_type(arg)
        try:
            shape = tuple(funcs.extent(d) for d in t.shape)
        except InterpretationError as e:
            raise InterpretationError(f"{name}: shape of parameter {i}: {e}") from None
        if x is None:
            arrays.append(np.full(shape, np.nan, dtype=storage_dtype(t.element_type)))
            continue
        if np.shape(x) != shape:
            raise InterpretationError(f"{name}: input {i} has shape {np.shape(x)}, expected {shape}")
        arrays.append(to_type(np.asarray(x, dtype=np.float64), t.element_type).copy())
    interpreter = Interpreter(ModuleOp([]))
    interpreter.register_implementations(funcs)
    grid = [funcs.extent(e) for e in kernel.grid_extents]
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for block in product(*(range(n) for n in grid)):
            funcs.env.update(zip(kernel.grid_var_names, block))
            funcs.run_block(interpreter, kernel.body.block, arrays)
    return tuple(arrays[len(kernel.inputs) :])


def _names(attr: Attribute | None) -> list[str]:
    return [a.data for a in attr.data] if isinstance(attr, ArrayAttr) else []  # type: ignore[attr-defined]


def run_kernels(
    kernels: Sequence[tl.KernelOp],
    inputs: Sequence[np.ndarray],
    bindings: Mapping[str, int] | None = None,
) -> tuple[np.ndarray, ...]:
    """Run kernels in launch order, as the emitted module's `run()` does.

    Each kernel takes the previous one's outputs, then the named values its `cleave.passthrough`
    lists: original inputs (a Split-K combine kernel: the partials, then what the combine graph reads
    directly), or results of earlier kernels (`cleave.output_names`: a graph cut into kernels).
    Returns the last kernel's outputs, or the values its `cleave.results` names.
    """
    values = list(inputs)
    env = dict(zip(_names(kernels[0].attributes.get("cleave.input_names")), inputs)) if kernels else {}
    for k in kernels:
        extra_names = _names(k.attributes.get("cleave.passthrough"))
        missing = [n for n in extra_names if n not in env]
        if missing:
            raise InterpretationError(f"@{k.sym_name.data}: passthrough value(s) {', '.join(missing)} are not computed before it")
        extra = [env[n] for n in extra_names]
        args = values[: len(k.inputs) - len(extra)] + extra
        env.update(zip(_names(k.attributes.get("cleave.input_names")), args))
        transposed = tl.transposed_inputs(k)  # (given the graph's tensors, it reads their transposes)
        values = list(run_kernel(k, [np.swapaxes(x, -1, -2) if i in transposed else x for i, x in enumerate(args)], bindings))
        env.update(zip(_names(k.attributes.get("cleave.output_names")), values))
    results = _names(kernels[-1].attributes.get("cleave.results")) if kernels else []
    return tuple(env[n] for n in results) if results else tuple(values)


def candidate_kernels(module: ModuleOp) -> list[tuple[str, list[tl.KernelOp]]]:
    """(graph, kernels in launch order) of every candidate of a lowered module, best estimated first."""
    from cleave_ir.tilelang_emitter import rank_candidates

    by_name = {k.sym_name.data: k for k in module.walk() if isinstance(k, tl.KernelOp)}
    return [(g, [by_name[k] for k in ks]) for _, ks, g in rank_candidates(module)]


def _tf32(x: np.ndarray) -> np.ndarray:
    """A gemm operand as the tensor cores read it, in fp32: an fp32 operand rounded to TF32 (10 mantissa
    bits, to nearest), as an fp32 gemm runs on them; 16-bit operands are exact in fp32."""
    x = np.asarray(x)
    if x.dtype != np.float32:
        return x.astype(np.float32)
    bits = x.view(np.uint32)
    return ((bits + np.uint32(0xFFF) + ((bits >> np.uint32(13)) & np.uint32(1))) & np.uint32(0xFFFFE000)).view(np.float32)
