"""The `tilelang` dialect: TileLang 0.1.15 kernels, one op per TileLang construct.

`tilelang.kernel` is a `@T.prim_func` holding one `T.Kernel` launch: its block arguments are the
global tensors (inputs, then outputs) and its grid variables are `bx`, `by`, `bz`. Buffers are SSA
values of `!tilelang.buffer<[dims], elt, scope>` (scope `global`, `shared` or `fragment`); the
allocations (`alloc_shared`, `alloc_fragment`) sit at the top of the kernel body, followed by
`wait_prior_grids` where the kernel waits for the kernels launched before it. Block-level ops
(`copy`, `gemm`, `fill`, `clear`, `reduce_sum`, `reduce_max`) act on whole buffers or global
regions, each saying which buffers it reads and writes (`accesses()`, `buffer_effects`); a `gemm`
may be `async` (Hopper's `T.wgmma_gemm`), retired by a later `wait_gemm`; `serial` and `pipelined`
loops nest them; a `parallel` loop (`T.Parallel`) holds
element-wise statements: `tilelang.load`/`tilelang.store` of buffer elements and scalar `arith` /
`math` ops between them (TileLang's implicit casts are explicit `arith.extf`/`arith.truncf`), `index_below`
(a position against a bound) and `exp2_split` (2^x, part of it on the FMA pipes).

Index expressions (buffer dims, region offsets and sizes, element indices, grid and loop extents,
mask positions and bounds) are `cleave.expr` attributes (`cleave_ir.dialects.cleave`): sympy
expressions over grid and loop variables and shape symbols, printed bare in the one expression
grammar: `64*bz + 128*r0`, `(bx floordiv 4) mod 8`, `L ceildiv 64`. `tilelang.gemm`'s warp policy
is an enum attribute (`Square`, `FullRow`, `FullCol`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import auto
from typing import Any, ClassVar

import sympy
from xdsl.dialects.builtin import (
    ArrayAttr,
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    SymbolNameConstraint,
    UnitAttr,
    f64,
    i64,
)
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import (
    Attribute,
    Block,
    Dialect,
    Operation,
    ParametrizedAttribute,
    Region,
    SpacedOpaqueSyntaxAttribute,
    SSAValue,
    TypeAttribute,
)
from xdsl.irdl import (
    BaseAttr,
    IRDLOperation,
    VerificationContext,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import (
    HasAncestor,
    HasParent,
    IsolatedFromAbove,
    NoTerminator,
    SymbolOpInterface,
)
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from cleave_ir.dialects.cleave import ExprAttr, expr_str, parse_expr
from cleave_ir.shapes import Dim, dim_str


class Scope(StrEnum):
    """The memory a TileLang buffer lives in."""

    GLOBAL = auto()
    SHARED = auto()
    FRAGMENT = auto()  # registers, distributed over the block's threads


@irdl_attr_definition
class ScopeAttr(EnumAttribute[Scope], SpacedOpaqueSyntaxAttribute):
    """`#tilelang<scope shared>` (a buffer type prints the bare name)."""

    name = "tilelang.scope"


class WarpPolicy(StrEnum):
    """How `T.gemm` splits its C tile over the warps (TileLang's `T.GemmWarpPolicy`)."""

    SQUARE = "Square"
    FULL_ROW = "FullRow"  # each warp takes whole rows
    FULL_COL = "FullCol"  # each warp takes whole columns


@irdl_attr_definition
class WarpPolicyAttr(EnumAttribute[WarpPolicy], SpacedOpaqueSyntaxAttribute):
    """`#tilelang<policy FullRow>` (tilelang.gemm prints the bare name)."""

    name = "tilelang.policy"

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> WarpPolicy:
        start = parser.pos
        quoted = False
        name = parser.parse_optional_identifier()
        if name is None:
            name, quoted = parser.parse_optional_str_literal(), True  # as older files wrote it
        expected = ", ".join(WarpPolicy)
        if name is None:
            parser.raise_error(f"expected a warp policy ({expected})")
        if name not in WarpPolicy.__members__.values():
            end = start + len(name) + (2 if quoted else 0)
            parser.raise_error(f"unknown warp policy '{name}' (expected {expected})", start, end)
        return WarpPolicy(name)


@dataclass(frozen=True)
class _EnumOf(BaseAttr[EnumAttribute[Any]]):
    """An enum attribute; a value of another kind (a string in generic form) is named with the accepted values."""

    what: str = ""

    def verify(self, attr: Attribute, constraint_context: VerificationContext) -> None:
        if not isinstance(attr, self.attr):
            values = ", ".join(e.value for e in self.attr.enum_type)
            raise VerifyException(f"{self.what} must be one of {values}, got {attr}")


ELEMENT_TYPES = (Float16Type, BFloat16Type, Float32Type, Float64Type)
GRID_VARS = ("bx", "by", "bz")


# --------------------------------------------------------------------------- index expressions


def _exprs_attr(values: Iterable[Dim | int | str]) -> ArrayAttr[ExprAttr]:
    return ArrayAttr(ExprAttr(v) for v in values)


def _exprs(attr: ArrayAttr[ExprAttr]) -> tuple[Dim, ...]:
    return tuple(e.data for e in attr.data)


def _parse_expr_list(parser: AttrParser, delimiter=Parser.Delimiter.SQUARE) -> list[Dim]:
    return parser.parse_comma_separated_list(delimiter, lambda: parse_expr(parser))


def _text_list(attr: ArrayAttr[ExprAttr]) -> str:
    return ", ".join(expr_str(e.data) for e in attr.data)


def fmt_shape(shape: Sequence[Dim]) -> str:
    return "[" + ", ".join(dim_str(d) for d in shape) + "]"


def squeezed(shape: Sequence[Dim]) -> tuple[Dim, ...]:
    """The shape without its size-1 dims ((1,) when nothing is left): how TileLang matches copies."""
    return tuple(d for d in shape if d != 1) or (sympy.Integer(1),)


# --------------------------------------------------------------------------- types and attributes


@irdl_attr_definition
class BufferType(ParametrizedAttribute, TypeAttribute):
    """`!tilelang.buffer<[64, 128], f16, shared>`: a buffer of static or symbolic shape in a memory scope."""

    name = "tilelang.buffer"

    dims: ArrayAttr[ExprAttr]
    element_type: Attribute
    scope: ScopeAttr

    def __init__(self, shape: Sequence[Dim | int | str], element_type: Attribute, scope: Scope | str) -> None:
        super().__init__(_exprs_attr(shape), element_type, ScopeAttr(Scope(scope)))

    @property
    def shape(self) -> tuple[Dim, ...]:
        return _exprs(self.dims)

    @property
    def rank(self) -> int:
        return len(self.dims.data)

    @property
    def scope_name(self) -> Scope:
        return self.scope.data

    @property
    def nbytes(self) -> int:
        """Bytes of a buffer of static shape."""
        return math.prod(int(d) for d in self.shape) * self.element_type.bitwidth // 8  # type: ignore[attr-defined]

    def verify(self) -> None:
        if not isinstance(self.element_type, ELEMENT_TYPES):
            raise VerifyException(f"tilelang.buffer element type must be f16, bf16, f32 or f64, got {self.element_type}")
        if not self.dims.data:
            raise VerifyException("tilelang.buffer needs at least one dim")
        for d in self.shape:
            if d.is_Number and (not d.is_Integer or d < 1):
                raise VerifyException(f"tilelang.buffer dims must be positive, got {d}")
        if self.scope.data != Scope.GLOBAL and any(not d.is_Integer for d in self.shape):
            raise VerifyException(f"tilelang.buffer: a {self.scope.data} buffer needs a static shape, got {fmt_shape(self.shape)}")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            dims = _parse_expr_list(parser)
            parser.parse_punctuation(",")
            elt = parser.parse_type()
            parser.parse_punctuation(",")
            start = parser.pos
            scope = parser.parse_identifier()
            if scope not in Scope.__members__.values():
                parser.raise_error(
                    f"tilelang.buffer scope must be {', '.join(Scope)}, got '{scope}'", start, start + len(scope)
                )
        return (_exprs_attr(dims), elt, ScopeAttr(Scope(scope)))

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<[{_text_list(self.dims)}], ")
        printer.print_attribute(self.element_type)
        printer.print_string(f", {self.scope.data.value}>")


def buffer_type(value: SSAValue | Attribute) -> BufferType:
    t = value.type if isinstance(value, SSAValue) else value
    if not isinstance(t, BufferType):
        raise VerifyException(f"expected a !tilelang.buffer, got {t}")
    return t


@irdl_attr_definition
class RegionAttr(ParametrizedAttribute):
    """`<[0, by, 64*bz, 0], [1, 1, 64, 128]>`: a slice of a buffer (offsets and extents per dim)."""

    name = "tilelang.region"

    offsets: ArrayAttr[ExprAttr]
    sizes: ArrayAttr[ExprAttr]

    def __init__(self, offsets: Sequence[Dim | int | str], sizes: Sequence[Dim | int | str]) -> None:
        super().__init__(_exprs_attr(offsets), _exprs_attr(sizes))

    @property
    def offset_exprs(self) -> tuple[Dim, ...]:
        return _exprs(self.offsets)

    @property
    def size_exprs(self) -> tuple[Dim, ...]:
        return _exprs(self.sizes)

    def verify(self) -> None:
        if len(self.offsets.data) != len(self.sizes.data):
            raise VerifyException(f"tilelang.region: {len(self.offsets.data)} offsets for {len(self.sizes.data)} extents")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            offsets = _parse_expr_list(parser)
            parser.parse_punctuation(",")
            sizes = _parse_expr_list(parser)
        return (_exprs_attr(offsets), _exprs_attr(sizes))

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<[{_text_list(self.offsets)}], [{_text_list(self.sizes)}]>")


# --------------------------------------------------------------------------- scope checks


def shape_symbols(kernel: KernelOp) -> set[str]:
    """Names of the symbols in the kernel's global shapes (dims bound at launch)."""
    return {s.name for a in kernel.body.block.args for d in buffer_type(a).shape for s in d.free_symbols}  # type: ignore[attr-defined]


def enclosing_vars(op: Operation) -> list[str]:
    """Grid and loop variables visible at `op`, outermost first."""
    out: list[str] = []
    parent = op.parent_op()
    while parent is not None:
        if isinstance(parent, KernelOp):
            out[:0] = parent.grid_var_names
        elif isinstance(parent, ParallelOp):
            out[:0] = parent.var_names
        elif isinstance(parent, (SerialOp, PipelinedOp)):
            out.insert(0, parent.var_name)
        parent = parent.parent_op()
    return out


def _kernel_of(op: Operation) -> KernelOp | None:
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, KernelOp):
        parent = parent.parent_op()
    return parent


