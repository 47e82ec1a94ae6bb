"""The `tgraph` dialect: tensor computation graphs with symbolic shapes and Split.

A `tgraph.graph` is a symbol whose block arguments are the named inputs and whose
`tgraph.output` terminator returns the outputs. Values are `!tgraph.tensor<[dims], elt>`
where each dim is an integer, a named symbol, or a product/quotient of them (`K/s`).
"""

from __future__ import annotations

import functools
import math
import struct
from collections.abc import Mapping, Sequence
from enum import auto
from fractions import Fraction
from abc import abstractmethod
from types import ModuleType
from typing import ClassVar, cast

import numpy as np
import sympy
from xdsl.dialects.builtin import (
    ArrayAttr,
    BFloat16Type,
    DenseArrayBase,
    DictionaryAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    FunctionType,
    IntegerAttr,
    StringAttr,
    SymbolNameConstraint,
    SymbolRefAttr,
    UnitAttr,
    i64,
)
from xdsl.dialects.utils import EnumAttribute, parse_func_op_like, print_func_op_like
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
    IRDLOperation,
    VarConstraint,
    base,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_attr_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.irdl.declarative_assembly_format import AttributeVariable, CustomDirective, ParsingState, PrintingState, irdl_custom_directive
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import (
    CallableOpInterface,
    HasParent,
    IsolatedFromAbove,
    IsTerminator,
    Pure,
    SymbolOpInterface,
)
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from cleave_ir.dialects.semantics import (
    GELU_TANH_C,
    SQRT_2_OVER_PI,
    Algebra,
    Domain,
    ElementBuilder,
    Monotone,
    Reduction,
    Semantics,
    np_erf,
    torch_module,
)
from cleave_ir.dialects.cleave import CausalMaskAttr, ExprAttr, check_metadata
from cleave_ir.shapes import Dim, as_dim, dim_str, is_integral, symbol

ELEMENT_TYPES = (Float16Type, BFloat16Type, Float32Type, Float64Type)


# xDSL's arith and math dialects only build TileLang bodies: imported on first use, not by every
# cleave-opt run that parses a graph (they are a tenth of its start-up)
def _arith() -> ModuleType:
    from xdsl.dialects import arith

    return arith


def _xmath() -> ModuleType:
    from xdsl.dialects import math

    return math


# --------------------------------------------------------------------------- types


