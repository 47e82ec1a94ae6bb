"""The `itgraph` dialect: iterative tile graphs (paper §5.2).

A kernel's block arguments are global tensors (inputs, then outputs). Its body is one
`itgraph.parallel` loop (one iteration per threadblock, each writing a disjoint output tile) whose
body loads tiles (`itgraph.load` with a tmap), computes on them with tgraph ops, may run nested
`itgraph.sequential` loops that accumulate into their results, and stores tiles (`itgraph.store`).

A tmap `#itgraph.tmap<[offsets], [tile_shape]>` slices a tensor: one offset expression per dim over
loop variables, integers and symbols (`m*128`, `p*K/s + j*64`, `0` = not tiled). Offsets, tile
dims, loop extents and mask offsets and bounds are `cleave.expr` attributes (one grammar,
`cleave_ir.dialects.cleave.parse_expr`); accumulate kinds and mask fills are enum attributes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import auto
from typing import Any, TypeVar, cast

import numpy as np
import sympy
from xdsl.dialects.builtin import I64, ArrayAttr, ArrayOfConstraint, FunctionType, IntegerAttr, StringAttr, SymbolNameConstraint, i64
from xdsl.dialects.utils import parse_func_op_like, print_func_op_like
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import Attribute, Dialect, Operation, ParametrizedAttribute, Region, SpacedOpaqueSyntaxAttribute, SSAValue
from xdsl.irdl import (
    BaseAttr,
    IRDLOperation,
    VerificationContext,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import HasParent, IsolatedFromAbove, IsTerminator, NoTerminator, SymbolOpInterface
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from cleave_ir.dialects.cleave import ExprAttr, causal, check_metadata, expr_str, parse_expr, parse_expr_text
from cleave_ir.dialects.tgraph import ExpOp, MatmulOp, ReduceOp, SubOp, TensorType, tensor_type
from cleave_ir.shapes import Dim, as_dim, dim_str, symbol



class AccumulateKind(StrEnum):
    """How `itgraph.sequential` folds one iteration's partial tile into its result."""

    SUM = auto()  # acc + part
    MAX = auto()  # max(acc, part)
    RESCALED_SUM = auto()  # online softmax: both sides brought to the running max (`SequentialOp`)


@irdl_attr_definition
class AccumulateKindAttr(EnumAttribute[AccumulateKind], SpacedOpaqueSyntaxAttribute):
    """`#itgraph<accumulate rescaled_sum>` (the op's own syntax prints the bare name)."""

    name = "itgraph.accumulate"


class MaskFill(StrEnum):
    """What `itgraph.mask` writes past the dynamic bound: the identity of the reduction that follows."""

    ZERO = auto()  # of a sum
    NEG_INF = auto()  # of a max


MASK_FILLS: dict[MaskFill, float] = {MaskFill.ZERO: 0.0, MaskFill.NEG_INF: float("-inf")}


@irdl_attr_definition
class MaskFillAttr(EnumAttribute[MaskFill], SpacedOpaqueSyntaxAttribute):
    """`#itgraph<fill neg_inf>` (the op's own syntax prints the bare name)."""

    name = "itgraph.fill"


_E = TypeVar("_E", bound=StrEnum)


@dataclass(frozen=True)
class _EnumOf(BaseAttr[EnumAttribute[Any]]):
    """An enum attribute; a value of another kind (a string in generic form) is named with the accepted values."""

    what: str = ""

    def verify(self, attr: Attribute, constraint_context: VerificationContext) -> None:
        if not isinstance(attr, self.attr):
            values = ", ".join(e.value for e in self.attr.enum_type)
            raise VerifyException(f"{self.what} must be one of {values}, got {attr}")


def _parse_enum(parser: AttrParser, enum: type[_E], what: str, op: str) -> _E:
    """One `enum` value, bare (or quoted, as older files wrote it); an unknown name is a located one-line error."""
    start = parser.pos
    name = parser.parse_optional_identifier()
    if name is None:
        name = parser.parse_optional_str_literal()
    expected = ", ".join(e.value for e in enum)
    if name is None:
        parser.raise_error(f"{op}: expected a {what} ({expected})")
    if name not in enum.__members__.values():
        parser.raise_error(f"{op}: unknown {what} '{name}' (expected {expected})", start, parser.pos)
    return enum(name)


