"""`-t tilelang`: itgraph kernels (after cleave-place-memory) as a TileLang 0.1.15 Python module.

One `@T.prim_func` per kernel. Tiles become buffers without their size-1 dims: loads are
`T.copy` from a global slice into shared memory, computed tiles are fp32 fragments. Matmuls whose
tiles are 2-D multiples of 16 become `T.gemm` (computed operands are staged in shared memory as
fp16); other matmuls (a few rows, matrix-vector, batched tiles)
are CUDA-core loops. Sequential loops become `T.Pipelined` with their accumulators in fragments
(sum, max, and the online-softmax rescaled sum).

The module records the graph and schedule of every kernel (`KERNELS`), compiles lazily on a GPU
(`compile_kernel`), and exposes `run(*tensors)` for the best candidate: one kernel, or a split kernel
then its combine kernel with the partials allocated in between.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO

import sympy
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.utils.target import Target

from cleave_ir.diagnostics import CleaveError
from cleave_ir.dialects import itgraph, tgraph


class LoweringError(CleaveError):
    """A kernel that TileLang cannot express as emitted here; the message names the op."""


_DTYPES = {"f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64"}


def _dtype(value: SSAValue | tgraph.TensorType) -> str:
    t = value if isinstance(value, tgraph.TensorType) else tgraph.tensor_type(value)
    return _DTYPES[str(t.element_type)]


def _shape(value: SSAValue) -> tuple[int, ...]:
    return tuple(int(d) for d in tgraph.tensor_type(value).shape)


def _squeezed(shape: Sequence[int]) -> tuple[int, ...]:
    return tuple(d for d in shape if d != 1) or (1,)


def _ident(name: str) -> str:
    name = re.sub(r"\W", "_", name)
    return name if name and not name[0].isdigit() else f"v_{name}"


@dataclass
class _Buffer:
    name: str
    shape: tuple[int, ...]  # the tile's full shape (with size-1 dims)
    scope: str = "global"
    dtype: str = "float32"

    def at(self, full_vars: Sequence[str | None]) -> str:
        """Index for the result-space loop variables (None where the result dim is 1)."""
        idx = [v for v, d in zip(full_vars, self.shape) if d != 1 and v is not None]
        return f"{self.name}[{', '.join(idx) if idx else '0'}]"


class _KernelWriter:
    def __init__(self, kernel: itgraph.KernelOp) -> None:
        self.kernel = kernel
        self.lines: list[str] = []
        self.allocs: list[str] = []
        self.buffers: dict[SSAValue, _Buffer] = {}
        # names the generated code uses itself
        self.names: set[str] = {"T", "tilelang", "bx", "by", "bz", "kk", *(f"i{n}" for n in range(8))}
        self.subst: dict[str, str] = {}  # loop variable -> TileLang variable
        threads = kernel.attributes.get("cleave.threads")
        self.threads = threads.value.data if threads is not None else 128  # type: ignore[attr-defined]
        stages = kernel.attributes.get("cleave.stages")
        self.stages = stages.value.data if stages is not None else 2  # type: ignore[attr-defined]

    # ------------------------------------------------------------------ helpers
    def fresh(self, hint: str) -> str:
        base = _ident(hint or "t")
        name, i = base, 1
        while name in self.names:
            name, i = f"{base}_{i}", i + 1
        self.names.add(name)
        return name

    def alloc(self, value: SSAValue, hint: str, scope: str, dtype: str = "float32") -> _Buffer:
        name = self.fresh(hint)
        shape = _squeezed(_shape(value))
        self.allocs.append(f"{name} = T.alloc_{scope}({shape}, \"{dtype}\")")
        buf = _Buffer(name, _shape(value), scope, dtype)
        self.buffers[value] = buf
        return buf

    def expr(self, e: sympy.Expr) -> str:
        text = str(sympy.expand(e))
        for var, tl in self.subst.items():
            text = re.sub(rf"\b{var}\b", f"({tl})" if " " in tl else tl, text)
        return text

    def emit(self, indent: int, line: str) -> None:
        self.lines.append("    " * indent + line)

    def parallel(self, indent: int, shape: Sequence[int]) -> tuple[list[str | None], int]:
        """Open a T.Parallel over the non-1 dims of `shape`; return the per-dim variables."""
        dims = [d for d in shape if d != 1] or [1]
        names = [f"i{n}" for n in range(len(dims))]
        self.emit(indent, f"for {', '.join(names)} in T.Parallel({', '.join(map(str, dims))}):")
        it = iter(names)
        full = [next(it) if d != 1 else None for d in shape]
        if all(d == 1 for d in shape):
            full = [None] * len(shape)
        return full, indent + 1

    # ------------------------------------------------------------------ kernel
    def write(self) -> str:
        k = self.kernel
        par = k.body.block.first_op
        assert isinstance(par, itgraph.ParallelOp)
        params = []
        for arg in k.body.block.args:
            name = self.fresh(arg.name_hint or "arg")
            self.buffers[arg] = _Buffer(name, _shape(arg))
            params.append(f"{name}: T.Tensor({_shape(arg)}, \"{_dtype(arg)}\")")
        grid = [(v, int(e)) for v, e in zip(par.var_names, par.extent_dims) if int(e) > 1]
        if len(grid) > 3:  # T.Kernel has three grid dims: the leading ones share bx
            merged, grid = grid[: len(grid) - 2], grid[len(grid) - 2 :]
            stride = 1
            for v, e in reversed(merged):
                self.subst[v] = f"(bx // {stride} % {e})" if stride > 1 else f"(bx % {e})"
                stride *= e
            grid = [("_merged", stride), *grid]
        tl_vars = ["bx", "by", "bz"][: max(1, len(grid))]
        for (v, _), tl in zip(grid, tl_vars):
            self.subst.setdefault(v, tl)
        for v, e in zip(par.var_names, par.extent_dims):
            if int(e) == 1:
                self.subst[v] = "0"
        extents = [str(e) for _, e in grid] or ["1"]
        self.body(par.body.block.ops, 2)
        head = [
            "@T.prim_func",
            f"def {_ident(k.sym_name.data)}({', '.join(params)}):",
            f"    with T.Kernel({', '.join(extents)}, threads={self.threads}) as ({', '.join(tl_vars)}{',' if len(tl_vars) == 1 else ''}):",
        ]
        return "\n".join(head + ["        " + a for a in self.allocs] + self.lines) + "\n"

    def body(self, ops, indent: int) -> None:
        for op in ops:
            if isinstance(op, itgraph.LoadOp):
                self.load(op, indent)
            elif isinstance(op, itgraph.StoreOp):
                self.store(op, indent)
            elif isinstance(op, itgraph.SequentialOp):
                self.sequential(op, indent)
            elif isinstance(op, itgraph.YieldOp):
                continue
            elif isinstance(op, tgraph.MatmulOp):
                self.matmul(op, indent)
            elif isinstance(op, tgraph.ReduceOp):
                self.reduce(op, indent)
            elif isinstance(op, (tgraph.UnaryOp, tgraph.BinaryOp, tgraph.ScaleOp)):
                self.elementwise(op, indent)
            elif isinstance(op, (tgraph.ReshapeOp, tgraph.SplitOp)):
                self.reshape(op, indent)
            else:
                raise LoweringError(f"{op.name}: no TileLang lowering")

    def _slice(self, tmap: itgraph.TmapAttr) -> str:
        parts = []
        for off, size in zip(tmap.offset_exprs, tmap.tile_shape):
            o = self.expr(off)
            parts.append(o if int(size) == 1 else f"{o}:{o} + {int(size)}" if o != "0" else f"0:{int(size)}")
        if all(int(s) == 1 for s in tmap.tile_shape):  # keep one slice so the region has a dim
            o = self.expr(tmap.offset_exprs[-1])
            parts[-1] = f"{o}:{o} + 1"
        return ", ".join(parts)

    def load(self, op: itgraph.LoadOp, indent: int) -> None:
        buf = self.alloc(op.result, op.result.name_hint or "tile", "shared", _dtype(op.result))
        self.emit(indent, f"T.copy({self.buffers[op.source].name}[{self._slice(op.tmap)}], {buf.name})")

    def store(self, op: itgraph.StoreOp, indent: int) -> None:
        self.emit(indent, f"T.copy({self.buffers[op.value].name}, {self.buffers[op.dest].name}[{self._slice(op.tmap)}])")

    def reshape(self, op: Operation, indent: int) -> None:
        src, res = op.operands[0], op.results[0]
        if _squeezed(_shape(src)) != _squeezed(_shape(res)):
            raise LoweringError(f"{op.name}: only adds or drops size-1 dims in a kernel")
        b = self.buffers[src]
        self.buffers[res] = _Buffer(b.name, _shape(res), b.scope, b.dtype)  # same buffer, other view

    def elementwise(self, op: Operation, indent: int) -> None:
        res = op.results[0]
        out = self.alloc(res, res.name_hint or op.name.split(".")[1], "fragment")
        full, inner = self.parallel(indent, out.shape)
        xs = [self.buffers[o].at(full) for o in op.operands]
        self.emit(inner, f"{out.at(full)} = {_scalar(op, xs)}")

    def reduce(self, op: tgraph.ReduceOp, indent: int) -> None:
        src = self.buffers[op.input]
        out = self.alloc(op.result, op.result.name_hint or "red", "fragment")
        axis = sum(1 for d in src.shape[: op.axis] if d != 1)
        if _squeezed(src.shape) == (1,) or src.shape[op.axis] == 1:
            raise LoweringError(f"tgraph.reduce: nothing to reduce in a tile of {list(src.shape)}")
        dims = [d for d in src.shape if d != 1]
        width = dims[-1]
        if (
            len(dims) == 2 and axis == 1 and src.scope == "fragment" and dims[0] >= 16
            and width >= 8 and width & (width - 1) == 0
        ):  # rows of a register tile: TileLang's warp reduction (needs a power-of-two width)
            fn = "reduce_sum" if op.kind.data == tgraph.ReduceKind.SUM else "reduce_max"
            self.emit(indent, f"T.{fn}({src.name}, {out.name}, dim=1, clear=True)")
            return
        # any other axis: a serial loop over the reduced dim around a parallel update
        src = self._shared(src, indent)
        self.emit(indent, f"T.fill({out.name}, {_identity(op)})")
        self.emit(indent, f"for kk in T.serial({src.shape[op.axis]}):")
        full, inner = self.parallel(indent + 1, out.shape)
        src_vars = list(full)
        src_vars[op.axis] = "kk"
        combine = "{0} + {1}" if op.kind.data == tgraph.ReduceKind.SUM else "T.max({0}, {1})"
        self.emit(inner, f"{out.at(full)} = {combine.format(out.at(full), src.at(src_vars))}")

    def matmul(self, op: tgraph.MatmulOp, indent: int) -> None:
        a, b = self.buffers[op.lhs], self.buffers[op.rhs]
        out = self.alloc(op.result, op.result.name_hint or "acc", "fragment")
        ta, tb = _squeezed(a.shape), _squeezed(b.shape)
        tt = op.transpose_b is not None
        m, n, k = out.shape[-2], out.shape[-1], a.shape[-1]
        batch_one = all(d == 1 for d in out.shape[:-2] + a.shape[:-2] + b.shape[:-2])
        if batch_one and len(ta) == 2 and len(tb) == 2 and m % 16 == 0 and n % 16 == 0 and k % 16 == 0 and m > 1 and n > 1:
            # a computed A operand stays in registers (cast to fp16) when the gemm has whole
            # warpgroups of 64 rows (wgmma takes A from a fragment); below that, TileLang cannot
            # give the fragment both the producer's and this gemm's layout: stage it in shared memory
            a_scope = "fragment" if m % 64 == 0 else "shared"
            a_name = self._operand_fp16(op.lhs, a, a_scope, indent)
            b_name = self._operand_fp16(op.rhs, b, "shared", indent)
            self.emit(indent, f"T.clear({out.name})")
            self.emit(indent, f"T.gemm({a_name}, {b_name}, {out.name}, transpose_B={tt}, policy=T.GemmWarpPolicy.FullRow)")
            return
        # CUDA-core matmul: C[.., m, n] += A[.., m, kk] * B[.., kk, n] over a serial kk; operands
        # are read from shared memory (a fragment can only be indexed by its owning threads)
        a, b = self._shared(a, indent), self._shared(b, indent)
        self.emit(indent, f"T.clear({out.name})")
        self.emit(indent, f"for kk in T.serial({k}):")
        full, inner = self.parallel(indent + 1, out.shape)
        lhs_vars = _align(full[:-2], a.shape, full[-2], "kk" if a.shape[-1] != 1 else None)
        if tt:
            rhs_vars = _align(full[:-2], b.shape, full[-1], "kk" if b.shape[-1] != 1 else None)
        else:
            rhs_vars = _align(full[:-2], b.shape, "kk" if b.shape[-2] != 1 else None, full[-1])
        self.emit(inner, f"{out.at(full)} += {a.at(lhs_vars)} * {b.at(rhs_vars)}")

    def _shared(self, buf: _Buffer, indent: int) -> _Buffer:
        """`buf` itself if it is in shared memory, else a shared copy of it."""
        if buf.scope == "shared":
            return buf
        name = self.fresh(buf.name + "_s")
        self.allocs.append(f"{name} = T.alloc_shared({_squeezed(buf.shape)}, \"{buf.dtype}\")")
        self.emit(indent, f"T.copy({buf.name}, {name})")
        return _Buffer(name, buf.shape, "shared", buf.dtype)

    def _operand_fp16(self, value: SSAValue, buf: _Buffer, scope: str, indent: int) -> str:
        if buf.scope == "shared" and buf.dtype in ("float16", "bfloat16"):
            return buf.name  # a loaded tile (or a view of one) feeds the tensor cores as it is
        if scope == "fragment" and buf.scope == "fragment" and buf.dtype in ("float16", "bfloat16"):
            return buf.name
        cast = self.fresh(buf.name + "_h")
        self.allocs.append(f"{cast} = T.alloc_{scope}({_squeezed(buf.shape)}, \"float16\")")
        self.emit(indent, f"T.copy({buf.name}, {cast})")
        return cast

    def sequential(self, op: itgraph.SequentialOp, indent: int) -> None:
        kinds = op.kind_names
        accs = [self.alloc(r, (r.name_hint or "acc") + "_acc", "fragment") for r in op.results]
        for buf, kind in zip(accs, kinds):
            self.emit(indent, f"T.fill({buf.name}, -T.infinity(\"float32\"))" if kind == "max" else f"T.clear({buf.name})")
        var = self.fresh(op.var_name)
        self.subst[op.var_name] = var
        self.emit(indent, f"for {var} in T.Pipelined({op.extent.data}, num_stages={self.stages}):")
        self.body(op.body.block.ops, indent + 1)
        term = op.body.block.last_op
        assert isinstance(term, itgraph.YieldOp)
        parts = [self.buffers[v] for v in term.values]
        inner_indent = indent + 1
        if "rescaled_sum" in kinds:
            mi = kinds.index("max")
            m_acc, m_part = accs[mi], parts[mi]
            m_new = self._scratch(m_acc, "m_new")
            alpha = self._scratch(m_acc, "alpha")
            beta = self._scratch(m_acc, "beta")
            full, body = self.parallel(inner_indent, m_acc.shape)
            self.emit(body, f"{m_new.at(full)} = T.max({m_acc.at(full)}, {m_part.at(full)})")
            self.emit(body, f"{alpha.at(full)} = T.exp({m_acc.at(full)} - {m_new.at(full)})")
            self.emit(body, f"{beta.at(full)} = T.exp({m_part.at(full)} - {m_new.at(full)})")
            self.emit(body, f"{m_acc.at(full)} = {m_new.at(full)}")
            for acc, part, kind in zip(accs, parts, kinds):
                if kind != "rescaled_sum":
                    continue
                full, body = self.parallel(inner_indent, acc.shape)
                self.emit(body, f"{acc.at(full)} = {acc.at(full)} * {alpha.at(full)} + {part.at(full)} * {beta.at(full)}")
        for acc, part, kind in zip(accs, parts, kinds):
            if kind == "rescaled_sum" or (kind == "max" and "rescaled_sum" in kinds):
                continue
            full, body = self.parallel(inner_indent, acc.shape)
            update = f"{acc.at(full)} + {part.at(full)}" if kind == "sum" else f"T.max({acc.at(full)}, {part.at(full)})"
            self.emit(body, f"{acc.at(full)} = {update}")
        del self.subst[op.var_name]

    def _scratch(self, like: _Buffer, hint: str) -> _Buffer:
        name = self.fresh(hint)
        self.allocs.append(f"{name} = T.alloc_fragment({_squeezed(like.shape)}, \"float32\")")
        return _Buffer(name, like.shape)


def _align(batch: Sequence[str | None], shape: Sequence[int], row: str | None, col: str | None) -> list[str | None]:
    """Index variables for a matmul operand of `shape` (batch dims right-aligned with the result's)."""
    nb = len(shape) - 2
    b = list(batch)[-nb:] if nb else []
    return [*b, row, col]


def _identity(op: tgraph.ReduceOp) -> str:
    return "0.0" if op.kind.data == tgraph.ReduceKind.SUM else '-T.infinity("float32")'


def _scalar(op: Operation, xs: list[str]) -> str:
    n = op.name.split(".")[1]
    if n == "scale":
        return f"{xs[0]} * {float(op.value)!r}"  # type: ignore[attr-defined]
    unary = {
        "exp": "T.exp({0})",
        "sqrt": "T.sqrt({0})",
        "rsqrt": "T.rsqrt({0})",
        "neg": "-({0})",
        "silu": "{0} / (1.0 + T.exp(-({0})))",
        "sigmoid": "1.0 / (1.0 + T.exp(-({0})))",
        "square": "{0} * {0}",
        "reciprocal": "1.0 / {0}",
    }
    binary = {"add": "{0} + {1}", "sub": "{0} - {1}", "mul": "{0} * {1}", "div": "{0} / {1}", "max": "T.max({0}, {1})"}
    if n in unary:
        return unary[n].format(*xs)
    return binary[n].format(*xs)


def kernel_source(kernel: itgraph.KernelOp) -> str:
    """TileLang source of one kernel (a module-level `@T.prim_func`)."""
    return _KernelWriter(kernel).write()


def _graph_text(graph: tgraph.GraphOp) -> str:
    return str(graph).replace('"""', "'''")


def module_source(module: ModuleOp) -> str:
    """The whole Python module for every itgraph kernel of `module`."""
    kernels = [op for op in module.walk() if isinstance(op, itgraph.KernelOp)]
    if not kernels:
        raise CleaveError("error: -t tilelang: the module holds no itgraph.kernel (run cleave-schedule first)")
    graphs = {g.sym_name.data: g for g in module.walk() if isinstance(g, tgraph.GraphOp)}
    out = [
        '"""TileLang kernels generated by cleave-opt (Cleave-IR). Do not edit: regenerate instead."""',
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
        passthrough = []
        if src_name in graphs and "cleave.passthrough" in graphs[src_name].attributes:
            passthrough = [a.data for a in graphs[src_name].attributes["cleave.passthrough"].data]  # type: ignore[attr-defined]
        names = [a.name_hint or f"arg{i}" for i, a in enumerate(k.inputs)]
        meta.append(
            f"    {k.sym_name.data!r}: {{'graph': {src_name!r}, 'input_names': {names!r}, 'passthrough': {passthrough!r}, 'tiles': {getattr(k.attributes.get('cleave.tiles'), 'data', '')!r}, "
            f"'estimated_us': {us!r}, 'inputs': {len(k.inputs)}, 'outputs': {len(k.outputs)}, "
            f"'shapes': {[_shape(a) for a in k.body.block.args]!r}, 'dtypes': {[_dtype(a) for a in k.body.block.args]!r}}},"
        )
    out.append("KERNELS = {\n" + "\n".join(meta) + "\n}")
    out.append("")
    out.append("GRAPHS = {")
    for name, g in graphs.items():
        out.append(f'    {name!r}: """\n{_graph_text(g)}\n""",')
    out.append("}")
    out.append("")
    from cleave_ir.passes.pipeline import rank_candidates

    units = rank_candidates(module)
    out.append("# the candidates, best estimated first: (estimated us, kernels to run in order, graph)")
    out.append(f"CANDIDATES = {[(round(u, 3), ks, g) for u, ks, g in units]!r}")
    out.append(_RUNTIME)
    return "\n".join(out)


_RUNTIME = '''
_compiled = {}


def compile_kernel(name, target="cuda"):
    """Compile one kernel with tilelang.compile (needs a CUDA GPU); cached per process."""
    if name not in _compiled:
        n_in = KERNELS[name]["inputs"]
        outs = list(range(n_in, n_in + KERNELS[name]["outputs"]))
        _compiled[name] = tilelang.compile(globals()[name], out_idx=outs, target=target)
    return _compiled[name]


def run(*tensors, candidate=0):
    """Run a candidate (default: the best estimated) on torch tensors; returns its output(s).

    A Split-K candidate runs its split kernel, then its combine kernel on the partials.
    """
    _, names, _ = CANDIDATES[candidate]
    values = list(tensors)
    first = KERNELS[names[0]]["input_names"]
    for name in names:
        kernel = compile_kernel(name)
        # a combine kernel takes the partials, then the original inputs it names
        extra = [tensors[first.index(n)] for n in KERNELS[name]["passthrough"]]
        result = kernel(*(values[: KERNELS[name]["inputs"] - len(extra)] + extra))
        values = list(result) if isinstance(result, (list, tuple)) else [result]
    return values[0] if len(values) == 1 else values
'''


@dataclass(frozen=True)
class TileLangTarget(Target):
    """`-t tilelang`: write the TileLang module for the module's itgraph kernels."""

    name = "tilelang"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        output.write(module_source(module))
