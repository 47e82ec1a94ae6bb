"""`-t tilelang`: the printer of the `tilelang` dialect, a TileLang 0.1.15 Python module.

One `@T.prim_func` per `tilelang.kernel`, construct for construct (see `dialects/tilelang.py`);
every decision (buffers, gemm or CUDA-core loops, reductions, pipelining, the grid) was made by
`cleave-lower-tilelang`, which runs first on a copy of the module when it still holds itgraph
kernels. Parallel-loop statements print as Python expressions of their loads (TileLang casts
implicitly, so `arith.extf`/`arith.truncf` print as nothing).

The module records the graph and schedule of every kernel (`KERNELS`), compiles lazily on a GPU
(`compile_kernel`), and exposes `run(*tensors)` for the best candidate: one kernel, or a split kernel
then its combine kernel with the partials allocated in between.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import IO, cast

import sympy
from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, IntegerAttr, ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.utils.target import Target

from cleave_ir.diagnostics import CleaveError
from cleave_ir.dialects import cleave, itgraph, tgraph
from cleave_ir.dialects import tilelang as tl
from cleave_ir.passes.lower_tilelang import (
    RESERVED_NAMES,
    LoweringError,
    finished_kernel,
    fresh_name,
    ident,
    lower_module,
)
from cleave_ir.passes.padded_dims import PADDED
from cleave_ir.passes.pipeline import rank_candidates
from cleave_ir.shapes import Dim

__all__ = ["LoweringError", "TileLangTarget", "kernel_source", "module_source"]

_DTYPES = {"f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64"}


def _dtype(t: tl.BufferType) -> str:
    return _DTYPES[str(t.element_type)]


def _tuple(items: Sequence[str]) -> str:
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"


def _py_shape(shape: Sequence[Dim]) -> tuple[int | str, ...]:
    return tuple(int(d) if d.is_Integer else py_expr(d) for d in shape)


_FUNCS = (sympy.floor, sympy.ceiling, sympy.Mod)


def _py_func(e: sympy.Expr) -> str:
    if isinstance(e, sympy.Mod):
        x, m = e.args
        inner = _py_floordiv(x) if isinstance(x, sympy.floor) else _py_atom(x)
        return f"(({inner} % {_py_atom(m)}))"
    if isinstance(e, sympy.floor):
        return f"({_py_floordiv(e)})"
    num, den = sympy.fraction(sympy.together(e.args[0]))
    return f"T.ceildiv({py_expr(num)}, {py_expr(den)})"


def _py_floordiv(e: sympy.Expr) -> str:
    num, den = sympy.fraction(sympy.together(e.args[0]))
    return f"{_py_atom(num)} // {_py_atom(den)}"


def _py_atom(e: sympy.Expr) -> str:
    text = py_expr(e)
    return text if e.is_Atom or isinstance(e, _FUNCS) else f"({text})"


def py_expr(e: Dim) -> str:
    """Python text of an index expression (the text the emitter has always printed: sympy's)."""
    e = sympy.expand(sympy.sympify(e))
    if not e.has(*_FUNCS) and all(sympy.fraction(t)[1] == 1 for t in sympy.Add.make_args(e)):
        return str(e)
    table: dict[str, str] = {}

    def hide(x: sympy.Expr) -> sympy.Expr:
        if isinstance(x, _FUNCS):
            text = _py_func(x)
        elif (x.is_Mul or x.is_Pow) and sympy.fraction(x)[1] != 1:  # exact quotients of dims: K/s
            num, den = sympy.fraction(x)
            text = f"{_py_atom(num)} // {_py_atom(den)}"
        else:
            return x.func(*(hide(a) for a in x.args)) if x.args else x
        name = f"_f{len(table)}"
        table[name] = text
        return sympy.Symbol(name, integer=True)

    text = str(hide(e))
    for name in sorted(table, key=len, reverse=True):
        text = text.replace(name, table[name])
    return text


# precedence of printed scalar expressions: comparisons < + - < * / < unary minus < atoms
_CMP, _ADD, _MUL, _UNARY, _ATOM = 0, 1, 2, 3, 4
_INFIX: dict[type[Operation], tuple[str, int]] = {
    arith.AddfOp: ("+", _ADD),
    arith.SubfOp: ("-", _ADD),
    arith.MulfOp: ("*", _MUL),
    arith.DivfOp: ("/", _MUL),
}
_CALLS: dict[type[Operation], str] = {
    xmath.ExpOp: "T.exp",
    xmath.SqrtOp: "T.sqrt",
    xmath.RsqrtOp: "T.rsqrt",
    xmath.Exp2Op: "T.exp2",
    xmath.LogOp: "T.log",
    xmath.TanhOp: "T.tanh",
    xmath.ErfOp: "T.erf",
    xmath.AbsFOp: "T.abs",
}
_MINMAX: dict[type[Operation], str] = {arith.MaximumfOp: "T.max", arith.MinimumfOp: "T.min"}


class _KernelPrinter:
    def __init__(self, kernel: tl.KernelOp) -> None:
        self.kernel = kernel
        self.lines: list[str] = []
        self.py: dict[SSAValue, str] = {}
        loop_vars = {
            v for op in kernel.walk()
            for v in (op.var_names if isinstance(op, tl.ParallelOp) else [op.var_name] if isinstance(op, (tl.SerialOp, tl.PipelinedOp)) else [])
        }
        self.names: set[str] = set(RESERVED_NAMES) | loop_vars | set(kernel.grid_var_names)

    def fresh(self, hint: str) -> str:
        return fresh_name(self.names, hint)

    def emit(self, indent: int, line: str) -> None:
        self.lines.append("    " * indent + line)

    def write(self) -> str:
        k = self.kernel
        params = []
        strides: list[str] = []
        for arg in k.params:
            self.py[arg] = self.fresh(arg.name_hint or "arg")
            t = tl.buffer_type(arg)
            shape = _tuple([py_expr(d) for d in t.shape])
            if len(t.shape) > 1:
                # outer strides are symbols that the module's `prim_func` specializes to the tensors'
                # own (dense row-major by default): inputs may be views (transposed heads), and an
                # output may be written in the layout its user wants
                outer = [self.fresh(f"{self.py[arg]}_stride{i}") for i in range(len(t.shape) - 1)]
                strides += outer
                params.append(f"{self.py[arg]}: T.StridedTensor({shape}, {_tuple([*outer, '1'])}, \"{_dtype(t)}\")")
            else:
                params.append(f"{self.py[arg]}: T.Tensor({shape}, \"{_dtype(t)}\")")
        panel = k.attributes.get("cleave.swizzle_panel")
        if isinstance(panel, IntegerAttr):
            self.emit(2, f"T.use_swizzle(panel_size={panel.value.data})")
        self.holds: dict[str, str] = {}  # dtype -> the one-element local that reads of retired tiles go to
        for t in sorted({_dtype(tl.buffer_type(x)) for op in k.walk() if isinstance(op, tl.WaitGemmOp) for x in op.retired}):
            self.holds[t] = self.fresh("hold")
            self.emit(2, f"{self.holds[t]} = T.alloc_local((1,), \"{t}\")")
        self.block(k.body.block.ops, 2)
        names = k.grid_var_names
        symbols = sorted(tl.shape_symbols(k))
        head = [f"{s} = T.dynamic(\"{s}\")" for s in [*symbols, *strides]] + [
            "@T.prim_func",
            f"def {ident(k.sym_name.data)}({', '.join(params)}):",
            f"    with T.Kernel({', '.join(py_expr(e) for e in k.grid_extents)}, threads={k.threads.value.data}) as ({', '.join(names)}{',' if len(names) == 1 else ''}):",
        ]
        return "\n".join(head + self.lines) + "\n"

    def block(self, ops, indent: int) -> None:
        for op in ops:
            if isinstance(op, (tl.AllocSharedOp, tl.AllocFragmentOp)):
                t = tl.buffer_type(op.result)
                self.py[op.result] = self.fresh(op.result.name_hint or "t")
                self.emit(indent, f"{self.py[op.result]} = T.alloc_{t.scope_name}({_tuple([py_expr(d) for d in t.shape])}, \"{_dtype(t)}\")")
            elif isinstance(op, tl.CopyOp):
                hint = ', annotations={"disable_tma": True}' if op.no_tma is not None else ""
                self.emit(indent, f"T.copy({self.side(op.src, op.src_region)}, {self.side(op.dst, op.dst_region)}{hint})")
            elif isinstance(op, tl.GemmOp):
                self.emit(
                    indent,
                    f"T.{'wgmma_gemm' if op.is_async is not None else 'gemm'}({self.py[op.a]}, {self.py[op.b]}, {self.py[op.c]}, "
                    f"{'transpose_A=True, ' if op.transpose_a is not None else ''}"
                    f"transpose_B={op.transpose_b is not None}, policy=T.GemmWarpPolicy.{op.warp_policy.value}"
                    f"{', clear_accum=True' if op.clear is not None else ''})",
                )
            elif isinstance(op, tl.WaitGemmOp):
                self.emit(indent, f"T.wait_wgmma({op.pending_count})")
                for tile in op.retired:  # a read after the wait: TileLang releases the tile after it
                    t = tl.buffer_type(tile)
                    self.emit(indent, f"{self.holds[_dtype(t)]}[0] = {self.py[tile]}[{', '.join('0' * t.rank)}]")
            elif isinstance(op, tl.WaitPriorGridsOp):
                self.emit(indent, "T.pdl_sync()")
            elif isinstance(op, tl.LaunchDependentsOp):
                self.emit(indent, "T.pdl_trigger()")
            elif isinstance(op, tl.ClearOp) and tl.buffer_type(op.buffer).scope_name == tl.Scope.SHARED:
                # TileLang 0.1.15 spreads T.clear of a shared tile over all the block's threads, a
                # warp-specialized kernel's producer warpgroup included, and fails ("Index mapping does not
                # form a bijective transform") where that count does not divide the elements: a [64, 80]
                # padded query tile on 64 + 128 threads. A T.Parallel loop is spread over the block's threads.
                t = tl.buffer_type(op.buffer)
                names = [f"i{n}" for n in range(t.rank)]
                self.emit(indent, f"for {', '.join(names)} in T.Parallel({', '.join(py_expr(d) for d in t.shape)}):")
                self.emit(indent + 1, f"{self.py[op.buffer]}[{', '.join(names)}] = T.Cast(\"{_dtype(t)}\", 0.0)")
            elif isinstance(op, tl.ClearOp):
                self.emit(indent, f"T.clear({self.py[op.buffer]})")
            elif isinstance(op, tl.FillOp):
                v = op.fill_value
                text = repr(v) if math.isfinite(v) else f"{'-' if v < 0 else ''}T.infinity(\"{_dtype(tl.buffer_type(op.buffer))}\")"
                self.emit(indent, f"T.fill({self.py[op.buffer]}, {text})")
            elif isinstance(op, (tl.ReduceSumOp, tl.ReduceMaxOp)):
                fn = op.name.split(".")[1]
                self.emit(indent, f"T.{fn}({self.py[op.src]}, {self.py[op.dst]}, dim={op.dim.value.data}, clear={op.clear is not None})")
            elif isinstance(op, tl.SerialOp):
                self.emit(indent, f"for {op.var_name} in T.{'unroll' if op.unroll is not None else 'serial'}({py_expr(op.extent_expr)}):")
                self.block(op.body.block.ops, indent + 1)
            elif isinstance(op, tl.PipelinedOp):
                self.emit(indent, f"for {op.var_name} in T.Pipelined({py_expr(op.extent_expr)}, num_stages={op.num_stages.value.data}):")
                self.block(op.body.block.ops, indent + 1)
            elif isinstance(op, tl.ParallelOp):
                self.emit(indent, f"for {', '.join(op.var_names)} in T.Parallel({', '.join(py_expr(e) for e in op.extent_exprs)}):")
                self.statements(op, indent + 1)
            else:
                raise LoweringError(f"error: -t tilelang: {op.name} has no TileLang form at block level")

    def side(self, value: SSAValue, region: tl.RegionAttr | None) -> str:
        if region is None:
            return self.py[value]
        parts = []
        offsets, sizes = region.offset_exprs, region.size_exprs
        for off, size in zip(offsets, sizes):
            o = py_expr(off)
            parts.append(o if size == 1 else f"{o}:{o} + {py_expr(size)}" if o != "0" else f"0:{py_expr(size)}")
        if all(s == 1 for s in sizes):  # keep one slice so the region has a dim
            o = py_expr(offsets[-1])
            parts[-1] = f"{o}:{o} + 1"
        return f"{self.py[value]}[{', '.join(parts)}]"

    def statements(self, loop: tl.ParallelOp, indent: int) -> None:
        ops = list(loop.body.block.ops)
        position = {op: i for i, op in enumerate(ops)}
        for i, op in enumerate(ops):
            if not isinstance(op, tl.StoreOp):
                continue
            for load in self.loads(op.value):  # printed inline: no store to its buffer in between
                if any(isinstance(x, tl.StoreOp) and x.buffer == load.buffer for x in ops[position[load] : i]):
                    raise LoweringError(
                        f"error: -t tilelang: {self.py[load.buffer]} is read before a store to it and used after: no TileLang form"
                    )
            for split in self.exp2_splits(op.value):
                if split.result not in self.py:  # (an op the value reaches twice)
                    self.let_exp2_split(split, indent)
            target = f"{self.py[op.buffer]}[{', '.join(py_expr(e) for e in op.index_exprs)}]"
            self.emit(indent, f"{target} {'+=' if op.accumulate is not None else '='} {self.scalar(op.value, op)[0]}")

    def exp2_splits(self, value: SSAValue) -> list[tl.Exp2SplitOp]:
        """The `tilelang.exp2_split` ops `value` is computed from, not yet bound, operands first."""
        op = value.owner
        inner = [x for o in getattr(op, "operands", ()) for x in self.exp2_splits(o)]
        if isinstance(op, tl.Exp2SplitOp) and op.result not in self.py:
            return [*inner, op]
        return inner

    def let_exp2_split(self, op: tl.Exp2SplitOp, indent: int) -> None:
        """Bind x, its clamp, its rounding bits and remainder (`tl.Exp2SplitOp.exp2_fma`, written in TileLang),
        and the split itself: the MUFU's columns leave the FMA form's bindings unused, and nvcc drops them."""
        x, c, j, f, y = (self.fresh(h) for h in ("e2_x", "e2_c", "e2_j", "e2_f", "e2"))
        c0, c1, c2, c3 = (repr(k) for k in tl.EXP2_CUBIC)
        rounder = repr(tl.EXP2_ROUNDER)
        self.emit(indent, f"{x} = {self.scalar(op.input, op)[0]}")
        self.emit(indent, f"{c} = T.max({x}, {tl.EXP2_LOWEST!r})")
        self.emit(indent, f"{j} = T.reinterpret({c} + {rounder}, \"int32\")")
        # through the bits, so that TVM's simplifier does not fold (c + R) - R to c
        self.emit(indent, f"{f} = {c} - (T.reinterpret({j}, \"float32\") - {rounder})")
        fma = f"T.reinterpret(T.reinterpret({c0} + {f} * ({c1} + {f} * ({c2} + {f} * {c3})), \"int32\") + T.shift_left({j}, 23), \"float32\")"
        on_fma = f"{op.column_var} // {tl.EXP2_COLUMN_BLOCK} % {op.every_count} == 0"
        self.emit(indent, f"{y} = T.if_then_else({on_fma}, {fma}, T.exp2({x}))")
        self.py[op.result] = y

    def loads(self, value: SSAValue) -> list[tl.LoadOp]:
        op = value.owner
        if isinstance(op, tl.LoadOp):
            return [op]
        return [x for o in getattr(op, "operands", ()) for x in self.loads(o)]

    def scalar(self, value: SSAValue, user: Operation) -> tuple[str, int]:
        """Python text of a parallel-body value (an operand of `user`) and its precedence."""
        op = value.owner
        if isinstance(op, tl.LoadOp):
            return f"{self.py[op.buffer]}[{', '.join(py_expr(e) for e in op.index_exprs)}]", _ATOM
        if isinstance(op, arith.ConstantOp):
            v = float(op.value.value.data)  # type: ignore[attr-defined]
            if not math.isfinite(v):  # TileLang's infinity of the type the value is used at
                t = _DTYPES[str(user.results[0].type)] if user.results and str(user.results[0].type) in _DTYPES else "float32"
                return f"{'-' if v < 0 else ''}T.infinity(\"{t}\")", _UNARY if v < 0 else _ATOM
            return repr(v), _UNARY if v < 0 else _ATOM
        if isinstance(op, (arith.ExtFOp, arith.TruncFOp)):
            if _implicit_cast(value, user):
                return self.scalar(op.input, op)
            return f"T.Cast(\"{_DTYPES[str(value.type)]}\", {self.scalar(op.input, op)[0]})", _ATOM
        if isinstance(op, arith.NegfOp):
            return f"-({self.scalar(op.operand, op)[0]})", _UNARY
        if type(op) in _CALLS:
            return f"{_CALLS[type(op)]}({self.scalar(op.operand, op)[0]})", _ATOM  # type: ignore[attr-defined]
        if type(op) in _MINMAX:
            return f"{_MINMAX[type(op)]}({self.scalar(op.lhs, op)[0]}, {self.scalar(op.rhs, op)[0]})", _ATOM  # type: ignore[attr-defined]
        if isinstance(op, arith.CmpfOp) and arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data] == "une":
            return f"{self.scalar(op.lhs, op)[0]} != {self.scalar(op.rhs, op)[0]}", _CMP
        if isinstance(op, tl.Exp2SplitOp):
            return self.py[op.result], _ATOM  # bound before the store (`let_exp2_split`)
        if isinstance(op, tl.IndexBelowOp):
            return f"{py_expr(op.index_expr)} < {py_expr(op.bound_expr)}", _CMP
        if isinstance(op, arith.SelectOp):
            c, a, b = (self.scalar(x, op)[0] for x in (op.cond, op.lhs, op.rhs))
            return f"T.if_then_else({c}, {a}, {b})", _ATOM
        if type(op) in _INFIX:
            sym, prec = _INFIX[type(op)]
            (lt, lp), (rt, rp) = self.scalar(op.lhs, op), self.scalar(op.rhs, op)  # type: ignore[attr-defined]
            lt = lt if lp >= prec else f"({lt})"
            rt = rt if rp > prec else f"({rt})"
            return f"{lt} {sym} {rt}", prec
        raise LoweringError(f"error: -t tilelang: {getattr(op, 'name', value)} has no TileLang form in a T.Parallel body")


