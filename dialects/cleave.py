"""The `cleave` dialect: the typed metadata that Cleave-IR's passes attach to graphs and kernels.

Passes exchange facts about graphs and kernels as discardable `cleave.*` attributes. Each key is
declared here, once, with the attribute type it holds (`METADATA`); closed vocabularies are enum
attributes and structured values are parametrized attributes, so nothing is parsed back from a
string:

    cleave.stage = #cleave<stage split>                   kernel stage of a cut or split graph
    cleave.mem = #cleave<mem shared>                      memory placement of a tile
    cleave.tiles = #cleave.tiles<out = [64, 64], reduce = 32>        a kernel's tile configuration
    cleave.tiles = #cleave.tiles<out = [1, 128], reduce = none, no_fusion>
    cleave.causal = #cleave.causal<offset = 0>           a graph input (or a load of it) holding the causal 0/1 mask
    cleave.boundary = #cleave.boundary<inputs = [#cleave.view<input = 0, slices = [[1, 64, 64]]>], outputs = [#cleave.part<output = 0>]>
                                                          a graph's inputs as views of the given graph's inputs

It also holds the one grammar of symbolic integer expressions (`ExprAttr`, `#cleave.expr<64*p1 + 16>`):
products and quotients of integers and symbols (the dim grammar of `cleave_ir.shapes`) with `+`,
`-` and the affine `floordiv`, `mod` and `ceildiv`; `expr_str` prints the canonical text that
parses back to the same sympy expression.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from enum import auto
from functools import cache
from typing import TypeVar

import numpy as np
import sympy
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FloatAttr,
    IntAttr,
    IntegerAttr,
    NoneAttr,
    StringAttr,
    SymbolRefAttr,
)
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import Attribute, Data, Dialect, Operation, ParametrizedAttribute, SpacedOpaqueSyntaxAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from cleave_ir.shapes import Dim, dim_str, symbol


# --------------------------------------------------------------------------- expressions


class _Tokens:
    """The token interface the expression grammar reads: an xDSL parser or a plain string."""

    def integer(self) -> int | None: ...
    def ident(self) -> str | None: ...
    def punct(self, p: str) -> bool: ...
    def keyword(self, k: str) -> bool: ...
    def error(self, msg: str) -> None: ...


class _ParserTokens(_Tokens):
    def __init__(self, parser: AttrParser) -> None:
        self.p = parser

    def integer(self) -> int | None:
        return self.p.parse_optional_integer(allow_boolean=False, allow_negative=False)

    def ident(self) -> str | None:
        return self.p.parse_optional_identifier()

    def punct(self, p: str) -> bool:
        return self.p.parse_optional_punctuation(p) is not None  # type: ignore[arg-type]

    def keyword(self, k: str) -> bool:
        return self.p.parse_optional_keyword(k) is not None

    def error(self, msg: str) -> None:
        self.p.raise_error(msg)


class _TextTokens(_Tokens):
    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = re.findall(r"\d+|[A-Za-z_][\w$.]*|[-+*/()]|\S", text)
        self.pos = 0

    def _peek(self) -> str | None:
        return self.toks[self.pos] if self.pos < len(self.toks) else None

    def integer(self) -> int | None:
        t = self._peek()
        if t is not None and t.isdigit():
            self.pos += 1
            return int(t)
        return None

    def ident(self) -> str | None:
        t = self._peek()
        if t is not None and (t[0].isalpha() or t[0] == "_"):
            self.pos += 1
            return t
        return None

    def punct(self, p: str) -> bool:
        if self._peek() == p:
            self.pos += 1
            return True
        return False

    def keyword(self, k: str) -> bool:
        return self.punct(k)

    def error(self, msg: str) -> None:
        raise ValueError(f"{msg} in index expression {self.text!r}")


_BINARY_KEYWORDS: dict[str, Callable[[Dim, Dim], Dim]] = {
    "floordiv": lambda a, b: sympy.floor(a / b),
    "ceildiv": lambda a, b: sympy.ceiling(a / b),
    "mod": sympy.Mod,
}


def _parse_expr(t: _Tokens) -> Dim:
    def primary() -> Dim:
        if t.punct("-"):
            return -primary()
        if (n := t.integer()) is not None:
            return sympy.Integer(n)
        if t.punct("("):
            e = expr()
            if not t.punct(")"):
                t.error("expected ')'")
            return e
        if (name := t.ident()) is not None:
            if name in _BINARY_KEYWORDS:
                t.error(f"'{name}' needs a left operand")
            return symbol(name)
        t.error("expected an integer, a name or '('")
        raise AssertionError

    def term() -> Dim:
        value = primary()
        while True:
            if t.punct("*"):
                value = value * primary()
            elif t.punct("/"):
                value = value / primary()
            elif kw := next((k for k in _BINARY_KEYWORDS if t.keyword(k)), None):
                value = _BINARY_KEYWORDS[kw](value, primary())
            else:
                return value

    def expr() -> Dim:
        value = term()
        while True:
            if t.punct("+"):
                value = value + term()
            elif t.punct("-"):
                value = value - term()
            else:
                return value

    return expr()


@cache
def parse_expr_text(text: str) -> Dim:
    """The sympy expression of an index-expression text (`64*bz + 16`, `(bx floordiv 4) mod 8`)."""
    tokens = _TextTokens(text)
    e = _parse_expr(tokens)
    if tokens.pos != len(tokens.toks):
        raise ValueError(f"unexpected {tokens.toks[tokens.pos]!r} in index expression {text!r}")
    return e


def parse_expr(parser: AttrParser) -> Dim:
    """Read an index expression from xDSL's token stream."""
    return _parse_expr(_ParserTokens(parser))


