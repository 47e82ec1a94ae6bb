"""Stitching: each accepted region becomes one `torch.library` custom op in the captured FX graph.

The op `cleave::<region>_<digest>(Tensor a0, ...) -> Tensor` runs our kernel (registered for
CompositeExplicitAutograd, so on any device); its fake implementation runs PyTorch's version of the
region on fake tensors, so shapes (dynamic ones too) and dtypes propagate exactly and the op
composes with torch.compile and CUDA graphs. The region's nodes are replaced by one call to the op;
the rest of the graph stays as exported.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

import torch
from torch import fx

from cleave_ir.compile import graph_text
from cleave_ir.torch.partition import Region

_LIB: torch.library.Library | None = None
_DEFINED: set[str] = set()
_KERNELS: dict[str, Callable[..., torch.Tensor]] = {}
_FAKES: dict[str, Callable[..., torch.Tensor]] = {}


def bind(region: Region, kernel: Callable[..., torch.Tensor]) -> Callable[..., torch.Tensor]:
    """`kernel` as a function of the region's tensor inputs: grouped and row inputs are viewed and
    boolean masks cast (`Input.view`), a causal mask is made (`Input.mask`, once per device; the
    kernel computes it from indices), and the output is viewed back (`Region.unview`)."""
    slots = region.inputs
    if region.output_like is None and not region.unsqueeze and all(
        i.group == 1 and i.layout is None and i.cast is None and i.causal is None for i in slots
    ):
        return kernel

    def run(*xs: torch.Tensor) -> torch.Tensor:
        it = iter(xs)
        args = [slot.mask(xs[0].device) if slot.causal is not None else slot.view(next(it)) for slot in slots]
        return region.unview(kernel(*args), xs)

    return run


def op_name(region: Region) -> str:
    """A name per graph, so equal regions share one op."""
    assert region.graph is not None
    text = graph_text(region.graph)
    return f"{region.name}_{hashlib.sha256(text.encode()).hexdigest()[:12]}"


def custom_op(name: str, arity: int, kernel: Callable[..., torch.Tensor], fake: Callable[..., torch.Tensor]) -> Any:
    """The op `torch.ops.cleave.<name>.default`, defined on first use; its kernel and fake are (re)bound."""
    global _LIB
    if _LIB is None:
        _LIB = torch.library.Library("cleave", "FRAGMENT")
    _KERNELS[name], _FAKES[name] = kernel, fake
    if name not in _DEFINED:
        _LIB.define(f"{name}({', '.join(f'Tensor a{i}' for i in range(arity))}) -> Tensor")

        def impl(*xs: torch.Tensor) -> torch.Tensor:
            return _KERNELS[name](*xs)

        def fake_impl(*xs: torch.Tensor) -> torch.Tensor:
            return _FAKES[name](*xs)

        _LIB.impl(name, impl, "CompositeExplicitAutograd")
        torch.library.register_fake(f"cleave::{name}", fake_impl, lib=_LIB)
        _DEFINED.add(name)
    return getattr(torch.ops.cleave, name).default


def replace(gm: fx.GraphModule, region: Region, op: Any, replaced: dict[fx.Node, fx.Node]) -> fx.Node:
    """Replace the region's nodes in `gm` by one call of `op` on its tensor inputs.

    `replaced` maps the roots of regions replaced before to their calls (an input may be one); the
    new call is added to it.
    """
    g = gm.graph
    root = region.root
    with g.inserting_before(root):
        call = g.call_function(op, tuple(replaced.get(n, n) for n in region.tensor_inputs()))
    call.meta = dict(root.meta)
    root.replace_all_uses_with(call)
    for n in reversed(region.nodes):
        g.erase_node(n)
    replaced[root] = call
    return call


def finish(gm: fx.GraphModule) -> None:
    gm.graph.lint()
    gm.recompile()