def _implicit_cast(value: SSAValue, user: Operation) -> bool:
    """Whether TileLang applies the cast producing `value` by itself: a store converts to the
    buffer's type, and a binary op promotes (or narrows a literal) to its other operand's type."""
    if isinstance(user, tl.StoreOp):
        return True
    if isinstance(user, (*_MINMAX, *_INFIX)):
        other = user.rhs if user.lhs == value else user.lhs  # type: ignore[attr-defined]
        return other.type == value.type and not isinstance(other.owner, (arith.ExtFOp, arith.TruncFOp))
    return False


def kernel_source(kernel: tl.KernelOp | itgraph.KernelOp) -> str:
    """TileLang source of one kernel (a module-level `@T.prim_func`); itgraph kernels are lowered first,
    as `cleave-lower-tilelang` lowers them."""
    if isinstance(kernel, itgraph.KernelOp):
        kernel = finished_kernel(kernel)
    return _KernelPrinter(kernel).write()


def _graph_text(graph: tgraph.GraphOp) -> str:
    return str(graph).replace('"""', "'''")


def _names(attr) -> list[str]:
    return [a.data for a in attr.data] if isinstance(attr, ArrayAttr) else []


def lowered(module: ModuleOp) -> ModuleOp:
    """`module` itself if it holds no itgraph kernel, else a copy with them lowered to tilelang."""
    if not any(isinstance(op, itgraph.KernelOp) for op in module.walk()):
        return module
    copy = module.clone()
    lower_module(copy)
    return copy