def _check_vars(op: Operation, exprs: Iterable[Dim], what: str) -> None:
    kernel = _kernel_of(op)
    known = set(enclosing_vars(op)) | (shape_symbols(kernel) if kernel is not None else set())
    for e in exprs:
        unknown = sorted({s.name for s in e.free_symbols} - known)  # type: ignore[attr-defined]
        if unknown:
            raise VerifyException(f"{op.name}: {what} uses unknown variable(s) {', '.join(unknown)}")


def _check_local(op: Operation, value: SSAValue, what: str) -> BufferType:
    t = buffer_type(value)
    if t.scope_name == Scope.GLOBAL:
        raise VerifyException(f"{op.name}: {what} must be a shared or fragment buffer, got a global one")
    return t


@dataclass(frozen=True)
class Accesses:
    """The buffers one op reads and writes (its `accesses()`), what passes reorder by."""

    reads: tuple[SSAValue, ...] = ()
    writes: tuple[SSAValue, ...] = ()


# --------------------------------------------------------------------------- kernel and allocations


def _elements(loop: ParallelOp) -> int | None:
    """The element count of a parallel loop with constant extents, else None."""
    extents = loop.extent_exprs
    return math.prod(int(e) for e in extents) if all(e.is_Integer for e in extents) else None


def replicated_shared_updates(kernel: KernelOp) -> list[tuple[ParallelOp, SSAValue]]:
    """Parallel loops of fewer elements than `kernel` has threads that read and write one shared
    buffer, with that buffer. TileLang spreads such a loop's elements over all threads, several
    threads per element where its fragments are replicated: one thread's store then races with
    another's load of the same element (compute-sanitizer racecheck: a read-after-write hazard)."""
    threads = kernel.threads.value.data
    found: list[tuple[ParallelOp, SSAValue]] = []
    for loop in kernel.walk():
        if not isinstance(loop, ParallelOp) or (n := _elements(loop)) is None or n >= threads:
            continue
        read = {o.buffer for o in loop.body.block.ops if isinstance(o, LoadOp) or (isinstance(o, StoreOp) and o.accumulate is not None)}
        for o in loop.body.block.ops:
            if isinstance(o, StoreOp) and o.buffer in read and buffer_type(o.buffer).scope_name == Scope.SHARED:
                found.append((loop, o.buffer))
                break
    return found