def _check_positive(parser: AttrParser, start: int, values: Sequence[Dim], what: str) -> None:
    """Constant tile dims and loop extents must be positive integers (symbolic ones are checked later)."""
    for v in values:
        if v.is_Number and (not v.is_Integer or v < 1):
            parser.raise_error(f"{what} must be positive integers, got {v}", start, parser.pos)


@irdl_attr_definition
class TmapAttr(ParametrizedAttribute):
    """`#itgraph.tmap<[0, m*128, 0], [1, 128, 64]>`: tile offsets and tile shape."""

    name = "itgraph.tmap"

    offsets: ArrayAttr[ExprAttr]
    shape: ArrayAttr[ExprAttr]

    def __init__(self, offsets: Sequence[Dim | int], shape: Sequence[Dim | int]) -> None:
        super().__init__(
            ArrayAttr(ExprAttr(sympy.expand(sympy.sympify(o))) for o in offsets),
            ArrayAttr(ExprAttr(as_dim(sympy.sympify(d))) for d in shape),
        )

    @property
    def offset_exprs(self) -> tuple[Dim, ...]:
        return tuple(o.data for o in self.offsets.data)

    @property
    def tile_shape(self) -> tuple[Dim, ...]:
        return tuple(d.data for d in self.shape.data)

    def verify(self) -> None:
        if len(self.offsets.data) != len(self.shape.data):
            raise VerifyException(
                f"itgraph.tmap: {len(self.offsets.data)} offsets for {len(self.shape.data)} tile dims"
            )

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        start = parser.pos
        with parser.in_angle_brackets():
            offs = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, lambda: parse_expr(parser))
            parser.parse_punctuation(",")
            shape_start = parser.pos
            shape = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, lambda: parse_expr(parser))
            _check_positive(parser, shape_start, shape, "tile dims")
        if len(offs) != len(shape):
            parser.raise_error(f"itgraph.tmap: {len(offs)} offsets for {len(shape)} tile dims", start, parser.pos)
        return TmapAttr(offs, shape).parameters

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(
            "<[" + ", ".join(map(expr_str, self.offset_exprs)) + "], [" + ", ".join(map(expr_str, self.tile_shape)) + "]>"
        )


def enclosing_loops(op: Operation) -> list[tuple[str, Dim]]:
    """(variable, extent) of every loop around `op`, outermost first."""
    out: list[tuple[str, Dim]] = []
    parent = op.parent_op()
    while parent is not None:
        if isinstance(parent, ParallelOp):
            out[:0] = list(zip(parent.var_names, parent.extent_dims))
        elif isinstance(parent, SequentialOp):
            out.insert(0, (parent.var_name, parent.extent_dim))
        parent = parent.parent_op()
    return out


def enclosing_kernel(op: Operation) -> KernelOp | None:
    """The `itgraph.kernel` around `op`, if any."""
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, KernelOp):
        parent = parent.parent_op()
    return parent


def _check_tmap(op: Operation, tmap: TmapAttr, full: TensorType, tile: TensorType, what: str) -> None:
    if len(tmap.offsets.data) != full.rank:
        raise VerifyException(f"{op.name}: tmap has {len(tmap.offsets.data)} dims, {what} has {full.rank}")
    if tmap.tile_shape != tile.shape:
        raise VerifyException(
            f"{op.name}: tmap tile shape [{', '.join(map(dim_str, tmap.tile_shape))}] differs from the "
            f"tile type [{', '.join(map(dim_str, tile.shape))}]"
        )
    loops = dict(enclosing_loops(op))
    for d, (off, size, total) in enumerate(zip(tmap.offset_exprs, tile.shape, full.shape)):
        unknown = {s.name for s in off.free_symbols} - set(loops) - {s.name for s in full.shape[d].free_symbols}  # type: ignore[attr-defined]
        unknown -= {s.name for dd in full.shape for s in dd.free_symbols}  # type: ignore[attr-defined]
        if unknown:
            raise VerifyException(f"{op.name}: tmap dim {d} uses unknown loop variable(s) {', '.join(sorted(unknown))}")
        last = off.subs({symbol(v): ext - 1 for v, ext in loops.items()}) + size
        diff = sympy.simplify(total - last)
        if diff.is_number and diff < 0:
            raise VerifyException(
                f"{op.name}: tile out of bounds in dim {d}: the last tile ends at {dim_str(sympy.simplify(last))} "
                f"but the {what} has {dim_str(total)}"
            )