_FUNCS = (sympy.floor, sympy.ceiling, sympy.Mod)


def expr_str(e: Dim) -> str:
    """Canonical text of an index expression (parses back to the same sympy expression)."""
    e = sympy.sympify(e)
    if e.is_Add:
        terms = sorted(sympy.Add.make_args(e), key=lambda x: (x.is_Number, str(x)))
        out = expr_str(terms[0])
        for term in terms[1:]:
            if term.could_extract_minus_sign():
                out += " - " + _operand(-term)
            else:
                out += " + " + expr_str(term)
        return out
    if isinstance(e, sympy.Mod):
        return f"{_operand(e.args[0])} mod {_operand(e.args[1])}"
    if isinstance(e, (sympy.floor, sympy.ceiling)):
        num, den = sympy.fraction(sympy.together(e.args[0]))
        kw = "floordiv" if isinstance(e, sympy.floor) else "ceildiv"
        return f"{_operand(num)} {kw} {_operand(den)}"
    if e.is_Mul and e.has(*_FUNCS):
        coeff, rest = e.as_coeff_Mul()
        factors = [_operand(f) for f in sympy.Mul.make_args(rest)]
        if coeff == -1:
            return "-" + "*".join(factors)
        return "*".join(([str(coeff)] if coeff != 1 else []) + factors)
    return dim_str(e)


def _operand(e: Dim) -> str:
    text = expr_str(e)
    return text if e.is_Atom or (e.is_Mul and not e.has(*_FUNCS)) else f"({text})"


@irdl_attr_definition
class ExprAttr(Data[sympy.Expr]):
    """`#cleave.expr<64*p1 + 16>`: a symbolic integer expression, held as its sympy form."""

    name = "cleave.expr"

    def __init__(self, value: Dim | int | str) -> None:
        super().__init__(parse_expr_text(value) if isinstance(value, str) else sympy.sympify(value))

    @property
    def expr(self) -> Dim:
        return self.data

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> Dim:
        with parser.in_angle_brackets():
            return parse_expr(parser)

    def print_parameter(self, printer: Printer) -> None:
        printer.print_string(f"<{expr_str(self.data)}>")


# --------------------------------------------------------------------------- metadata


class Stage(StrEnum):
    """Which kernel of a cut graph a graph is."""

    FIRST = auto()  # the first piece of a graph cut into kernels
    SPLIT = auto()  # the partial results of a Split-K graph
    COMBINE = auto()  # the combine of a Split-K graph
    PART = auto()  # a later piece of a graph cut into kernels


class Memory(StrEnum):
    """Where a tile lives inside a kernel."""

    SHARED = auto()
    FRAGMENT = auto()  # registers
    GLOBAL = auto()  # not copied in: its one consumer reads it from global memory (a decode GEMV's weight rows)