NO_WARP_SPECIALIZATION = "cleave.no_warp_specialization"
"""The kernel attribute that compiles it without TileLang's warp specialization (`tl.disable_warp_specialized`)."""

LAUNCH_DEPENDENTS = "cleave.launch_dependents"
"""The kernel attribute (unit) that lets the next kernel launch once this one's main loop is done
(`tilelang.launch_dependents`); itgraph kernels carry it from tuning, tilelang kernels inherit it."""

TRANSPOSED_INPUTS = "cleave.transposed_inputs"
"""The kernel attribute listing the inputs (positions) it takes stored transposed: given the tensor t of the
graph, the kernel reads `t.transpose(-1, -2)` (its global buffer has t's last two dims swapped), as every
runner passes it (`lower_tilelang.stored_transposed`)."""


def transposed_inputs(kernel: Operation) -> tuple[int, ...]:
    """The positions `TRANSPOSED_INPUTS` lists on `kernel` (none where it has no such attribute)."""
    attr = kernel.attributes.get(TRANSPOSED_INPUTS)
    return tuple(a.value.data for a in attr.data) if isinstance(attr, ArrayAttr) else ()  # type: ignore[attr-defined]


def released_before_read(kernel: KernelOp) -> list[tuple[PipelinedOp, SSAValue]]:
    """Pipelined loops that read a shared tile they copy in without TMA in two or more statements, or
    both before and after another copy into shared memory, with that tile. TileLang's warp-specialized
    pipeline hands such a tile back to its producer after its first reader, while the later ones still
    read it: swiglu T=7 with its x rows padded (x read by two gemms: rel. errors of 0.40-0.64 on the
    H200, changing from run to run); rmsnorm_matmul T=5's one kernel (x read by its gemm, then by the
    sum of squares: 8 racecheck errors, 0 without warp specialization or with a TMA copy,
    bench/results/split_loops_2026-12-04_H200.md)."""
    found: list[tuple[PipelinedOp, SSAValue]] = []
    for loop in kernel.walk():
        if not isinstance(loop, PipelinedOp):
            continue
        body = list(loop.body.block.ops)
        copies = [j for j, o in enumerate(body) if isinstance(o, CopyOp) and buffer_type(o.dst).scope_name == Scope.SHARED]
        for i in copies:
            copy = body[i]
            assert isinstance(copy, CopyOp)
            if copy.no_tma is None:
                continue
            readers = [j for j, o in enumerate(body) if j != i and any(v is copy.dst for inner in o.walk() for v in inner.operands)]
            if len(readers) > 1 or (readers and any(min(readers) < j < max(readers) for j in copies if j != i)):
                found.append((loop, copy.dst))
    return found


@irdl_op_definition
class KernelOp(IRDLOperation):
    """`@T.prim_func` + `with T.Kernel(grid..., threads=N) as (bx, by, bz)`: global buffers in, then outputs."""

    name = "tilelang.kernel"

    body = region_def("single_block")
    sym_name = prop_def(SymbolNameConstraint())
    grid_vars = prop_def(ArrayAttr[StringAttr])
    grid = prop_def(ArrayAttr[ExprAttr])
    threads = prop_def(IntegerAttr[i64])
    num_outputs = prop_def(IntegerAttr[i64])

    traits = traits_def(IsolatedFromAbove(), SymbolOpInterface(), NoTerminator())

    def __init__(self, name: str, grid: Sequence[Dim | int], threads: int, num_outputs: int, body: Region) -> None:
        super().__init__(
            properties={
                "sym_name": StringAttr(name),
                "grid_vars": ArrayAttr(StringAttr(v) for v in GRID_VARS[: len(grid)]),
                "grid": _exprs_attr(grid),
                "threads": IntegerAttr(threads, i64),
                "num_outputs": IntegerAttr(num_outputs, i64),
            },
            regions=[body],
        )

    @property
    def grid_var_names(self) -> list[str]:
        return [v.data for v in self.grid_vars.data]

    @property
    def grid_extents(self) -> tuple[Dim, ...]:
        return _exprs(self.grid)

    @property
    def params(self) -> tuple[SSAValue, ...]:
        return self.body.block.args

    @property
    def inputs(self) -> tuple[SSAValue, ...]:
        return self.body.block.args[: len(self.body.block.args) - self.num_outputs.value.data]

    @property
    def outputs(self) -> tuple[SSAValue, ...]:
        return self.body.block.args[len(self.body.block.args) - self.num_outputs.value.data :]

    def verify_(self) -> None:
        where = f"tilelang.kernel @{self.sym_name.data}"
        names = self.grid_var_names
        if not 1 <= len(names) <= 3 or names != list(GRID_VARS[: len(names)]):
            raise VerifyException(f"{where}: the grid variables must be (bx), (bx, by) or (bx, by, bz), got ({', '.join(names)})")
        if len(self.grid.data) != len(names):
            raise VerifyException(f"{where}: {len(self.grid.data)} grid extents for {len(names)} grid variables")
        if self.threads.value.data < 1:
            raise VerifyException(f"{where}: threads must be positive")
        if not 0 < self.num_outputs.value.data <= len(self.body.block.args):
            raise VerifyException(f"{where}: bad number of outputs {self.num_outputs.value.data}")
        for i, arg in enumerate(self.body.block.args):
            if not isinstance(arg.type, BufferType) or arg.type.scope_name != Scope.GLOBAL:
                raise VerifyException(f"{where}: parameter {i} must be a global !tilelang.buffer, got {arg.type}")
        syms = shape_symbols(self)
        for e in self.grid_extents:
            unknown = sorted({s.name for s in e.free_symbols} - syms)  # type: ignore[attr-defined]
            if unknown:
                raise VerifyException(f"{where}: grid extent {expr_str(e)} uses {', '.join(unknown)}, not a shape symbol")
        if NO_WARP_SPECIALIZATION not in self.attributes:
            for _, buf in released_before_read(self):
                raise VerifyException(
                    f"{where}: a tilelang.pipelined loop reads the shared buffer {buf.name_hint or 'of the kernel'}, copied "
                    "without TMA, in several statements or before and after another copy: TileLang's warp-specialized "
                    f"pipeline hands it back to its producer too early (mark the kernel {NO_WARP_SPECIALIZATION}, or copy it by TMA)"
                )
        for loop, buf in replicated_shared_updates(self):
            raise VerifyException(
                f"{where}: a tilelang.parallel of {_elements(loop)} elements on {self.threads.value.data} threads reads and "
                f"writes the shared buffer {buf.name_hint or 'of the kernel'}: threads that hold the same element race "
                "(write the new value into a fragment, then copy it)"
            )

    @classmethod
    def parse(cls, parser: Parser) -> KernelOp:
        name = parser.parse_symbol_name().data
        args = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_argument)
        parser.parse_keyword("grid")
        grid_vars = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_identifier)
        parser.parse_keyword("in")
        grid = _parse_expr_list(parser, parser.Delimiter.PAREN)
        parser.parse_keyword("threads")
        threads = parser.parse_integer(allow_negative=False, allow_boolean=False)
        parser.parse_keyword("outputs")
        outputs = parser.parse_integer(allow_negative=False, allow_boolean=False)
        attrs = parser.parse_optional_attr_dict_with_keyword()
        region = parser.parse_region(args)
        op = KernelOp(name, grid, threads, outputs, region)
        op.grid_vars = ArrayAttr(StringAttr(v) for v in grid_vars)
        if attrs is not None:
            op.attributes |= attrs.data
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        printer.print_string("(")
        printer.print_list(self.body.block.args, printer.print_block_argument)
        printer.print_string(
            f") grid ({', '.join(self.grid_var_names)}) in ({_text_list(self.grid)}) "
            f"threads {self.threads.value.data} outputs {self.num_outputs.value.data}"
        )
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False)


