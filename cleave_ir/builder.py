"""A small Python API that builds `tgraph` graphs without text.

    b = GraphBuilder("mha")
    q = b.input("q", [1, 32, 4096, 128])
    k = b.input("k", [1, 32, 4096, 128])
    v = b.input("v", [1, 32, 4096, 128])
    e = b.exp(b.scale(b.matmul(q, k, transpose_b=True), 128 ** -0.5))
    graph = b.build(b.matmul(b.div(e, b.reduce("sum", e, 3)), v))

Result types are inferred; every op is verified as it is created, so a shape error surfaces at the
line that caused it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import sympy
from xdsl.dialects.builtin import (
    ArrayAttr,
    BFloat16Type,
    DenseArrayBase,
    DictionaryAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerAttr,
    ModuleOp,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from cleave_ir.dialects import tgraph
from cleave_ir.dialects.cleave import CausalMaskAttr
from cleave_ir.shapes import as_dim

_ELEMENT_TYPES: dict[str, Attribute] = {
    "f16": Float16Type(),
    "bf16": BFloat16Type(),
    "f32": Float32Type(),
    "f64": Float64Type(),
}

Shape = Sequence[int | str | sympy.Expr]


def element_type(name: str | Attribute) -> Attribute:
    if isinstance(name, Attribute):
        return name
    if name not in _ELEMENT_TYPES:
        raise ValueError(f"unknown element type '{name}' (expected one of {', '.join(_ELEMENT_TYPES)})")
    return _ELEMENT_TYPES[name]


class GraphBuilder:
    """Builds one `tgraph.graph`: add inputs, apply ops, then `build(outputs...)`."""

    def __init__(self, name: str, element_type: str | Attribute = "f16") -> None:
        self.name = name
        self.default_element_type = globals()["element_type"](element_type)
        self.block = Block()
        self._arg_attrs: list[dict[str, Attribute]] = []
        self._bindings: dict[str, int] = {}

    # ---------------------------------------------------------------- inputs and symbols
    def input(
        self,
        name: str,
        shape: Shape,
        element_type: str | Attribute | None = None,
        *,
        dynamic: Sequence[int] = (),
        reduced: Sequence[int] = (),
        causal: int | None = None,
    ) -> SSAValue:
        """A graph input named `name` (dims: ints, symbol names or expressions); `causal`: the
        offset of the causal 0/1 mask it holds (`#cleave.causal<offset = c>`, its value is not read)."""
        elt = self.default_element_type if element_type is None else globals()["element_type"](element_type)
        t = tgraph.TensorType(shape, elt)
        t.verify()
        arg = self.block.insert_arg(t, len(self.block.args))
        arg.name_hint = name
        attrs: dict[str, Attribute] = {}
        if dynamic:
            attrs["dynamic"] = DenseArrayBase.from_list(i64, list(dynamic))
        if reduced:
            attrs["reduced"] = DenseArrayBase.from_list(i64, list(reduced))
        if causal is not None:
            attrs["cleave.causal"] = CausalMaskAttr(causal)
        self._arg_attrs.append(attrs)
        return arg

    def bind(self, **sizes: int) -> None:
        """Record the sizes symbolic dims stand for (the graph's `bindings`)."""
        self._bindings.update(sizes)

    # ---------------------------------------------------------------- ops
    def _add(self, op: Operation) -> SSAValue:
        op.verify()
        self.block.add_op(op)
        return op.results[0]

    def matmul(
        self, a: SSAValue, b: SSAValue, *, transpose_b: bool = False, element_type: str | Attribute | None = None
    ) -> SSAValue:
        at, bt = tgraph.tensor_type(a), tgraph.tensor_type(b)
        shape = tgraph.MatmulOp.infer_shape(at.shape, bt.shape, transpose_b)
        elt = at.element_type if element_type is None else globals()["element_type"](element_type)
        return self._add(tgraph.MatmulOp(a, b, tgraph.TensorType(shape, elt), transpose_b))

    def unary(self, op: type[tgraph.UnaryOp] | str, x: SSAValue) -> SSAValue:
        if isinstance(op, str):
            op = _UNARY_BY_NAME[op]
        return self._add(op(x))

    def binary(self, op: type[tgraph.BinaryOp] | str, a: SSAValue, b: SSAValue) -> SSAValue:
        if isinstance(op, str):
            op = _BINARY_BY_NAME[op]
        return self._add(op(a, b))

    def elementwise(
        self,
        op: type[tgraph.ElementwiseOp],
        operands: Sequence[SSAValue],
        result_type: tgraph.TensorType,
        properties: Mapping[str, Attribute] | None = None,
    ) -> SSAValue:
        """Any elementwise op, given its result type and properties."""
        return self._add(op.create(operands=list(operands), result_types=[result_type], properties=dict(properties or {})))

    def exp(self, x: SSAValue) -> SSAValue:
        return self.unary(tgraph.ExpOp, x)

    def exp2(self, x: SSAValue) -> SSAValue:
        return self.unary(tgraph.Exp2Op, x)

    def log(self, x: SSAValue) -> SSAValue:
        return self.unary(tgraph.LogOp, x)

    def tanh(self, x: SSAValue) -> SSAValue:
        return self.unary(tgraph.TanhOp, x)

    def abs(self, x: SSAValue) -> SSAValue:
        return self.unary(tgraph.AbsOp, x)

    def gelu(self, x: SSAValue, approximate: str = "erf") -> SSAValue:
        return self._add(tgraph.GeluOp(x, approximate))

    def min(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.binary(tgraph.MinOp, a, b)

    def select(self, mask: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
        """`a` where `mask` is nonzero, else `b` (size-1 broadcasting of all three)."""
        return self._add(tgraph.SelectOp(mask, a, b))

    def scalar(self, kind: str, x: SSAValue, constant: float) -> SSAValue:
        """`kind`(x, constant): add, sub, rsub (c - x), mul, div, rdiv (c / x), max, min."""
        return self._add(tgraph.ScalarOp(kind, x, constant))

    def cast(self, x: SSAValue, element_type: str | Attribute) -> SSAValue:
        return self._add(tgraph.CastOp(x, globals()["element_type"](element_type)))

    def sqrt(self, x: SSAValue) -> SSAValue:
        return self.unary(tgraph.SqrtOp, x)

    def rsqrt(self, x: SSAValue) -> SSAValue:
        return self.unary(tgraph.RsqrtOp, x)

    def neg(self, x: SSAValue) -> SSAValue:
        return self.unary(tgraph.NegOp, x)

    def silu(self, x: SSAValue) -> SSAValue:
        return self.unary(tgraph.SiluOp, x)

    def sigmoid(self, x: SSAValue) -> SSAValue:
        return self.unary(tgraph.SigmoidOp, x)

    def square(self, x: SSAValue) -> SSAValue:
        return self.unary(tgraph.SquareOp, x)

    def reciprocal(self, x: SSAValue) -> SSAValue:
        return self.unary(tgraph.ReciprocalOp, x)

    def add(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.binary(tgraph.AddOp, a, b)

    def sub(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.binary(tgraph.SubOp, a, b)

    def mul(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.binary(tgraph.MulOp, a, b)

    def div(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.binary(tgraph.DivOp, a, b)

    def max(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.binary(tgraph.MaxOp, a, b)

    def scale(self, x: SSAValue, factor: float) -> SSAValue:
        return self._add(tgraph.ScaleOp(x, factor))

    def reduce(self, kind: str, x: SSAValue, dim: int) -> SSAValue:
        return self._add(tgraph.ReduceOp(kind, x, dim))

    def reshape(self, x: SSAValue, shape: Shape) -> SSAValue:
        t = tgraph.tensor_type(x)
        return self._add(tgraph.ReshapeOp(x, t.with_shape([as_dim(d) for d in shape])))

    def transpose(self, x: SSAValue, perm: Sequence[int]) -> SSAValue:
        return self._add(tgraph.TransposeOp(x, perm))

    def slice(self, x: SSAValue, dim: int, start: int, size: int) -> SSAValue:
        return self._add(tgraph.SliceOp(x, dim, start, size))

    def concat(self, xs: Sequence[SSAValue], dim: int) -> SSAValue:
        return self._add(tgraph.ConcatOp(xs, dim))

    def split(self, x: SSAValue, dim: int, parts: int | str | sympy.Expr) -> SSAValue:
        return self._add(tgraph.SplitOp(x, dim, parts))

    # ---------------------------------------------------------------- result
    def build(self, *outputs: SSAValue) -> tgraph.GraphOp:
        """Finish the graph with `outputs`; the builder must not be used afterwards."""
        self.block.add_op(tgraph.OutputOp(list(outputs)))
        arg_attrs = None
        if any(self._arg_attrs):
            arg_attrs = ArrayAttr(DictionaryAttr(a) for a in self._arg_attrs)
        bindings = None
        if self._bindings:
            bindings = DictionaryAttr({k: IntegerAttr(v, i64) for k, v in sorted(self._bindings.items())})
        graph = tgraph.GraphOp(
            self.name,
            [tgraph.tensor_type(a) for a in self.block.args],
            [tgraph.tensor_type(o) for o in outputs],
            Region(self.block),
            arg_attrs=arg_attrs,
            bindings=bindings,
        )
        graph.verify()
        return graph


def module_of(*graphs: tgraph.GraphOp) -> ModuleOp:
    """A module holding `graphs` (e.g. to print them or to run cleave passes on them)."""
    return ModuleOp(list(graphs))


_UNARY_BY_NAME = {op.name.split(".")[1]: op for op in tgraph.UNARY_OPS}
_BINARY_BY_NAME = {op.name.split(".")[1]: op for op in tgraph.BINARY_OPS}
