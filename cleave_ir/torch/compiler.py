"""The default compiler of a region: `cleave compile` (search, schedule, emit, lower, cache), then a kernel.

A compiler is any callable `graph -> kernel` where `kernel(*tensors)` returns the graph's output as
a torch tensor (inputs in the graph's input order). `PipelineCompiler` goes through
`cleave_ir.compile.compile_graph`, the same code and cache as `cleave compile`:
- on a CUDA GPU (`--gpu`): candidates compiled, checked and timed; the kernel is the emitted module's
  `run(..., candidate=winner)`;
- on a CPU: the best estimated candidate's lowered TileLang kernels run in the TileLang interpreter
  (`cleave_ir.interpreter_tilelang`): slow, but the whole flow runs and is checked.
"""

from __future__ import annotations

import functools
import io
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from xdsl.parser import Parser

from cleave_ir.compile import compile_graph, graph_text
from cleave_ir.dialects import tgraph
from cleave_ir.dialects.cleave import BoundaryAttr
from cleave_ir.diagnostics import CleaveError

Kernel = Callable[..., torch.Tensor]
Compiler = Callable[[tgraph.GraphOp], Kernel]

_TORCH_DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32, "f64": torch.float64}


def output_dtype(graph: tgraph.GraphOp) -> torch.dtype:
    return output_dtypes(graph)[0]


def output_dtypes(graph: tgraph.GraphOp) -> list[torch.dtype]:
    """The torch dtype of each of the graph's outputs."""
    return [_TORCH_DTYPES[str(tgraph.tensor_type(t).element_type)] for t in graph.function_type.outputs.data]


def _as_torch(arrays: Sequence[np.ndarray], dtypes: Sequence[torch.dtype], device: Any) -> torch.Tensor | list[torch.Tensor]:
    """The graph's outputs (float64 arrays) as tensors of their dtypes: one tensor, or a list of several
    (a projection group's graph)."""
    outs = [torch.from_numpy(np.asarray(a, dtype=np.float64)).to(device=device, dtype=d) for a, d in zip(arrays, dtypes, strict=True)]
    return outs[0] if len(outs) == 1 else outs


@dataclass
class PipelineCompiler:
    """Compile a region's graph with `cleave compile` (its options, e.g. `("--keep", "2")`)."""

    options: Sequence[str] = ()
    gpu: bool | None = None
    # seconds of measured tuning per region on the GPU (`--tune-budget`, unless `options` name one); None:
    # `cleave compile`'s default, which fills each region's compile to 5 minutes (a layer of ten regions:
    # most of an hour). 0 keeps a layer's cold compile to minutes, as bench/layers.py measured it.
    tune_budget_s: float | None = 0.0
    workdir: Path | None = None
    log: io.StringIO = field(default_factory=io.StringIO)
    _kernels: dict[str, Kernel] = field(default_factory=dict, repr=False)
    # the work dir made when none is given: removed once this compiler and its GPU kernels are gone
    _tmp: tempfile.TemporaryDirectory[str] | None = field(default=None, repr=False)

    def __call__(self, graph: tgraph.GraphOp) -> Kernel:
        """The kernel of `graph` (one compile per distinct graph in this compiler's life)."""
        text = graph_text(graph)
        if text not in self._kernels:
            self._kernels[text] = self._compile(graph)
        return self._kernels[text]

    def prepare(self, graphs: Sequence[tgraph.GraphOp], jobs: int | None = None) -> None:
        """Search, emit and lower `graphs` ahead, `jobs` at a time (default: one per CPU), each a
        `cleave compile` process without --gpu: the CPU half of the compile, which fills its cache so
        the compiles that follow start from a hit. Failures are left for that graph's compile to report."""
        if "--no-cache" in self.options:
            return
        todo = {graph_text(g): g.sym_name.data for g in graphs}
        todo = {t: name for t, name in todo.items() if t not in self._kernels}
        workdir = self._dir()
        commands = []
        for text, name in todo.items():
            (workdir / f"{name}.mlir").write_text(text)
            out = workdir / f"{name}.cpu.py"
            commands.append([sys.executable, "-m", "cleave_ir.compile", "compile", str(workdir / f"{name}.mlir"), "-o", str(out), *self.options])

        def run(cmd: list[str]) -> str:
            # cwd: the work dir, so that a source checkout in the caller's cwd does not shadow the installed package
            done = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=workdir)
            return done.stdout + done.stderr

        with ThreadPoolExecutor(max(1, min(len(commands), jobs or os.cpu_count() or 1))) as pool:
            for text in pool.map(run, commands):
                self.log.write(text)

    def _dir(self) -> Path:
        if self.workdir is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="cleave-torch-")
            self.workdir = Path(self._tmp.name)
        self.workdir.mkdir(parents=True, exist_ok=True)
        return self.workdir

    def _compile(self, graph: tgraph.GraphOp) -> Kernel:
        gpu = torch.cuda.is_available() if self.gpu is None else self.gpu
        path = self._dir() / f"{graph.sym_name.data}.py"
        options = list(self.options)
        if gpu and self.tune_budget_s is not None and "--tune-budget" not in options:
            options += ["--tune-budget", f"{self.tune_budget_s:g}"]
        job = compile_graph(graph, path, options, gpu=gpu, out=self.log)
        if gpu:
            from cleave_ir.tilelang_check import load_module_file

            mod = load_module_file(path, shared=True)
            winner = job.measurement.winner
            # region inputs may be views (a transposed q, k, v): `run` reads them in place, and
            # writes `out` (the layout PyTorch's region returns) in place
            if len(graph.function_type.outputs.data) > 1:  # a projection group: `run` returns the list of outputs
                return lambda *xs, _dir=self._tmp: list(mod.run(*xs, candidate=winner))
            return lambda *xs, out=None, _dir=self._tmp: mod.run(*xs, candidate=winner, out=out)
        return interpreted_kernel(graph, _pipeline_module(job))