@irdl_op_definition
class KernelOp(IRDLOperation):
    """One GPU kernel: global tensors in (then outputs, written by stores), one parallel loop."""

    name = "itgraph.kernel"

    body = region_def("single_block")
    sym_name = prop_def(SymbolNameConstraint())
    function_type = prop_def(FunctionType)
    num_outputs = prop_def(IntegerAttr[i64])

    traits = traits_def(IsolatedFromAbove(), SymbolOpInterface(), NoTerminator())

    def __init__(self, name: str, inputs: Sequence[TensorType], outputs: Sequence[TensorType], region: Region) -> None:
        super().__init__(
            properties={
                "sym_name": StringAttr(name),
                "function_type": FunctionType.from_lists([*inputs, *outputs], []),
                "num_outputs": IntegerAttr(len(outputs), i64),
            },
            regions=[region],
        )

    @property
    def inputs(self) -> tuple[SSAValue, ...]:
        return self.body.block.args[: len(self.body.block.args) - self.num_outputs.value.data]

    @property
    def outputs(self) -> tuple[SSAValue, ...]:
        return self.body.block.args[len(self.body.block.args) - self.num_outputs.value.data :]

    def verify_(self) -> None:
        check_metadata(self, nested=True)
        ops = list(self.body.block.ops)
        if len(ops) != 1 or not isinstance(ops[0], ParallelOp):
            raise VerifyException(f"itgraph.kernel @{self.sym_name.data}: body must be exactly one itgraph.parallel")
        if not 0 < self.num_outputs.value.data <= len(self.body.block.args):
            raise VerifyException(f"itgraph.kernel @{self.sym_name.data}: bad number of outputs")

    @classmethod
    def parse(cls, parser: Parser) -> KernelOp:
        start = parser.pos
        name, inputs, _, region, extra, _, _ = parse_func_op_like(
            parser, reserved_attr_names=("sym_name", "function_type")
        )
        attrs = dict(extra.data) if extra is not None else {}
        n = attrs.pop("num_outputs", None)
        if not isinstance(n, IntegerAttr):
            parser.raise_error(f"itgraph.kernel @{name} needs attributes {{num_outputs = N}}", start, start + len(name) + 1)
        op = KernelOp.__new__(KernelOp)
        IRDLOperation.__init__(
            op,
            properties={
                "sym_name": StringAttr(name),
                "function_type": FunctionType.from_lists(list(inputs), []),
                "num_outputs": IntegerAttr(n.value.data, i64),
            },
            regions=[region],
        )
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        attrs = {"num_outputs": self.num_outputs, **self.attributes}
        print_func_op_like(
            printer, self.sym_name, self.function_type, self.body, attrs,
            reserved_attr_names=("sym_name", "function_type"),
        )


def _print_loop_header(printer: Printer, names: Sequence[str], extents: Sequence[str]) -> None:
    printer.print_string(" (" + ", ".join(names) + ") in (" + ", ".join(extents) + ")")


def _parse_names(parser: Parser) -> list[str]:
    return parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_identifier)


def _parse_extents(parser: Parser) -> list[Dim]:
    start = parser.pos
    extents = parser.parse_comma_separated_list(parser.Delimiter.PAREN, lambda: parse_expr(parser))
    _check_positive(parser, start, extents, "loop extents")
    return extents