@irdl_attr_definition
class StageAttr(EnumAttribute[Stage], SpacedOpaqueSyntaxAttribute):
    """`#cleave<stage split>`."""

    name = "cleave.stage"


@irdl_attr_definition
class MemoryAttr(EnumAttribute[Memory], SpacedOpaqueSyntaxAttribute):
    """`#cleave<mem shared>`."""

    name = "cleave.mem"


@irdl_attr_definition
class TileConfigAttr(ParametrizedAttribute):
    """`#cleave.tiles<out = [1, 128], reduce = 32>`: a kernel's tile configuration.

    `out`: the tile size per dim of the first output; `reduce`: the reduction tile (`none`: no
    iterative tiling); `no_fusion`: the last-wave reductions that share upstream nodes are not fused.
    """

    name = "cleave.tiles"

    out: ArrayAttr[IntAttr]
    reduce: IntAttr | NoneAttr
    fusion: IntAttr  # 1: fused, 0: no_fusion

    def __init__(self, out: Sequence[int], reduce: int | None, fusion: bool = True) -> None:
        super().__init__(
            ArrayAttr(IntAttr(t) for t in out),
            NoneAttr() if reduce is None else IntAttr(reduce),
            IntAttr(int(fusion)),
        )

    @property
    def out_tile(self) -> tuple[int, ...]:
        return tuple(t.data for t in self.out.data)

    @property
    def reduce_tile(self) -> int | None:
        return self.reduce.data if isinstance(self.reduce, IntAttr) else None

    @property
    def fused(self) -> bool:
        return bool(self.fusion.data)

    def describe(self) -> str:
        """One line for people (kernel metadata, reports): `out=[1, 128] reduce=32 no-fusion`."""
        r = "none" if self.reduce_tile is None else str(self.reduce_tile)
        return f"out={list(self.out_tile)} reduce={r}" + ("" if self.fused else " no-fusion")

    def verify(self) -> None:
        if any(t.data < 1 for t in self.out.data):
            raise VerifyException(f"cleave.tiles: tile sizes must be positive, got {list(self.out_tile)}")
        if isinstance(self.reduce, IntAttr) and self.reduce.data < 1:
            raise VerifyException(f"cleave.tiles: the reduction tile must be positive, got {self.reduce.data}")
        if self.fusion.data not in (0, 1):
            raise VerifyException(f"cleave.tiles: fusion flag must be 0 or 1, got {self.fusion.data}")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        def size() -> int:
            pos = parser.pos
            value = parser.parse_integer(allow_boolean=False, allow_negative=False)
            if value < 1:
                parser.raise_error(f"cleave.tiles: tile sizes must be positive, got {value}", pos, parser.pos)
            return value

        with parser.in_angle_brackets():
            parser.parse_keyword("out")
            parser.parse_punctuation("=")
            out = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, size)
            parser.parse_punctuation(",")
            parser.parse_keyword("reduce")
            parser.parse_punctuation("=")
            reduce = None if parser.parse_optional_keyword("none") is not None else size()
            fusion = not (parser.parse_optional_punctuation(",") is not None and parser.parse_keyword("no_fusion"))
        return TileConfigAttr(out, reduce, fusion).parameters

    def print_parameters(self, printer: Printer) -> None:
        reduce = "none" if self.reduce_tile is None else str(self.reduce_tile)
        printer.print_string(
            f"<out = [{', '.join(map(str, self.out_tile))}], reduce = {reduce}" + ("" if self.fused else ", no_fusion") + ">"
        )


@irdl_attr_definition
class CausalMaskAttr(ParametrizedAttribute):
    """`#cleave.causal<offset = 0>`: a promise that a tensor holds the causal 0/1 mask of its last two dims.

    `keep[..., i, j] = 1 if j <= i + offset else 0` (`causal_mask`); `offset >= 0`, so every query row
    keeps key 0. On a graph input (argument attribute `cleave.causal`) the value passed is not read:
    every interpreter level takes `causal_mask` of the input's shape, and a kernel computes its tiles
    from their indices. On an `itgraph.load` it marks a tile of such an input.
    """

    name = "cleave.causal"

    offset: IntAttr

    def __init__(self, offset: int) -> None:
        super().__init__(IntAttr(offset))

    @property
    def value(self) -> int:
        return self.offset.data

    def verify(self) -> None:
        if self.offset.data < 0:
            raise VerifyException(f"cleave.causal: offset must be >= 0 (a row with no key kept), got {self.offset.data}")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            parser.parse_keyword("offset")
            parser.parse_punctuation("=")
            offset = parser.parse_integer(allow_boolean=False, allow_negative=True)
        return (IntAttr(offset),)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<offset = {self.offset.data}>")