class _AllocOp(IRDLOperation):
    SCOPE: ClassVar[Scope]

    result = result_def(BufferType)

    traits = traits_def(HasParent(KernelOp))

    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, t: BufferType) -> None:
        super().__init__(result_types=[t])

    def verify_(self) -> None:
        scope = buffer_type(self.result).scope_name
        if scope != self.SCOPE:
            raise VerifyException(f"{self.name}: result must be a {self.SCOPE} buffer, got a {scope} one")


@irdl_op_definition
class AllocSharedOp(_AllocOp):
    """`T.alloc_shared(shape, dtype)`."""

    name = "tilelang.alloc_shared"
    SCOPE: ClassVar[Scope] = Scope.SHARED


@irdl_op_definition
class AllocFragmentOp(_AllocOp):
    """`T.alloc_fragment(shape, dtype)`: registers, distributed over the block's threads."""

    name = "tilelang.alloc_fragment"
    SCOPE: ClassVar[Scope] = Scope.FRAGMENT


# --------------------------------------------------------------------------- block-level ops


@irdl_op_definition
class WaitPriorGridsOp(IRDLOperation):
    """`T.pdl_sync()`: wait until the kernels launched before this one on the stream have finished and
    their writes are visible (CUDA's `griddepcontrol.wait`).

    TileLang launches a kernel that holds it with programmatic stream serialization: its launch and
    set-up overlap the end of the kernel before it, which a kernel without it waits for. It comes
    first after the kernel's allocations, before any read of global memory.
    """

    name = "tilelang.wait_prior_grids"

    traits = traits_def(HasParent(KernelOp))

    assembly_format = "attr-dict"

    def verify_(self) -> None:
        before = self.prev_op
        while before is not None:
            if not isinstance(before, _AllocOp):
                raise VerifyException(f"tilelang.wait_prior_grids: must come before every statement but allocations, found {before.name} before it")
            before = before.prev_op


@irdl_op_definition
class LaunchDependentsOp(IRDLOperation):
    """`T.pdl_trigger()`: let the kernel launched after this one on the stream start now (CUDA's
    `griddepcontrol.launch_dependents`), before this kernel's blocks exit.

    Only a launch hint: the dependent kernel's `tilelang.wait_prior_grids` still waits until this
    kernel has finished and its writes are visible, so where it stands changes no result. Placed by
    `lower_tilelang.launch_dependents_early` after the kernel's main loop, where the kernel carries
    `cleave.launch_dependents` (a tuning choice: measured per row, it saves or costs up to 1 us,
    `bench/results/fused_combine_2026-12-07s46_H100.md`).
    """

    name = "tilelang.launch_dependents"

    traits = traits_def(HasParent(KernelOp))

    assembly_format = "attr-dict"


@irdl_op_definition
class CopyOp(IRDLOperation):
    """`T.copy(src[region], dst[region])`: a buffer or a region of one into another (casting the dtype).

    Shapes match after dropping size-1 dims, as TileLang matches them. `no_tma` asks for a thread copy
    instead of the tensor memory accelerator (whose bulk copy needs a contiguous shared region: a
    few rows into a padded, swizzled tile are not).
    """

    name = "tilelang.copy"

    src = operand_def(BufferType)
    dst = operand_def(BufferType)
    src_region = opt_prop_def(RegionAttr)
    dst_region = opt_prop_def(RegionAttr)
    no_tma = opt_prop_def(UnitAttr)

    assembly_format = "$src (`at` $src_region^)? `to` $dst (`at` $dst_region^)? (`no_tma` $no_tma^)? attr-dict `:` type($src) `,` type($dst)"

    def __init__(
        self, src: SSAValue, dst: SSAValue, src_region: RegionAttr | None = None, dst_region: RegionAttr | None = None, no_tma: bool = False
    ) -> None:
        super().__init__(
            operands=[src, dst],
            properties={"src_region": src_region, "dst_region": dst_region, "no_tma": UnitAttr() if no_tma else None},
        )

    def extent(self, side: str) -> tuple[Dim, ...]:
        """The shape copied on `side` ("src" or "dst"): the region's extents or the whole buffer."""
        value, region = (self.src, self.src_region) if side == "src" else (self.dst, self.dst_region)
        return region.size_exprs if region is not None else buffer_type(value).shape

    def accesses(self) -> Accesses:
        return Accesses(reads=(self.src,), writes=(self.dst,))

    def verify_(self) -> None:
        for side, value, region in (("source", self.src, self.src_region), ("destination", self.dst, self.dst_region)):
            t = buffer_type(value)
            if region is not None:
                if len(region.offsets.data) != t.rank:
                    raise VerifyException(f"tilelang.copy: {side} region has {len(region.offsets.data)} dims, the buffer has {t.rank}")
                _check_vars(self, region.offset_exprs + region.size_exprs, f"{side} region")
        if buffer_type(self.src).scope_name == Scope.GLOBAL and buffer_type(self.dst).scope_name == Scope.GLOBAL:
            raise VerifyException("tilelang.copy: global to global copies are not supported")
        a, b = squeezed(self.extent("src")), squeezed(self.extent("dst"))
        if a != b:
            raise VerifyException(f"tilelang.copy: source {fmt_shape(self.extent('src'))} and destination {fmt_shape(self.extent('dst'))} differ in shape")