@irdl_op_definition
class ParallelOp(IRDLOperation):
    """`itgraph.parallel (b, m) in (4, 32) { ... }`: the grid; each iteration is one threadblock."""

    name = "itgraph.parallel"

    vars = prop_def(ArrayAttr[StringAttr])
    extents = prop_def(ArrayAttr[ExprAttr])
    body = region_def("single_block")

    traits = traits_def(HasParent(KernelOp), NoTerminator())

    def __init__(self, names: Sequence[str], extents: Sequence[Dim | int], body: Region) -> None:
        super().__init__(
            properties={
                "vars": ArrayAttr(StringAttr(n) for n in names),
                "extents": ArrayAttr(ExprAttr(as_dim(sympy.sympify(e))) for e in extents),
            },
            regions=[body],
        )

    @property
    def var_names(self) -> list[str]:
        return [v.data for v in self.vars.data]

    @property
    def extent_dims(self) -> list[Dim]:
        return [e.data for e in self.extents.data]

    def verify_(self) -> None:
        if len(self.vars.data) != len(self.extents.data):
            raise VerifyException("itgraph.parallel: one extent per loop variable")
        stores = [op for op in self.body.block.ops if isinstance(op, StoreOp)]
        kernel = self.parent_op()
        held = bounded_sizes(kernel) if isinstance(kernel, KernelOp) else {}
        for st in stores:
            _check_cover(st, self.var_names, self.extent_dims, held)

    @classmethod
    def parse(cls, parser: Parser) -> ParallelOp:
        names = _parse_names(parser)
        parser.parse_keyword("in")
        extents = _parse_extents(parser)
        body = parser.parse_region()
        return ParallelOp(names, extents, body)

    def print(self, printer: Printer) -> None:
        _print_loop_header(printer, self.var_names, [expr_str(e) for e in self.extent_dims])
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False)


def _check_cover(store: StoreOp, names: Sequence[str], extents: Sequence[Dim], held: Mapping[str, int] | None = None) -> None:
    """The parallel loop's stores write disjoint tiles that cover the output (a bounded dim, `held`:
    its representative size, which bounds it)."""
    full = tensor_type(store.dest)
    ext = dict(zip(names, extents))
    used: set[str] = set()

    def covers(cover: Dim, size: Dim) -> bool:
        bound = (held or {}).get(getattr(size, "name", ""))
        return sympy.simplify(cover - size) == 0 or (bound is not None and cover == bound)

    for d, (off, tile, size) in enumerate(zip(store.tmap.offset_exprs, store.tmap.tile_shape, full.shape)):
        if off == 0:
            if not covers(tile, size):
                raise VerifyException(
                    f"itgraph.parallel: the stores do not cover dim {d} of the output: offset 0, tile "
                    f"{dim_str(tile)} of {dim_str(size)}"
                )
            continue
        var_syms = [s for s in off.free_symbols if s.name in ext]  # type: ignore[attr-defined]
        if len(var_syms) != 1 or sympy.simplify(off - var_syms[0] * tile) != 0:
            raise VerifyException(f"itgraph.parallel: store offset {expr_str(off)} in dim {d} is not <var>*<tile>")
        v = var_syms[0].name  # type: ignore[attr-defined]
        if v in used:
            raise VerifyException(f"itgraph.parallel: loop variable {v} tiles two output dims: tiles overlap")
        used.add(v)
        if not covers(ext[v] * tile, size):
            raise VerifyException(
                f"itgraph.parallel: {v} in (0..{dim_str(ext[v])}) with tile {dim_str(tile)} does not cover dim {d} "
                f"of size {dim_str(size)}"
            )
    unused = [n for n, e in ext.items() if n not in used and e != 1]
    if unused:
        raise VerifyException(f"itgraph.parallel: loop variable(s) {', '.join(unused)} write the same tile twice")


def rescale_reference(m: np.ndarray) -> np.ndarray:
    """What an online softmax's factors are taken against (`SequentialOp`): the running max, 0 where -inf."""
    return np.where(np.isneginf(m), 0.0, m)


