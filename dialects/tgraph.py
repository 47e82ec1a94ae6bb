"""The `tgraph` dialect: tensor computation graphs with symbolic shapes and Split.

A `tgraph.graph` is a symbol whose block arguments are the named inputs and whose
`tgraph.output` terminator returns the outputs. Values are `!tgraph.tensor<[dims], elt>`
where each dim is an integer, a named symbol, or a product/quotient of them (`K/s`).
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import auto
from typing import ClassVar, cast

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

from cleave_ir.shapes import Dim, as_dim, dim_str, is_integral, symbol

ELEMENT_TYPES = (Float16Type, BFloat16Type, Float32Type, Float64Type)


# --------------------------------------------------------------------------- types


@irdl_attr_definition
class TensorType(ParametrizedAttribute, TypeAttribute):
    """`!tgraph.tensor<[1, 32, N, 128], f16>`: a tensor with integer or symbolic dims."""

    name = "tgraph.tensor"

    dims: ArrayAttr[StringAttr]
    element_type: Attribute

    def __init__(
        self, shape: Sequence[int | str | sympy.Expr], element_type: Attribute
    ) -> None:
        dims = ArrayAttr(StringAttr(dim_str(as_dim(d))) for d in shape)
        super().__init__(dims, element_type)

    @property
    def shape(self) -> tuple[Dim, ...]:
        return tuple(as_dim(d.data) for d in self.dims.data)

    @property
    def rank(self) -> int:
        return len(self.dims.data)

    def with_shape(self, shape: Sequence[int | str | sympy.Expr]) -> TensorType:
        return TensorType(shape, self.element_type)

    def verify(self) -> None:
        if not isinstance(self.element_type, ELEMENT_TYPES):
            raise VerifyException(
                f"tgraph.tensor element type must be f16, bf16, f32 or f64, got {self.element_type}"
            )
        for d in self.shape:
            if d.is_Number and (not d.is_Integer or d < 1):
                raise VerifyException(f"tgraph.tensor dims must be positive integers, got {d}")

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
        return (ArrayAttr(StringAttr(dim_str(d)) for d in dims), elt)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<[")
        printer.print_string(", ".join(d.data for d in self.dims.data))
        printer.print_string("], ")
        printer.print_attribute(self.element_type)
        printer.print_string(">")


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
            f"{op.name}: element types differ: {', '.join(str(t.element_type) for t in types)}"
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
    `reduced = array<i64: ...>` (dims declared eventually-reduced; an override of the analysis).
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

    def binding_values(self) -> dict[str, int]:
        if self.bindings is None:
            return {}
        return {k: cast(IntegerAttr, v).value.data for k, v in self.bindings.data.items()}

    def verify_(self) -> None:
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


class UnaryOp(IRDLOperation):
    """Elementwise `f(x)`, same shape and element type."""

    T: ClassVar = VarConstraint("T", base(TensorType))
    input = operand_def(T)
    result = result_def(T)

    traits = traits_def(Pure())

    assembly_format = "$input attr-dict `:` type($input)"

    def __init__(self, input: SSAValue | Operation) -> None:
        value = SSAValue.get(input)
        super().__init__(operands=[value], result_types=[value.type])


@irdl_op_definition
class ExpOp(UnaryOp):
    name = "tgraph.exp"


@irdl_op_definition
class SqrtOp(UnaryOp):
    name = "tgraph.sqrt"


@irdl_op_definition
class RsqrtOp(UnaryOp):
    name = "tgraph.rsqrt"


@irdl_op_definition
class NegOp(UnaryOp):
    name = "tgraph.neg"


@irdl_op_definition
class SiluOp(UnaryOp):
    name = "tgraph.silu"


@irdl_op_definition
class SigmoidOp(UnaryOp):
    name = "tgraph.sigmoid"


@irdl_op_definition
class SquareOp(UnaryOp):
    name = "tgraph.square"


@irdl_op_definition
class ReciprocalOp(UnaryOp):
    name = "tgraph.reciprocal"


class BinaryOp(IRDLOperation):
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


@irdl_op_definition
class SubOp(BinaryOp):
    name = "tgraph.sub"


@irdl_op_definition
class MulOp(BinaryOp):
    name = "tgraph.mul"


@irdl_op_definition
class DivOp(BinaryOp):
    name = "tgraph.div"


@irdl_op_definition
class MaxOp(BinaryOp):
    name = "tgraph.max"


@irdl_op_definition
class ScaleOp(IRDLOperation):
    """Multiply every element by a constant: `tgraph.scale %x, 0.088 : T`."""

    name = "tgraph.scale"

    T: ClassVar = VarConstraint("T", base(TensorType))
    input = operand_def(T)
    factor = prop_def(FloatAttr[Float64Type])
    result = result_def(T)

    traits = traits_def(Pure())

    assembly_format = "$input `,` $factor attr-dict `:` type($input)"

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


# --------------------------------------------------------------------------- shape ops


class ReduceKind(StrEnum):
    SUM = auto()
    MAX = auto()


@irdl_attr_definition
class ReduceKindAttr(EnumAttribute[ReduceKind], SpacedOpaqueSyntaxAttribute):
    name = "tgraph.reduce_kind"


@irdl_op_definition
class ReduceOp(IRDLOperation):
    """`reduce sum|max` over one dim, kept as size 1."""

    name = "tgraph.reduce"

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


UNARY_OPS: tuple[type[UnaryOp], ...] = (
    ExpOp,
    SqrtOp,
    RsqrtOp,
    NegOp,
    SiluOp,
    SigmoidOp,
    SquareOp,
    ReciprocalOp,
)
BINARY_OPS: tuple[type[BinaryOp], ...] = (AddOp, SubOp, MulOp, DivOp, MaxOp)

TGraph = Dialect(
    "tgraph",
    [
        GraphOp,
        OutputOp,
        MatmulOp,
        *UNARY_OPS,
        *BINARY_OPS,
        ScaleOp,
        ReduceOp,
        ReshapeOp,
        SplitOp,
    ],
    [TensorType, ReduceKindAttr],
)