def _parse_ints(parser: AttrParser) -> list[int]:
    return parser.parse_comma_separated_list(parser.Delimiter.SQUARE, lambda: parser.parse_integer(allow_boolean=False))


def _parse_keyed(parser: AttrParser, name: str, first: str, optional: dict[str, Callable[[], object]]) -> tuple[int, dict[str, object]]:
    """`<first = N, key = value, ..>`: N, and the optional keys' values (each read by its reader)."""
    values: dict[str, object] = {}
    with parser.in_angle_brackets():
        parser.parse_keyword(first)
        parser.parse_punctuation("=")
        index = parser.parse_integer(allow_boolean=False)
        while parser.parse_optional_punctuation(","):
            key = parser.parse_identifier()
            parser.parse_punctuation("=")
            if key not in optional:
                parser.raise_error(f"{name}: unknown key {key!r} ({', '.join([first, *optional])})")
            values[key] = optional[key]()
    return index, values


def _check_perm(name: str, perm: Sequence[int]) -> None:
    if perm and sorted(perm) != list(range(len(perm))):
        raise VerifyException(f"{name}: perm {list(perm)} is not a permutation")


@irdl_attr_definition
class ViewAttr(ParametrizedAttribute):
    """`#cleave.view<input = 0, perm = [0, 2, 1], slices = [[2, 64, 64]]>`: a tensor that is input 0 of
    the graph before `cleave-fold-structural`, its dims permuted by `perm` (result dim i is dim
    `perm[i]`; identity where absent), then each listed `[dim, start, size]` sliced (dims of the
    permuted frame). A view of strides, never a copy (`torch.Tensor.permute` and `narrow`)."""

    name = "cleave.view"

    input: IntAttr
    perm: ArrayAttr[IntAttr]
    slices: ArrayAttr[ArrayAttr[IntAttr]]

    def __init__(self, input: int, perm: Sequence[int] = (), slices: Sequence[Sequence[int]] = ()) -> None:
        super().__init__(
            IntAttr(input),
            ArrayAttr(IntAttr(p) for p in perm),
            ArrayAttr(ArrayAttr(IntAttr(v) for v in s) for s in slices),
        )

    @property
    def source(self) -> int:
        return self.input.data

    @property
    def permutation(self) -> tuple[int, ...]:
        return tuple(p.data for p in self.perm.data)

    @property
    def ranges(self) -> tuple[tuple[int, int, int], ...]:
        """The `(dim, start, size)` slices."""
        return tuple(tuple(v.data for v in s.data) for s in self.slices.data)  # type: ignore[misc]

    def verify(self) -> None:
        _check_perm(self.name, self.permutation)
        for s in self.ranges:
            if len(s) != 3 or s[1] < 0 or s[2] < 1:
                raise VerifyException(f"cleave.view: a slice is [dim, start >= 0, size >= 1], got {list(s)}")

    def apply(self, tensors: Sequence, permute: Callable) -> object:
        """This view of `tensors[input]` (numpy arrays or torch tensors: `permute(x, perm)` permutes)."""
        x = tensors[self.source]
        if self.permutation:
            x = permute(x, self.permutation)
        index = [slice(None)] * len(x.shape)
        for dim, start, size in self.ranges:
            index[dim] = slice(start, start + size)
        return x[tuple(index)]

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        slices = lambda: parser.parse_comma_separated_list(parser.Delimiter.SQUARE, lambda: _parse_ints(parser))  # noqa: E731
        index, v = _parse_keyed(parser, cls.name, "input", {"perm": lambda: _parse_ints(parser), "slices": slices})
        return cls(index, v.get("perm", ()), v.get("slices", ())).parameters  # type: ignore[arg-type]

    def print_parameters(self, printer: Printer) -> None:
        text = f"<input = {self.source}"
        if self.permutation:
            text += f", perm = [{', '.join(map(str, self.permutation))}]"
        if self.ranges:
            text += ", slices = [" + ", ".join(f"[{d}, {s}, {n}]" for d, s, n in self.ranges) + "]"
        printer.print_string(text + ">")