@irdl_op_definition
class GemmOp(IRDLOperation):
    """`T.gemm(A, B, C, transpose_B=..., policy=T.GemmWarpPolicy.FullRow)`: C += A @ B on the tensor cores.

    `transpose_a`: A is held `[K, M]` (`transpose_A=True`: a tile loaded from a tensor stored transposed,
    in shared memory), as `transpose_b` holds B `[N, K]`.

    `clear`: C = A @ B, the accumulator's old value ignored (`clear_accum=True`: WGMMA's first step
    does not add C, no separate pass zeroes it).
    `async`: `T.wgmma_gemm`, Hopper's WGMMA issued without waiting for it. Until a
    `tilelang.wait_gemm` retires it, its tensor cores read A and B and write C in the background:
    nothing may write A or B or touch C in between. Its result is the same as the synchronous one.
    """

    name = "tilelang.gemm"

    a = operand_def(BufferType)
    b = operand_def(BufferType)
    c = operand_def(BufferType)
    transpose_a = opt_prop_def(UnitAttr)
    transpose_b = opt_prop_def(UnitAttr)
    clear = opt_prop_def(UnitAttr)
    is_async = opt_prop_def(UnitAttr)
    policy = prop_def(_EnumOf(WarpPolicyAttr, "tilelang.gemm: policy"))

    assembly_format = (
        "$a `,` $b `,` $c (`transpose_a` $transpose_a^)? (`transpose_b` $transpose_b^)? (`clear` $clear^)? (`async` $is_async^)? `policy` $policy attr-dict "
        "`:` type($a) `,` type($b) `,` type($c)"
    )

    def __init__(
        self,
        a: SSAValue,
        b: SSAValue,
        c: SSAValue,
        transpose_b: bool,
        policy: WarpPolicy | str = WarpPolicy.FULL_ROW,
        is_async: bool = False,
        clear: bool = False,
        transpose_a: bool = False,
    ) -> None:
        super().__init__(
            operands=[a, b, c],
            properties={
                "transpose_a": UnitAttr() if transpose_a else None,
                "transpose_b": UnitAttr() if transpose_b else None,
                "clear": UnitAttr() if clear else None,
                "is_async": UnitAttr() if is_async else None,
                "policy": WarpPolicyAttr(WarpPolicy(policy)),
            },
        )

    @property
    def warp_policy(self) -> WarpPolicy:
        return self.policy.data

    def accesses(self) -> Accesses:
        read_c = () if self.clear is not None else (self.c,)
        return Accesses(reads=(self.a, self.b, *read_c), writes=(self.c,))

    def verify_(self) -> None:
        ta, tb, tc = buffer_type(self.a), buffer_type(self.b), buffer_type(self.c)
        if ta.scope_name == Scope.GLOBAL:
            raise VerifyException("tilelang.gemm: A operand must be in shared memory or a fragment, got a global buffer")
        if tb.scope_name != Scope.SHARED:
            raise VerifyException(f"tilelang.gemm: B operand must be in shared memory, got a {tb.scope_name} buffer")
        if tc.scope_name != Scope.FRAGMENT or not isinstance(tc.element_type, Float32Type):
            raise VerifyException("tilelang.gemm: C (the accumulator) must be an f32 fragment")
        if not (ta.rank == tb.rank == tc.rank == 2):
            raise VerifyException(f"tilelang.gemm: operands must be 2-D, got {fmt_shape(ta.shape)}, {fmt_shape(tb.shape)}, {fmt_shape(tc.shape)}")
        if self.transpose_a is not None and ta.scope_name != Scope.SHARED:
            raise VerifyException(f"tilelang.gemm: a transposed A operand must be in shared memory, got a {ta.scope_name} buffer")
        (m, k), (n, k2) = (ta.shape if self.transpose_a is None else ta.shape[::-1]), (tb.shape[::-1] if self.transpose_b is None else tb.shape)
        tt = " (transpose_b)" if self.transpose_b is not None else ""
        if k != k2:
            raise VerifyException(f"tilelang.gemm: A {fmt_shape(ta.shape)} and B {fmt_shape(tb.shape)}{tt} differ in the contracted dim")
        if tc.shape != (m, n):
            raise VerifyException(f"tilelang.gemm: C is {fmt_shape(tc.shape)}, expected [{dim_str(m)}, {dim_str(n)}]")


@irdl_op_definition
class WaitGemmOp(IRDLOperation):
    """`T.wait_wgmma(pending)`: wait until at most `pending` of this thread group's async gemms are
    still running (they finish in issue order).

    `retires` names the shared tiles that only the finished gemms read: TileLang's warp-specialized
    pipeline hands a loaded tile back to its producer after the last statement that reads it, so the
    emitted code reads one element of each after the wait, which keeps the tile until here.
    """

    name = "tilelang.wait_gemm"

    retired = var_operand_def(BufferType)
    pending = prop_def(IntegerAttr[i64])

    assembly_format = "$pending (`retires` $retired^ `:` type($retired))? attr-dict"

    def __init__(self, pending: int, retired: Sequence[SSAValue] = ()) -> None:
        super().__init__(operands=[list(retired)], properties={"pending": IntegerAttr(pending, i64)})

    @property
    def pending_count(self) -> int:
        return self.pending.value.data

    def verify_(self) -> None:
        if self.pending_count < 0:
            raise VerifyException(f"tilelang.wait_gemm: pending must be at least 0, got {self.pending_count}")
        for value in self.retired:
            if buffer_type(value).scope_name != Scope.SHARED:
                raise VerifyException(f"tilelang.wait_gemm: retires shared tiles, got a {buffer_type(value).scope_name} buffer")


@irdl_op_definition
class ClearOp(IRDLOperation):
    """`T.clear(buf)`: every element 0."""

    name = "tilelang.clear"

    buffer = operand_def(BufferType)

    assembly_format = "$buffer attr-dict `:` type($buffer)"

    def __init__(self, buffer: SSAValue) -> None:
        super().__init__(operands=[buffer])

    def accesses(self) -> Accesses:
        return Accesses(writes=(self.buffer,))

    def verify_(self) -> None:
        _check_local(self, self.buffer, "the buffer")