@irdl_attr_definition
class TensorType(ParametrizedAttribute, TypeAttribute):
    """`!tgraph.tensor<[1, 32, N, 128], f16>`: a tensor with integer or symbolic dims.

    Each dim is held as its sympy form (`#cleave.expr`) in the canonical form `as_dim` gives, so
    shapes written differently (`K/s/2`, `K/(2*s)`) are the same type; it prints in the dim grammar.
    """

    name = "tgraph.tensor"

    dims: ArrayAttr[ExprAttr]
    element_type: Attribute

    def __init__(
        self, shape: Sequence[int | str | sympy.Expr], element_type: Attribute
    ) -> None:
        super().__init__(_dims_attr(shape), element_type)

    @property
    def shape(self) -> tuple[Dim, ...]:
        return tuple(d.data for d in self.dims.data)

    @property
    def rank(self) -> int:
        return len(self.dims.data)

    def with_shape(self, shape: Sequence[int | str | sympy.Expr]) -> TensorType:
        dims = tuple(shape)
        if any(type(d) is bool for d in dims):  # refused by `as_dim`: not cached as the dim 1
            return TensorType(dims, self.element_type)
        return _tensor_type(dims, self.element_type)

    def with_element_type(self, element_type: Attribute) -> TensorType:
        return TensorType(self.shape, element_type)

    def verify(self) -> None:
        if not isinstance(self.element_type, ELEMENT_TYPES):
            raise VerifyException(
                f"tgraph.tensor element type must be f16, bf16, f32 or f64, got {self.element_type}"
            )
        for d in self.shape:
            if d.is_Number and (not d.is_Integer or d < 1):
                raise VerifyException(f"tgraph.tensor dims must be positive integers, got {d}")
            if not _is_monomial(d):
                raise VerifyException(
                    f"tgraph.tensor dims must be products and quotients of integers and symbols, got {d}"
                )

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            dims = parser.parse_comma_separated_list(
                parser.Delimiter.SQUARE, lambda: _parse_dim_product(parser)
            )
            parser.parse_punctuation(",")
            pos = parser.pos
            elt = parser.parse_type()
            if not isinstance(elt, ELEMENT_TYPES):
                parser.raise_error(
                    f"tgraph.tensor element type must be f16, bf16, f32 or f64, got {elt}",
                    pos,
                    parser.pos,
                )
        return (_dims_attr(dims), elt)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<[")
        printer.print_string(", ".join(dim_str(d) for d in self.shape))
        printer.print_string("], ")
        printer.print_attribute(self.element_type)
        printer.print_string(">")


@functools.lru_cache(maxsize=65536)
def _tensor_type(shape: tuple[int | str | sympy.Expr, ...], element_type: Attribute) -> TensorType:
    """`TensorType(shape, element_type)`, built once (types are immutable; the scheduler makes the
    same tile types for every configuration it tries)."""
    return TensorType(shape, element_type)


def _dims_attr(shape: Sequence[int | str | sympy.Expr]) -> ArrayAttr[ExprAttr]:
    """The canonical dims of a shape: what parsing their printed text gives back."""
    return ArrayAttr(ExprAttr(_canonical_dim(d)) for d in shape)


@functools.lru_cache(maxsize=65536, typed=True)  # typed: a bool is not the dim 1
def _canonical_dim(value: int | str | sympy.Expr) -> Dim:
    d = as_dim(value)
    # a symbol made elsewhere (a plain sympy.Symbol) becomes the dim symbol of its name
    if any(s != symbol(s.name) for s in d.free_symbols):  # type: ignore[attr-defined]
        d = d.xreplace({s: symbol(s.name) for s in d.free_symbols})  # type: ignore[attr-defined]
    return d


@functools.lru_cache(maxsize=65536)
def _is_monomial(d: Dim) -> bool:
    """Whether `d` is in the dim grammar: a rational times integer powers of symbols."""
    if d.is_Number or d.is_Symbol:
        return True
    coeff, rest = d.as_coeff_Mul()
    return coeff.is_Rational and all(
        base == 1 or (base.is_Symbol and exp.is_Integer) for base, exp in rest.as_powers_dict().items()
    )


def _parse_dim_primary(parser: AttrParser) -> Dim:
    start = parser.pos
    if (value := parser.parse_optional_integer(allow_boolean=False, allow_negative=False)) is not None:
        if value < 1:
            parser.raise_error(f"dims must be positive, got {value}", start, parser.pos)
        return sympy.Integer(value)
    if (name := parser.parse_optional_identifier()) is not None:
        if not (name[0].isalpha() or name[0] == "_") or not name.replace("_", "").isalnum():
            parser.raise_error(f"invalid dim symbol name '{name}'", start, parser.pos)
        return symbol(name)
    if parser.parse_optional_punctuation("(") is not None:
        value = _parse_dim_product(parser)
        parser.parse_punctuation(")")
        return value
    parser.raise_error("expected a dim: an integer, a symbol name or '('")


def _parse_dim_product(parser: AttrParser) -> Dim:
    start = parser.pos
    value = _parse_dim_primary(parser)
    while (op := parser.parse_optional_punctuation("*") or parser.parse_optional_punctuation("/")):
        rhs = _parse_dim_primary(parser)
        value = value * rhs if op == "*" else value / rhs
    if not is_integral(value):
        parser.raise_error(f"dim {value} is not an integer", start, parser.pos)
    return value


def referenced_symbol(op: Operation, key: str) -> str | None:
    """The symbol an `@name` attribute such as `cleave.candidate_of` names, or None."""
    attr = op.attributes.get(key)
    return attr.root_reference.data if isinstance(attr, SymbolRefAttr) else None


def tensor_type(value: SSAValue | Attribute) -> TensorType:
    t = value.type if isinstance(value, SSAValue) else value
    assert isinstance(t, TensorType), t
    return t


def _fmt(shape: Sequence[Dim]) -> str:
    return "[" + ", ".join(dim_str(d) for d in shape) + "]"


def broadcast_shapes(
    lhs: Sequence[Dim], rhs: Sequence[Dim], what: str
) -> tuple[Dim, ...]:
    """Size-1 broadcasting of two shapes of equal rank; raises VerifyException naming `what`."""
    if len(lhs) != len(rhs):
        raise VerifyException(
            f"{what}: operands must have the same rank (add size-1 dims with tgraph.reshape): "
            f"{_fmt(lhs)} vs {_fmt(rhs)}"
        )
    out: list[Dim] = []
    for i, (a, b) in enumerate(zip(lhs, rhs)):
        if a == b or b == 1:
            out.append(a)
        elif a == 1:
            out.append(b)
        else:
            raise VerifyException(
                f"{what}: dim {i} does not broadcast: {dim_str(a)} vs {dim_str(b)} "
                f"(shapes {_fmt(lhs)} and {_fmt(rhs)})"
            )
    return tuple(out)


def _check_result(op: Operation, expected: Sequence[Dim], result: TensorType) -> None:
    if tuple(expected) != result.shape:
        raise VerifyException(
            f"{op.name}: result shape {_fmt(result.shape)} does not match the inferred {_fmt(expected)}"
        )


def _check_same_element(op: Operation, *types: TensorType) -> None:
    elts = {str(t.element_type) for t in types}
    if len(elts) > 1:
        raise VerifyException(
            f"{op.name}: element types differ: {', '.join(str(t.element_type) for t in types)} "
            "(convert with tgraph.cast)"
        )


# --------------------------------------------------------------------------- graph


class GraphCallableInterface(CallableOpInterface):
    """Lets xDSL's interpreter call a graph like a function."""

    @classmethod
    def get_callable_region(cls, op: Operation) -> Region:
        return cast(GraphOp, op).body

    @classmethod
    def get_argument_types(cls, op: Operation) -> tuple[Attribute, ...]:
        return cast(GraphOp, op).function_type.inputs.data

    @classmethod
    def get_result_types(cls, op: Operation) -> tuple[Attribute, ...]:
        return cast(GraphOp, op).function_type.outputs.data


@irdl_op_definition
class GraphOp(IRDLOperation):
    """A computation graph: named inputs (block arguments), outputs (`tgraph.output`).

    Input annotations live in the argument attribute dictionaries:
    `dynamic = array<i64: ...>` (dims that vary at run time) and
    `reduced = array<i64: ...>` (dims declared eventually-reduced; an override of the analysis) and
    `cleave.causal = #cleave.causal<offset = c>` (the input holds the causal 0/1 mask of its last two
    dims, `keep[i, j] = j <= i + c`: its value is not read, see `causal_inputs`).
    The optional `bindings` attribute maps symbols to the sizes they stand for.
    """

    name = "tgraph.graph"

    body = region_def("single_block")
    sym_name = prop_def(SymbolNameConstraint())
    function_type = prop_def(FunctionType)
    arg_attrs = opt_prop_def(ArrayAttr[DictionaryAttr])
    res_attrs = opt_prop_def(ArrayAttr[DictionaryAttr])
    bindings = opt_attr_def(DictionaryAttr)

    traits = traits_def(IsolatedFromAbove(), SymbolOpInterface(), GraphCallableInterface())

    ANNOTATIONS: ClassVar[tuple[str, ...]] = ("dynamic", "reduced")

    def __init__(
        self,
        name: str,
        inputs: Sequence[TensorType],
        outputs: Sequence[TensorType],
        region: Region | None = None,
        *,
        arg_attrs: ArrayAttr[DictionaryAttr] | None = None,
        res_attrs: ArrayAttr[DictionaryAttr] | None = None,
        bindings: DictionaryAttr | None = None,
    ) -> None:
        if region is None:
            region = Region(Block(arg_types=inputs))
        super().__init__(
            properties={
                "sym_name": StringAttr(name),
                "function_type": FunctionType.from_lists(inputs, outputs),
                "arg_attrs": arg_attrs,
                "res_attrs": res_attrs,
            },
            attributes={"bindings": bindings},
            regions=[region],
        )

    @property
    def block(self) -> Block:
        return self.body.block

    @property
    def inputs(self) -> tuple[SSAValue, ...]:
        return self.body.block.args

    @property
    def output_op(self) -> OutputOp:
        term = self.body.block.last_op
        assert isinstance(term, OutputOp)
        return term

    def values(self) -> list[SSAValue]:
        """Every value of the graph: its inputs, then each op's results in order."""
        return [*self.body.block.args, *(r for op in self.body.block.ops for r in op.results)]

    def input_names(self) -> list[str]:
        return [a.name_hint or f"arg{i}" for i, a in enumerate(self.body.block.args)]

    def input_annotation(self, index: int, key: str) -> tuple[int, ...]:
        """The dims listed under `key` ('dynamic' or 'reduced') for input `index`."""
        if self.arg_attrs is None:
            return ()
        value = self.arg_attrs.data[index].data.get(key)
        if value is None:
            return ()
        return tuple(cast(DenseArrayBase, value).get_values())

    def causal_inputs(self) -> dict[int, int]:
        """Input index -> offset, for the inputs that carry a `cleave.causal` promise."""
        if self.arg_attrs is None:
            return {}
        out = {}
        for i, attrs in enumerate(self.arg_attrs.data):
            attr = attrs.data.get("cleave.causal")
            if isinstance(attr, CausalMaskAttr):
                out[i] = attr.value
        return out

    def binding_values(self) -> dict[str, int]:
        if self.bindings is None:
            return {}
        return {k: cast(IntegerAttr, v).value.data for k, v in self.bindings.data.items()}

    def verify_(self) -> None:
        check_metadata(self)
        block = self.body.block
        if tuple(block.arg_types) != self.function_type.inputs.data:
            raise VerifyException(
                f"tgraph.graph @{self.sym_name.data}: block arguments do not match the input types"
            )
        for i, t in enumerate(block.arg_types):
            if not isinstance(t, TensorType):
                raise VerifyException(
                    f"tgraph.graph @{self.sym_name.data}: input {i} must be a !tgraph.tensor, got {t}"
                )
        if self.arg_attrs is not None:
            if len(self.arg_attrs.data) != len(block.args):
                raise VerifyException(
                    f"tgraph.graph @{self.sym_name.data}: {len(self.arg_attrs.data)} argument "
                    f"attribute dictionaries for {len(block.args)} inputs"
                )
            for i, (arg, attrs) in enumerate(zip(block.args, self.arg_attrs.data)):
                for key in self.ANNOTATIONS:
                    value = attrs.data.get(key)
                    if value is None:
                        continue
                    if not isinstance(value, DenseArrayBase):
                        raise VerifyException(
                            f"tgraph.graph @{self.sym_name.data}: input {i} '{key}' must be "
                            f"array<i64: ...>, got {value}"
                        )
                    for d in value.get_values():
                        if not 0 <= int(d) < tensor_type(arg).rank:
                            raise VerifyException(
                                f"tgraph.graph @{self.sym_name.data}: input {i} '{key}' names dim "
                                f"{d}, but the input has rank {tensor_type(arg).rank}"
                            )
                self._verify_causal(i, arg, attrs)
        if self.bindings is not None:
            for k, v in self.bindings.data.items():
                if not isinstance(v, IntegerAttr) or v.value.data < 1:
                    raise VerifyException(
                        f"tgraph.graph @{self.sym_name.data}: binding {k} must be a positive integer"
                    )
        term = block.last_op
        if not isinstance(term, OutputOp):
            raise VerifyException(
                f"tgraph.graph @{self.sym_name.data}: body must end with tgraph.output"
            )
        got = tuple(o.type for o in term.outputs)
        if got != self.function_type.outputs.data:
            raise VerifyException(
                f"tgraph.graph @{self.sym_name.data}: tgraph.output returns "
                f"({', '.join(map(str, got))}) but the graph declares "
                f"({', '.join(map(str, self.function_type.outputs.data))})"
            )

    def _verify_causal(self, i: int, arg: SSAValue, attrs: DictionaryAttr) -> None:
        value = attrs.data.get("cleave.causal")
        if value is None:
            return
        where = f"tgraph.graph @{self.sym_name.data}: input {i} 'cleave.causal'"
        t = tensor_type(arg)
        if not isinstance(value, CausalMaskAttr):
            raise VerifyException(f"{where} must be #cleave.causal<offset = N>, got {value}")
        if t.rank < 2:
            raise VerifyException(f"{where} needs a query and a key dim, but the input has rank {t.rank}")
        if not isinstance(t.element_type, (Float16Type, BFloat16Type, Float32Type, Float64Type)):
            raise VerifyException(f"{where} must be a float tensor (0/1), got {t.element_type}")

    @classmethod
    def parse(cls, parser: Parser) -> GraphOp:
        name, inputs, outputs, region, extra, arg_attrs, res_attrs = parse_func_op_like(
            parser, reserved_attr_names=("sym_name", "function_type")
        )
        attrs = dict(extra.data) if extra is not None else {}
        bindings = attrs.pop("bindings", None)
        if bindings is not None and not isinstance(bindings, DictionaryAttr):
            parser.raise_error("tgraph.graph: 'bindings' must be a dictionary of integers")
        op = GraphOp(
            name,
            cast(Sequence[TensorType], inputs),
            cast(Sequence[TensorType], outputs),
            region,
            arg_attrs=arg_attrs,
            res_attrs=res_attrs,
            bindings=bindings,
        )
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        print_func_op_like(
            printer,
            self.sym_name,
            self.function_type,
            self.body,
            self.attributes,
            arg_attrs=self.arg_attrs,
            res_attrs=self.res_attrs,
            reserved_attr_names=("sym_name", "function_type", "arg_attrs", "res_attrs"),
        )


@irdl_op_definition
class OutputOp(IRDLOperation):
    """Terminator of `tgraph.graph`: the graph's outputs."""

    name = "tgraph.output"

    outputs = var_operand_def(TensorType)

    traits = traits_def(IsTerminator(), HasParent(GraphOp), Pure())

    assembly_format = "$outputs attr-dict `:` type($outputs)"

    def __init__(self, outputs: Sequence[SSAValue | Operation]) -> None:
        super().__init__(operands=[outputs])


# --------------------------------------------------------------------------- matmul


@irdl_op_definition
class MatmulOp(IRDLOperation):
    """Batched matmul `[.., M, K] x [.., K, N] -> [.., M, N]`, leading dims broadcast.

    With `transpose_b` the right operand is `[.., N, K]` (so `Q K^T` needs no copy).
    The result element type may differ from the operands' (e.g. f16 in, f32 out).
    """

    name = "tgraph.matmul"

    KEEPS_RELATIVE_ERROR: ClassVar[bool] = True  # sums of products (see `keeps_relative_error`)

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    transpose_b = opt_prop_def(UnitAttr)
    result = result_def(TensorType)

    traits = traits_def(Pure())

    assembly_format = (
        "$lhs `,` $rhs (`transpose_b` $transpose_b^)? attr-dict "
        "`:` type($lhs) `,` type($rhs) `->` type($result)"
    )

    def __init__(
        self,
        lhs: SSAValue | Operation,
        rhs: SSAValue | Operation,
        result_type: TensorType,
        transpose_b: bool = False,
    ) -> None:
        super().__init__(
            operands=[lhs, rhs],
            result_types=[result_type],
            properties={"transpose_b": UnitAttr() if transpose_b else None},
        )

    @staticmethod
    def infer_shape(
        lhs: Sequence[Dim], rhs: Sequence[Dim], transpose_b: bool
    ) -> tuple[Dim, ...]:
        if len(lhs) < 2 or len(rhs) < 2:
            raise VerifyException(
                f"tgraph.matmul: operands need rank >= 2, got {_fmt(lhs)} and {_fmt(rhs)}"
            )
        m, k = lhs[-2], lhs[-1]
        if transpose_b:
            n, k2 = rhs[-2], rhs[-1]
        else:
            k2, n = rhs[-2], rhs[-1]
        if k != k2:
            raise VerifyException(
                f"tgraph.matmul: contracting dims differ: {dim_str(k)} vs {dim_str(k2)}"
            )
        batch = broadcast_shapes(lhs[:-2], rhs[:-2], "tgraph.matmul batch dims")
        return (*batch, m, n)

    def verify_(self) -> None:
        lt, rt, res = tensor_type(self.lhs), tensor_type(self.rhs), tensor_type(self.result)
        _check_same_element(self, lt, rt)
        _check_result(self, self.infer_shape(lt.shape, rt.shape, self.transpose_b is not None), res)


# --------------------------------------------------------------------------- elementwise

_INC, _DEC = Monotone.INCREASING, Monotone.DECREASING
_t = torch_module


class ElementwiseOp(IRDLOperation):
    """An op whose result element at each position depends only on the operand elements at that
    (size-1 broadcast) position. Its meaning is `semantics()` (see `dialects/semantics.py`)."""

    SEMANTICS: ClassVar[Semantics]

    @classmethod
    def semantics_of(cls, properties: Mapping[str, Attribute]) -> Semantics:
        """The semantics of an op of this class with these properties."""
        return cls.SEMANTICS

    def semantics(self) -> Semantics:
        return type(self).semantics_of(self.properties)

    @classmethod
    def short_name(cls) -> str:
        """The op's short name (`exp` for `tgraph.exp`)."""
        return cls.name.split(".")[1]


class UnaryOp(ElementwiseOp):
    """Elementwise `f(x)`, same shape and element type."""

    T: ClassVar = VarConstraint("T", base(TensorType))
    input = operand_def(T)
    result = result_def(T)

    traits = traits_def(Pure())

    assembly_format = "$input attr-dict `:` type($input)"

    def __init__(self, input: SSAValue | Operation) -> None:
        value = SSAValue.get(input)
        super().__init__(operands=[value], result_types=[value.type])


def _np_silu(x: np.ndarray) -> np.ndarray:
    return x / (1.0 + np.exp(-x))


def _np_sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


LOG2E = 1.4426950408889634


def tl_exp(b: ElementBuilder, x: SSAValue) -> SSAValue:
    """exp(x) as exp2(x * log2 e): `exp2f` is one fast instruction on the GPU, `expf` a long routine."""
    return b.add(_xmath().Exp2Op(b.binary(_arith().MulfOp, x, b.const(LOG2E, x.type))))


def _tl_sigmoid_denominator(b: ElementBuilder, x: SSAValue) -> SSAValue:
    """1 + exp(-x)"""
    return b.binary(_arith().AddfOp, b.const(1.0, x.type), tl_exp(b, b.add(_arith().NegfOp(x))))


@irdl_op_definition
class ExpOp(UnaryOp):
    name = "tgraph.exp"
    SEMANTICS: ClassVar[Semantics] = Semantics(
        numpy=np.exp,
        torch=lambda x: _t().exp(x),
        tilelang=tl_exp,
        abstract=lambda ax, x: ax.fn("exp", x),
        algebra=Algebra(monotone=_INC, nonnegative=True),
    )


@irdl_op_definition
class Exp2Op(UnaryOp):
    name = "tgraph.exp2"
    SEMANTICS: ClassVar[Semantics] = Semantics(
        numpy=np.exp2,
        torch=lambda x: _t().exp2(x),
        tilelang=lambda b, x: b.add(_xmath().Exp2Op(x)),
        abstract=lambda ax, x: ax.fn("exp2", x),
        algebra=Algebra(monotone=_INC, nonnegative=True),
    )


@irdl_op_definition
class LogOp(UnaryOp):
    """Natural logarithm (finite for positive inputs)."""

    name = "tgraph.log"
    SEMANTICS: ClassVar[Semantics] = Semantics(
        numpy=np.log,
        torch=lambda x: _t().log(x),
        tilelang=lambda b, x: b.add(_xmath().LogOp(x)),
        abstract=lambda ax, x: ax.fn("log", x),
        algebra=Algebra(monotone=_INC, domain=Domain.POSITIVE),
    )


@irdl_op_definition
class SqrtOp(UnaryOp):
    name = "tgraph.sqrt"
    SEMANTICS: ClassVar[Semantics] = Semantics(
        numpy=np.sqrt,
        torch=lambda x: _t().sqrt(x),
        tilelang=lambda b, x: b.add(_xmath().SqrtOp(x)),
        abstract=lambda ax, x: ax.fn("sqrt", x),
        algebra=Algebra(monotone=_INC, homogeneous=Fraction(1, 2), nonnegative=True, domain=Domain.POSITIVE),
    )


@irdl_op_definition
class RsqrtOp(UnaryOp):
    name = "tgraph.rsqrt"
    SEMANTICS: ClassVar[Semantics] = Semantics(
        numpy=lambda x: 1.0 / np.sqrt(x),
        torch=lambda x: _t().rsqrt(x),
        tilelang=lambda b, x: b.add(_xmath().RsqrtOp(x)),
        abstract=lambda ax, x: ax.inv(ax.fn("sqrt", x)),
        algebra=Algebra(monotone=_DEC, homogeneous=Fraction(-1, 2), nonnegative=True, domain=Domain.POSITIVE),
    )


@irdl_op_definition
class NegOp(UnaryOp):
    name = "tgraph.neg"
    SEMANTICS: ClassVar[Semantics] = Semantics(
        numpy=np.negative,
        torch=lambda x: _t().neg(x),
        tilelang=lambda b, x: b.add(_arith().NegfOp(x)),
        abstract=lambda ax, x: x,
        algebra=Algebra(monotone=_DEC, odd=True, homogeneous=Fraction(1), linear=True, relative=True),
    )


@irdl_op_definition
class AbsOp(UnaryOp):
    name = "tgraph.abs"
    SEMANTICS: ClassVar[Semantics] = Semantics(
        numpy=np.abs,
        torch=lambda x: _t().abs(x),
        tilelang=lambda b, x: b.add(_xmath().AbsFOp(x)),
        abstract=lambda ax, x: ax.fn("abs", x),
        algebra=Algebra(even=True, homogeneous=Fraction(1), nonnegative=True),
    )


@irdl_op_definition
class SiluOp(UnaryOp):
    """x * sigmoid(x)."""

    name = "tgraph.silu"
    SEMANTICS: ClassVar[Semantics] = Semantics(
        numpy=_np_silu,
        torch=lambda x: _t().nn.functional.silu(x),
        tilelang=lambda b, x: b.binary(_arith().DivfOp, x, _tl_sigmoid_denominator(b, x)),
        abstract=lambda ax, x: ax.fn("silu", x),
    )


@irdl_op_definition
class SigmoidOp(UnaryOp):
    name = "tgraph.sigmoid"
    SEMANTICS: ClassVar[Semantics] = Semantics(
        numpy=_np_sigmoid,
        torch=lambda x: _t().sigmoid(x),
        tilelang=lambda b, x: b.binary(_arith().DivfOp, b.const(1.0, x.type), _tl_sigmoid_denominator(b, x)),
        abstract=lambda ax, x: ax.fn("sigmoid", x),
        algebra=Algebra(monotone=_INC, nonnegative=True),
    )


@irdl_op_definition
class TanhOp(UnaryOp):
    name = "tgraph.tanh"
    SEMANTICS: ClassVar[Semantics] = Semantics(
        numpy=np.tanh,
        torch=lambda x: _t().tanh(x),
        tilelang=lambda b, x: b.add(_xmath().TanhOp(x)),
        abstract=lambda ax, x: ax.fn("tanh", x),
        algebra=Algebra(monotone=_INC, odd=True),
    )


@irdl_op_definition
class SquareOp(UnaryOp):
    name = "tgraph.square"
    SEMANTICS: ClassVar[Semantics] = Semantics(
        numpy=np.square,
        torch=lambda x: _t().square(x),
        tilelang=lambda b, x: b.binary(_arith().MulfOp, x, x),
        abstract=lambda ax, x: ax.square(x),
        algebra=Algebra(even=True, homogeneous=Fraction(2), nonnegative=True),
    )


@irdl_op_definition
class ReciprocalOp(UnaryOp):
    name = "tgraph.reciprocal"
    SEMANTICS: ClassVar[Semantics] = Semantics(
        numpy=np.reciprocal,
        torch=lambda x: _t().reciprocal(x),
        tilelang=lambda b, x: b.binary(_arith().DivfOp, b.const(1.0, x.type), x),
        abstract=lambda ax, x: ax.inv(x),
        algebra=Algebra(odd=True, homogeneous=Fraction(-1), domain=Domain.NONZERO),
    )


class GeluApproximate(StrEnum):
    """`erf`: x/2 (1 + erf(x/sqrt 2)) (torch's default); `tanh`: the tanh approximation."""

    ERF = auto()
    TANH = auto()


@irdl_attr_definition
class GeluApproximateAttr(EnumAttribute[GeluApproximate], SpacedOpaqueSyntaxAttribute):
    name = "tgraph.gelu_approximate"


def _np_gelu_tanh(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + np.tanh(SQRT_2_OVER_PI * (x + GELU_TANH_C * x * x * x)))


def _np_gelu_erf(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + np_erf(x / np.sqrt(2.0)))


def _tl_gelu(b: ElementBuilder, x: SSAValue, approximate: GeluApproximate) -> SSAValue:
    if approximate == GeluApproximate.TANH:
        cube = b.binary(_arith().MulfOp, b.binary(_arith().MulfOp, x, x), x)
        inner = b.binary(_arith().AddfOp, x, b.binary(_arith().MulfOp, b.const(GELU_TANH_C, x.type), cube))
        g = b.add(_xmath().TanhOp(b.binary(_arith().MulfOp, b.const(SQRT_2_OVER_PI, x.type), inner)))
    else:
        g = b.add(_xmath().ErfOp(b.binary(_arith().MulfOp, x, b.const(1.0 / math.sqrt(2.0), x.type))))
    half_x = b.binary(_arith().MulfOp, b.const(0.5, x.type), x)
    return b.binary(_arith().MulfOp, half_x, b.binary(_arith().AddfOp, b.const(1.0, x.type), g))


_GELU = {
    a: Semantics(
        numpy=_np_gelu_tanh if a == GeluApproximate.TANH else _np_gelu_erf,
        torch=lambda x, a=a: _t().nn.functional.gelu(x, approximate="tanh" if a == GeluApproximate.TANH else "none"),
        tilelang=lambda b, x, a=a: _tl_gelu(b, x, a),
        abstract=lambda ax, x, a=a: ax.fn(f"gelu_{a.value}", x),
    )
    for a in GeluApproximate
}


@irdl_op_definition
class GeluOp(UnaryOp):
    """`tgraph.gelu erf %x : T` or `tgraph.gelu tanh %x : T` (torch's approximate='none'/'tanh')."""

    name = "tgraph.gelu"

    approximate = prop_def(GeluApproximateAttr)

    assembly_format = "$approximate $input attr-dict `:` type($input)"

    SEMANTICS: ClassVar[Semantics] = _GELU[GeluApproximate.ERF]

    def __init__(self, input: SSAValue | Operation, approximate: GeluApproximate | str = GeluApproximate.ERF) -> None:
        value = SSAValue.get(input)
        super(UnaryOp, self).__init__(
            operands=[value],
            result_types=[value.type],
            properties={"approximate": GeluApproximateAttr(GeluApproximate(approximate))},
        )

    @classmethod
    def semantics_of(cls, properties: Mapping[str, Attribute]) -> Semantics:
        return _GELU[cast(GeluApproximateAttr, properties["approximate"]).data]


class BinaryOp(ElementwiseOp):
    """Elementwise `f(a, b)` with size-1 broadcasting between equal-rank operands."""

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)

    traits = traits_def(Pure())

    assembly_format = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)"

    def __init__(self, lhs: SSAValue | Operation, rhs: SSAValue | Operation) -> None:
        lt, rt = tensor_type(SSAValue.get(lhs)), tensor_type(SSAValue.get(rhs))
        shape = broadcast_shapes(lt.shape, rt.shape, self.name)
        super().__init__(operands=[lhs, rhs], result_types=[lt.with_shape(shape)])

    def verify_(self) -> None:
        lt, rt, res = tensor_type(self.lhs), tensor_type(self.rhs), tensor_type(self.result)
        _check_same_element(self, lt, rt, res)
        _check_result(self, broadcast_shapes(lt.shape, rt.shape, self.name), res)