def _pipeline_module(job: Any) -> Any:
    if job.pipeline is not None:
        return job.pipeline
    from cleave_ir.run import make_context

    text = job.entry.files["pipeline.mlir"]
    return Parser(make_context(), text.decode() if isinstance(text, bytes) else text).parse_module()


def interpreted_kernel(graph: tgraph.GraphOp, module: Any, candidate: int = 0) -> Kernel:
    """A kernel that runs one candidate's lowered TileLang kernels of `module` in the interpreter."""
    from cleave_ir.interpreter_tilelang import candidate_kernels, run_kernels
    from cleave_ir.tilelang_emitter import lowered

    cands = candidate_kernels(lowered(module))
    if not cands:
        raise CleaveError(f"error: @{graph.sym_name.data}: no candidate to run")
    kernels = cands[candidate][1]
    dtypes = output_dtypes(graph)
    # the folded graph's (`cleave-fold-structural` in the pipeline), as the emitted `run` follows it
    boundary = next((g.attributes["cleave.boundary"] for g in module.walk() if isinstance(g, tgraph.GraphOp) and "cleave.boundary" in g.attributes), None)

    def run(*xs: torch.Tensor, out: torch.Tensor | None = None) -> Any:
        arrays = [x.detach().to("cpu", torch.float64).numpy() for x in xs]
        got = _as_torch(_through_boundary(boundary, arrays, lambda a: run_kernels(kernels, a)), dtypes, xs[0].device)
        return got if out is None else out.copy_(got)

    return run


def _through_boundary(boundary: Any, arrays: list[np.ndarray], compute: Callable[[list[np.ndarray]], Any]) -> list[np.ndarray]:
    """The graph's outputs for its tensors `arrays`, `compute` running the kernels (or the folded graph) on
    their inputs: through `cleave.boundary` where the graph has one (views in, parts joined row-major out)."""
    if not isinstance(boundary, BoundaryAttr):
        return list(compute(arrays))
    result = compute(boundary.views(arrays, np.transpose, np.concatenate))
    parts = list(result) if isinstance(result, (list, tuple)) else [result]
    return [np.ascontiguousarray(a) for a in boundary.assemble(parts, np.concatenate, np.transpose)]


def interpreted_graph(graph: tgraph.GraphOp) -> Kernel:
    """A kernel that runs the graph itself in the tgraph interpreter (declared precision): for tests.

    Its normalized exps read `x - max(x)`, as every emitted kernel's do (`stabilize_exp`): the aten
    table writes a softmax as `exp(x) / sum(exp(x))`, the form the search knows, which overflows
    in f32 on logits past ~88. Inputs of other sizes run the graph at those sizes of its dynamic dims
    (`dynamic_shapes.at_sizes`); a graph that declares none is resized (`cleave_ir.run.resize_graph`:
    every dim of an example size that differs takes the new size).
    """
    from cleave_ir.interpreter import run_graph
    from xdsl.utils.exceptions import VerifyException

    from cleave_ir.passes.dynamic_shapes import at_sizes, dynamic_inputs, sizes_of
    from cleave_ir.passes.stabilize_exp import shifted_for_cut
    from cleave_ir.run import resize_graph

    dtypes = output_dtypes(graph)
    boundary = graph.attributes.get("cleave.boundary")
    graph = shifted_for_cut(graph)

    def run(*xs: torch.Tensor) -> Any:
        arrays = [x.detach().to("cpu", torch.float64).numpy() for x in xs]
        outs = _through_boundary(boundary, arrays, lambda a: run_graph(sized(tuple(x.shape for x in a)), a, mode="declared"))
        return _as_torch(outs, dtypes, xs[0].device)

    @functools.cache
    def sized(shapes: tuple[tuple[int, ...], ...]) -> tgraph.GraphOp:
        if shapes == tuple(tuple(int(d) for d in tgraph.tensor_type(a).shape) for a in graph.inputs):
            return graph
        if dynamic_inputs(graph):  # by position: a head count equal to the example batch stays
            try:
                return at_sizes(graph, sizes_of(graph, shapes))
            except VerifyException:  # a dim its symbols make a sum (a concat of a cache and a new token: L + 1)
                pass
        return resize_graph(graph, _resize(graph, shapes))

    return run


def _resize(graph: tgraph.GraphOp, shapes: Sequence[Sequence[int]]) -> dict[int, int]:
    out: dict[int, int] = {}
    for a, shape in zip(graph.inputs, shapes):
        for d, n in zip(tgraph.tensor_type(a).shape, shape):
            if int(d) != n:
                out[int(d)] = int(n)
    return out
