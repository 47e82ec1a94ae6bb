"""Capture: `torch.export` a function or module into an FX graph of aten ops, with example values.

The captured `GraphModule` is `ExportedProgram.module()`: parameters and buffers are `get_attr`
nodes (they become inputs of the subgraphs that use them), user inputs are placeholders, and
calling it runs the model. Every node's concrete value on the example inputs is recorded (the
example run): it gives concrete sizes for dims that are dynamic in the node's fake value, and the
first input set of the gate's correctness check.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import fx

from cleave_ir.diagnostics import CleaveError
from cleave_ir.runtime import one_line


@dataclass
class Captured:
    """A captured program: the runnable FX module and each node's example value."""

    module: fx.GraphModule
    values: dict[fx.Node, Any]

    def sizes(self, node: fx.Node) -> tuple[int, ...]:
        """Concrete shape of `node` in the example run."""
        return tuple(int(d) for d in self.values[node].shape)


class _Module(torch.nn.Module):
    """Wraps a plain function so that torch.export takes it."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        super().__init__()
        self.fn = fn

    def forward(self, *args: Any) -> Any:
        return self.fn(*args)


def export(model: Any, example_inputs: Sequence[Any], dynamic_shapes: Any = None) -> fx.GraphModule:
    """`torch.export.export(model, example_inputs, dynamic_shapes=...).module()` (a function is wrapped)."""
    if not isinstance(model, torch.nn.Module):
        dynamic_shapes = _varargs_shapes(model, dynamic_shapes)
        model = _Module(model)
    try:
        ep = torch.export.export(model, tuple(example_inputs), dynamic_shapes=dynamic_shapes)
    except Exception as e:  # one line for the user; the model itself is untouched
        raise CleaveError(f"error: torch.export failed: {one_line(e)}") from None
    return ep.module()


def _varargs_shapes(fn: Callable[..., Any], dynamic_shapes: Any) -> Any:
    """`dynamic_shapes` given for `fn`'s inputs (a sequence, or a dict by parameter name) as the
    `_Module` wrapper's `forward(*args)` takes them: one entry, `args`, holding the sequence."""
    if dynamic_shapes is None:
        return None
    if isinstance(dynamic_shapes, dict):
        import inspect

        try:
            names = list(inspect.signature(fn).parameters)
        except (TypeError, ValueError):
            return dynamic_shapes
        dynamic_shapes = [dynamic_shapes.get(n) for n in names]
    return (tuple(dynamic_shapes),) if isinstance(dynamic_shapes, (list, tuple)) else dynamic_shapes


def record(gm: fx.GraphModule, example_inputs: Sequence[Any]) -> dict[fx.Node, Any]:
    """Every node's value when `gm` runs on `example_inputs` (no_grad). The run leaves no trace: it
    reads copies of the inputs, and buffers a forward writes in place (a running statistic, a cache;
    the exported module shares them with the user's model) are put back afterwards."""
    values: dict[fx.Node, Any] = {}
    saved = {name: b.detach().clone() for name, b in gm.named_buffers()}
    example_inputs = [x.clone() if isinstance(x, torch.Tensor) else x for x in example_inputs]

    class Recorder(fx.Interpreter):
        def run_node(self, n: fx.Node) -> Any:
            out = super().run_node(n)
            values[n] = out
            return out

    with torch.no_grad():
        try:
            Recorder(gm).run(*example_inputs)
        finally:
            for name, b in gm.named_buffers():
                b.copy_(saved[name])
    return values


METADATA_CHECKS = ("_assert_tensor_metadata",)
"""aten ops that only check a tensor's dtype or device when the program runs (torch.export puts one
in front of every `.to(dtype)`); they compute nothing."""


def drop_metadata_checks(gm: fx.GraphModule) -> None:
    """Erase the `METADATA_CHECKS` nodes: as users of the value they check they would cut it out of
    every region (a `.float()` softmax would end its attention's region), and a region that computes
    that value internally leaves them nothing to check."""
    for n in list(gm.graph.nodes):
        if n.op == "call_function" and not n.users and getattr(getattr(n.target, "overloadpacket", None), "__name__", None) in METADATA_CHECKS:
            gm.graph.erase_node(n)
    gm.recompile()


def capture(model: Any, example_inputs: Sequence[Any], dynamic_shapes: Any = None) -> Captured:
    """Export `model` (or take an FX GraphModule as it is), drop its metadata checks
    (`drop_metadata_checks`), and record the example run."""
    if isinstance(model, fx.GraphModule) and _is_aten(model):
        gm = model
    else:
        gm = export(model, example_inputs, dynamic_shapes)
    drop_metadata_checks(gm)
    return Captured(gm, record(gm, example_inputs))


def _is_aten(gm: fx.GraphModule) -> bool:
    """An FX graph whose calls are all aten ops with fake values (already at the level we map)."""
    calls = [n for n in gm.graph.nodes if n.op == "call_function"]
    return bool(calls) and all(getattr(n.target, "namespace", None) == "aten" and "val" in n.meta for n in calls)