@irdl_op_definition
class AddOp(BinaryOp):
    name = "tgraph.add"
    SEMANTICS: ClassVar[Semantics] = Semantics(
        numpy=np.add,
        torch=lambda a, b: _t().add(a, b),
        tilelang=lambda s, a, b: s.binary(_arith().AddfOp, a, b),
        abstract=lambda ax, a, b: ax.add(a, b),
        algebra=Algebra(
            monotone=(_INC, _INC), linear=True, commutative=True, associative=True, identity=0.0,
            distributes_over=frozenset({"tgraph.max", "tgraph.min"}), relative=True,
        ),
    )


@irdl_op_definition
class SubOp(BinaryOp):
    name = "tgraph.sub"
    SEMANTICS: ClassVar[Semantics] = Semantics(
        numpy=np.subtract,
        torch=lambda a, b: _t().sub(a, b),
        tilelang=lambda s, a, b: s.binary(_arith().SubfOp, a, b),
        abstract=lambda ax, a, b: ax.add(a, b),
        algebra=Algebra(monotone=(_INC, _DEC), linear=True),
    )


@irdl_op_definition
class MulOp(BinaryOp):
    name = "tgraph.mul"
    SEMANTICS: ClassVar[Semantics] = Semantics(
        numpy=np.multiply,
        torch=lambda a, b: _t().mul(a, b),
        tilelang=lambda s, a, b: s.binary(_arith().MulfOp, a, b),
        abstract=lambda ax, a, b: ax.mul(a, b),
        algebra=Algebra(
            commutative=True, associative=True, identity=1.0,
            distributes_over=frozenset({"tgraph.add", "tgraph.sub"}), relative=True, linear_in=(True, True),
        ),
    )