@irdl_op_definition
class FillOp(IRDLOperation):
    """`T.fill(buf, value)`: every element `value` (0.0, or -inf as `-T.infinity(dtype)`)."""

    name = "tilelang.fill"

    buffer = operand_def(BufferType)
    value = prop_def(FloatAttr)

    def __init__(self, buffer: SSAValue, value: float) -> None:
        super().__init__(operands=[buffer], properties={"value": FloatAttr(value, f64)})

    @property
    def fill_value(self) -> float:
        return float(self.value.value.data)

    def accesses(self) -> Accesses:
        return Accesses(writes=(self.buffer,))

    def verify_(self) -> None:
        _check_local(self, self.buffer, "the buffer")

    @classmethod
    def parse(cls, parser: Parser) -> FillOp:
        buf = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        negative = parser.parse_optional_punctuation("-") is not None
        if parser.parse_optional_keyword("inf") is not None:
            value = float("inf")
        else:
            n = parser.parse_optional_integer(allow_negative=False, allow_boolean=False)
            value = parser.parse_float() if n is None else float(n)
        parser.parse_punctuation(":")
        t = parser.parse_type()
        return FillOp(parser.resolve_operand(buf, t), -value if negative else value)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.buffer)
        v = self.fill_value
        printer.print_string(f", {'-' if v < 0 else ''}{'inf' if abs(v) == float('inf') else repr(abs(v))} : ")
        printer.print_attribute(self.buffer.type)


class _ReduceOp(IRDLOperation):
    src = operand_def(BufferType)
    dst = operand_def(BufferType)
    dim = prop_def(IntegerAttr[i64])
    clear = opt_prop_def(UnitAttr)

    assembly_format = "$src `,` $dst `dim` $dim (`clear` $clear^)? attr-dict `:` type($src) `,` type($dst)"

    def __init__(self, src: SSAValue, dst: SSAValue, dim: int, clear: bool = True) -> None:
        super().__init__(
            operands=[src, dst], properties={"dim": IntegerAttr(dim, i64), "clear": UnitAttr() if clear else None}
        )

    def accesses(self) -> Accesses:
        return Accesses(reads=(self.src,) if self.clear is not None else (self.src, self.dst), writes=(self.dst,))

    def verify_(self) -> None:
        s = _check_local(self, self.src, "the source")
        d = _check_local(self, self.dst, "the destination")
        if d.scope_name != Scope.FRAGMENT:
            raise VerifyException(f"{self.name}: the destination must be a fragment")
        axis = self.dim.value.data
        if not 0 <= axis < s.rank:
            raise VerifyException(f"{self.name}: dim {axis} out of range for a rank-{s.rank} source")
        want = tuple(x for i, x in enumerate(s.shape) if i != axis) or (sympy.Integer(1),)
        if d.shape != want:
            raise VerifyException(f"{self.name}: destination is {fmt_shape(d.shape)}, reducing dim {axis} of {fmt_shape(s.shape)} gives {fmt_shape(want)}")


@irdl_op_definition
class ReduceSumOp(_ReduceOp):
    """`T.reduce_sum(src, dst, dim=d, clear=True)`."""

    name = "tilelang.reduce_sum"


@irdl_op_definition
class ReduceMaxOp(_ReduceOp):
    """`T.reduce_max(src, dst, dim=d, clear=True)`."""

    name = "tilelang.reduce_max"


# --------------------------------------------------------------------------- loops


def _print_loop_body(printer: Printer, body: Region) -> None:
    printer.print_string(" ")
    printer.print_region(body, print_entry_block_args=False)


@irdl_op_definition
class ParallelOp(IRDLOperation):
    """`for i0, i1 in T.Parallel(64, 64):` element-wise statements (loads, scalar ops, stores)."""

    name = "tilelang.parallel"

    vars = prop_def(ArrayAttr[StringAttr])
    extents = prop_def(ArrayAttr[ExprAttr])
    body = region_def("single_block")

    traits = traits_def(NoTerminator())

    def __init__(self, names: Sequence[str], extents: Sequence[Dim | int], body: Region | None = None) -> None:
        super().__init__(
            properties={"vars": ArrayAttr(StringAttr(n) for n in names), "extents": _exprs_attr(extents)},
            regions=[body if body is not None else Region(Block())],
        )

    @property
    def var_names(self) -> list[str]:
        return [v.data for v in self.vars.data]

    @property
    def extent_exprs(self) -> tuple[Dim, ...]:
        return _exprs(self.extents)

    def verify_(self) -> None:
        if len(self.vars.data) != len(self.extents.data) or not self.vars.data:
            raise VerifyException("tilelang.parallel: one extent per loop variable, at least one")
        for op in self.body.block.ops:
            if not (isinstance(op, (LoadOp, StoreOp, IndexBelowOp, Exp2SplitOp)) or op.dialect_name() in ("arith", "math")):
                raise VerifyException(f"tilelang.parallel: the body holds element-wise statements only, got {op.name}")
        _check_vars(self, self.extent_exprs, "extent")

    @classmethod
    def parse(cls, parser: Parser) -> ParallelOp:
        names = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_identifier)
        parser.parse_keyword("in")
        extents = _parse_expr_list(parser, parser.Delimiter.PAREN)
        return ParallelOp(names, extents, parser.parse_region())

    def print(self, printer: Printer) -> None:
        printer.print_string(f" ({', '.join(self.var_names)}) in ({_text_list(self.extents)})")
        _print_loop_body(printer, self.body)


class _SequentialLoop(IRDLOperation):
    var = prop_def(StringAttr)
    extent = prop_def(ExprAttr)
    body = region_def("single_block")

    traits = traits_def(NoTerminator())

    @property
    def var_name(self) -> str:
        return self.var.data

    @property
    def extent_expr(self) -> Dim:
        return self.extent.data

    def verify_(self) -> None:
        if self.var_name in enclosing_vars(self):
            raise VerifyException(f"{self.name}: loop variable {self.var_name} shadows an enclosing one")
        _check_vars(self, [self.extent_expr], "extent")
        for op in self.body.block.ops:
            if isinstance(op, (LoadOp, StoreOp)) or op.dialect_name() in ("arith", "math"):
                raise VerifyException(f"{self.name}: {op.name} belongs in a tilelang.parallel body")


