"""Stitching: each accepted region becomes one `torch.library` custom op in the captured FX graph.

The op `cleave::<region>_<digest>(Tensor a0, ...) -> Tensor` (a projection group's: `-> Tensor[]`, one
per member) runs our kernel (registered for
CompositeExplicitAutograd, so on any device); its fake implementation runs PyTorch's version of the
region on fake tensors, so shapes (dynamic ones too) and dtypes propagate exactly and the op
composes with torch.compile and CUDA graphs. The region's nodes are replaced by one call to the op;
the rest of the graph stays as exported.
"""

from __future__ import annotations

import hashlib
import inspect
import operator
from collections.abc import Callable
from typing import Any

import torch
from torch import fx
from torch._subclasses.fake_tensor import FakeTensorMode

from cleave_ir.compile import graph_text
from cleave_ir.torch import aten
from cleave_ir.torch.partition import Region

_LIB: torch.library.Library | None = None
_DEFINED: set[str] = set()
_KERNELS: dict[str, Callable[..., torch.Tensor]] = {}
_FAKES: dict[str, Callable[..., torch.Tensor]] = {}


def bind(region: Region, kernel: Callable[..., torch.Tensor], pytorch: Callable[..., torch.Tensor] | None = None) -> Callable[..., torch.Tensor]:
    """`kernel` as a function of the region's tensor inputs: grouped and row inputs are viewed and
    boolean masks cast (`Input.view`), a causal mask is made (`Input.mask`, once per device; the
    kernel computes it from indices), and the output is viewed back (`Region.unview`).

    With `pytorch` (the region's PyTorch module), the output has the strides PyTorch's region
    returns (attention returns heads transposed, so that the user's `transpose(1, 2).reshape` is a
    view), which is what the custom op's fake promises torch.compile. A kernel that takes `out=`
    writes that layout in place; another kernel's result is copied into it.
    """
    slots = region.inputs
    if region.members:
        return _bind_group(region, kernel)
    if pytorch is None and region.output_like is None and not region.unsqueeze and region.empty_rows is None and all(
        i.group == 1 and i.layout is None and i.cast is None and i.causal is None for i in slots
    ):
        return kernel

    layouts: dict[tuple[Any, ...], tuple[Any, ...] | None] = {}
    # a grouped attention whose query heads are a dim of their own ([b, kvh, group, s, d]) writes
    # PyTorch's [b, h, s, d] output through a view of it; rows merging (group, s) have no such view
    heads = next((slot.group for slot in slots if slot.group > 1 and slot.heads_dim), None)
    try:
        writes_out = "out" in inspect.signature(kernel).parameters and (region.output_like is None or heads is not None)
    except (TypeError, ValueError):  # a callable without a signature
        writes_out = False

    # a region whose output is a transposed view of what its kernel writes, or is written in parts
    # (`cleave.boundary`: a heads transpose taken into the region, a rotary embedding's halves): given
    # `out`, the kernel writes it through views of it (no copy, no join), so `out` is always given
    parts = region.boundary.outputs.data if region.boundary is not None else ()
    through_views = any(p.permutation for p in parts) or len(parts) > 1

    def wanted(xs: tuple[torch.Tensor, ...]) -> tuple[Any, ...] | None:
        """(shape, strides, dtype) of PyTorch's output for inputs like `xs`; None when row-major (and
        the kernel does not write it through views)."""
        key = tuple((tuple(x.shape), x.stride(), x.dtype, x.device) for x in xs)
        if key not in layouts:
            layouts[key] = None
            try:
                with FakeTensorMode(allow_non_fake_inputs=True) as mode:
                    fake = pytorch(*(mode.from_tensor(x) for x in xs))  # type: ignore[misc]
            except Exception:  # no fake implementation: the kernel's own (row-major) layout
                return None
            if not isinstance(fake, torch.Tensor) or (fake.is_contiguous() and not through_views):
                return None
            if all(st > 0 for st, n in zip(fake.stride(), fake.shape) if n > 1):  # not an expanded view
                layouts[key] = (tuple(fake.shape), fake.stride(), fake.dtype)
        return layouts[key]

    def run(*xs: torch.Tensor) -> torch.Tensor:
        it = iter(xs)
        args = [slot.mask(xs[0].device, xs) if slot.causal is not None else slot.view(next(it)) for slot in slots]
        want = wanted(xs) if pytorch is not None else None
        if want is None:
            return region.zero_empty_rows(region.unview(kernel(*args), xs), xs)
        out = torch.empty_strided(want[0], want[1], dtype=want[2], device=xs[0].device)
        if writes_out:
            target = out
            for d in reversed(region.unsqueeze):
                target = target.squeeze(d)
            if region.output_like is not None and heads is not None:
                target = target.unflatten(1, (target.shape[1] // heads, heads))
            kernel(*args, out=target)
        else:
            out.copy_(region.unview(kernel(*args), xs))
        return region.zero_empty_rows(out, xs)

    return run


def _bind_group(group: Region, kernel: Callable[..., Any]) -> Callable[..., list[torch.Tensor]]:
    """A group's kernel as a function of its tensor inputs: the list of its members' outputs, each in its
    root's shape (`Region.unview`). Members are projections: row-major outputs, no masks or grouped views."""
    slots = group.inputs

    def run(*xs: torch.Tensor) -> list[torch.Tensor]:
        outs = kernel(*(slot.view(x) for slot, x in zip(slots, xs)))
        outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
        if len(outs) != len(group.members):
            raise ValueError(f"the group's kernel returned {len(outs)} outputs for {len(group.members)} regions")
        return [m.unview(o, xs) for m, o in zip(group.members, outs)]

    return run


def op_name(region: Region) -> str:
    """A name per graph and the way the region's tensors reach it, so equal regions share one op and
    an op is never rebound to a kernel that views its inputs or output differently (the same graph
    serves a decode linear's [b, 1, k] input viewed as rows and a prefill's [b, k] one)."""
    assert region.graph is not None
    binding = [(i.shape, str(i.dtype), i.group, i.heads_dim, i.layout, str(i.cast), i.causal, i.lengths) for i in region.inputs]
    unsqueeze = [m.unsqueeze for m in region.members] if region.members else region.unsqueeze
    text = f"{graph_text(region.graph)}\n{binding!r} {region.output_like!r} {unsqueeze!r}"
    return f"{region.name}_{hashlib.sha256(text.encode()).hexdigest()[:12]}"


def custom_op(name: str, arity: int, kernel: Callable[..., Any], fake: Callable[..., Any], outputs: int = 1) -> Any:
    """The op `torch.ops.cleave.<name>.default`, defined on first use; its kernel and fake are (re)bound.
    With `outputs` > 1 (a projection group) it returns a list of tensors."""
    global _LIB
    if _LIB is None:
        _LIB = torch.library.Library("cleave", "FRAGMENT")
    _KERNELS[name], _FAKES[name] = kernel, fake
    if name not in _DEFINED:
        _LIB.define(f"{name}({', '.join(f'Tensor a{i}' for i in range(arity))}) -> {'Tensor[]' if outputs > 1 else 'Tensor'}")

        def impl(*xs: torch.Tensor) -> Any:
            return _KERNELS[name](*xs)

        def fake_impl(*xs: torch.Tensor) -> Any:
            got = _FAKES[name](*xs)
            return list(got) if outputs > 1 else got

        def backward(ctx: Any, grad: torch.Tensor) -> Any:
            raise RuntimeError(
                f"cleave::{name} has no backward: regions compiled by cleave_ir.torch are for inference; "
                "train the original model (or call the optimized one under torch.no_grad())"
            )

        _LIB.impl(name, impl, "CompositeExplicitAutograd")
        torch.library.register_fake(f"cleave::{name}", fake_impl, lib=_LIB)
        # a backward through our kernel fails loudly instead of leaving the gradients silently missing
        torch.library.register_autograd(f"cleave::{name}", backward, lib=_LIB)
        _DEFINED.add(name)
    return getattr(torch.ops.cleave, name).default


class Call:
    """What the stitched graph calls for a region: its custom op `op` where PyTorch traces or records
    (torch.compile, torch.export, fake or functional tensors) or where autograd would (an input that
    requires grad: the op's backward says our kernels have none), else the op's kernel `fn` itself,
    without the dispatcher's round trip through Python (about 9 us a call on the host, which an
    eager model with short kernels or syncs pays; measured in bench/results/hf_models_real_*)."""

    def __init__(self, op: Any, fn: Callable[..., torch.Tensor]) -> None:
        self.op, self.fn = op, fn
        self.__name__ = f"cleave_{op._opname}"  # (FX's code names the target by it)

    def __repr__(self) -> str:
        return str(self.op)  # what the graph's printout names: cleave.<region>_<digest>.default

    def __call__(self, *xs: torch.Tensor) -> torch.Tensor:
        if torch.compiler.is_compiling() or any(type(x) not in _PLAIN for x in xs):
            return self.op(*xs)
        if torch.is_grad_enabled() and any(x.requires_grad for x in xs):
            return self.op(*xs)
        return self.fn(*xs)


_PLAIN = (torch.Tensor, torch.nn.Parameter)


def replace(gm: fx.GraphModule, region: Region, op: Any, kernel: Callable[..., torch.Tensor], replaced: dict[fx.Node, fx.Node]) -> fx.Node:
    """Replace the region's nodes in `gm` by one call of `op` on its tensor inputs (through `Call`,
    which calls `kernel`, the op's, directly where it can).

    `replaced` maps the roots of regions replaced before to their calls (an input may be one); the
    new call is added to it.
    """
    g = gm.graph
    # a group's call goes before its first node (its inputs are all computed before it), an item per member
    with g.inserting_before(region.nodes[0] if region.members else region.root):
        call = g.call_function(Call(op, kernel), tuple(replaced.get(n, n) for n in region.tensor_inputs()))
        values = [g.call_function(operator.getitem, (call, i)) for i in range(len(region.outputs))] if region.members else [call]
    if region.members:
        call.meta = {"val": [n.meta.get("val") for n in region.outputs]}
    for value, out in zip(values, region.outputs):
        value.meta = dict(out.meta)
        out.replace_all_uses_with(value)
        replaced[out] = value
    read = {a for n in region.nodes for a in n.all_input_nodes}
    for n in reversed(region.nodes):
        _erase_dead_splits(g, n)
        g.erase_node(n)
    for a in read - set(region.nodes):
        _erase_dead_splits(g, a)
    return call


def _erase_dead_splits(g: fx.Graph, n: fx.Node) -> None:
    """Erase `n`'s splits (chunk, split, unbind) that nothing reads any more: a region holds the pieces
    (`getitem`) it reads but not their split, which would keep `n` alive (a rotary embedding's `chunk` of
    a normed q inside the region) or dangle over an input."""
    for split in [u for u in n.users if aten.op_name(u) in aten.SPLITS and not u.users]:
        g.erase_node(split)


def finish(gm: fx.GraphModule) -> None:
    gm.graph.lint()
    gm.recompile()
