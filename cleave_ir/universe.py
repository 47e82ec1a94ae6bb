"""The `xdsl.universe` plugin: lets stock `xdsl-opt` (and any xDSL tool) load our dialects and passes."""

from collections.abc import Callable

from xdsl.ir import Dialect
from xdsl.passes import ModulePass
from xdsl.universe import Universe
from xdsl.utils.target import Target


def get_all_dialects() -> dict[str, Callable[[], Dialect]]:
    """Lazy factories for every Cleave-IR dialect, by name."""

    def tgraph() -> Dialect:
        from cleave_ir.dialects.tgraph import TGraph

        return TGraph

    def itgraph() -> Dialect:
        from cleave_ir.dialects.itgraph import ITGraph

        return ITGraph

    def tilelang() -> Dialect:
        from cleave_ir.dialects.tilelang import TileLang

        return TileLang

    def cleave() -> Dialect:
        from cleave_ir.dialects.cleave import Cleave

        return Cleave

    return {"tgraph": tgraph, "itgraph": itgraph, "tilelang": tilelang, "cleave": cleave}


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Lazy factories for every Cleave-IR pass, by name (all prefixed `cleave-`)."""
    from cleave_ir.passes import get_all_passes as passes

    return passes()


def get_all_targets() -> dict[str, Callable[[], type[Target]]]:
    """Output backends: `-t tilelang` writes the TileLang module of the scheduled kernels."""

    def tilelang() -> type[Target]:
        from cleave_ir.tilelang_emitter import TileLangTarget

        return TileLangTarget

    return {"tilelang": tilelang}


CLEAVE_UNIVERSE = Universe(
    all_dialects=get_all_dialects(), all_passes=get_all_passes(), all_targets=get_all_targets()
)
