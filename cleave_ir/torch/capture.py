"""Capture: `torch.export` a function or module into an FX graph of aten ops, with example values.

The captured `GraphModule` is `ExportedProgram.module()`: parameters and buffers are `get_attr`
nodes (they become inputs of the subgraphs that use them), user inputs are placeholders, and
calling it runs the model. Every node's concrete value on the example inputs is recorded (the
example run): it gives concrete sizes for dims that are dynamic in the node's fake value, and the
first input set of the gate's correctness check.
"""

from __future__ import annotations

import contextlib
import io
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import fx

from cleave_ir.diagnostics import CleaveError, one_line
from cleave_ir.torch.aten import CHUNKED, ELEMENTWISE, SLICED_LINEAR, op_name


@dataclass
class Captured:
    """A captured program: the runnable FX module and each node's example value."""

    module: fx.GraphModule
    values: dict[fx.Node, Any]

    def __repr__(self) -> str:  # (not every example value: they include the model's weights)
        return f"<cleave_ir.torch.Captured: {len(self.module.graph.nodes)} nodes, {len(self.values)} example values>"

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
        # (torch.export prints the graph it had traced when it fails, hundreds of lines, to stderr)
        with contextlib.redirect_stderr(io.StringIO()):
            ep = torch.export.export(model, tuple(example_inputs), dynamic_shapes=dynamic_shapes)
    except Exception as e:  # one line for the user; the model itself is untouched
        raise CleaveError(f"error: torch.export failed: {export_message(e)}") from None
    return ep.module()


def export_message(e: BaseException) -> str:
    """What torch.export says is wrong, in one line: its first line (less "For more information ...")
    and its first bulleted detail, without the closing boilerplate ("The error above occurred when
    calling torch.export.export ...") that is all a last line holds."""
    lines = [x.strip() for x in str(e).splitlines() if x.strip() and not x.strip().startswith("The error above occurred")]
    if not lines:
        return type(e).__name__
    head = lines[0].split(" For more information")[0]
    detail = next((x.removeprefix("- ").strip() for x in lines[1:] if x.startswith("- ")), "")
    return one_line(f"{head} {detail}".strip())


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


MODEL_RUNS = ("its example inputs shuffled", "normal(0,1) inputs")


def model_runs(gm: fx.GraphModule, example_inputs: Sequence[Any], seed: int = 0) -> list[tuple[str, dict[fx.Node, Any]]]:
    """Every node's value when `gm` runs on other inputs of the example's shapes (`MODEL_RUNS`): each float
    input's values shuffled (the same values: a variance stays positive), then drawn from normal(0, 1);
    masks, ids, other non-float inputs and parameters keep their example values. A region's inputs taken from these
    runs are what the model makes of such inputs (a norm is positive, a softmax row sums to 1), which
    the gate's region-level random sets are not. A run that fails (a model that refuses such inputs)
    is left out."""
    gen = torch.Generator().manual_seed(seed)

    def draw(x: Any, how: str) -> Any:
        if not isinstance(x, torch.Tensor) or not x.is_floating_point() or isinstance(x, torch.nn.Parameter):
            return x  # (a graph torch.compile hands over takes the model's parameters as inputs: kept)
        if how == MODEL_RUNS[0]:
            flat = x.flatten()
            return flat[torch.randperm(flat.numel(), generator=gen).to(x.device)].reshape(x.shape)
        return torch.randn(x.shape, generator=gen, dtype=torch.float64).to(x.device, x.dtype)

    runs = []
    for how in MODEL_RUNS:
        try:
            runs.append((f"the model run on {how}", record(gm, [draw(x, how) for x in example_inputs])))
        except Exception:  # noqa: BLE001 - the region-level sets still check the region
            continue
    return runs


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


_CHUNKS = ("aten.chunk", "aten.split", "aten.split_with_sizes")