@irdl_op_definition
class SerialOp(_SequentialLoop):
    """`for kk in T.serial(n):` block-level ops, once per iteration; `unroll`: `T.unroll(n)`, the
    iterations written out so that each thread has the loads of several in flight."""

    name = "tilelang.serial"

    unroll = opt_prop_def(UnitAttr)

    def __init__(self, var: str, extent: Dim | int, body: Region | None = None, unroll: bool = False) -> None:
        super().__init__(
            properties={"var": StringAttr(var), "extent": ExprAttr(extent), "unroll": UnitAttr() if unroll else None},
            regions=[body if body is not None else Region(Block())],
        )

    def verify_(self) -> None:
        super().verify_()
        if self.unroll is not None and not self.extent_expr.is_Integer:
            raise VerifyException(f"tilelang.serial: an unrolled loop needs a constant extent, not {expr_str(self.extent_expr)}")

    @classmethod
    def parse(cls, parser: Parser) -> SerialOp:
        var = parser.parse_identifier()
        parser.parse_keyword("in")
        extent = parse_expr(parser)
        unroll = parser.parse_optional_keyword("unroll") is not None
        return SerialOp(var, extent, parser.parse_region(), unroll)

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.var_name} in {expr_str(self.extent_expr)}{' unroll' if self.unroll is not None else ''}")
        _print_loop_body(printer, self.body)


@irdl_op_definition
class PipelinedOp(_SequentialLoop):
    """`for r0 in T.Pipelined(n, num_stages=s):` a serial loop whose copies TileLang software-pipelines."""

    name = "tilelang.pipelined"

    num_stages = prop_def(IntegerAttr[i64])

    def __init__(self, var: str, extent: Dim | int, num_stages: int, body: Region | None = None) -> None:
        super().__init__(
            properties={
                "var": StringAttr(var),
                "extent": ExprAttr(extent),
                "num_stages": IntegerAttr(num_stages, i64),
            },
            regions=[body if body is not None else Region(Block())],
        )

    def verify_(self) -> None:
        super().verify_()
        if self.num_stages.value.data < 1:
            raise VerifyException("tilelang.pipelined: num_stages must be at least 1")

    @classmethod
    def parse(cls, parser: Parser) -> PipelinedOp:
        var = parser.parse_identifier()
        parser.parse_keyword("in")
        extent = parse_expr(parser)
        parser.parse_keyword("stages")
        stages = parser.parse_integer(allow_negative=False, allow_boolean=False)
        return PipelinedOp(var, extent, stages, parser.parse_region())

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.var_name} in {expr_str(self.extent_expr)} stages {self.num_stages.value.data}")
        _print_loop_body(printer, self.body)


# --------------------------------------------------------------------------- element access


def _check_indices(op: Operation, buffer: SSAValue, indices: ArrayAttr[ExprAttr]) -> None:
    t = buffer_type(buffer)
    if len(indices.data) != t.rank:
        raise VerifyException(f"{op.name}: {len(indices.data)} indices for a rank-{t.rank} buffer {fmt_shape(t.shape)}")
    _check_vars(op, _exprs(indices), "an index")


@irdl_op_definition
class LoadOp(IRDLOperation):
    """`buf[i0, kk]` read inside a T.Parallel body: one element per iteration."""

    name = "tilelang.load"

    buffer = operand_def(BufferType)
    indices = prop_def(ArrayAttr[ExprAttr])
    result = result_def()

    traits = traits_def(HasAncestor(ParallelOp))

    def __init__(self, buffer: SSAValue, indices: Sequence[Dim | int | str]) -> None:
        super().__init__(
            operands=[buffer], properties={"indices": _exprs_attr(indices)}, result_types=[buffer_type(buffer).element_type]
        )

    @property
    def index_exprs(self) -> tuple[Dim, ...]:
        return _exprs(self.indices)

    def accesses(self) -> Accesses:
        return Accesses(reads=(self.buffer,))

    def verify_(self) -> None:
        _check_indices(self, self.buffer, self.indices)
        if self.result.type != buffer_type(self.buffer).element_type:
            raise VerifyException(f"tilelang.load: result type {self.result.type} differs from the buffer's {buffer_type(self.buffer).element_type}")

    @classmethod
    def parse(cls, parser: Parser) -> LoadOp:
        buf = parser.parse_unresolved_operand()
        indices = _parse_expr_list(parser)
        parser.parse_punctuation(":")
        t = parser.parse_type()
        return LoadOp(parser.resolve_operand(buf, t), indices)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.buffer)
        printer.print_string(f"[{_text_list(self.indices)}] : ")
        printer.print_attribute(self.buffer.type)


@irdl_op_definition
class StoreOp(IRDLOperation):
    """`buf[i0, i1] = value` (or `+=` with `accumulate`) inside a T.Parallel body."""

    name = "tilelang.store"

    value = operand_def()
    buffer = operand_def(BufferType)
    indices = prop_def(ArrayAttr[ExprAttr])
    accumulate = opt_prop_def(UnitAttr)

    traits = traits_def(HasAncestor(ParallelOp))

    def __init__(self, value: SSAValue, buffer: SSAValue, indices: Sequence[Dim | int | str], accumulate: bool = False) -> None:
        super().__init__(
            operands=[value, buffer],
            properties={"indices": _exprs_attr(indices), "accumulate": UnitAttr() if accumulate else None},
        )

    @property
    def index_exprs(self) -> tuple[Dim, ...]:
        return _exprs(self.indices)

    def accesses(self) -> Accesses:
        read = (self.buffer,) if self.accumulate is not None else ()
        return Accesses(reads=read, writes=(self.buffer,))

    def verify_(self) -> None:
        _check_indices(self, self.buffer, self.indices)
        if self.value.type != buffer_type(self.buffer).element_type:
            raise VerifyException(f"tilelang.store: value type {self.value.type} differs from the buffer's {buffer_type(self.buffer).element_type}")

    @classmethod
    def parse(cls, parser: Parser) -> StoreOp:
        value = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        buf = parser.parse_unresolved_operand()
        indices = _parse_expr_list(parser)
        acc = parser.parse_optional_keyword("accumulate") is not None
        parser.parse_punctuation(":")
        vt = parser.parse_type()
        parser.parse_punctuation(",")
        bt = parser.parse_type()
        return StoreOp(parser.resolve_operand(value, vt), parser.resolve_operand(buf, bt), indices, acc)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.value)
        printer.print_string(", ")
        printer.print_operand(self.buffer)
        printer.print_string(f"[{_text_list(self.indices)}]")
        if self.accumulate is not None:
            printer.print_string(" accumulate")
        printer.print_string(" : ")
        printer.print_attribute(self.value.type)
        printer.print_string(", ")
        printer.print_attribute(self.buffer.type)