@irdl_op_definition
class DivOp(BinaryOp):
    name = "tgraph.div"
    SEMANTICS: ClassVar[Semantics] = Semantics(
        numpy=np.divide,
        torch=lambda a, b: _t().div(a, b),
        tilelang=lambda s, a, b: s.binary(_arith().DivfOp, a, b),
        abstract=lambda ax, a, b: ax.mul(a, ax.inv(b)),
        algebra=Algebra(relative=True, linear_in=(True, False)),
    )


@irdl_op_definition
class MaxOp(BinaryOp):
    name = "tgraph.max"
    SEMANTICS: ClassVar[Semantics] = Semantics(
        numpy=np.maximum,
        torch=lambda a, b: _t().maximum(a, b),
        tilelang=lambda s, a, b: s.binary(_arith().MaximumfOp, a, b),
        abstract=lambda ax, a, b: ax.maximum(a, b),
        algebra=Algebra(
            monotone=(_INC, _INC), commutative=True, associative=True, idempotent=True,
            identity=-math.inf, distributes_over=frozenset({"tgraph.min"}),
        ),
    )


@irdl_op_definition
class MinOp(BinaryOp):
    name = "tgraph.min"
    SEMANTICS: ClassVar[Semantics] = Semantics(
        numpy=np.minimum,
        torch=lambda a, b: _t().minimum(a, b),
        tilelang=lambda s, a, b: s.binary(_arith().MinimumfOp, a, b),
        abstract=lambda ax, a, b: ax.maximum(a, b),  # a lattice op like max (the form forgets which)
        algebra=Algebra(
            monotone=(_INC, _INC), commutative=True, associative=True, idempotent=True,
            identity=math.inf, distributes_over=frozenset({"tgraph.max"}),
        ),
    )