def _chunk_bounds(node: fx.Node, n: int) -> list[tuple[int, int]] | None:
    """The [start, end) of every piece `chunk`/`split`/`split_with_sizes` `node` cuts `n` into."""
    name = op_name(node)
    arg = node.args[1] if len(node.args) > 1 else None
    if name == "aten.chunk" and isinstance(arg, int) and arg > 0:
        size = -(-n // arg)
    elif name == "aten.split" and isinstance(arg, int) and arg > 0:
        size = arg
    elif name in ("aten.split", "aten.split_with_sizes") and isinstance(arg, (list, tuple)) and sum(arg) == n:
        starts = [sum(arg[:i]) for i in range(len(arg))]
        return [(a, a + int(k)) for a, k in zip(starts, arg)]
    else:
        return None
    return [(a, min(a + size, n)) for a in range(0, n, size)]


def slice_chunked_projections(gm: fx.GraphModule) -> int:
    """Mark each piece of a projection cut along its output features (Phi-3's `gate_up(x).chunk(2, -1)`,
    then silu(gate) * up) as the projection over those rows of the weight: a `getitem` of the chunk
    gets `SLICED_LINEAR` = (x, W[a:b], bias[a:b]), the row slices added as (view) nodes, so a region
    may compute `linear(x, W[a:b])` itself instead of taking the piece from PyTorch's fused linear,
    which stays as it is for PyTorch's own path (a region that is not taken leaves it running).
    Only where every piece feeds element-wise ops (an MLP's gate and up, not a fused QKV's heads).
    Returns how many chunks were marked."""
    marked = 0
    for node in list(gm.graph.nodes):
        if node.op != "call_function" or op_name(node) not in _CHUNKS:
            continue
        lin = node.args[0]
        if not (isinstance(lin, fx.Node) and op_name(lin) == "aten.linear" and len(lin.users) == 1):
            continue
        x, w = lin.args[0], lin.args[1]
        b = lin.args[2] if len(lin.args) > 2 else lin.kwargs.get("bias")
        val = lin.meta.get("val")
        dim = node.args[2] if len(node.args) > 2 else node.kwargs.get("dim", 0)
        wval = w.meta.get("val") if isinstance(w, fx.Node) else None
        if val is None or wval is None or wval.dim() != 2 or dim % val.dim() != val.dim() - 1:
            continue
        bounds = _chunk_bounds(node, int(wval.shape[0]))
        pieces = list(node.users)
        if bounds is None or not pieces or any(p.target is not operator.getitem or not isinstance(p.args[1], int) for p in pieces):
            continue
        if any(op_name(u) not in ELEMENTWISE for p in pieces for u in p.users):
            continue
        for piece in pieces:
            start, end = bounds[piece.args[1]]
            with gm.graph.inserting_after(lin):
                ws = gm.graph.call_function(torch.ops.aten.slice.Tensor, (w, 0, start, end))
                ws.meta["val"] = wval[start:end]
                bs = None
                if isinstance(b, fx.Node) and b.meta.get("val") is not None:
                    bs = gm.graph.call_function(torch.ops.aten.slice.Tensor, (b, 0, start, end))
                    bs.meta["val"] = b.meta["val"][start:end]
            piece.meta[SLICED_LINEAR] = (x, ws, bs)
        lin.meta[CHUNKED] = True
        marked += 1
    if marked:
        gm.recompile()
    return marked


def drop_unused_slices(gm: fx.GraphModule) -> None:
    """Erase the weight slices `slice_chunked_projections` added that no region took, and the fused
    projections and chunks whose pieces every region took (nothing reads them any more)."""
    for node in reversed(list(gm.graph.nodes)):
        if node.users or node.op != "call_function":
            continue
        if op_name(node) in ("aten.slice", "aten.linear", *_CHUNKS) or node.target is operator.getitem:
            gm.graph.erase_node(node)


def capture(model: Any, example_inputs: Sequence[Any], dynamic_shapes: Any = None) -> Captured:
    """Export `model` (or take an FX GraphModule as it is), drop its metadata checks
    (`drop_metadata_checks`), mark chunked projections (`slice_chunked_projections`), and record the
    example run."""
    if isinstance(model, fx.GraphModule) and _is_aten(model):
        gm = model
    else:
        gm = export(model, example_inputs, dynamic_shapes)
    drop_metadata_checks(gm)
    slice_chunked_projections(gm)
    return Captured(gm, record(gm, example_inputs))


def _is_aten(gm: fx.GraphModule) -> bool:
    """An FX graph whose calls are all aten ops with fake values (already at the level we map)."""
    calls = [n for n in gm.graph.nodes if n.op == "call_function"]
    return bool(calls) and all(getattr(n.target, "namespace", None) == "aten" and "val" in n.meta for n in calls)