@irdl_op_definition
class IndexBelowOp(IRDLOperation):
    """`(index < bound)` inside a T.Parallel body: whether this element's position lies before a
    (dynamic) bound; with `arith.select` it prints as `T.if_then_else(...)` (masking padding)."""

    name = "tilelang.index_below"

    index = prop_def(ExprAttr)
    bound = prop_def(ExprAttr)
    result = result_def(IntegerType)

    traits = traits_def(HasAncestor(ParallelOp))

    def __init__(self, index: Dim, bound: Dim) -> None:
        super().__init__(
            properties={"index": ExprAttr(index), "bound": ExprAttr(bound)},
            result_types=[IntegerType(1)],
        )

    @property
    def index_expr(self) -> Dim:
        return self.index.data

    @property
    def bound_expr(self) -> Dim:
        return self.bound.data

    def verify_(self) -> None:
        _check_vars(self, [self.index_expr, self.bound_expr], "an index")

    @classmethod
    def parse(cls, parser: Parser) -> IndexBelowOp:
        index = parse_expr(parser)
        parser.parse_punctuation("<")
        bound = parse_expr(parser)
        return IndexBelowOp(index, bound)

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {expr_str(self.index_expr)} < {expr_str(self.bound_expr)}")


# 2^f for f in [-1/2, 1/2]: a cubic fitted by least squares to the relative error at Chebyshev nodes
# (max 7.7e-5; with float32 rounding 1.4e-4 over [-126, 0], under f16's half ulp of 4.9e-4)
EXP2_CUBIC = (0.9999289048020072, 0.693276283352573, 0.2426046562099921, 0.05508876707445855)
EXP2_ROUNDER = 12582912.0  # 1.5 * 2^23: in x + 1.5 * 2^23 (float32) the low mantissa bits hold round(x)
EXP2_LOWEST = -126.0  # 2^x of x below is 2^-126: the exponent bits would wrap (a masked -inf score included)
EXP2_COLUMN_BLOCK = 8  # an MMA accumulator's columns per register pair: a block is one thread's, whole


@irdl_op_definition
class Exp2SplitOp(IRDLOperation):
    """`2^x` inside a T.Parallel body whose last variable is `column`: the elements of one column block
    of 8 in `every` take it on the FMA and integer pipes (`exp2_fma`), the others on the MUFU (`T.exp2`).

    FlashAttention-4's answer to the softmax's bottleneck: the MUFU issues 16 exp2 a clock per SM, the
    FMA pipes 128 lanes. In an MMA accumulator fragment a block of 8 columns lies in one thread's
    registers, so after unrolling the choice is a constant and no warp diverges.
    """

    name = "tilelang.exp2_split"

    input = operand_def(Float32Type)
    column = prop_def(StringAttr)
    every = prop_def(IntegerAttr[i64])
    result = result_def(Float32Type)

    assembly_format = "$input `column` $column `every` $every attr-dict `:` type($input)"

    traits = traits_def(HasAncestor(ParallelOp))

    def __init__(self, x: SSAValue, column: str, every: int) -> None:
        super().__init__(
            operands=[x], properties={"column": StringAttr(column), "every": IntegerAttr(every, i64)},
            result_types=[Float32Type()],
        )

    @property
    def column_var(self) -> str:
        return self.column.data

    @property
    def every_count(self) -> int:
        return self.every.value.data

    def verify_(self) -> None:
        if self.every_count < 1:
            raise VerifyException(f"tilelang.exp2_split: every must be at least 1, got {self.every_count}")
        loop = self.parent_op()
        while loop is not None and not isinstance(loop, ParallelOp):
            loop = loop.parent_op()
        if loop is not None and self.column_var not in loop.var_names:
            raise VerifyException(f"tilelang.exp2_split: column {self.column_var} is not a variable of its T.Parallel loop {loop.var_names}")

    @staticmethod
    def on_fma(columns: Any, every: int) -> Any:
        """Whether the elements at `columns` (ints or an array) take `exp2_fma`."""
        return (columns // EXP2_COLUMN_BLOCK) % every == 0

    @staticmethod
    def exp2_fma(x: Any) -> Any:
        """2^x in float32 as the FMA form computes it (numpy, element-wise): x clamped to -126, rounded by
        adding and subtracting 1.5 * 2^23, the cubic at the remainder, round(x) added to its exponent bits."""
        import numpy as np

        f32 = np.float32
        xc = np.maximum(np.asarray(x, dtype=f32), f32(EXP2_LOWEST))
        j = (xc + f32(EXP2_ROUNDER)).view(np.int32)
        f = xc - (j.view(f32) - f32(EXP2_ROUNDER))
        c0, c1, c2, c3 = (f32(c) for c in EXP2_CUBIC)
        p = c0 + f * (c1 + f * (c2 + f * c3))
        return (p.view(np.int32) + (j << np.int32(23))).view(f32)


def buffer_effects(op: Operation) -> tuple[set[SSAValue], set[SSAValue]]:
    """The buffers `op`, with the ops nested in it, reads and writes: the union of each op's own
    `accesses()` (ops without buffer accesses, such as loops, waits and scalar arithmetic, have none)."""
    reads: set[SSAValue] = set()
    writes: set[SSAValue] = set()
    for x in op.walk():
        if (accesses := getattr(x, "accesses", None)) is not None:
            a = accesses()
            reads.update(a.reads)
            writes.update(a.writes)
    return reads, writes


TileLang = Dialect(
    "tilelang",
    [
        IndexBelowOp,
        Exp2SplitOp,
        KernelOp,
        AllocSharedOp,
        AllocFragmentOp,
        CopyOp,
        GemmOp,
        WaitGemmOp,
        WaitPriorGridsOp,
        LaunchDependentsOp,
        ClearOp,
        FillOp,
        ReduceSumOp,
        ReduceMaxOp,
        ParallelOp,
        SerialOp,
        PipelinedOp,
        LoadOp,
        StoreOp,
    ],
    [BufferType, RegionAttr, ScopeAttr, WarpPolicyAttr],
)