@irdl_attr_definition
class PartAttr(ParametrizedAttribute):
    """`#cleave.part<output = 0, dim = 2, perm = [1, 0]>`: a graph output that, its dims permuted by
    `perm` (result dim i is its dim `perm[i]`; identity where absent), is the next part, along `dim`,
    of output 0 of the graph before `cleave-fold-structural` (the parts of one output, in order,
    concatenate to it); without `dim`, the whole of it."""

    name = "cleave.part"

    output: IntAttr
    dim: IntAttr | NoneAttr
    perm: ArrayAttr[IntAttr]

    def __init__(self, output: int, dim: int | None = None, perm: Sequence[int] = ()) -> None:
        super().__init__(IntAttr(output), NoneAttr() if dim is None else IntAttr(dim), ArrayAttr(IntAttr(p) for p in perm))

    @property
    def target(self) -> int:
        return self.output.data

    @property
    def axis(self) -> int | None:
        return self.dim.data if isinstance(self.dim, IntAttr) else None

    @property
    def permutation(self) -> tuple[int, ...]:
        return tuple(p.data for p in self.perm.data)

    def verify(self) -> None:
        _check_perm(self.name, self.permutation)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        dim = lambda: parser.parse_integer(allow_boolean=False)  # noqa: E731
        index, v = _parse_keyed(parser, cls.name, "output", {"dim": dim, "perm": lambda: _parse_ints(parser)})
        return cls(index, v.get("dim"), v.get("perm", ())).parameters  # type: ignore[arg-type]

    def print_parameters(self, printer: Printer) -> None:
        dim = "" if self.axis is None else f", dim = {self.axis}"
        perm = f", perm = [{', '.join(map(str, self.permutation))}]" if self.permutation else ""
        printer.print_string(f"<output = {self.target}{dim}{perm}>")