@irdl_op_definition
class SequentialOp(IRDLOperation):
    """`%a, %b = itgraph.sequential j in 64 accumulate (sum, max) : T1, T2 { ... itgraph.yield }`.

    Each iteration yields partial tiles; the results accumulate them with the declared kinds.
    `rescaled_sum` (online softmax) needs exactly one `max` result: the iteration's partials are
    scaled by exp(-m_iter), and accumulators are rescaled by exp(m_old - m_new). Both factors are
    taken against `rescale_reference(m_new)`: m_new, or 0 where it is -inf, so a row that has seen
    nothing yet (a chunk of padding, or keys masked with -inf) gets factors of 0, not
    exp(-inf + inf) = NaN, and a row whose logits are all finfo(float32).min stays uniform, as in
    PyTorch; the interpreters and the TileLang lowering implement exactly this.
    """

    name = "itgraph.sequential"

    var = prop_def(StringAttr)
    extent = prop_def(ExprAttr)
    kinds = prop_def(ArrayOfConstraint(_EnumOf(AccumulateKindAttr, "itgraph.sequential: accumulate kinds")))
    body = region_def("single_block")
    results_ = var_result_def(TensorType)

    def __init__(
        self, var: str, extent: Dim | int, kinds: Sequence[AccumulateKind | str], result_types: Sequence[TensorType], body: Region
    ) -> None:
        super().__init__(
            properties={
                "var": StringAttr(var),
                "extent": ExprAttr(as_dim(sympy.sympify(extent))),
                "kinds": ArrayAttr(AccumulateKindAttr(AccumulateKind(k)) for k in kinds),
            },
            result_types=[list(result_types)],
            regions=[body],
        )

    @property
    def var_name(self) -> str:
        return self.var.data

    @property
    def extent_dim(self) -> Dim:
        return self.extent.data

    @property
    def accumulate_kinds(self) -> list[AccumulateKind]:
        return [k.data for k in self.kinds.data]

    def running_max_form(self) -> bool:
        """Whether this online softmax loop takes FlashAttention-2's form.

        The body's rescaled sums are homogeneous in exp(-m) for the chunk max m they subtract. Where
        every use of that chunk max in the body is a shift `x - m` feeding `exp`, the body may
        subtract the running max instead, so each rescaled sum is `acc * alpha + part`.
        """
        kinds = self.accumulate_kinds
        term = self.body.block.last_op
        if AccumulateKind.MAX not in kinds or not isinstance(term, YieldOp):
            return False
        chunk_max = term.values[kinds.index(AccumulateKind.MAX)]
        if not isinstance(chunk_max.owner, ReduceOp) or chunk_max.owner.parent_block() is not self.body.block:
            return False
        return all(
            use.operation is term
            or (isinstance(use.operation, SubOp) and use.index == 1 and bool(use.operation.results[0].uses)
                and all(isinstance(u.operation, ExpOp) for u in use.operation.results[0].uses))
            for use in chunk_max.uses
        )

    def in_place_products(self) -> dict[SSAValue, int]:
        """Matmul products that accumulate in place into their rescaled accumulator (value -> result index).

        In the running-max form, a matmul part with one use (the yield, which gives it its
        accumulator's type) is a `T.gemm` into the rescaled accumulator: no fp32 register tile of its own.
        """
        if not self.running_max_form():
            return {}
        term = self.body.block.last_op
        assert isinstance(term, YieldOp)
        return {
            value: i for i, (kind, value) in enumerate(zip(self.accumulate_kinds, term.values))
            if kind == AccumulateKind.RESCALED_SUM and isinstance(value.owner, MatmulOp) and value.has_one_use()
        }

    def verify_(self) -> None:
        kinds = self.accumulate_kinds
        if len(kinds) != len(self.results):
            raise VerifyException(f"itgraph.sequential: {len(kinds)} accumulate kinds for {len(self.results)} results")
        if AccumulateKind.RESCALED_SUM in kinds and kinds.count(AccumulateKind.MAX) != 1:
            raise VerifyException("itgraph.sequential: rescaled_sum needs exactly one max result (the running max)")
        term = self.body.block.last_op
        if not isinstance(term, YieldOp):
            raise VerifyException("itgraph.sequential: body must end with itgraph.yield")
        got = [o.type for o in term.values]
        if got != [r.type for r in self.results]:
            raise VerifyException("itgraph.sequential: yielded tile types differ from the results")

    @classmethod
    def parse(cls, parser: Parser) -> SequentialOp:
        var = parser.parse_identifier()
        parser.parse_keyword("in")
        start = parser.pos
        extent = parse_expr(parser)
        _check_positive(parser, start, [extent], "loop extents")
        parser.parse_keyword("accumulate")
        kinds = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, lambda: _parse_enum(parser, AccumulateKind, "accumulate kind", "itgraph.sequential")
        )
        types: list[Attribute] = []
        if parser.parse_optional_punctuation(":") is not None:
            types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
        body = parser.parse_region()
        return SequentialOp(var, extent, kinds, cast(list[TensorType], types), body)

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.var_name} in {expr_str(self.extent_dim)} accumulate ({', '.join(self.accumulate_kinds)})")
        if self.results:
            printer.print_string(" : ")
            printer.print_list([r.type for r in self.results], printer.print_attribute)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False)