class ScalarKind(StrEnum):
    """`tgraph.scalar` operations: `x op c`, or `c op x` for the `r` forms."""

    ADD = auto()
    SUB = auto()
    RSUB = auto()
    MUL = auto()
    DIV = auto()
    RDIV = auto()
    MAX = auto()
    MIN = auto()


@irdl_attr_definition
class ScalarKindAttr(EnumAttribute[ScalarKind], SpacedOpaqueSyntaxAttribute):
    name = "tgraph.scalar_kind"


_SCALAR_BINARY: dict[ScalarKind, tuple[str, bool]] = {
    ScalarKind.ADD: ("tgraph.add", False),
    ScalarKind.SUB: ("tgraph.sub", False),
    ScalarKind.RSUB: ("tgraph.sub", True),
    ScalarKind.MUL: ("tgraph.mul", False),
    ScalarKind.DIV: ("tgraph.div", False),
    ScalarKind.RDIV: ("tgraph.div", True),
    ScalarKind.MAX: ("tgraph.max", False),
    ScalarKind.MIN: ("tgraph.min", False),
}


def _scalar_algebra(kind: ScalarKind, c: float) -> Algebra:
    """Properties of x -> `kind`(x, c) as a unary function of x."""
    sign = _INC if c > 0 else _DEC if c < 0 else None
    if kind in (ScalarKind.ADD, ScalarKind.SUB, ScalarKind.MAX, ScalarKind.MIN):
        nonneg = kind == ScalarKind.MAX and c >= 0
        return Algebra(monotone=_INC, nonnegative=nonneg)
    if kind == ScalarKind.RSUB:
        return Algebra(monotone=_DEC)
    if kind in (ScalarKind.MUL, ScalarKind.DIV):
        return Algebra(monotone=sign, odd=True, homogeneous=Fraction(1), linear=True, relative=True)
    return Algebra(odd=True, homogeneous=Fraction(-1), domain=Domain.NONZERO)  # RDIV: c / x


@functools.cache
def scalar_semantics(kind: ScalarKind, c: float) -> Semantics:
    """x -> kind(x, c), derived from the binary op's semantics."""
    op = BINARY_BY_NAME[_SCALAR_BINARY[kind][0]].SEMANTICS
    if _SCALAR_BINARY[kind][1]:
        return Semantics(
            numpy=lambda x: op.numpy(c, x),
            torch=lambda x: op.torch(_t().as_tensor(c, dtype=x.dtype, device=x.device), x),
            tilelang=lambda b, x: op.tilelang(b, b.const(c, x.type), x),
            abstract=(lambda ax, x: ax.inv(x)) if kind == ScalarKind.RDIV else (lambda ax, x: x),
            algebra=_scalar_algebra(kind, c),
        )
    return Semantics(
        numpy=lambda x: op.numpy(x, c),
        torch=lambda x: op.torch(x, _t().as_tensor(c, dtype=x.dtype, device=x.device)),
        tilelang=lambda b, x: op.tilelang(b, x, b.const(c, x.type)),
        abstract=lambda ax, x: x,  # constants are forgotten
        algebra=_scalar_algebra(kind, c),
    )


