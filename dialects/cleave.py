"""The `cleave` dialect: the typed metadata that Cleave-IR's passes attach to graphs and kernels.

Passes exchange facts about graphs and kernels as discardable `cleave.*` attributes. Each key is
declared here, once, with the attribute type it holds (`METADATA`); closed vocabularies are enum
attributes and structured values are parametrized attributes, so nothing is parsed back from a
string:

    cleave.stage = #cleave<stage split>                   kernel stage of a cut or split graph
    cleave.mem = #cleave<mem shared>                      memory placement of a tile
    cleave.tiles = #cleave.tiles<out = [64, 64], reduce = 32>        a kernel's tile configuration
    cleave.tiles = #cleave.tiles<out = [1, 128], reduce = none, no_fusion>
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import auto
from typing import TypeVar

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
from xdsl.ir import Attribute, Dialect, Operation, ParametrizedAttribute, SpacedOpaqueSyntaxAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum


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


# Every `cleave.*` key that passes exchange, and the attribute type it holds.
METADATA: dict[str, type[Attribute] | tuple[type[Attribute], ...]] = {
    # graphs: where a candidate comes from and how it was cut
    "cleave.candidate_of": SymbolRefAttr,  # the input graph a candidate rewrites
    "cleave.note": StringAttr,  # free text for people: what the search did
    "cleave.split_count": IntegerAttr,  # s of a Split-K candidate
    "cleave.checked_at": DictionaryAttr,  # symbol -> the size a symbolic candidate was checked at
    "cleave.stage": StageAttr,
    "cleave.split": SymbolRefAttr,  # the split graph of a combine
    "cleave.combine": SymbolRefAttr,  # the combine graph of a split
    "cleave.next": SymbolRefAttr,  # the next piece of a graph cut into kernels
    "cleave.passthrough": ArrayAttr,  # names of the original inputs a later stage also reads
    "cleave.output_names": ArrayAttr,  # names of a piece's outputs
    "cleave.input_names": ArrayAttr,  # names of a tilelang kernel's inputs
    # kernels: the schedule
    "cleave.schedule_of": SymbolRefAttr,  # the graph a kernel computes
    "cleave.tiles": TileConfigAttr,
    "cleave.estimated_us": FloatAttr,
    "cleave.smem_bytes": IntegerAttr,
    "cleave.threads": IntegerAttr,
    "cleave.stages": IntegerAttr,  # software-pipelining stages of the kernel's loop
    "cleave.dynamic": DictionaryAttr,  # dynamic dim -> its quantum
    "cleave.representative": DictionaryAttr,  # dynamic dim -> the size it was scheduled at
    "cleave.static_only": StringAttr,  # why a kernel has no dynamic form
    # ops inside kernels
    "cleave.mem": MemoryAttr,
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


Cleave = Dialect("cleave", [], [StageAttr, MemoryAttr, TileConfigAttr])