@irdl_op_definition
class YieldOp(IRDLOperation):
    """The partial tiles of one sequential iteration."""

    name = "itgraph.yield"

    values = var_operand_def(TensorType)

    traits = traits_def(IsTerminator(), HasParent(SequentialOp))

    assembly_format = "($values^ `:` type($values))? attr-dict"

    def __init__(self, values: Sequence[SSAValue | Operation]) -> None:
        super().__init__(operands=[values])


@irdl_op_definition
class LoadOp(IRDLOperation):
    """Load the tile of a global tensor that `tmap` selects in the current iteration."""

    name = "itgraph.load"

    source = operand_def(TensorType)
    tmap = prop_def(TmapAttr)
    result = result_def(TensorType)

    assembly_format = "$source `at` qualified($tmap) attr-dict `:` type($source) `->` type($result)"

    def __init__(self, source: SSAValue, tmap: TmapAttr) -> None:
        t = tensor_type(source)
        super().__init__(operands=[source], properties={"tmap": tmap}, result_types=[t.with_shape(tmap.tile_shape)])

    def verify_(self) -> None:
        _check_tmap(self, self.tmap, tensor_type(self.source), tensor_type(self.result), "source")
        if "cleave.causal" in self.attributes and tensor_type(self.source).rank < 2:
            raise VerifyException("itgraph.load: a cleave.causal tile needs a query and a key dim (rank >= 2)")

    @property
    def causal_offset(self) -> int | None:
        """The offset of the causal mask this load reads (`cleave.causal`), or None."""
        return causal(self)


@irdl_op_definition
class StoreOp(IRDLOperation):
    """Store a tile into the global output tensor at `tmap`."""

    name = "itgraph.store"

    value = operand_def(TensorType)
    dest = operand_def(TensorType)
    tmap = prop_def(TmapAttr)

    assembly_format = "$value `,` $dest `at` qualified($tmap) attr-dict `:` type($value) `,` type($dest)"

    def __init__(self, value: SSAValue, dest: SSAValue, tmap: TmapAttr) -> None:
        super().__init__(operands=[value, dest], properties={"tmap": tmap})

    def verify_(self) -> None:
        _check_tmap(self, self.tmap, tensor_type(self.dest), tensor_type(self.value), "output")


def dynamic_quanta(kernel: KernelOp) -> dict[str, int]:
    """`cleave.dynamic = {L = 2048}`: the kernel's dynamic dims and their quanta (every expression of
    the kernel is integral when the dim is a multiple of its quantum)."""
    attr = kernel.attributes.get("cleave.dynamic")
    if attr is None:
        return {}
    return {k: v.value.data for k, v in attr.data.items()}  # type: ignore[attr-defined]


def bounded_sizes(kernel: KernelOp) -> dict[str, int]:
    """`cleave.bounded = ["x_d1"]`: dynamic dims the kernel serves only up to their representative
    size (`cleave-dynamic-shapes`' held dims), with that size."""
    attr = kernel.attributes.get("cleave.bounded")
    if not isinstance(attr, ArrayAttr):
        return {}
    rep = representative_sizes(kernel)
    return {a.data: rep[a.data] for a in attr.data if isinstance(a, StringAttr) and a.data in rep}


def representative_sizes(kernel: KernelOp) -> dict[str, int]:
    """`cleave.representative = {L = 4096}`: the sizes a dynamic kernel was scheduled at."""
    attr = kernel.attributes.get("cleave.representative")
    if attr is None:
        return {}
    return {k: v.value.data for k, v in attr.data.items()}  # type: ignore[attr-defined]