@irdl_attr_definition
class JoinAttr(ParametrizedAttribute):
    """`#cleave.join<dim = 1, parts = [#cleave.view<input = 1>, #cleave.view<input = 3>]>`: a tensor that is
    the concatenation, along `dim`, of views of the given graph's inputs (a KV cache and the new token's
    keys): a copy the emitted module's `run` makes (`torch.cat`, as PyTorch's own concat would), where
    moving the concat through the graph would split a matmul's contraction (`cleave-fold-structural`)."""

    name = "cleave.join"

    dim: IntAttr
    parts: ArrayAttr[ViewAttr]

    def __init__(self, dim: int, parts: Sequence[ViewAttr]) -> None:
        super().__init__(IntAttr(dim), ArrayAttr(parts))

    @property
    def axis(self) -> int:
        return self.dim.data

    def verify(self) -> None:
        if len(self.parts.data) < 2:
            raise VerifyException(f"cleave.join: joins at least 2 views, got {len(self.parts.data)}")
        if self.axis < 0:
            raise VerifyException(f"cleave.join: dim must be >= 0, got {self.axis}")

    def apply(self, tensors: Sequence, permute: Callable, concat: Callable) -> object:
        """The join of its views of `tensors` (`concat(xs, dim)` joins)."""
        return concat([v.apply(tensors, permute) for v in self.parts.data], self.axis)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        views = lambda: parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_attribute)  # noqa: E731
        dim, v = _parse_keyed(parser, cls.name, "dim", {"parts": views})
        parts = v.get("parts", [])
        for a in parts:  # type: ignore[attr-defined]
            if not isinstance(a, ViewAttr):
                parser.raise_error(f"cleave.join: parts must be #cleave.view attributes, got {a}")
        return cls(dim, parts).parameters  # type: ignore[arg-type]

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<dim = {self.axis}, parts = [")
        printer.print_list(self.parts.data, printer.print_attribute)
        printer.print_string("]>")


@irdl_attr_definition
class BoundaryAttr(ParametrizedAttribute):
    """`#cleave.boundary<inputs = [#cleave.view<..>, ..], outputs = [#cleave.part<..>, ..]>`: how a graph
    that `cleave-fold-structural` rewrote relates to the graph it was given. Its input i is the view
    (or the join of views, `#cleave.join`) `inputs[i]` of the given graph's inputs; its output j is the
    part `outputs[j]` of the given graph's outputs. The emitted module's `run` takes and returns the
    given graph's tensors."""

    name = "cleave.boundary"

    inputs: ArrayAttr[ViewAttr | JoinAttr]
    outputs: ArrayAttr[PartAttr]

    def __init__(self, inputs: Sequence[ViewAttr | JoinAttr], outputs: Sequence[PartAttr]) -> None:
        super().__init__(ArrayAttr(inputs), ArrayAttr(outputs))

    def views(self, tensors: Sequence, permute: Callable, concat: Callable) -> list:
        """The rewritten graph's inputs from the given graph's `tensors`: views, and joins of views
        (`permute(x, perm)` permutes, `concat(xs, dim)` joins)."""
        return [v.apply(tensors, permute, concat) if isinstance(v, JoinAttr) else v.apply(tensors, permute) for v in self.inputs.data]

    def assemble(self, parts: Sequence, concat: Callable, permute: Callable) -> list:
        """The given graph's outputs from the rewritten graph's `parts` (`concat(xs, dim)` joins,
        `permute(x, perm)` permutes)."""
        groups: dict[int, tuple[int | None, list]] = {}
        for part, x in zip(self.outputs.data, parts):
            x = permute(x, part.permutation) if part.permutation else x
            groups.setdefault(part.target, (part.axis, []))[1].append(x)
        out = []
        for index in sorted(groups):
            dim, xs = groups[index]
            out.append(xs[0] if dim is None and len(xs) == 1 else concat(xs, dim))
        return out

    def verify(self) -> None:
        targets = [p.target for p in self.outputs.data]
        if sorted(set(targets)) != list(range(len(set(targets)))):
            raise VerifyException(f"cleave.boundary: the parts name outputs {sorted(set(targets))}, not 0..n-1")
        for t in set(targets):
            dims = {p.axis for p in self.outputs.data if p.target == t}
            count = targets.count(t)
            if len(dims) != 1 or (count > 1 and None in dims):
                raise VerifyException(f"cleave.boundary: the parts of output {t} must share one dim")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            parser.parse_keyword("inputs")
            parser.parse_punctuation("=")
            inputs = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_attribute)
            parser.parse_punctuation(",")
            parser.parse_keyword("outputs")
            parser.parse_punctuation("=")
            outputs = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_attribute)
        for a in inputs:
            if not isinstance(a, (ViewAttr, JoinAttr)):
                parser.raise_error(f"cleave.boundary: inputs must be #cleave.view or #cleave.join attributes, got {a}")
        for a in outputs:
            if not isinstance(a, PartAttr):
                parser.raise_error(f"cleave.boundary: outputs must be #cleave.part attributes, got {a}")
        return (ArrayAttr(inputs), ArrayAttr(outputs))

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<inputs = [")
        printer.print_list(self.inputs.data, printer.print_attribute)
        printer.print_string("], outputs = [")
        printer.print_list(self.outputs.data, printer.print_attribute)
        printer.print_string("]>")


def causal_mask(shape: Sequence[int], offset: int) -> np.ndarray:
    """The float64 values a `#cleave.causal<offset>` tensor of `shape` holds: 1 where key <= query + offset."""
    if len(shape) < 2:
        raise ValueError(f"a causal mask needs a query and a key dim, got shape {list(shape)}")
    rows, cols = np.arange(shape[-2])[:, None], np.arange(shape[-1])[None, :]
    return np.broadcast_to((cols <= rows + offset).astype(np.float64), tuple(shape)).copy()


# Every `cleave.*` key that passes exchange, and the attribute type it holds.
METADATA: dict[str, type[Attribute] | tuple[type[Attribute], ...]] = {
    # graphs: where a candidate comes from and how it was cut
    "cleave.candidate_of": SymbolRefAttr,  # the input graph a candidate rewrites
    "cleave.note": StringAttr,  # free text for people: what the search did
    "cleave.split_count": IntegerAttr,  # s of a Split-K candidate
    "cleave.checked_at": DictionaryAttr,  # symbol -> the size a symbolic candidate was checked at
    "cleave.padded": DictionaryAttr,  # dynamic dim -> the awkward static size it was padded from (passes/padded_dims.py)
    "cleave.stage": StageAttr,
    "cleave.split": SymbolRefAttr,  # the split graph of a combine
    "cleave.combine": SymbolRefAttr,  # the combine graph of a split
    "cleave.next": SymbolRefAttr,  # the next piece of a graph cut into kernels
    "cleave.passthrough": ArrayAttr,  # names of the original inputs a later stage also reads
    "cleave.output_names": ArrayAttr,  # names of a piece's outputs
    "cleave.results": ArrayAttr,  # names of a chain's outputs in order, gathered after its last kernel
    "cleave.input_names": ArrayAttr,  # names of a tilelang kernel's inputs
    "cleave.transposed_inputs": ArrayAttr,  # positions of the inputs a tilelang kernel reads stored transposed
    "cleave.boundary": BoundaryAttr,  # a graph's inputs as views of, and outputs as parts of, the given graph's (passes/fold_structural.py)
    # kernels: the schedule
    "cleave.schedule_of": SymbolRefAttr,  # the graph a kernel computes
    "cleave.tiles": TileConfigAttr,
    "cleave.estimated_us": FloatAttr,
    "cleave.smem_bytes": IntegerAttr,
    "cleave.threads": IntegerAttr,
    "cleave.stages": IntegerAttr,  # software-pipelining stages of the kernel's loop
    "cleave.raster": StringAttr,  # the parallel dim launched fastest (blockIdx.x) where not the first
    "cleave.dynamic": DictionaryAttr,  # dynamic dim -> its quantum
    "cleave.representative": DictionaryAttr,  # dynamic dim -> the size it was scheduled at
    "cleave.static_only": StringAttr,  # why a kernel has no dynamic form
    "cleave.bounded": ArrayAttr,  # dynamic dims the kernel serves only up to their representative size
    "cleave.spill_bytes": IntegerAttr,  # spill traffic a thread, from ptxas (`cleave compile --registers`)
    # ops inside kernels
    "cleave.mem": MemoryAttr,
    "cleave.causal": CausalMaskAttr,  # a load of a causal-mask input (graph inputs carry it as an argument attribute)
}

_A = TypeVar("_A", bound=Attribute)


def get(op: Operation, key: str, kind: type[_A]) -> _A | None:
    """The `key` attribute of `op` if it is a `kind` (its declared type), else None."""
    assert METADATA.get(key) is kind or kind in (METADATA.get(key) or ()), f"{key} is not declared as {kind.__name__}"
    attr = op.attributes.get(key)
    return attr if isinstance(attr, kind) else None


def stage(op: Operation) -> Stage | None:
    """The `cleave.stage` of a graph, or None."""
    attr = get(op, "cleave.stage", StageAttr)
    return attr.data if attr is not None else None


def memory(op: Operation) -> Memory | None:
    """The `cleave.mem` placement of an op inside a kernel, or None."""
    attr = get(op, "cleave.mem", MemoryAttr)
    return attr.data if attr is not None else None


def tiles(op: Operation) -> TileConfigAttr | None:
    """The `cleave.tiles` configuration of a scheduled kernel, or None."""
    return get(op, "cleave.tiles", TileConfigAttr)


def causal(op: Operation) -> int | None:
    """The offset of an op's `cleave.causal` promise (an `itgraph.load` of a causal mask), or None."""
    attr = get(op, "cleave.causal", CausalMaskAttr)
    return attr.value if attr is not None else None


def check_metadata(op: Operation, nested: bool = False) -> None:
    """Every declared `cleave.*` attribute of `op` (and of its nested ops) holds its declared type."""
    for o in op.walk() if nested else (op,):
        for key, attr in o.attributes.items():
            want = METADATA.get(key)
            if want is not None and not isinstance(attr, want):
                kinds = want if isinstance(want, tuple) else (want,)
                raise VerifyException(
                    f"{o.name}: {key} must be a {' or '.join(k.name for k in kinds)} attribute, got {attr}"
                )


Cleave = Dialect("cleave", [], [StageAttr, MemoryAttr, TileConfigAttr, CausalMaskAttr, ExprAttr, ViewAttr, JoinAttr, PartAttr, BoundaryAttr])
