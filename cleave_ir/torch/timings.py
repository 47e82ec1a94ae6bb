"""Gate timings remembered across runs, so that optimizing a model again from a warm cache is quick.

The gate checks a region's kernel for correctness (several input sets against float64) and times it against
PyTorch's version of the region; against torch.compile that means compiling every region with inductor first.
On a warm `cleave compile` cache the kernels load in seconds, and those timings are most of what is left
(bench/results/layers_2026-12-01d_H200.md: 34 s of a Llama-3-8B prefill layer's warm 34 s `optimize`).
A `TimingStore` keeps each region's two timings in `cleave compile`'s cache, keyed by everything they depend
on: the region's graph and how its tensors reach it, the example inputs' shapes, strides and dtypes, the
baseline, the compiler's options, the GPU, and the versions of cleave_ir (its source hash), TileLang and
torch. A later `optimize` with the same key still checks the kernel on every input set, then decides from
the stored timings with its own margin; its report row says the timings were reused. Measured on the H100 with
the gate's random inputs drawn on the GPU: a warm `optimize` of Llama-3-8B's layer in 12-15 s
(bench/results/warm_optimize_2026-12-08s53_H100.md).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from cleave_ir.cache import Cache, cache_key, default_root, key_material
from cleave_ir.compile import graph_text
from cleave_ir.torch.compiler import PipelineCompiler
from cleave_ir.torch.gate import default_timer
from cleave_ir.torch.partition import Region

FILE = "gate_timings.json"


@dataclass
class TimingStore:
    """Gate timings kept under `root` (default: `cleave compile`'s cache, `$CLEAVE_CACHE_DIR`)."""

    root: Path = field(default_factory=default_root)

    def __post_init__(self) -> None:
        self.cache = Cache(self.root, warn=lambda line: None)  # a corrupt entry is only re-timed

    def material(self, region: Region, inputs: Sequence[torch.Tensor], context: dict[str, Any]) -> dict[str, Any]:
        """What the region's timings depend on (`context`: baseline, compiler options, device)."""
        from cleave_ir.torch.stitch import op_name

        assert region.graph is not None
        tensors = [{"shape": list(x.shape), "stride": list(x.stride()), "dtype": str(x.dtype)} for x in inputs]
        return key_material(graph_text(region.graph), [t["shape"] for t in tensors], {"gate": op_name(region), "inputs": tensors, **context})

    def get(self, material: dict[str, Any]) -> dict[str, float] | None:
        """The stored timings ({"pytorch": us, "cleave": us}), or None."""
        entry = self.cache.load(cache_key(material), material, required=(FILE,))
        return None if entry is None else {k: float(v) for k, v in entry.json(FILE).items()}

    def put(self, material: dict[str, Any], timings: dict[str, float]) -> None:
        self.cache.store(cache_key(material), material, {FILE: json.dumps(timings)})


class RememberingTimer:
    """A gate timer that answers from `known` timings where it has them and records what it measures."""

    def __init__(self, timer: Callable[..., float], known: dict[str, float] | None) -> None:
        self.timer, self.known = timer, known or {}
        self.measured: dict[str, float] = {}
        self.reused = False

    def __call__(self, fn: Callable[..., Any], inputs: Sequence[torch.Tensor], which: str, region: Region) -> float:
        if which in self.known:
            self.reused = True
            return self.known[which]
        self.measured[which] = us = self.timer(fn, inputs, which, region)
        return us


def store_for(timings: TimingStore | str | None, compiler: Any, timer: Callable[..., float]) -> TimingStore | None:
    """The store `optimize` keeps the gate's timings in: "auto" is `cleave compile`'s cache where the default
    compiler (with its cache on) and timer are used; faked timers and other compilers are not remembered."""
    if timings is None or isinstance(timings, TimingStore):
        return timings
    if timings != "auto":
        raise ValueError(f"timings: a TimingStore, 'auto' or None, not {timings!r}")
    if timer is not default_timer or not isinstance(compiler, PipelineCompiler) or "--no-cache" in compiler.options:
        return None
    options = list(compiler.options)
    explicit = options[options.index("--cache-dir") + 1] if "--cache-dir" in options[:-1] else None
    return TimingStore(default_root(explicit))


def compiler_key(compiler: Any) -> Any:
    """What of the compiler the timings depend on: a PipelineCompiler's options and tuning budget."""
    if isinstance(compiler, PipelineCompiler):
        return {"options": list(compiler.options), "tune_budget_s": compiler.tune_budget_s, "gpu": compiler.gpu}
    return f"{type(compiler).__module__}.{getattr(compiler, '__qualname__', type(compiler).__qualname__)}"


def device_name(inputs: Sequence[Any]) -> str:
    """The GPU the region's tensors are on (timings differ between GPUs), or "cpu"."""
    x = next((t for t in inputs if isinstance(t, torch.Tensor)), None)
    return torch.cuda.get_device_name(x.device) if x is not None and x.is_cuda else "cpu"