def padded_sizes(kernel: KernelOp, sizes: Mapping[str, int]) -> dict[str, int]:
    """Dynamic sizes rounded up to their quanta: the sizes the kernel's loops and offsets run over."""
    return {k: -(-sizes[k] // q) * q for k, q in dynamic_quanta(kernel).items()}


@irdl_op_definition
class MaskOp(IRDLOperation):
    """Set the elements of a tile that lie past a dynamic bound to a fill value.

    `itgraph.mask %x dim 3 offset 128*r0 + L/16*p0 bound L fill neg_inf`: element `i` of dim 3 sits
    at global position `offset + i` of a dynamic dim of size `L`; positions >= L (padding read as
    zeros) become the fill, so reductions over that dim ignore them. (Files that quote the offset,
    bound and fill, as older versions printed them, still parse.)
    """

    name = "itgraph.mask"

    input = operand_def(TensorType)
    axis = prop_def(IntegerAttr[I64])
    offset = prop_def(ExprAttr)
    bound = prop_def(ExprAttr)
    fill = prop_def(_EnumOf(MaskFillAttr, "itgraph.mask: fill"))
    result = result_def(TensorType)

    def __init__(self, value: SSAValue, axis: int, offset: Dim, bound: Dim, fill: MaskFill | str) -> None:
        super().__init__(
            operands=[value],
            properties={
                "axis": IntegerAttr(axis, i64),
                "offset": ExprAttr(sympy.expand(offset)),
                "bound": ExprAttr(bound),
                "fill": MaskFillAttr(MaskFill(fill)),
            },
            result_types=[tensor_type(value)],
        )

    @property
    def offset_expr(self) -> Dim:
        return self.offset.data

    @property
    def bound_dim(self) -> Dim:
        return self.bound.data

    @property
    def fill_value(self) -> float:
        """The number written past the bound."""
        return MASK_FILLS[self.fill.data]

    def verify_(self) -> None:
        t = tensor_type(self.input)
        if self.result.type != t:
            raise VerifyException("itgraph.mask: the result type must equal the input type")
        if not 0 <= self.axis.value.data < t.rank:
            raise VerifyException(f"itgraph.mask: dim {self.axis.value.data} out of range for rank {t.rank}")

    @classmethod
    def parse(cls, parser: Parser) -> MaskOp:
        def expr() -> Dim:
            start = parser.pos
            text = parser.parse_optional_str_literal()  # the quoted form of older files
            if text is None:
                return parse_expr(parser)
            try:
                return parse_expr_text(text)
            except ValueError as e:
                parser.raise_error(f"itgraph.mask: {e}", start, parser.pos)

        unresolved = parser.parse_unresolved_operand()
        parser.parse_keyword("dim")
        start = parser.pos
        axis = parser.parse_integer(allow_boolean=False)
        if not 0 <= axis < 2**63:
            parser.raise_error(f"itgraph.mask: dim {axis} out of range", start, parser.pos)
        parser.parse_keyword("offset")
        offset = expr()
        parser.parse_keyword("bound")
        bound = expr()
        parser.parse_keyword("fill")
        fill = _parse_enum(parser, MaskFill, "fill", "itgraph.mask")
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        value = parser.resolve_operand(unresolved, parser.parse_type())
        parser.parse_punctuation("->")
        out_type = parser.parse_type()
        op = MaskOp.__new__(MaskOp)
        IRDLOperation.__init__(
            op,
            operands=[value],
            properties={
                "axis": IntegerAttr(axis, i64),
                "offset": ExprAttr(offset),
                "bound": ExprAttr(bound),
                "fill": MaskFillAttr(fill),
            },
            attributes=attrs,
            result_types=[out_type],
        )
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.input)
        printer.print_string(
            f" dim {self.axis.value.data} offset {expr_str(self.offset_expr)} bound {expr_str(self.bound_dim)} fill {self.fill.data}"
        )
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.input.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)


ITGraph = Dialect(
    "itgraph",
    [KernelOp, ParallelOp, SequentialOp, YieldOp, LoadOp, StoreOp, MaskOp],
    [TmapAttr, AccumulateKindAttr, MaskFillAttr],
)