def module_source(module: ModuleOp) -> str:
    """The whole Python module for every kernel of `module` (itgraph kernels are lowered on a copy)."""
    module = lowered(module)
    kernels = [op for op in module.walk() if isinstance(op, tl.KernelOp)]
    if not kernels:
        raise CleaveError("error: -t tilelang: the module holds no itgraph.kernel or tilelang.kernel (run cleave-schedule first)")
    graphs = {g.sym_name.data: g for g in module.walk() if isinstance(g, tgraph.GraphOp)}
    out = [
        '"""TileLang kernels generated by cleave-opt (Cleave-IR). Do not edit: regenerate instead."""',
        "",
        "import collections",
        "",
        "import tilelang",
        "import tilelang.language as T",
        "",
    ]
    meta = []
    for k in kernels:
        out.append(kernel_source(k))
        out.append("")
        src_name = tgraph.referenced_symbol(k, "cleave.schedule_of") or ""
        est = k.attributes.get("cleave.estimated_us")
        us = float(est.value.data) if est is not None else math.inf  # type: ignore[attr-defined]
        if "cleave.passthrough" in k.attributes:
            passthrough = _names(k.attributes["cleave.passthrough"])
        else:
            passthrough = _names(graphs[src_name].attributes.get("cleave.passthrough")) if src_name in graphs else []
        us_text = repr(us) if math.isfinite(us) else 'float("inf")'
        out_names = f"'output_names': {_names(k.attributes['cleave.output_names'])!r}, " if "cleave.output_names" in k.attributes else ""
        if "cleave.results" in k.attributes:
            out_names += f"'results': {_names(k.attributes['cleave.results'])!r}, "
        flags = {"tl.enable_fast_math": "cleave.fast_math" in k.attributes, "tl.disable_warp_specialized": "cleave.no_warp_specialization" in k.attributes}
        configs = f"'pass_configs': {({n: True for n, on in flags.items() if on})!r}, " if any(flags.values()) else ""
        names = _names(k.attributes.get("cleave.input_names")) or [a.name_hint or f"arg{i}" for i, a in enumerate(k.inputs)]
        types = [tl.buffer_type(a) for a in k.params]
        tiles = cleave.tiles(k)
        transposed = f"'transposed': {list(tl.transposed_inputs(k))!r}, " if tl.transposed_inputs(k) else ""
        meta.append(
            f"    {k.sym_name.data!r}: {{'graph': {src_name!r}, 'input_names': {names!r}, 'passthrough': {passthrough!r}, 'tiles': {tiles.describe() if tiles else ''!r}, "
            f"'estimated_us': {us_text}, 'inputs': {len(k.inputs)}, 'outputs': {len(k.outputs)}, {out_names}{configs}"
            f"{transposed}'shapes': {[_py_shape(t.shape) for t in types]!r}, 'dtypes': {[_dtype(t) for t in types]!r}}},"
        )
    out.append("KERNELS = {\n" + "\n".join(meta) + "\n}")
    out.append("")
    out.append("GRAPHS = {")
    for name, g in graphs.items():
        out.append(f'    {name!r}: """\n{_graph_text(g)}\n""",')
    out.append("}")
    out.append("")
    out.append("# padded dims (cleave-padded-dims: scheduled at a padded size), compiled at the graph's real size")
    out.append(f"STATIC_SIZES = {static_sizes(graphs.values())!r}")
    out.append("")
    units = rank_candidates(module)
    out.append("# the candidates, best estimated first: (estimated us, kernels to run in order, graph)")
    out.append(f"CANDIDATES = {[(round(u, 3), ks, g) for u, ks, g in units]!r}")
    out.append("")
    out.append("# the kernels' graph as written (cleave-fold-structural): its inputs as views (input, perm, [dim, start, size]")
    out.append("# slices) of run's tensors, its outputs as (output, dim, perm) parts of run's outputs; None: the same tensors")
    out.append(f"BOUNDARY = {boundary_table(graphs.values())!r}")
    out.append(_RUNTIME)
    return "\n".join(out)