@irdl_custom_directive
class F64Constant(CustomDirective):
    """An f64 constant as MLIR writes it: a float literal, or the hexadecimal bit pattern that inf and
    NaN print as (`0xFFF0000000000000` is -inf). xDSL prints those, but its float parsing reads no
    hexadecimal, so a graph holding -inf (a `masked_fill(m, -inf)`) did not read back."""

    constant: AttributeVariable

    def parse(self, parser: Parser, state: ParsingState) -> None:
        token = parser._current_token  # noqa: SLF001 - a hexadecimal literal is an integer token
        if token.text.lower().startswith("0x"):
            bits = parser.parse_integer(allow_boolean=False, allow_negative=False)
            if bits >= 1 << 64:
                parser.raise_error("hexadecimal float constant has more than 64 bits", token.span)
            self.constant.set(state, FloatAttr(struct.unpack("<d", struct.pack("<Q", bits))[0], Float64Type()))
        else:
            self.constant.set(state, FloatAttr(parser.parse_float(), Float64Type()))

    def print(self, printer: Printer, state: PrintingState, op: IRDLOperation) -> None:
        state.print_whitespace(printer)
        attr = cast(FloatAttr, self.constant.get(op))
        printer.print_float(attr.value.data, Float64Type())


@irdl_op_definition
class ScalarOp(ElementwiseOp):
    """An elementwise op with a constant: `tgraph.scalar max %x, 0.0 : T` is max(x, 0).

    `rsub` and `rdiv` take the constant first: `tgraph.scalar rsub %x, 1.0` is 1 - x.
    """

    name = "tgraph.scalar"

    T: ClassVar = VarConstraint("T", base(TensorType))
    kind = prop_def(ScalarKindAttr)
    input = operand_def(T)
    constant = prop_def(FloatAttr[Float64Type])
    result = result_def(T)

    traits = traits_def(Pure())

    assembly_format = "$kind $input `,` custom<F64Constant>($constant) attr-dict `:` type($input)"
    custom_directives = (F64Constant,)

    def __init__(self, kind: ScalarKind | str, input: SSAValue | Operation, constant: float) -> None:
        value = SSAValue.get(input)
        super().__init__(
            operands=[value],
            result_types=[value.type],
            properties={"kind": ScalarKindAttr(ScalarKind(kind)), "constant": FloatAttr(constant, Float64Type())},
        )

    @property
    def scalar_kind(self) -> ScalarKind:
        return self.kind.data

    @property
    def value(self) -> float:
        return float(self.constant.value.data)

    @classmethod
    def semantics_of(cls, properties: Mapping[str, Attribute]) -> Semantics:
        kind = cast(ScalarKindAttr, properties["kind"]).data
        return scalar_semantics(kind, float(cast(FloatAttr, properties["constant"]).value.data))


@irdl_op_definition
class ScaleOp(ElementwiseOp):
    """Multiply every element by a constant: `tgraph.scale %x, 0.088 : T` (= `tgraph.scalar mul`)."""

    name = "tgraph.scale"

    T: ClassVar = VarConstraint("T", base(TensorType))
    input = operand_def(T)
    factor = prop_def(FloatAttr[Float64Type])
    result = result_def(T)

    traits = traits_def(Pure())

    assembly_format = "$input `,` custom<F64Constant>($factor) attr-dict `:` type($input)"
    custom_directives = (F64Constant,)

    def __init__(self, input: SSAValue | Operation, factor: float) -> None:
        value = SSAValue.get(input)
        super().__init__(
            operands=[value],
            result_types=[value.type],
            properties={"factor": FloatAttr(factor, Float64Type())},
        )

    @property
    def value(self) -> float:
        return float(self.factor.value.data)

    @classmethod
    def semantics_of(cls, properties: Mapping[str, Attribute]) -> Semantics:
        return scalar_semantics(ScalarKind.MUL, float(cast(FloatAttr, properties["factor"]).value.data))


@irdl_op_definition
class CastOp(ElementwiseOp):
    """Convert to another element type: `tgraph.cast %x : !tgraph.tensor<[..], f32> -> !tgraph.tensor<[..], f16>`.

    The value is unchanged up to the rounding of the target type (none in the float64 reference).
    """

    name = "tgraph.cast"

    input = operand_def(TensorType)
    result = result_def(TensorType)

    traits = traits_def(Pure())

    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    SEMANTICS: ClassVar[Semantics] = Semantics(
        numpy=lambda x: x,  # the interpreter's `declared` mode rounds every result to its type
        torch=lambda x: x,
        tilelang=lambda b, x: x,  # the store into the result's buffer converts
        abstract=lambda ax, x: x,
        algebra=Algebra(monotone=_INC, odd=True, relative=True),
    )

    def __init__(self, input: SSAValue | Operation, element_type: Attribute) -> None:
        value = SSAValue.get(input)
        super().__init__(operands=[value], result_types=[tensor_type(value).with_element_type(element_type)])

    def verify_(self) -> None:
        t, res = tensor_type(self.input), tensor_type(self.result)
        if t.shape != res.shape:
            raise VerifyException(
                f"tgraph.cast changes the element type only: shape {_fmt(t.shape)} -> {_fmt(res.shape)}"
            )


def _tl_select(b: ElementBuilder, c: SSAValue, x: SSAValue, y: SSAValue) -> SSAValue:
    nonzero = b.add(_arith().CmpfOp(c, b.const(0.0, c.type), "une"))
    if x.type != y.type:  # a loaded f16/bf16 tile against an fp32 fragment: compute in fp32
        x, y = b.cast(x, Float32Type()), b.cast(y, Float32Type())
    return b.add(_arith().SelectOp(nonzero, x, y))


@irdl_op_definition
class SelectOp(ElementwiseOp):
    """`select(mask, a, b)`: a where mask is nonzero, else b, with size-1 broadcasting of all three.

    The mask is a float tensor (e.g. a causal mask of 0 and 1); a and b share the result's element
    type. `tgraph.select %mask, %a, %b : Tm, Ta, Tb -> T`.
    """

    name = "tgraph.select"

    mask = operand_def(TensorType)
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)

    traits = traits_def(Pure())

    assembly_format = (
        "$mask `,` $lhs `,` $rhs attr-dict `:` type($mask) `,` type($lhs) `,` type($rhs) `->` type($result)"
    )

    SEMANTICS: ClassVar[Semantics] = Semantics(
        numpy=lambda c, a, b: np.where(c != 0, a, b),
        torch=lambda c, a, b: _t().where(c != 0, a, b),
        tilelang=_tl_select,
        abstract=lambda ax, c, a, b: ax.select(c, a, b),
        algebra=Algebra(condition=0),
    )

    def __init__(self, mask: SSAValue | Operation, lhs: SSAValue | Operation, rhs: SSAValue | Operation) -> None:
        mt, lt, rt = (tensor_type(SSAValue.get(v)) for v in (mask, lhs, rhs))
        shape = broadcast_shapes(broadcast_shapes(mt.shape, lt.shape, self.name), rt.shape, self.name)
        super().__init__(operands=[mask, lhs, rhs], result_types=[lt.with_shape(shape)])

    def verify_(self) -> None:
        mt, lt, rt, res = (tensor_type(v) for v in (self.mask, self.lhs, self.rhs, self.result))
        _check_same_element(self, lt, rt, res)
        shape = broadcast_shapes(broadcast_shapes(mt.shape, lt.shape, self.name), rt.shape, self.name)
        _check_result(self, shape, res)


# --------------------------------------------------------------------------- shape ops


class ReduceKind(StrEnum):
    SUM = auto()
    MAX = auto()
    MEAN = auto()


@irdl_attr_definition
class ReduceKindAttr(EnumAttribute[ReduceKind], SpacedOpaqueSyntaxAttribute):
    name = "tgraph.reduce_kind"


