"""Graphs torch.compile hands over: a model torch.export cannot capture whole, cut where dynamo breaks
the graph (`in_pieces`, `InPieces`), and a graph dynamo made dynamic (`SymbolicGraph`). Each graph is
captured at its first call (`Piece`), on that call's tensors."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import torch
from torch import fx

from cleave_ir.torch.gate import Report


class SymbolicGraph(torch.nn.Module):
    """A graph dynamo hands over with dynamic sizes, as a module of its tensor inputs only: each size it
    takes as an int (a `SymInt` placeholder) is read from a tensor input that has that size as a dim."""

    def __init__(self, gm: fx.GraphModule, positions: list[int], sizes: dict[int, tuple[int, int]], dims: list[dict[int, Any]]) -> None:
        super().__init__()
        self.gm, self.positions, self.sizes, self.dims = gm, positions, sizes, dims

    @staticmethod
    def of(gm: fx.GraphModule) -> SymbolicGraph | None:
        """None where a size placeholder matches no tensor input's dim, or an input is neither."""
        vals = [n.meta.get("example_value") for n in gm.graph.nodes if n.op == "placeholder"]
        positions = [i for i, v in enumerate(vals) if isinstance(v, torch.Tensor)]
        where = {}
        for k, i in enumerate(positions):
            for d, n in enumerate(vals[i].shape):
                if isinstance(n, torch.SymInt):
                    where.setdefault(n.node.expr, (k, d))
        sizes = {}
        for i, v in enumerate(vals):
            if isinstance(v, torch.SymInt):
                if v.node.expr not in where:
                    return None
                sizes[i] = where[v.node.expr]
            elif not isinstance(v, torch.Tensor):
                return None
        dims = [{d: torch.export.Dim.AUTO for d, n in enumerate(vals[i].shape) if isinstance(n, torch.SymInt)} for i in positions]
        return SymbolicGraph(gm, positions, sizes, dims)

    def tensors(self, args: Sequence[Any]) -> list[Any]:
        return [args[i] for i in self.positions]

    def dynamic_shapes(self) -> tuple[Any, ...]:
        """For torch.export: `forward`'s one (variadic) parameter, each tensor's dynamic dims."""
        return (tuple(d or None for d in self.dims),)

    def forward(self, *tensors: torch.Tensor) -> Any:
        args: list[Any] = []
        it = iter(tensors)
        for i in range(len(self.positions) + len(self.sizes)):
            if i in self.sizes:
                k, d = self.sizes[i]
                args.append(tensors[k].shape[d])
            else:
                args.append(next(it))
        return self.gm(*args)

    def calling(self, m: Any) -> Any:
        """`m` (this module optimized) called as dynamo calls the graph: with the sizes among the tensors."""
        positions = self.positions
        return lambda *args: m(*[args[i] for i in positions])


class Piece:
    """A graph dynamo hands a backend, made into what runs it (`make(gm, args)`) at its first call, on
    that call's tensors, rather than when handed over: torch.export (`capture`) inside the backend's
    compile breaks dynamo's guards on the frame it is compiling when the model has graph breaks
    ("Guard failed on the same frame it was created", Mixtral's)."""

    def __init__(self, gm: fx.GraphModule, make: Any) -> None:
        self.gm, self.make, self.fn = gm, make, None

    def __call__(self, *args: Any) -> Any:
        if self.fn is None:
            self.fn = self.gm.forward  # (a `make` that raises leaves PyTorch's graph)
            self.fn = self.make(self.gm, list(args))
        return self.fn(*args)


def in_pieces(model: Any, example_inputs: Sequence[Any], compile_fx: Any, *, static: bool = False) -> Any:
    """`model` under torch.compile with the backend `compile_fx`, cut into graphs where dynamo breaks the
    graph (code torch.export cannot capture runs in Python between them), in a first run on
    `example_inputs` (made here, so every graph's `Piece` is made). `static`: every graph at the sizes
    of this run (dynamo would make a frame it compiled before dynamic). Returns the compiled model."""
    import torch._dynamo

    compiled = torch.compile(model, backend=compile_fx)
    # frames dynamo compiled before (another model's, sharing `transformers`' helpers) count against
    # its recompile limits, past which it stops compiling them
    config = torch._dynamo.config
    limits = dict(recompile_limit=max(config.recompile_limit, 64), accumulated_recompile_limit=max(config.accumulated_recompile_limit, 4096))
    # dynamo warns at each graph break it makes (a `nonzero`, an `.item()`): here they are the point
    quiet = logging.getLogger("torch._dynamo")
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    try:
        with config.patch(**limits, **({"automatic_dynamic_shapes": False} if static else {})):
            compiled(*example_inputs)
    finally:
        quiet.setLevel(level)
    return compiled


def static_sizes(xs: Sequence[Any], tensors_only: bool = True) -> bool:
    """Whether a graph's example inputs `xs` are all tensors (`tensors_only`) and none has a symbolic size."""
    tensors = [x for x in xs if isinstance(x, torch.Tensor)]
    return (not tensors_only or len(tensors) == len(xs)) and not any(isinstance(d, torch.SymInt) for x in tensors for d in x.shape)


def static_graphs(make: Any) -> Any:
    """A dynamo backend running each graph of static sizes by `make(gm, args)` (a `Piece`), any other as it is."""

    def compile_fx(gm: fx.GraphModule, xs: Sequence[Any]) -> Any:
        return Piece(gm, make) if static_sizes(xs) else gm.forward

    return compile_fx


class InPieces(torch.nn.Module):
    """A model `optimize` took in the graphs torch.compile cuts it into (`in_pieces`): call it like the
    model; `cleave_report` lists the regions of every graph of the example's run. Where a later call's
    sizes differ, dynamo compiles its graphs again (with those sizes dynamic), and each is optimized
    at its first call, as under `torch.compile(backend="cleave")`; their reports are not added here."""

    def __init__(self, compiled: Any, report: Report) -> None:
        super().__init__()
        self.compiled = compiled
        self.cleave_report = report

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.compiled(*args, **kwargs)