def boundary_table(graphs: Iterable[tgraph.GraphOp]) -> dict[str, list[tuple]] | None:
    """The emitted module's `BOUNDARY`: the `cleave.boundary` of the graphs (one for all of them)."""
    found = {g.attributes["cleave.boundary"] for g in graphs if "cleave.boundary" in g.attributes}
    if not found:
        return None
    if len(found) > 1:
        raise CleaveError("error: -t tilelang: the module's graphs were given with different boundaries (cleave.boundary); emit one graph at a time")
    b = cast(cleave.BoundaryAttr, found.pop())

    def view(v: cleave.ViewAttr) -> tuple:
        return (v.source, v.permutation, tuple(v.ranges))

    return {
        # a view: (input, perm, slices); a join of views: ("cat", dim, views)
        "inputs": [("cat", v.axis, tuple(view(p) for p in v.parts.data)) if isinstance(v, cleave.JoinAttr) else view(v) for v in b.inputs.data],
        "outputs": [(p.target, p.axis, p.permutation) for p in b.outputs.data],
    }


def static_sizes(graphs: Iterable[tgraph.GraphOp]) -> dict[str, int]:
    """The dims `cleave-padded-dims` made dynamic (a static awkward size scheduled at a padded one),
    by the names the kernels give them, with their real sizes (`padded_dims.PADDED`)."""
    sizes: dict[str, int] = {}
    for g in graphs:
        padded = g.attributes.get(PADDED)
        if isinstance(padded, DictionaryAttr):
            sizes.update({name: a.value.data for name, a in padded.data.items() if isinstance(a, IntegerAttr)})
    return dict(sorted(sizes.items()))