@irdl_op_definition
class ReduceOp(IRDLOperation):
    """`reduce sum|max|mean` over one dim, kept as size 1 (`REDUCTIONS` says what each computes)."""

    name = "tgraph.reduce"

    REDUCTIONS: ClassVar[dict[ReduceKind, Reduction]] = {
        ReduceKind.SUM: Reduction(
            numpy=lambda x, axis: np.sum(x, axis=axis, keepdims=True),
            torch=lambda x, axis: x.sum(axis, keepdim=True),
            abstract=lambda ax, x, size: ax.total(x, size),
            combine="tgraph.add",
            fill=0.0,
            linear=True,
            relative=True,
        ),
        ReduceKind.MAX: Reduction(
            numpy=lambda x, axis: np.max(x, axis=axis, keepdims=True),
            torch=lambda x, axis: x.amax(axis, keepdim=True),
            abstract=lambda ax, x, size: ax.fn("max", x),
            combine="tgraph.max",
            fill=-math.inf,
        ),
        ReduceKind.MEAN: Reduction(
            numpy=lambda x, axis: np.mean(x, axis=axis, keepdims=True),
            torch=lambda x, axis: x.mean(axis, keepdim=True),
            abstract=lambda ax, x, size: ax.total(x, size),  # a sum times a constant
            linear=True,
        ),
    }

    kind = prop_def(ReduceKindAttr)
    dim = prop_def(IntegerAttr[i64])
    input = operand_def(TensorType)
    result = result_def(TensorType)

    traits = traits_def(Pure())

    assembly_format = (
        "$kind $input `dim` $dim attr-dict `:` type($input) `->` type($result)"
    )

    def __init__(self, kind: ReduceKind | str, input: SSAValue | Operation, dim: int) -> None:
        value = SSAValue.get(input)
        t = tensor_type(value)
        shape = list(t.shape)
        if 0 <= dim < len(shape):
            shape[dim] = sympy.Integer(1)
        super().__init__(
            operands=[value],
            result_types=[t.with_shape(shape)],
            properties={
                "kind": ReduceKindAttr(ReduceKind(kind)),
                "dim": IntegerAttr(dim, i64),
            },
        )

    @property
    def axis(self) -> int:
        return self.dim.value.data

    def reduction(self) -> Reduction:
        return self.REDUCTIONS[self.kind.data]

    def verify_(self) -> None:
        t, res = tensor_type(self.input), tensor_type(self.result)
        if not 0 <= self.axis < t.rank:
            raise VerifyException(
                f"tgraph.reduce: dim {self.axis} out of range for operand of rank {t.rank}"
            )
        _check_same_element(self, t, res)
        expected = list(t.shape)
        expected[self.axis] = sympy.Integer(1)
        _check_result(self, expected, res)


@irdl_op_definition
class ReshapeOp(IRDLOperation):
    """Add or drop size-1 dims; the non-1 dims keep their order."""

    name = "tgraph.reshape"

    KEEPS_RELATIVE_ERROR: ClassVar[bool] = True  # the elements unchanged

    input = operand_def(TensorType)
    result = result_def(TensorType)

    traits = traits_def(Pure())

    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue | Operation, result_type: TensorType) -> None:
        super().__init__(operands=[input], result_types=[result_type])

    def verify_(self) -> None:
        t, res = tensor_type(self.input), tensor_type(self.result)
        _check_same_element(self, t, res)
        src = [d for d in t.shape if d != 1]
        dst = [d for d in res.shape if d != 1]
        if src != dst:
            raise VerifyException(
                f"tgraph.reshape may only add or drop size-1 dims: {_fmt(t.shape)} -> {_fmt(res.shape)}"
            )


@irdl_op_definition
class SplitOp(IRDLOperation):
    """`split(A: [m, k], dim=1)` into `s` parts: `[s, m, k/s]`.

    The number of parts is the result's leading dim (an integer or a symbol); part `p`
    holds the contiguous slice `[p*k/s, (p+1)*k/s)` of the split dim.
    """

    name = "tgraph.split"

    dim = prop_def(IntegerAttr[i64])
    input = operand_def(TensorType)
    result = result_def(TensorType)

    traits = traits_def(Pure())

    assembly_format = "$input `dim` $dim attr-dict `:` type($input) `->` type($result)"

    def __init__(
        self, input: SSAValue | Operation, dim: int, parts: int | str | sympy.Expr
    ) -> None:
        value = SSAValue.get(input)
        t = tensor_type(value)
        shape = self.infer_shape(t.shape, dim, as_dim(parts))
        super().__init__(
            operands=[value],
            result_types=[t.with_shape(shape)],
            properties={"dim": IntegerAttr(dim, i64)},
        )

    @property
    def axis(self) -> int:
        return self.dim.value.data

    @property
    def parts(self) -> Dim:
        return tensor_type(self.result).shape[0]

    @staticmethod
    def infer_shape(shape: Sequence[Dim], dim: int, parts: Dim) -> tuple[Dim, ...]:
        if not 0 <= dim < len(shape):
            raise VerifyException(
                f"tgraph.split: dim {dim} out of range for operand of rank {len(shape)}"
            )
        k = shape[dim]
        piece = k / parts
        if parts.is_Integer and k.is_Integer and int(k) % int(parts) != 0:
            raise VerifyException(
                f"tgraph.split: {dim_str(parts)} parts do not divide dim {dim} of size {dim_str(k)}"
            )
        if not is_integral(piece):
            raise VerifyException(
                f"tgraph.split: {dim_str(parts)} parts do not divide dim {dim} of size {dim_str(k)}"
            )
        out = list(shape)
        out[dim] = piece
        return (parts, *out)

    def verify_(self) -> None:
        t, res = tensor_type(self.input), tensor_type(self.result)
        _check_same_element(self, t, res)
        if res.rank != t.rank + 1:
            raise VerifyException(
                f"tgraph.split: result must have rank {t.rank + 1} (parts first), got {res.rank}"
            )
        _check_result(self, self.infer_shape(t.shape, self.axis, res.shape[0]), res)


def keeps_relative_error(op: Operation) -> bool:
    """Whether `op`'s result is as relatively precise as its operands (`Algebra.relative`): an
    elementwise op's algebra says so, a reduction's `Reduction`, any other op its class's
    `KEEPS_RELATIVE_ERROR`; unknown (False) for ops that declare nothing."""
    if isinstance(op, ElementwiseOp):
        return op.semantics().algebra.relative
    if isinstance(op, ReduceOp):
        return op.reduction().relative
    return bool(getattr(type(op), "KEEPS_RELATIVE_ERROR", False))


# --------------------------------------------------------------------------- data movement


class StructuralOp(IRDLOperation):
    """An op that moves elements without computing (transpose, slice, concat).

    `numpy(xs, shape)` and `torch(xs, shape)` give its meaning on whole tensors, `shape` being the
    concrete result shape. The scheduler and the search do not handle these ops: `cleave-fold-structural`
    moves them out of the graph (onto its inputs and outputs, `cleave.boundary`) and the pipeline
    refuses a graph that still holds one after it.
    """

    KEEPS_RELATIVE_ERROR: ClassVar[bool] = True  # the elements unchanged

    @abstractmethod
    def numpy(self, xs: Sequence[np.ndarray], shape: Sequence[int]) -> np.ndarray: ...

    @abstractmethod
    def torch(self, xs: Sequence, shape: Sequence[int]):  # noqa: ANN201 - torch is imported lazily
        ...


def _i64_array(values: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, list(values))


@irdl_op_definition
class TransposeOp(StructuralOp):
    """Permute dims: result dim i is input dim `perm[i]`.

    `tgraph.transpose %x perm [0, 2, 1] : !tgraph.tensor<[B, M, N], f16> -> !tgraph.tensor<[B, N, M], f16>`
    """

    name = "tgraph.transpose"

    input = operand_def(TensorType)
    perm = prop_def(DenseArrayBase.constr(i64))
    result = result_def(TensorType)

    traits = traits_def(Pure())

    assembly_format = "$input `perm` $perm attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue | Operation, perm: Sequence[int]) -> None:
        value = SSAValue.get(input)
        t = tensor_type(value)
        shape = [t.shape[p] for p in perm] if sorted(perm) == list(range(t.rank)) else list(t.shape)
        super().__init__(operands=[value], result_types=[t.with_shape(shape)], properties={"perm": _i64_array(perm)})

    @property
    def permutation(self) -> tuple[int, ...]:
        return tuple(int(p) for p in self.perm.get_values())

    def verify_(self) -> None:
        t, res = tensor_type(self.input), tensor_type(self.result)
        perm = self.permutation
        if sorted(perm) != list(range(t.rank)):
            raise VerifyException(
                f"tgraph.transpose: perm [{', '.join(map(str, perm))}] is not a permutation of the {t.rank} dims"
            )
        _check_same_element(self, t, res)
        _check_result(self, [t.shape[p] for p in perm], res)

    def numpy(self, xs: Sequence[np.ndarray], shape: Sequence[int]) -> np.ndarray:
        return np.transpose(xs[0], self.permutation)

    def torch(self, xs: Sequence, shape: Sequence[int]):  # noqa: ANN201
        return xs[0].permute(*self.permutation)


