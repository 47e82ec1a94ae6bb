"""Cleave-IR: a tensor-program superoptimizer and scheduler on xDSL that emits TileLang kernels.

The public Python entry points, each raising `CleaveError` (a one-line message, `file:line:col:
error: ...` or `error: ...`) for bad input and never another exception:

- `parse_module_text(ctx, text, filename)`: a verified module from MLIR text (`cleave_ir.diagnostics`);
- `compile_graph(graph, output, options)`: `cleave compile` of a `tgraph.graph` (`cleave_ir.compile`).

They are imported on first use, so `import cleave_ir` stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cleave_ir.compile import compile_graph
    from cleave_ir.diagnostics import CleaveError, parse_module_text

__all__ = ["CleaveError", "compile_graph", "parse_module_text"]

_HOMES = {"CleaveError": "cleave_ir.diagnostics", "parse_module_text": "cleave_ir.diagnostics", "compile_graph": "cleave_ir.compile"}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'cleave_ir' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(_HOMES[name]), name)