_RUNTIME = '''
_compiled = {}


def _dense(shape):
    strides, step = [], 1
    for d in reversed(shape):
        strides.insert(0, step)
        step = step * d
    return strides


def layout(x):
    """The outer strides kernel inputs are specialized to for tensor `x` (None: dense row-major), or
    "copy" where the kernels cannot read `x` in place (a last stride other than 1, a zero or negative
    stride, a data pointer not 16-byte aligned, an outer stride not a multiple of 16 bytes, which no
    TMA descriptor takes)."""
    if x.data_ptr() % 16:
        return "copy"
    if x.is_contiguous():
        return None
    if x.dim() < 2 or x.stride(-1) != 1 or any(s <= 0 for s, n in zip(x.stride(), x.shape) if n > 1):
        return "copy"
    if not tma_maps([x], size_one=False):
        return "copy"
    dense = _dense(x.shape)
    return tuple(s if n > 1 else d for s, n, d in zip(x.stride()[:-1], x.shape, dense))  # a size-1 dim's stride is never used


def _unstaged(func):
    """`func` with one stage in each pipelined loop of a dynamic trip count: TileLang 0.1.15 pipelines
    such a loop only when warp-specialized ("Downcast from tirx.Sub to ir.IntImm failed")."""
    from tilelang import tvm

    tirx = tvm.tirx

    def one_stage(loop):
        if "num_stages" not in loop.annotations or isinstance(loop.extent, tirx.IntImm):
            return None
        annotations = {**loop.annotations, "num_stages": tirx.IntImm("int32", 1)}
        return tirx.For(loop.loop_var, loop.min, loop.extent, loop.kind, loop.body, loop.thread_binding, annotations)

    return func.with_body(tirx.stmt_functor.ir_transform(func.body, None, one_stage, ["tirx.For"]))


def prim_func(name, layouts=(), pdl=True, tma=True):
    """Kernel `name` with the outer strides of its tensors (inputs, then outputs) specialized: tensor i
    to `layouts[i]` (`layout`'s tuple), dense row-major where that is None or missing (the same code
    as a `T.Tensor`), and the padded dims of `STATIC_SIZES` at their real sizes: a stride TileLang
    knows is a multiple of 16 bytes is copied by 16-byte vectors (a mask whose rows are the key
    length: by 2-byte loads while that length was a dynamic dim). With `pdl=False`, without its wait
    for prior kernels (`T.pdl_sync()`) and its early launch of the next (`T.pdl_trigger()`), which GPUs
    before sm_90 do not run (see `has_pdl`). With
    `tma=False`, for the thread-copy compile (`compile_kernel`): its pipelined loops of a dynamic
    trip count get one stage (`_unstaged`)."""
    from tilelang import tvm

    func = globals()[name]
    binds = {}
    for i, param in enumerate(func.params):
        buf = func.buffer_map.get(param)
        if buf is None:
            continue
        shape = [STATIC_SIZES.get(d.name, d) if isinstance(d, tvm.tirx.Var) else d for d in buf.shape]
        if len(shape) < 2:
            if any(isinstance(d, int) for d in shape):
                binds[param] = tvm.tirx.decl_buffer(shape, buf.dtype, buf.name)
            continue
        given = layouts[i] if i < len(layouts) else None
        strides = [*given, 1] if given is not None else _dense(shape)
        binds[param] = tvm.tirx.decl_buffer(shape, buf.dtype, buf.name, strides=strides)
    func = func.specialize(binds) if binds else func
    if not tma:
        func = _unstaged(func)
    if pdl:
        return func

    def drop(stmt):
        call = stmt.value
        if isinstance(call, tvm.tirx.Call) and getattr(call.op, "name", "") in ("tl.pdl_sync", "tl.pdl_trigger"):
            return tvm.tirx.Evaluate(0)
        return None

    return func.with_body(tvm.tirx.stmt_functor.ir_transform(func.body, None, drop, ["tirx.Evaluate"]))


def has_pdl(target="cuda"):
    """Whether `target` runs programmatic dependent launch (`T.pdl_sync()`): sm_90 and later; for
    "cuda" or "auto", this machine's GPU. Where its arch cannot be told, the kernels keep their
    waits, as emitted (for the H200, sm_90a)."""
    from tilelang.backend.target import determine_target
    from tilelang.contrib.nvcc import have_pdl

    try:
        return have_pdl(determine_target(target, return_object=True))
    except Exception:  # noqa: BLE001 - an undeterminable target compiles the kernels as emitted
        return True


def _key(name, layouts, into, tma=True):
    layouts = tuple(layouts) if any(layouts) else ()
    key = (name, layouts, "into") if into else (name, layouts)
    return key if tma else (*key, "no_tma")


def tma_maps(tensors, size_one=True):
    """Whether TMA tensor maps take every one of `tensors`: outer strides that are multiples of 16
    bytes, those of dims of size 1 too (a tensor map has every dim: a decode step's [1, 1, 1, 18] f16
    mask, 36-byte strides, failed on the host), unless `size_one` is False (`layout`: a kernel
    specialized to a view's strides takes the dense stride for a dim of size 1). A kernel given one that is not (a [64, 777] f16
    tensor: 1554-byte rows) is compiled with TileLang's thread copies instead (`tl.disable_tma_lower`,
    and no warp specialization): with TMA, its launch fails on the host. Trailing dims of 1 are
    dropped first: a [T, 1] column of row statistics is a vector, which TileLang copies without TMA
    (its boxes are under 16 bytes), and a launch that fails anyway is retried with thread copies (`_call`)."""
    for x in tensors:
        dims = list(zip(x.stride(), x.shape))
        while dims and dims[-1][1] == 1:
            dims.pop()
        if any(s * x.element_size() % 16 for s, n in dims[:-1] if size_one or n > 1):
            return False
    return True


def _call(name, layouts, into, tma, args):
    """(cache key, compiled kernel, its result) of compile_kernel(...)(*args). A kernel whose own
    outputs no TMA tensor map takes (rows of an odd dynamic width) fails on the host before it
    launches: then once more with thread copies."""
    try:
        kernel = compile_kernel(name, layouts=layouts, into=into, tma=tma)
        return _key(name, layouts, into, tma), kernel, kernel(*args)
    except Exception as e:  # noqa: BLE001 - TileLang's launcher raises a plain error naming the descriptor
        text = str(e).lower()
        if not tma or ("tma" not in text and "tensor_map" not in text):
            raise
    kernel = compile_kernel(name, layouts=layouts, into=into, tma=False)
    return _key(name, layouts, into, False), kernel, kernel(*args)


Launched = collections.namedtuple("Launched", "key kernel args copies into values")
"""What a launch did: the compiled kernel that ran (and its `_compiled` key), the arguments it was given
(copies where `copies` says), whether it wrote the outputs passed to it (else it allocated them), and
the outputs."""


def _stored(name, args):
    """`args` as kernel `name` takes them: the transpose of each input it reads stored transposed
    (`KERNELS[name]["transposed"]`: a view v^T of a row-major v is read as v, with no copy)."""
    transposed = KERNELS[name].get("transposed", ())
    return [x.transpose(-1, -2) if i in transposed else x for i, x in enumerate(args)]


def _launched(name, args, outs):
    """Kernel `name` on `args` as `run` launches it (`_decide`), writing `outs` where it can: `Launched`
    (its `args` as the kernel took them: `_stored`, copies)."""
    args = _stored(name, args)
    layouts, copies, into = _decide(name, args, outs)
    args = [_fresh(x) if i in copies else x for i, x in enumerate(args)]
    if into:
        key, kernel, _ = _call(name, layouts, True, tma_maps([*args, *outs]), [*args, *outs])
        return Launched(key, kernel, args, copies, True, outs)
    key, kernel, result = _call(name, layouts, False, tma_maps(args), args)
    return Launched(key, kernel, args, copies, False, list(result) if isinstance(result, (list, tuple)) else [result])


def launch(name, args, outs=()):
    """Kernel `name` on `args` as `run` launches it: views read in place where their layout allows,
    else copied (`layout`); TMA, or thread copies where a tensor map fails (`_call`). With `outs` (any
    layout), it writes them (or its outputs are copied there). Returns `Launched`."""
    outs = list(outs)
    got = _launched(name, args, outs)
    if outs and not got.into:
        for o, v in zip(outs, got.values):
            o.copy_(v)
        return got._replace(values=outs)
    return got


def compile_kernel(name, target="cuda", layouts=(), into=False, tma=True):
    """Compile one kernel with tilelang.compile (needs a CUDA GPU) for tensor `layouts` (see
    `prim_func`); it allocates and returns its outputs, or with `into` writes outputs passed after
    the inputs; with `tma=False`, copies go without TMA (see `tma_maps`). Cached per process,
    layout, `into` and `tma`."""
    key = _key(name, layouts, into, tma)
    if key not in _compiled:
        n_in = KERNELS[name]["inputs"]
        outs = None if into else list(range(n_in, n_in + KERNELS[name]["outputs"]))
        func = prim_func(name, layouts, pdl=has_pdl(target), tma=tma)
        configs = dict(KERNELS[name].get("pass_configs") or {})
        if not tma:  # (a warp-specialized loop's loads take TMA whatever the first flag says)
            configs.update({"tl.disable_tma_lower": True, "tl.disable_warp_specialized": True})
        _compiled[key] = tilelang.compile(func, out_idx=outs, target=target, pass_configs=configs or None)
    return _compiled[key]


MAX_LAYOUTS = 8
"""Layouts compiled per kernel besides the dense one; past them, views are copied (a dynamic dim
that a stride depends on must not compile a kernel per size)."""


def _fresh(x):
    return x.new_empty(x.shape).copy_(x)


def _decide(name, args, outs):
    """How `run` launches kernel `name` on `args`, writing `outs` where that is asked: (the layouts it
    is compiled for, the positions of `args` copied first because no kernel reads them in place
    (`layout`), whether it writes `outs`). Past `MAX_LAYOUTS` compiled layouts of a kernel, views are
    copied and outputs allocated."""
    layouts = [layout(x) for x in args]
    copies = [i for i, lay in enumerate(layouts) if lay == "copy"]
    layouts = [None if lay == "copy" else lay for lay in layouts]
    out_layouts = [layout(o) for o in outs]
    into = bool(outs) and "copy" not in out_layouts
    if into:
        layouts += out_layouts
    if any(layouts) and _key(name, layouts, into) not in _compiled:
        if sum(k[0] == name and any(k[1]) for k in _compiled) >= MAX_LAYOUTS:
            copies = sorted(set(copies) | {i for i, lay in enumerate(layouts[: len(args)]) if lay is not None})
            layouts, into = [], False
    return layouts, copies, into


_plans = {}
"""What `run` decided per candidate and signature of its tensors (`_signature`): for each kernel, its
cache key, the compiled kernel that ran, where its arguments come from and which are copied. A call
of the same signature replays it while `_compiled` still holds those kernels, without the per-call
layout and TMA checks (a few microseconds of host time a kernel)."""

MAX_PLANS = 64


def _signature(tensors):
    """What `run`'s decisions depend on: each tensor's shape, strides, dtype and pointer alignment."""
    return tuple((x.shape, x.stride(), x.dtype, x.data_ptr() % 16) for x in tensors)


def _replay(plan, tensors, outs):
    """Run a recorded plan (see `_plans`) on `tensors`: values are numbered as they appear (the inputs,
    then each kernel's copies and outputs); returns the last kernel's outputs, or `outs` it wrote, or the
    values a final step without a kernel gathers (a cut graph's `results`)."""
    for key, kernel, _, _, _ in plan:
        if key is not None and _compiled.get(key) is not kernel:
            return None
    slots = list(tensors)
    for key, kernel, sources, copies, into in plan:
        if key is None:
            return [slots[i] for i in sources]
        args = _stored(key[0], [slots[i] for i in sources])
        for i in copies:
            args[i] = _fresh(args[i])
            slots.append(args[i])
        if into:
            kernel(*args, *outs)
            return outs
        result = kernel(*args)
        values = list(result) if isinstance(result, (list, tuple)) else [result]
        slots.extend(values)
    return values


def run(*tensors, candidate=0, out=None):
    """Run a candidate (default: the best estimated) on torch tensors; returns its output(s).

    Each kernel takes the previous one's outputs, then the named values its passthrough lists: the
    original inputs (a Split-K combine kernel), or results of earlier kernels (a graph cut into kernels).
    Inputs may be strided views (a transposed q, k, v): each kernel is compiled once per layout of
    its tensors (up to `MAX_LAYOUTS`) and reads them in place; other tensors are copied (`layout`).
    `out`: a tensor of the output's shape, in any layout, that the last kernel writes and `run` returns.
    A later call with tensors of the same shapes, strides, dtypes and alignment replays the first
    one's decisions (`_plans`). Where the graph was written with slices, transposes or concats at its
    boundary (`BOUNDARY`), the kernels read views of `tensors`, and the parts of an output they write
    go into their windows of `out` (`_windows`), or are concatenated.
    """
    if BOUNDARY is None:
        values = _kernels(tensors, candidate, None if out is None else [out])
        return values[0] if len(values) == 1 else values
    views = boundary_inputs(tensors)
    if out is None:  # the outputs the last kernel writes in parts (or permuted), allocated here: no join after it
        meta = KERNELS[CANDIDATES[candidate][1][-1]]
        outs = output_for(meta, views[0].device)
        if outs is not None:
            _kernels(views, candidate, part_windows(outs, meta))
        else:
            outs = boundary_outputs(_kernels(views, candidate, None))
        return outs[0] if len(outs) == 1 else outs
    windows = _windows(out, candidate)
    if windows is not None:
        # the last kernel writes `out` itself, through views of it in its own frame: the whole output
        # (permuted) or each part's window of it
        _kernels(views, candidate, windows)
        return out
    outs = boundary_outputs(_kernels(views, candidate, None))
    if out is not None:
        return out.copy_(outs[0])
    return outs[0] if len(outs) == 1 else outs


def _windows(out, candidate):
    """`out`, the graph's one output, which the last kernel of `candidate` writes in parts of one perm
    (or whole), as the views of it that kernel writes: each part's window, in the kernels' frame. None
    where the graph has other outputs, or a part's size is not static."""
    if len({o for o, _, _ in BOUNDARY["outputs"]}) != 1:
        return None
    return part_windows([out], KERNELS[CANDIDATES[candidate][1][-1]])


def _groups(meta):
    """Per graph output, in order: its parts' (dim, perm) and their shapes in the kernels' frame (the
    outputs of the kernel of `meta`, in `BOUNDARY`'s order). None where the parts of an output do not
    share a dim and perm, or a shape is not static (or the outputs come from several kernels: `results`)."""
    if meta.get("results"):
        return None
    parts = BOUNDARY["outputs"]
    shapes = meta["shapes"][meta["inputs"] :]
    if len(shapes) != len(parts) or not all(isinstance(n, int) for shape in shapes for n in shape):
        return None
    groups = {}
    for (o, dim, perm), shape in zip(parts, shapes):
        key, found = (dim, tuple(perm)), groups.setdefault(o, ((dim, tuple(perm)), []))
        if found[0] != key or (dim is None and found[1]):
            return None
        found[1].append(shape)
    if sorted(groups) != list(range(len(groups))):
        return None
    return [groups[o] for o in range(len(groups))]


def part_windows(outs, meta):
    """`outs`, the graph's outputs, as the views of them the kernel of `meta` (`KERNELS[name]`, the last
    of its candidate) writes, one per part in `BOUNDARY`'s order: each part's window of its output, in
    the kernels' frame. None where `_groups` is, or an output is not of its parts' size."""
    groups = _groups(meta)
    if groups is None or len(groups) != len(outs):
        return None
    windows = {}
    for o, (out, ((dim, perm), shapes)) in enumerate(zip(outs, groups)):
        frame = _kernel_frame(out, perm)
        if dim is None:
            windows[o] = [frame]
            continue
        axis = perm[dim] if perm else dim
        sizes = [shape[axis] for shape in shapes]
        if sum(sizes) != frame.shape[axis]:
            return None
        starts = [sum(sizes[:i]) for i in range(len(sizes))]
        windows[o] = [frame.narrow(axis, start, n) for start, n in zip(starts, sizes)]
    return [windows[o].pop(0) for o, _, _ in BOUNDARY["outputs"]]


def output_for(meta, device):
    """Row-major tensors for the graph's outputs, which the kernel of `meta` writes in parts (or
    permuted, `BOUNDARY`'s outputs), for `part_windows`; None where `_groups` is (then `run` joins the
    parts)."""
    import torch

    groups = _groups(meta)
    if groups is None:
        return None
    dtypes = meta["dtypes"][meta["inputs"] :]
    outs = []
    for (dim, perm), shapes in groups:
        frame = list(shapes[0])
        if dim is not None:
            axis = perm[dim] if perm else dim
            frame[axis] = sum(shape[axis] for shape in shapes)
        shape = [frame[p] for p in perm] if perm else frame  # graph dim i is the kernels' dim perm[i]
        index = next(i for i, (o, _, _) in enumerate(BOUNDARY["outputs"]) if o == len(outs))
        outs.append(torch.empty(shape, dtype=getattr(torch, dtypes[index]), device=device))
    return outs


def _kernel_frame(x, perm):
    """`x`, a graph output that is a part permuted by `perm`, viewed as the kernels write it."""
    return x.permute(*[list(perm).index(i) for i in range(len(perm))]) if perm else x


def boundary_inputs(tensors):
    """The kernels' inputs from the graph's `tensors`: each a view `BOUNDARY` names (input, perm, slices),
    or a join of views ("cat", dim, views): a copy, as PyTorch's concat makes."""
    if BOUNDARY is None:
        return list(tensors)
    views = []
    for entry in BOUNDARY["inputs"]:
        if entry[0] == "cat":
            import torch

            views.append(torch.cat([_view(tensors, *v) for v in entry[2]], entry[1]))
        else:
            views.append(_view(tensors, *entry))
    return views


def _view(tensors, i, perm, slices):
    x = tensors[i].permute(*perm) if perm else tensors[i]
    for dim, start, size in slices:
        x = x.narrow(dim, start, size)
    return x


def boundary_outputs(parts):
    """The graph's outputs from the kernels' outputs `parts`: the parts `BOUNDARY` gives one output,
    each permuted (a view), concatenated along their dim."""
    parts = list(parts) if isinstance(parts, (list, tuple)) else [parts]
    if BOUNDARY is None:
        return parts
    import torch

    groups = {}
    for x, (o, dim, perm) in zip(parts, BOUNDARY["outputs"]):
        groups.setdefault(o, (dim, []))[1].append(x.permute(*perm) if perm else x)
    # row-major, as the kernels' own outputs are (a permuted part is copied; `run(out=...)` writes any layout)
    return [(xs[0] if dim is None else torch.cat(xs, dim)).contiguous() for _, (dim, xs) in sorted(groups.items())]


def _kernels(tensors, candidate, outs):
    """`run` of the kernels on their own inputs: the last kernel's outputs, written into `outs` (a list,
    any layouts) where given."""
    key = (candidate, _signature(tensors), None if outs is None else _signature(outs))
    plan = _plans.get(key)
    values = None if plan is None else _replay(plan, tensors, outs)
    if values is None:
        plan, values = _run(tensors, candidate, outs)
        if len(_plans) >= MAX_PLANS:
            _plans.clear()
        _plans[key] = plan
    if outs is not None and values is not outs:
        for o, v in zip(outs, values):
            o.copy_(v)
        return outs
    return values


def _run(tensors, candidate, outs):
    """`run` deciding every kernel's layouts, copies and TMA: (the plan it followed, the last
    kernel's outputs, or `outs` that kernel wrote)."""
    _, names, _ = CANDIDATES[candidate]
    values = list(tensors)
    slots = list(tensors)
    slot_of = {id(x): i for i, x in enumerate(tensors)}
    plan = []
    env = dict(zip(KERNELS[names[0]]["input_names"], tensors))
    for name in names:
        extra = [env[n] for n in KERNELS[name]["passthrough"]]
        args = values[: KERNELS[name]["inputs"] - len(extra)] + extra
        sources = [slot_of[id(x)] for x in args]
        last = outs is not None and name == names[-1] and KERNELS[name]["outputs"] == len(outs) and "results" not in KERNELS[name]
        got = _launched(name, args, outs if last else [])
        for i in got.copies:
            slot_of[id(got.args[i])] = len(slots)
            slots.append(got.args[i])
        transposed = KERNELS[name].get("transposed", ())  # (later kernels get the tensor as given)
        env.update(zip(KERNELS[name]["input_names"], [x if i in transposed else got.args[i] for i, x in enumerate(args)]))
        plan.append((got.key, got.kernel, sources, got.copies, got.into))
        if got.into:
            return plan, outs
        values = got.values
        for v in values:
            slot_of[id(v)] = len(slots)
            slots.append(v)
        env.update(zip(KERNELS[name].get("output_names", ()), values))
    results = KERNELS[names[-1]].get("results")
    if results:  # a cut graph's outputs, gathered from every kernel of the chain (or its inputs)
        values = [env[n] for n in results]
        plan.append((None, None, [slot_of[id(v)] for v in values], (), False))
    return plan, values
'''


@dataclass(frozen=True)
class TileLangTarget(Target):
    """`-t tilelang`: write the TileLang module of the module's kernels (tilelang, or itgraph lowered first)."""

    name = "tilelang"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        output.write(module_source(module))