@irdl_op_definition
class SliceOp(StructuralOp):
    """Elements `[start, start + n)` of one dim, n the result's size there (contiguous, step 1).

    `tgraph.slice %x dim 1 start 64 : !tgraph.tensor<[4, 128], f16> -> !tgraph.tensor<[4, 64], f16>`
    """

    name = "tgraph.slice"

    input = operand_def(TensorType)
    dim = prop_def(IntegerAttr[i64])
    start = prop_def(IntegerAttr[i64])
    result = result_def(TensorType)

    traits = traits_def(Pure())

    assembly_format = "$input `dim` $dim `start` $start attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue | Operation, dim: int, start: int, size: int | str | sympy.Expr) -> None:
        value = SSAValue.get(input)
        t = tensor_type(value)
        shape = list(t.shape)
        if 0 <= dim < len(shape):
            shape[dim] = as_dim(size)
        super().__init__(
            operands=[value],
            result_types=[t.with_shape(shape)],
            properties={"dim": IntegerAttr(dim, i64), "start": IntegerAttr(start, i64)},
        )

    @property
    def axis(self) -> int:
        return self.dim.value.data

    @property
    def offset(self) -> int:
        return self.start.value.data

    def verify_(self) -> None:
        t, res = tensor_type(self.input), tensor_type(self.result)
        if not 0 <= self.axis < t.rank:
            raise VerifyException(f"tgraph.slice: dim {self.axis} out of range for operand of rank {t.rank}")
        _check_same_element(self, t, res)
        if res.rank != t.rank:
            raise VerifyException(f"tgraph.slice: result rank {res.rank} differs from the operand's {t.rank}")
        expected = list(t.shape)
        expected[self.axis] = res.shape[self.axis]
        _check_result(self, expected, res)
        size, full = res.shape[self.axis], t.shape[self.axis]
        if self.offset < 0:
            raise VerifyException(f"tgraph.slice: start {self.offset} is negative")
        end = size + self.offset
        if (end - full).is_positive:
            raise VerifyException(
                f"tgraph.slice: elements [{self.offset}, {dim_str(end)}) of dim {self.axis} exceed its size {dim_str(full)}"
            )

    def numpy(self, xs: Sequence[np.ndarray], shape: Sequence[int]) -> np.ndarray:
        x, size = xs[0], shape[self.axis]
        if self.offset + size > x.shape[self.axis]:
            raise ValueError(f"tgraph.slice: [{self.offset}, {self.offset + size}) past size {x.shape[self.axis]}")
        return x[tuple(slice(self.offset, self.offset + size) if i == self.axis else slice(None) for i in range(x.ndim))]

    def torch(self, xs: Sequence, shape: Sequence[int]):  # noqa: ANN201
        return xs[0].narrow(self.axis, self.offset, shape[self.axis])


@irdl_op_definition
class ConcatOp(StructuralOp):
    """Join tensors along one dim (the others equal): `tgraph.concat %a, %b dim 1 : Ta, Tb -> T`."""

    name = "tgraph.concat"

    inputs = var_operand_def(TensorType)
    dim = prop_def(IntegerAttr[i64])
    result = result_def(TensorType)

    traits = traits_def(Pure())

    assembly_format = "$inputs `dim` $dim attr-dict `:` type($inputs) `->` type($result)"

    def __init__(self, inputs: Sequence[SSAValue | Operation], dim: int) -> None:
        values = [SSAValue.get(v) for v in inputs]
        shape = self.infer_shape([tensor_type(v).shape for v in values], dim)
        super().__init__(
            operands=[values],
            result_types=[tensor_type(values[0]).with_shape(shape)],
            properties={"dim": IntegerAttr(dim, i64)},
        )

    @property
    def axis(self) -> int:
        return self.dim.value.data

    @staticmethod
    def infer_shape(shapes: Sequence[Sequence[Dim]], dim: int) -> tuple[Dim, ...]:
        if not shapes:
            raise VerifyException("tgraph.concat: needs at least one operand")
        rank = len(shapes[0])
        if not 0 <= dim < rank:
            raise VerifyException(f"tgraph.concat: dim {dim} out of range for operands of rank {rank}")
        for i, s in enumerate(shapes[1:], 1):
            if len(s) != rank:
                raise VerifyException(f"tgraph.concat: operand {i} has rank {len(s)}, operand 0 has {rank}")
            for d, (a, b) in enumerate(zip(shapes[0], s)):
                if d != dim and a != b:
                    raise VerifyException(
                        f"tgraph.concat: operand {i} differs from operand 0 in dim {d}: {dim_str(b)} vs {dim_str(a)}"
                    )
        out = list(shapes[0])
        out[dim] = sympy.Add(*(s[dim] for s in shapes))
        return tuple(out)

    def verify_(self) -> None:
        types = [tensor_type(v) for v in self.inputs]
        res = tensor_type(self.result)
        _check_same_element(self, *types, res)
        _check_result(self, self.infer_shape([t.shape for t in types], self.axis), res)

    def numpy(self, xs: Sequence[np.ndarray], shape: Sequence[int]) -> np.ndarray:
        return np.concatenate(xs, axis=self.axis)

    def torch(self, xs: Sequence, shape: Sequence[int]):  # noqa: ANN201
        return _t().cat(list(xs), dim=self.axis)


STRUCTURAL_OPS: tuple[type[StructuralOp], ...] = (TransposeOp, SliceOp, ConcatOp)


UNARY_OPS: tuple[type[UnaryOp], ...] = (
    ExpOp,
    SqrtOp,
    RsqrtOp,
    NegOp,
    SiluOp,
    SigmoidOp,
    SquareOp,
    ReciprocalOp,
    TanhOp,
    GeluOp,
    Exp2Op,
    LogOp,
    AbsOp,
)
BINARY_OPS: tuple[type[BinaryOp], ...] = (AddOp, SubOp, MulOp, DivOp, MaxOp, MinOp)
ELEMENTWISE_OPS: tuple[type[ElementwiseOp], ...] = (*UNARY_OPS, *BINARY_OPS, ScalarOp, ScaleOp, CastOp, SelectOp)
"""Every elementwise op; its semantics (`op.semantics()`) define it everywhere."""

ELEMENTWISE_BY_NAME: dict[str, type[ElementwiseOp]] = {op.name: op for op in ELEMENTWISE_OPS}
BINARY_BY_NAME: dict[str, type[BinaryOp]] = {op.name: op for op in BINARY_OPS}


def elementwise_semantics(name: str, properties: Mapping[str, Attribute] | None = None) -> Semantics:
    """The semantics of elementwise op `name` (e.g. `tgraph.exp`) with these properties."""
    return ELEMENTWISE_BY_NAME[name].semantics_of(properties or {})


TGraph = Dialect(
    "tgraph",
    [
        GraphOp,
        OutputOp,
        MatmulOp,
        *ELEMENTWISE_OPS,
        ReduceOp,
        ReshapeOp,
        SplitOp,
        *STRUCTURAL_OPS,
    ],
    [TensorType, ReduceKindAttr, GeluApproximateAttr, ScalarKindAttr],
)
