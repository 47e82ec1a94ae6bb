"""The benchmark suite of BENCHMARKS.md: our kernels against PyTorch, in two phases, plus a chart.

    python bench/gpu_suite.py prepare --out DIR [-j N] [--rows REGEX] [--ablations] [--models]   # any CPU machine
    python bench/gpu_suite.py tune DIR [--rows REGEX] [--budget S]                      # the GPU machine, optional
    python bench/gpu_suite.py run DIR --out RESULTS.json [--top-k K] [--deadline S]      # the GPU machine
    python bench/gpu_suite.py chart RESULTS.json --out CHART.png                          # needs matplotlib

`prepare` runs `cleave-pipeline` (search, schedule, placement) for every row of BENCHMARKS.md's table
of cases (and, with `--ablations`, for the ablation variants of a representative subset, the Cleave
paper's Figure 12) in a process pool, and writes one emitted TileLang module per (row, variant) and
`manifest.json` (shapes, flops, bytes, graph text, search time, candidates; a failed pipeline is
recorded with its one-line error; `--lower` also lowers every kernel for sm_90a and records the
kernels that do not lower). An existing manifest entry with the same graph and variant is reused, so
an interrupted `prepare` resumes (`--force` re-runs them). `--models` takes the rows from the
generality suite instead (`examples/models/*.mlir` at the real shapes of their `// gpu-resize:` lines;
`bench/models.py` is the entry point for them); `--graphs FILE...` takes one row per tgraph file (e.g.
`bench/probes/unseen/*.mlir`), whose eager baseline is the graph op by op unless it is named like an example.

`run` (GPU) compiles the kept candidates of every row (threads: tilelang.compile waits on nvcc),
checks each against a float64 reference with its outputs poisoned (relative error < 1e-2), and times
ours and the baselines interleaved in one process: SDPA with the cuDNN and FlashAttention backends
for attention rows, eager PyTorch (cuBLAS) for every row, torch.compile warm. A model row's eager
baseline is its graph run op by op with torch in the declared element types (`graph_eager`); its
inputs named `mask*` are 0/1 attention masks and `w*` weights are scaled by 1/sqrt(fan-in) (`model_inputs`). Timing is
`cleave_ir.runtime.timed`: CUDA graphs of a batch of calls, CUDA events, median, input copies rotated
where the data fits in L2; contenders take turns over several rounds, and the median of the rounds
is reported. Results go to RESULTS.json (written after every row) and a markdown table to stdout and
RESULTS.md.

`tune` (GPU, optional, before `run`) tunes the kept candidates of the selected rows as `cleave compile
--gpu --tune-budget S` does (`cleave_ir.tune`) and records in the manifest the winner's module where it
beats the pipeline's configurations; `run` then times it as one more candidate ("<graph> tuned").
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import json
import math
import os
import re
import statistics
import sys
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cleave_ir.hang_guard import HangGuard
from cleave_ir.runtime import check, compile_candidates, one_line, random_inputs, rotating_copies, timed, torch_reference

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"
MODELS = EXAMPLES / "models"
ABLATION_ROWS = (
    "mha_b1_h32_s4096_d128",
    "gqa_decode_b1_l4096",
    "rmsnorm_matmul_t1",
    "swiglu_t1",
    "swiglu_t4096",
    "matmul_rowsum_s4096",
    "matmul_matmul_s4096",
)
VARIANTS: dict[str, dict[str, bool]] = {
    "full": {},
    "no-split": {"no_split": True},
    "no-search": {"no_search": True},
    "no-iterative-tiling": {"iterative_tiling": False},
    "no-horizontal-fusion": {"horizontal_fusion": False},
}
ATTENTION = {"mha", "gqa", "mqa", "mla", "gqa_decode", "mha_decode", "mla_decode"}
RIDGE = 790e12 / 4.3e12
"""FLOP per byte where the H200's measured matmul peak (790 TFLOP/s) meets its bandwidth (4.3 TB/s):
rows above it report TFLOP/s, rows below TB/s."""
DEVICE = "cuda"
"""Where `run` allocates kernel outputs (a CPU dry run of `run`'s logic sets "cpu")."""
SCALED = {4096: 512, 8192: 512, 32768: 512, 2048: 256, 1024: 256, 14336: 1024, 6144: 512, 32: 4}
"""`--scale` (smoke tests): the sizes of the tests' scaled-down examples."""


# ----------------------------------------------------------------------------------------- rows


@dataclass(frozen=True)
class Row:
    """One case of BENCHMARKS.md: an example, its batch-like leading dim, sizes to resize, a scale fix."""

    name: str
    example: str
    lead: int = 1  # the leading dim (B, or T for rmsnorm_matmul/swiglu) every tensor of the example starts with
    resize: dict[int, int] = field(default_factory=dict)
    head_dim: int | None = None  # a new attention head dim: the scale 1/sqrt(128) becomes 1/sqrt(head_dim)


def rows() -> list[Row]:
    """Every row of BENCHMARKS.md's table of cases, all shape variants."""
    out = [
        Row("mha_b1_h32_s4096_d128", "mha"),
        Row("mha_b4_h32_s2048_d128", "mha", 4, {4096: 2048}),
        Row("mha_b1_h32_s8192_d64", "mha", 1, {4096: 8192, 128: 64}, head_dim=64),
        Row("gqa_b1_s4096", "gqa"),
        Row("mqa_b1_s4096", "mqa"),
        Row("mla_b1_s4096", "mla"),
        Row("matmul_4096", "matmul"),
    ]
    for t in (1, 16, 128, 1024, 4096):
        out.append(Row(f"rmsnorm_matmul_t{t}", "rmsnorm_matmul", t))
    for t in (1, 16, 128, 1024, 4096):
        out.append(Row(f"swiglu_t{t}", "swiglu", t))
    for ex in ("matmul_matmul", "matmul_rowsum"):
        for s in (1024, 4096):
            out.append(Row(f"{ex}_s{s}", ex, 1, {4096: s} if s != 4096 else {}))
    out += [
        Row("gqa_decode_b1_l4096", "gqa_decode"),
        Row("gqa_decode_b1_l32768", "gqa_decode", 1, {4096: 32768}),
        Row("gqa_decode_b8_l8192", "gqa_decode", 8, {4096: 8192}),
        Row("gqa_decode_b64_l4096", "gqa_decode", 64),
        Row("mha_decode_b1_l8192", "mha_decode"),
        Row("mla_decode_b1_l4096", "mla_decode"),
        Row("mla_decode_b64_l4096", "mla_decode", 64),
    ]
    return out


def gpu_resize(path: Path) -> dict[int, int]:
    """A model file's `// gpu-resize: 64=4096 32=128` line: test size -> real size."""
    m = re.search(r"^// gpu-resize:(.*)$", path.read_text(), re.M)
    if m is None:
        raise ValueError(f"{path}: no `// gpu-resize:` line")
    return {int(a): int(b) for a, b in (pair.split("=") for pair in m.group(1).split())}


def model_rows() -> list[Row]:
    """One row per subgraph of the generality suite (examples/models), at its real shape."""
    return [Row(p.stem, p.stem, 1, gpu_resize(p)) for p in sorted(MODELS.glob("*.mlir"))]


def file_rows(paths: Sequence[str]) -> list[Row]:
    """One row per tgraph file (`--graphs`), at its written shape or its `// gpu-resize:` line's."""
    out = []
    for name in paths:
        path = Path(name).resolve()
        resize = gpu_resize(path) if "// gpu-resize:" in path.read_text() else {}
        out.append(Row(path.stem, str(path), 1, resize))
    return out


def model_path(example: str) -> Path | None:
    """The tgraph file of a model row: a subgraph of examples/models, or any `.mlir` file named by its path."""
    for path in (MODELS / f"{example}.mlir", Path(example)):
        if path.suffix == ".mlir" and path.is_file():
            return path
    return None


def is_model(example: str) -> bool:
    return model_path(example) is not None


def graph_text(row: Row, scale: bool = False) -> str:
    """The row's concrete tgraph graph as text: the example with its leading dim and sizes changed
    (a model row: the file at its real shape, or as written with `scale`)."""
    from cleave_ir.builder import module_of
    from cleave_ir.diagnostics import parse_module_text
    from cleave_ir.dialects import tgraph
    from cleave_ir.run import make_context, resize_graph

    path = model_path(row.example)
    if path is not None:
        module = parse_module_text(make_context(), path.read_text(), path.name)
        graph = next(g for g in module.body.block.ops if isinstance(g, tgraph.GraphOp))
        graph = resize_graph(graph, row.resize) if row.resize and not scale else graph.clone()
        graph.attributes.pop("constraints", None)
        graph.bindings = None
        return str(module_of(graph))
    text = (EXAMPLES / f"{row.example}.mlir").read_text()
    if row.lead != 1:  # every tensor type of these examples starts with the batch (or token) dim
        text = text.replace("tgraph.tensor<[1, ", f"tgraph.tensor<[{row.lead}, ")
    if row.head_dim is not None:
        text = text.replace(repr(128**-0.5), repr(row.head_dim**-0.5))
    module = parse_module_text(make_context(), text, f"{row.example}.mlir")
    graph = next(g for g in module.body.block.ops if isinstance(g, tgraph.GraphOp))
    resize = dict(row.resize)
    if scale:  # each size goes to the row's size, then to its scaled-down size
        resize = {k: SCALED.get(row.resize.get(k, k), row.resize.get(k, k)) for k in {*row.resize, *SCALED}}
    resize = {k: v for k, v in resize.items() if k != v}
    graph = resize_graph(graph, resize) if resize else graph.clone()
    graph.attributes.pop("constraints", None)
    graph.bindings = None
    return str(module_of(graph))


def parse_graph(text: str):  # type: ignore[no-untyped-def]
    """The tgraph.GraphOp of a graph text (as `graph_text` writes it)."""
    from cleave_ir.diagnostics import parse_module_text
    from cleave_ir.dialects import tgraph
    from cleave_ir.run import make_context

    module = parse_module_text(make_context(), text, "<manifest>")
    return next(g for g in module.body.block.ops if isinstance(g, tgraph.GraphOp))


def graph_costs(graph) -> tuple[list[list[int]], list[int], int, int]:  # type: ignore[no-untyped-def]
    """(input shapes, output shape, flops of its matmuls, bytes of its inputs and output)."""
    from cleave_ir.dialects import tgraph

    def shape(v) -> list[int]:  # type: ignore[no-untyped-def]
        return [int(d) for d in tgraph.tensor_type(v).shape]

    def nbytes(v) -> int:  # type: ignore[no-untyped-def]
        t = tgraph.tensor_type(v)
        return math.prod(shape(v)) * {"f16": 2, "bf16": 2, "f32": 4, "f64": 8}[str(t.element_type)]

    flops = 0
    out: list[int] = []
    total = sum(nbytes(a) for a in graph.inputs)
    for op in graph.block.ops:
        if isinstance(op, tgraph.MatmulOp):
            a = shape(op.operands[0])
            flops += 2 * math.prod(shape(op.results[0])) * a[-1]
        elif isinstance(op, tgraph.OutputOp):
            out = shape(op.outputs[0])
            total += sum(nbytes(o) for o in op.outputs)
    return [shape(a) for a in graph.inputs], out, flops, total


# -------------------------------------------------------------------------------------- prepare


def lower_kernels(path: Path, arch: str = "sm_90a") -> dict[str, str]:
    """Lower every kernel of an emitted module for `arch` (CPU only): kernel -> "ok" or the one-line error
    (`tilelang_check.lower_each`: also a kernel whose shared memory exceeds the SM's, which TileLang
    lowers but the GPU does not launch).

    TileLang runs with the working directory outside the repository (a temporary directory).
    """
    import tempfile

    from cleave_ir.tilelang_check import lower_each

    cwd = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        try:
            lowered = lower_each(path, arch)
        finally:
            os.chdir(cwd)
    return {name: one_line(r) if isinstance(r, Exception) else "ok" for name, r in lowered.items()}


def prepare_one(row_name: str, variant: str, text: str, out_dir: str, keep: int, top_k: int, lower: bool = False) -> dict[str, Any]:
    """Run the pipeline (with the variant's options) on one graph and write its TileLang module.

    Returns the manifest entry; a failure is recorded with its one-line error, never raised. With
    `lower`, every kernel is also lowered for sm_90a and the outcome recorded per kernel.
    """
    from xdsl.context import Context

    from cleave_ir.blas_threads import one_blas_thread
    from cleave_ir.dialects import cleave, itgraph, tgraph
    from cleave_ir.passes.padded_dims import apply_padded
    from cleave_ir.passes.pipeline import PipelinePass, rank_candidates
    from cleave_ir.tilelang_emitter import module_source

    entry: dict[str, Any] = {"row": row_name, "variant": variant, "options": VARIANTS[variant], "graph": text}
    graph = parse_graph(text)
    entry["inputs"], entry["output"], entry["flops"], entry["bytes"] = graph_costs(graph)
    entry["metric"] = "TFLOP/s" if entry["flops"] >= RIDGE * entry["bytes"] else "TB/s"
    module = graph.parent_op()
    log = io.StringIO()
    t0 = time.perf_counter()
    try:
        with contextlib.redirect_stderr(log), one_blas_thread():  # `-j` workers: one BLAS thread each
            pipeline = PipelinePass(keep=keep, top_k=top_k, **VARIANTS[variant])  # type: ignore[arg-type]
            padded = apply_padded(pipeline, module)  # awkward sizes padded, as `cleave compile` does
            if padded is None or not padded[1]:
                pipeline.apply(Context(), module)
            if padded is not None:
                entry["padded"] = f"{padded[0]}: {'kept' if padded[1] else 'dropped (a kernel serves only the given sizes)'}"
            entry["pipeline_s"] = round(time.perf_counter() - t0, 2)
            source = module_source(module)
        units = rank_candidates(module)
        kernels = {k.sym_name.data: k for k in module.body.block.ops if isinstance(k, itgraph.KernelOp)}
        graphs = {g.sym_name.data: g for g in module.body.block.ops if isinstance(g, tgraph.GraphOp)}
        entry["candidates"] = [
            {
                "graph": g,
                "kernels": ks,
                "estimated_us": round(us, 3),
                "tiles": [t.describe() if (t := cleave.tiles(kernels[k])) else "" for k in ks],
                "note": getattr(graphs[g].attributes.get("cleave.note"), "data", "input graph") if g in graphs else "",
            }
            for us, ks, g in units
        ]
        path = Path(out_dir) / "kernels" / f"{row_name}__{variant}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source)
        entry["module"] = str(path.relative_to(out_dir))
        path.with_suffix(".mlir").write_text(str(module))  # what `tune` varies
        entry["pipeline"] = str(path.with_suffix(".mlir").relative_to(out_dir))
        entry["status"] = "ok"
        if lower:
            entry["lowering"] = lower_kernels(path)
    except Exception as e:  # recorded in the manifest, the other rows go on
        entry["pipeline_s"] = round(time.perf_counter() - t0, 2)
        entry["status"] = "failed"
        entry["error"] = one_line(e)
    entry["log"] = [line for line in log.getvalue().splitlines() if line.startswith(("cleave-superoptimize", "cleave-pipeline", "error"))]
    return entry


def _code_version() -> str:
    """The commit the kernels come from, with the files then modified in the working tree."""
    import subprocess

    try:
        head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True, check=True).stdout.split("\n")
        changed = sorted(line[3:] for line in dirty if line.strip())
        return head + (f" + uncommitted changes to {', '.join(changed)}" if changed else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git checkout)"


def _key(entry: dict[str, Any]) -> str:
    return f"{entry['row']}__{entry['variant']}"


def _write_json(path: Path, data: Any) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=1))
    tmp.replace(path)


def prepare(
    out_dir: Path,
    jobs: int = 1,
    pattern: str | None = None,
    ablations: bool = False,
    scale: bool = False,
    keep: int = 3,
    top_k: int = 2,
    only: Sequence[Row] | None = None,
    lower: bool = False,
    force: bool = False,
) -> dict[str, Any]:
    """Run the pipeline for every (row, variant) into `out_dir`; returns (and writes) the manifest."""
    out_dir = out_dir.resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    mpath = out_dir / "manifest.json"
    manifest: dict[str, Any] = json.loads(mpath.read_text()) if mpath.exists() else {"entries": {}}
    selected = [r for r in (only if only is not None else rows()) if pattern is None or re.search(pattern, r.name)]
    todo: list[tuple[str, str, str]] = []
    for r in selected:
        text = graph_text(r, scale)
        for v in VARIANTS if ablations and r.name in ABLATION_ROWS else ["full"]:
            old = manifest["entries"].get(f"{r.name}__{v}")
            if not force and old and old["status"] == "ok" and old["graph"] == text and (out_dir / old["module"]).exists() and (not lower or "lowering" in old):
                continue
            todo.append((r.name, v, text))
    todo.sort(key=lambda job: job[1] != "full")  # every row's full pipeline first, then the ablation variants
    manifest.update(
        {"command": " ".join(["python", f"bench/{Path(sys.argv[0]).name}", *sys.argv[1:]]) if sys.argv[0].endswith(("gpu_suite.py", "models.py")) else "prepare()",
         "keep": keep, "top_k": top_k, "scaled": scale, "code": _code_version()}
    )
    t0 = time.perf_counter()
    print(f"prepare: {len(todo)} pipelines to run ({len(selected)} rows selected), {jobs} workers", flush=True)

    def record(entry: dict[str, Any]) -> None:
        manifest["entries"][_key(entry)] = entry
        _write_json(mpath, manifest)
        what = f"{len(entry.get('candidates', []))} candidates" if entry["status"] == "ok" else f"FAILED: {entry['error']}"
        bad = {k: v for k, v in entry.get("lowering", {}).items() if v != "ok"}
        if bad:
            what += f"; {len(bad)} kernels do not lower: " + "; ".join(f"{k}: {v}" for k, v in bad.items())[:300]
        print(f"  {_key(entry)}: {entry['pipeline_s']:.1f} s, {what} ({time.perf_counter() - t0:.0f} s elapsed)", flush=True)

    if jobs <= 1:
        for job in todo:
            record(prepare_one(*job, str(out_dir), keep, top_k, lower))
    else:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            futures = {pool.submit(prepare_one, *job, str(out_dir), keep, top_k, lower): job for job in todo}
            for fut in as_completed(futures):
                try:
                    record(fut.result())
                except Exception as e:  # a worker that died: record the job as failed
                    name, v, text = futures[fut]
                    record({"row": name, "variant": v, "graph": text, "status": "failed", "error": one_line(e), "pipeline_s": 0.0})
    manifest["wall_s"] = round(time.perf_counter() - t0, 1)
    _write_json(mpath, manifest)
    failed = [k for k, e in manifest["entries"].items() if e["status"] != "ok"]
    print(f"prepare: manifest {mpath} ({len(manifest['entries'])} entries, {len(failed)} failed), {manifest['wall_s']} s")
    return manifest


# ------------------------------------------------------------------------------------------ run

class Candidate:
    """One candidate of an emitted module, called with preallocated output buffers (outputs poisoned for the check).

    Kernels run as the module's `run` does (`cleave_ir.runtime.run_chain`): a kernel of a cut chain
    may read results of any earlier kernel by name, and dynamic sizes come from the inputs.
    """

    def __init__(self, mod, kernels: Sequence[str], compiled: dict[str, Any]) -> None:  # type: ignore[no-untyped-def]
        self.mod, self.kernels = mod, list(kernels)
        self.fns = [compiled[k] for k in kernels]
        self.buffers: list[list[Any]] = []  # allocated at the first call: dynamic dims take the inputs' sizes
        # where each kernel's arguments come from, found at the first call: (-1, input j) or (kernel i, output j)
        self.sources: list[list[tuple[int, int]]] = []
        # a graph written with slices, transposes or concats (the module's `BOUNDARY`): the kernels read
        # views of the inputs, and an output's parts are concatenated (modules emitted before: as given)
        self.views = getattr(mod, "boundary_inputs", list)
        self.parts = getattr(mod, "boundary_outputs", list)
        self.out: Any = None  # the output the last kernel writes in parts or permuted (its windows), as `run` does
        self.results: list[tuple[int, int]] = []  # where a cut graph's outputs come from (its last kernel's `results`)

    def __call__(self, *inputs):  # type: ignore[no-untyped-def]
        inputs = self.views(inputs)
        if not self.sources:
            return self._first(inputs)
        for fn, src, outs in zip(self.fns, self.sources, self.buffers):  # no Python work beyond the launches
            fn(*(inputs[j] if i < 0 else self.buffers[i][j] for i, j in src), *outs)
        if self.out is not None:
            return self.out
        return _single(self.parts([inputs[j] if i < 0 else self.buffers[i][j] for i, j in self.results] if self.results else self.buffers[-1]))

    def _last_outs(self, name: str) -> list[Any] | None:
        """The windows of a newly allocated output (`self.out`) that the last kernel writes, where the
        module's `run` writes them so (its `BOUNDARY` has the output in parts or permuted); else None."""
        if getattr(self.mod, "BOUNDARY", None) is None or not hasattr(self.mod, "output_for"):
            return None
        meta = self.mod.KERNELS[name]
        outs = self.mod.output_for(meta, DEVICE)
        windows = None if outs is None else self.mod.part_windows(outs, meta)
        if windows is not None:
            self.out = _single(outs)
        return windows

    def _first(self, inputs: Sequence[Any]) -> Any:
        import torch

        from cleave_ir.runtime import run_chain

        where = {id(x): (-1, j) for j, x in enumerate(inputs)}
        sources: list[list[tuple[int, int]]] = []

        def launch(name: str, args: list[Any], shapes: list[list[int]]) -> list[Any]:
            i = len(sources)
            meta = self.mod.KERNELS[name]
            last = i == len(self.kernels) - 1 and self._last_outs(name)
            outs = last or [torch.empty(s, device=DEVICE, dtype=getattr(torch, d)) for s, d in zip(shapes, meta["dtypes"][meta["inputs"] :])]
            sources.append([where[id(a)] for a in args])
            where.update((id(o), (i, j)) for j, o in enumerate(outs))
            self.buffers.append(outs)
            self.fns[i] = launch_into(self.mod, name, self.fns[i], args, outs)
            return outs

        parts = run_chain(self.mod.KERNELS, self.kernels, inputs, launch)
        self.sources = sources
        if self.mod.KERNELS[self.kernels[-1]].get("results"):
            self.results = [where[id(p)] for p in parts]
        return self.out if self.out is not None else _single(self.parts(parts))

    def poison(self) -> None:
        """Fill every buffer (partials and outputs) with NaN."""
        for outs in self.buffers:
            for b in outs:
                b.fill_(float("nan"))


def _single(outs: Sequence[Any]) -> Any:
    """A graph's outputs as its callers take them: the tensor of a one-output graph, else a tuple."""
    return outs[0] if len(outs) == 1 else tuple(outs)


def check_outputs(got: Any, refs: Sequence[Any]) -> float:
    """The largest relative error (`runtime.check`) over a graph's outputs: `got` a tensor for a graph
    of one output, a tuple or list of them for one of several."""
    gots = list(got) if isinstance(got, (tuple, list)) else [got]
    if len(gots) != len(refs):
        raise ValueError(f"{len(gots)} outputs where the graph has {len(refs)}")
    return max(check(g, r) for g, r in zip(gots, refs))


def launch_into(mod, name: str, fn: Callable[..., Any], args: Sequence[Any], outs: Sequence[Any]) -> Callable[..., Any]:  # type: ignore[no-untyped-def]
    """Launch kernel `name` of module `mod` (`fn`: compiled with its outputs passed in) through the
    module's own launcher, as its `run` and `runtime.run_poisoned` do: views (a graph's boundary) read
    by kernels compiled for their layout or copied, and inputs whose rows no TMA tensor map takes
    (`tma_maps`), or outputs whose descriptor fails on the host, by the thread-copy variant.
    Returns the function to launch it again with the same arguments: the kernel that ran, or where
    `run` copies an argument (or allocates the outputs), the launcher, which does so every call."""
    launcher = getattr(mod, "launch", None)
    if launcher is None:  # a module emitted before it: the kernel as given
        fn(*args, *outs)
        return fn
    mod._compiled.setdefault(mod._key(name, (), True), fn)
    got = launcher(name, list(args), outs)
    transposed = mod.KERNELS[name].get("transposed", ())
    if got.into and not got.copies and not transposed:
        return got.kernel
    if got.into and not got.copies:  # an input it reads stored transposed: given x, it takes x's transpose
        kernel = got.kernel
        return lambda *a: kernel(*mod._stored(name, list(a)))
    n = len(args)
    return lambda *a: launcher(name, list(a[:n]), a[n:])


def graph_eager(graph) -> Callable[..., Any]:  # type: ignore[no-untyped-def]
    """Eager PyTorch for a graph: its ops one by one (one or two PyTorch calls each) in the declared
    element types, using each op's torch semantics (constants as Python scalars, so CUDA graphs can
    capture it). Returns every output: a tuple for a graph of several (torch.compile would drop the
    work of any it did not return)."""
    import torch

    from cleave_ir.dialects import tgraph

    scalar = {
        tgraph.ScalarKind.ADD: lambda x, c: x + c, tgraph.ScalarKind.SUB: lambda x, c: x - c,
        tgraph.ScalarKind.RSUB: lambda x, c: c - x, tgraph.ScalarKind.MUL: lambda x, c: x * c,
        tgraph.ScalarKind.DIV: lambda x, c: x / c, tgraph.ScalarKind.RDIV: lambda x, c: c / x,
        tgraph.ScalarKind.MAX: torch.clamp_min, tgraph.ScalarKind.MIN: torch.clamp_max,
    }
    index = {v: i for i, v in enumerate(graph.inputs)}
    steps: list[tuple[Callable[..., Any], list[int], Any]] = []
    for op in graph.block.ops:
        if isinstance(op, tgraph.OutputOp):
            outs = [index[o] for o in op.outputs]
            break
        t = tgraph.tensor_type(op.results[0])
        dtype = getattr(torch, {"f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64"}[str(t.element_type)])
        if isinstance(op, tgraph.MatmulOp):
            fn = (lambda a, b: torch.matmul(a, b.transpose(-1, -2))) if op.transpose_b is not None else torch.matmul
        elif isinstance(op, tgraph.ScalarOp):
            fn = lambda x, f=scalar[op.scalar_kind], c=op.value: f(x, c)  # noqa: E731
        elif isinstance(op, tgraph.ScaleOp):
            fn = lambda x, c=op.value: x * c  # noqa: E731
        elif isinstance(op, tgraph.ElementwiseOp):
            fn = op.semantics().torch
        elif isinstance(op, tgraph.ReduceOp):
            fn = lambda x, r=op.reduction(), axis=op.axis: r.torch(x, axis)  # noqa: E731
        elif isinstance(op, tgraph.ReshapeOp):
            fn = lambda x, shape=[int(d) for d in t.shape]: x.reshape(shape)  # noqa: E731
        elif isinstance(op, tgraph.StructuralOp):  # transpose, slice, concat: views and torch.cat
            fn = lambda *xs, o=op, shape=[int(d) for d in t.shape]: o.torch(xs, shape)  # noqa: E731
        else:
            raise ValueError(f"graph_eager: {op.name} is not supported")
        steps.append((fn, [index[o] for o in op.operands], dtype))
        index[op.results[0]] = len(index)

    def run(*xs):  # type: ignore[no-untyped-def]
        env = list(xs)
        for fn, args, dtype in steps:
            env.append(fn(*(env[i] for i in args)).to(dtype))
        return env[outs[0]] if len(outs) == 1 else tuple(env[i] for i in outs)

    return run


def model_inputs(graph, xs: list[Any]) -> list[Any]:  # type: ignore[no-untyped-def]
    """A model row's inputs: `mask*` inputs become 0/1 masks (causal; a 1024-wide band for sliding-window
    models), `w*` weights are scaled to a deviation of 1/sqrt(fan-in) (values stay in fp16's range)."""
    import torch

    out = []
    for name, x in zip(graph.input_names(), xs):
        if name.startswith("mask"):
            q, k = x.shape[-2], x.shape[-1]
            i = torch.arange(q, device=x.device)[:, None] + (k - q)
            j = torch.arange(k, device=x.device)[None, :]
            keep = j <= i
            if "sliding_window" in graph.sym_name.data:
                keep &= j > i - 1024
            x = keep.to(x.dtype).expand(x.shape).contiguous()
        elif name.startswith("w") and x.dim() >= 2:
            x = (x.float() * (2.0 / math.sqrt(x.shape[-2]))).to(x.dtype)  # random_inputs: deviation 0.5
        out.append(x)
    return out


HAND_WRITTEN = ATTENTION | {"matmul", "rmsnorm_matmul", "swiglu", "matmul_matmul", "matmul_rowsum"}
"""Graph names (`@name`) that `eager_fn` writes as a PyTorch user would; any other graph runs op by op."""


def eager_fn(example: str, scale: float | None, graph=None) -> Callable[..., Any]:  # type: ignore[no-untyped-def]
    """What a PyTorch user writes for the example (fp16, cuBLAS matmuls, torch.softmax); a model
    row's graph, or any graph not named like one of the examples, op by op (`graph_eager`)."""
    import torch
    import torch.nn.functional as F

    if graph is not None and (is_model(example) or example not in HAND_WRITTEN):
        return graph_eager(graph)
    if example in ATTENTION:
        return lambda q, k, v: torch.matmul(torch.softmax(torch.matmul(q, k.transpose(-1, -2)) * scale, dim=-1), v)
    return {
        "matmul": lambda a, b: a @ b,
        "rmsnorm_matmul": lambda x, w: (x * torch.rsqrt(x.float().square().mean(-1, keepdim=True)).half()) @ w,
        "swiglu": lambda x, wg, wu: F.silu(x @ wg) * (x @ wu),
        "matmul_matmul": lambda a, b, c: (a @ b) @ c,
        "matmul_rowsum": lambda a, b: (a @ b).sum(-1, keepdim=True),
    }[example]


def sdpa_forms(example: str, scale: float) -> dict[str, Callable[..., Any]]:
    """SDPA calls computing the example from its inputs: label -> fn(q, k, v) (backend chosen by the caller)."""
    import torch.nn.functional as F

    sdpa = F.scaled_dot_product_attention
    if example in ("mha", "mha_decode"):
        return {"": lambda q, k, v: sdpa(q, k, v, scale=scale)}
    if example == "gqa":  # q [B, Hkv, G, S, D], k/v [B, Hkv, 1, S, D]: query head h uses KV head h // G
        return {"": lambda q, k, v: sdpa(q.flatten(1, 2), k.flatten(1, 2), v.flatten(1, 2), scale=scale, enable_gqa=True)}
    if example == "mqa":
        return {"": lambda q, k, v: sdpa(q, k, v, scale=scale, enable_gqa=True)}
    if example == "gqa_decode":  # q [B, Hkv, G, D]: as G query heads per KV head, or as G query rows of one head
        return {
            "": lambda q, k, v: sdpa(q.flatten(1, 2).unsqueeze(2), k, v, scale=scale, enable_gqa=True),
            " rows": lambda q, k, v: sdpa(q, k, v, scale=scale),
        }
    if example == "mla":  # K/V shared by all heads: one KV head
        return {"": lambda q, k, v: sdpa(q, k, v, scale=scale, enable_gqa=True)}
    if example == "mla_decode":  # q [B, H, 576] as H query rows of one head
        return {"": lambda q, k, v: sdpa(q.unsqueeze(1), k.unsqueeze(1), v.unsqueeze(1), scale=scale)}
    return {}


def _scale_of(graph) -> float | None:  # type: ignore[no-untyped-def]
    from cleave_ir.dialects import tgraph

    return next((float(op.value) for op in graph.block.ops if isinstance(op, tgraph.ScaleOp)), None)


CAPTURE_GATE = threading.Lock()
"""Held while a row's kernels compile and while contenders are timed: a CUDA-graph capture (global
capture mode) fails if another thread loads a module meanwhile, so compiling ahead overlaps only
with the references, the correctness checks and the baselines' first calls (torch.compile)."""


@dataclass
class Compiled:
    """A row's compiled kernels: its module's first candidates, and the tuned winner's module (`tune`) if any."""

    mod: Any
    kernels: dict[str, Any]
    seconds: dict[str, float]
    wall_s: float
    tuned_mod: Any = None
    tuned_kernels: dict[str, Any] = field(default_factory=dict)


def compile_row(entry: dict[str, Any], suite: Path, top_k: int, jobs: int) -> Compiled:
    """Load a row's module and compile its first `top_k` candidates' kernels (outputs passed in: out_idx=None),
    and those of its tuned winner where `tune` recorded one."""
    from cleave_ir.tilelang_check import load_module_file

    with CAPTURE_GATE:
        t0 = time.perf_counter()
        mod = load_module_file(suite / entry["module"])
        names = [k for c in entry["candidates"][:top_k] for k in c["kernels"]]
        seconds: dict[str, float] = {}
        out = Compiled(mod, compile_candidates(mod, names, jobs, raw=True, seconds=seconds), seconds, 0.0)
        tuned = (entry.get("tuned") or {}).get("module")
        if tuned:
            out.tuned_mod = load_module_file(suite / tuned)
            out.tuned_kernels = compile_candidates(out.tuned_mod, out.tuned_mod.CANDIDATES[0][1], jobs, raw=True, seconds=seconds)
        out.wall_s = round(time.perf_counter() - t0, 1)
        return out


def measure_row(
    entry: dict[str, Any],
    compiling: Future,
    args: argparse.Namespace,
    row_deadline: float,
    baselines_from: dict[str, Any] | None,
) -> dict[str, Any]:
    """Check and time one (row, variant) once `compiling` (a `compile_row` future) is done; with the
    baselines unless `baselines_from` gives them (ablation variants reuse the full row's)."""
    import torch

    res: dict[str, Any] = {k: entry.get(k) for k in ("row", "variant", "inputs", "output", "flops", "bytes", "metric", "pipeline_s")}
    res.update(candidates=[], baselines={}, status="running")
    graph = parse_graph(entry["graph"])
    example = graph.sym_name.data
    scale = _scale_of(graph)

    def left() -> float:
        return row_deadline - time.perf_counter()

    res["compile_wait_s"] = 0.0
    t0 = time.perf_counter()
    built: Compiled = compiling.result()
    res["compile_s"], seconds = built.wall_s, built.seconds
    res["compile_wait_s"] = round(time.perf_counter() - t0, 1)
    # (candidate, its module, its compiled kernels): the pipeline's first candidates, then the tuned winner
    cands = [(c, built.mod, built.kernels) for c in entry["candidates"][: args.top_k]]
    if built.tuned_mod is not None:
        t = entry["tuned"]
        tuned = {"graph": f"{t['graph']} tuned", "kernels": list(built.tuned_mod.CANDIDATES[0][1]), "estimated_us": t["estimated_us"], "tiles": [t["config"]]}
        cands.append((tuned, built.tuned_mod, built.tuned_kernels))

    xs = random_inputs(graph)
    if is_model(example):
        xs = model_inputs(graph, xs)
    refs = torch_reference(graph, xs)  # every output: ours and the baselines are checked on all of them
    torch.cuda.empty_cache()
    sets = rotating_copies(xs)
    res["input_sets"] = len(sets)
    contenders: dict[str, Callable[..., Any]] = {}
    # a candidate that never finishes ends the run (rerun with --previous: it is skipped then)
    guard = HangGuard(Path(args.dir).resolve() / entry["module"])
    for i, (c, mod, compiled) in enumerate(cands):
        r = {"graph": c["graph"], "kernels": c["kernels"], "estimated_us": c["estimated_us"], "tiles": c.get("tiles"),
             "compile_s": round(sum(seconds.get(k, 0.0) for k in set(c["kernels"])), 1)}
        res["candidates"].append(r)
        bad = [k for k in c["kernels"] if isinstance(compiled.get(k), Exception)]
        if bad:
            r["failure"] = f"compile failed: {bad[0]}: {one_line(compiled[bad[0]])}"
            continue
        if guard.hung(c["graph"], c["kernels"]):
            r["failure"] = guard.skipped
            continue
        try:
            cand = Candidate(mod, c["kernels"], compiled)
            with guard.running(i, c["graph"], c["kernels"]):
                cand(*xs)  # allocates the buffers (dynamic dims take the inputs' sizes)
                torch.cuda.synchronize()
                cand.poison()
                got = cand(*xs)
                torch.cuda.synchronize()
            r["rel_error"] = check_outputs(got, refs)
            r["ok"] = r["rel_error"] < 1e-2
            if r["ok"]:
                contenders[f"ours#{i}"] = cand
        except Exception as e:  # one bad candidate must not hide the others
            r["failure"] = f"run failed: {one_line(e)}"
    if baselines_from is None:
        for label, fn in _baseline_fns(example, scale, xs, refs, res, args, left, graph).items():
            contenders[label] = fn
    # interleaved timing: every contender once per round, median over the rounds
    samples: dict[str, list[float]] = {k: [] for k in contenders}
    methods: dict[str, str] = {}
    batches: dict[str, int] = {}
    for label, fn in list(contenders.items()):
        try:
            batches[label] = _batch(fn, sets)
        except Exception as e:
            methods[label] = f"timing failed: {one_line(e)}"
            del contenders[label]
    with CAPTURE_GATE:
        for rnd in range(args.rounds):
            for label, fn in contenders.items():
                if left() < 0 and rnd > 0:
                    break
                try:
                    t = timed(fn, rotate=sets, batch=batches[label], iters=args.iters)
                    samples[label].append(t.us)
                    methods[label] = t.method
                except Exception as e:
                    methods[label] = f"timing failed: {one_line(e)}"
    for label, s in samples.items():
        us = statistics.median(s) if s else None
        if label.startswith("ours#"):
            r = res["candidates"][int(label[5:])]
            r["us"], r["method"], r["rounds"] = us, methods.get(label), len(s)
        else:
            res["baselines"][label].update(us=us, method=methods.get(label), rounds=len(s))
    del sets, contenders
    torch.cuda.empty_cache()
    ours = [(r["us"], i) for i, r in enumerate(res["candidates"]) if r.get("ok") and r.get("us")]
    if ours:
        us, i = min(ours)
        res["best"] = {"candidate": i, "graph": res["candidates"][i]["graph"], "us": us, "rel_error": res["candidates"][i]["rel_error"]}
        res["best"]["tflops"] = entry["flops"] / us / 1e6
        res["best"]["tbps"] = entry["bytes"] / us / 1e6
    if baselines_from is not None:
        res["baselines"] = baselines_from
    timed_base = [(b["us"], k) for k, b in res["baselines"].items() if b.get("us")]
    if timed_base:
        bus, blabel = min(timed_base)
        res["best_baseline"] = {"label": blabel, "us": bus}
        if "best" in res:
            res["ratio"] = bus / res["best"]["us"]
    res["status"] = "ok" if "best" in res else "no correct candidate"
    return res


def _batch(fn: Callable[..., Any], sets: Sequence[Sequence[Any]]) -> int:
    """Calls per timing sample: about 2 ms of work, 1..200 calls (a rough first estimate)."""
    import torch

    fn(*sets[0])
    torch.cuda.synchronize()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    for j in range(3):
        fn(*sets[j % len(sets)])
    b.record()
    torch.cuda.synchronize()
    us = max(a.elapsed_time(b) * 1e3 / 3, 1.0)
    return max(1, min(200, int(2000 / us)))


def _baseline_fns(
    example: str, scale: float | None, xs, refs, res: dict[str, Any], args: argparse.Namespace, left: Callable[[], float], graph=None
) -> dict[str, Callable[..., Any]]:  # type: ignore[no-untyped-def]
    """The baselines that run and are correct on this row (the others recorded as n/a in `res`)."""
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel

    out: dict[str, Callable[..., Any]] = {}

    def admit(label: str, fn: Callable[..., Any]) -> None:
        try:
            t0 = time.perf_counter()
            got = fn(*xs)
            torch.cuda.synchronize()
            err = check_outputs(got, refs)
            res["baselines"][label] = {"rel_error": err, "first_call_s": round(time.perf_counter() - t0, 1)}
            if err < 1e-2:
                out[label] = fn
            else:
                res["baselines"][label]["na"] = f"wrong result (rel. error {err:.2e})"
        except Exception as e:  # a backend that refuses the shape
            res["baselines"][label] = {"na": one_line(e)[:160]}

    if example in ATTENTION:
        for suffix, form in sdpa_forms(example, scale or 1.0).items():
            for label, backend in (("sdpa_cudnn", SDPBackend.CUDNN_ATTENTION), ("sdpa_flash", SDPBackend.FLASH_ATTENTION)):
                def fn(*a, form=form, backend=backend):  # type: ignore[no-untyped-def]
                    with sdpa_kernel(backend):
                        return form(*a)

                admit(label + suffix.replace(" ", "_"), fn)
    eager = eager_fn(example, scale, graph)
    admit("eager", eager)
    if args.torch_compile != "off":
        if left() < 30:
            res["baselines"]["torch.compile"] = {"na": "skipped: row time budget"}
        else:
            torch._dynamo.config.cache_size_limit = 256
            compiled = torch.compile(eager_fn(example, scale, graph), mode=None if args.torch_compile == "default" else args.torch_compile, dynamic=False)
            admit("torch.compile", compiled)
    return out


def _versions() -> dict[str, str]:
    import torch

    info = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "cuda": str(torch.version.cuda)}
    try:
        import tilelang

        info["tilelang"] = getattr(tilelang, "__version__", "?")
    except Exception as e:
        info["tilelang"] = f"import failed: {one_line(e)}"
    return info


def run(args: argparse.Namespace) -> int:
    """`run`: every (row, variant) of the manifest on the GPU, within the deadline."""
    try:
        import torch

        gpu = torch.cuda.is_available()
    except ImportError:
        gpu = False
    if not gpu:
        print("error: gpu_suite run: no CUDA GPU on this machine (run `prepare` here, `run` on the GPU machine)", file=sys.stderr)
        return 1
    start = time.perf_counter()
    suite = Path(args.dir).resolve()
    manifest = json.loads((suite / "manifest.json").read_text())
    out = Path(args.out)
    results: dict[str, Any] = {"meta": {}, "rows": {}}
    if args.previous and Path(args.previous).exists():
        results["rows"] = {k: v for k, v in json.loads(Path(args.previous).read_text())["rows"].items() if not v.get("status", "").startswith("not run")}
    results["meta"] = {
        **_versions(),
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "command": " ".join(["python", f"bench/{Path(sys.argv[0]).name}", *sys.argv[1:]]),
        "torch_compile_mode": args.torch_compile,
        "top_k": args.top_k,
        "rounds": args.rounds,
        "prepare_command": manifest.get("command"),
    }
    entries = sorted(manifest["entries"].values(), key=lambda e: (list(VARIANTS).index(e["variant"]), _row_order(e["row"])))
    entries = [e for e in entries if (not args.rows or re.search(args.rows, e["row"])) and (args.ablations or e["variant"] == "full")]
    entries = [e for e in entries if _key(e) not in results["rows"]]
    # kernels compile ahead, one row at a time in row order (each with `jobs` threads), while earlier rows are timed
    ahead = ThreadPoolExecutor(max_workers=1, thread_name_prefix="compile-ahead")
    compiling = {_key(e): ahead.submit(compile_row, e, suite, args.top_k, args.jobs) for e in entries if e["status"] == "ok"}
    for e in entries:
        key = _key(e)
        now = time.perf_counter()
        if e["status"] != "ok":
            results["rows"][key] = {"row": e["row"], "variant": e["variant"], "status": f"pipeline failed: {e.get('error')}"}
            continue
        if now - start > args.deadline:
            results["rows"][key] = {"row": e["row"], "variant": e["variant"], "status": "not run (deadline)"}
            compiling[key].cancel()
            continue
        base = None
        if e["variant"] != "full":
            full = results["rows"].get(f"{e['row']}__full", {})
            base = full.get("baselines") or None
        try:
            res = measure_row(e, compiling.pop(key), args, min(now + args.row_budget, start + args.deadline), base)
        except Exception as ex:  # recorded, the other rows go on
            res = {"row": e["row"], "variant": e["variant"], "status": f"failed: {one_line(ex)}", "trace": traceback.format_exc()[-2000:]}
        gc.collect()  # the failed row's tensors, held by its traceback until here
        with contextlib.suppress(Exception):
            torch.cuda.empty_cache()
        res["wall_s"] = round(time.perf_counter() - now, 1)
        results["rows"][key] = res
        _write_json(out, results)
        print(_row_line(res), flush=True)
    ahead.shutdown(wait=False, cancel_futures=True)
    results["meta"]["wall_s"] = round(time.perf_counter() - start, 1)
    _write_json(out, results)
    md = markdown(results)
    print(md)
    out.with_suffix(".md").write_text(md)
    return 0


def tune_rows(args: argparse.Namespace) -> int:
    """`tune` (GPU): tune each selected row's kept candidates as `cleave compile --gpu --tune-budget` does
    (`cleave_ir.tune`: variants checked against float64, timed in child processes) and record the winner's
    module in the manifest where it beats the pipeline's own configurations; `run` then times it beside them."""
    import tempfile

    import torch
    from xdsl.parser import Parser

    from cleave_ir import tune
    from cleave_ir.run import make_context

    if not torch.cuda.is_available():
        print("error: gpu_suite tune: no CUDA GPU on this machine", file=sys.stderr)
        return 1
    suite = Path(args.dir).resolve()
    mpath = suite / "manifest.json"
    manifest = json.loads(mpath.read_text())
    device = torch.cuda.get_device_name()
    earlier = json.loads(Path(args.measured).read_text())["rows"] if args.measured else {}
    start = time.perf_counter()
    for key, e in manifest["entries"].items():
        if e["status"] != "ok" or e["variant"] != "full" or (args.rows and not re.search(args.rows, e["row"])):
            continue
        if time.perf_counter() - start + args.budget > args.deadline:
            print(f"{key}: not tuned (deadline)", flush=True)
            continue
        if "pipeline" not in e:
            print(f"{key}: not tuned (prepared before `prepare` kept the pipeline's module: prepare it again with --force)", flush=True)
            continue
        module = Parser(make_context(), (suite / e["pipeline"]).read_text()).parse_module()
        with tempfile.TemporaryDirectory(prefix="suite-tune-") as d:
            # an earlier run's times of the candidates steer the neighbourhood to the measured winner's
            measured = {c["graph"]: (c.get("us") if c.get("ok") else None) for c in earlier.get(key, {}).get("candidates", [])} or None
            t, paths = tune.tune(module, parse_graph(e["graph"]), args.budget, Path(d), device=device, jobs=args.jobs, measured=measured)
            won, base = t.winner, t.base_best
            record: dict[str, Any] = {"device": device, "budget_s": args.budget, "seconds": round(t.seconds, 1),
                                      "variants": len(t.results), "correct": sum(r.ok for r in t.results.values()),
                                      "winner_us": t.us(won), "pipeline_us": t.us(base), "module": None}
            if t.improved:
                v = t.variants[won]  # type: ignore[index]
                target = suite / "kernels" / f"{key}.tuned.py"
                target.write_bytes(paths[won].read_bytes())
                record.update(module=str(target.relative_to(suite)), graph=v.head, config=v.describe(), estimated_us=round(v.estimated_us, 3))
        e["tuned"] = record
        _write_json(mpath, manifest)
        buf = io.StringIO()
        tune.print_table(t, buf)
        print(f"{key}:\n" + "".join(f"    {line}\n" for line in buf.getvalue().splitlines()) + "".join(f"    {n}\n" for n in t.notes), end="")
        gain = f"{record['pipeline_us'] or float('nan'):.2f} -> {record['winner_us']:.2f} us ({record['config']})" if record["module"] else "the pipeline's configurations stay"
        print(f"{key}: {record['variants']} variants ({record['correct']} correct) in {record['seconds']} s: {gain}", flush=True)
    return 0


def _row_order(name: str) -> int:
    names = [r.name for r in rows() + model_rows()]
    return names.index(name) if name in names else len(names)


def _fmt(x: float | None, digits: int = 1) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def _row_line(r: dict[str, Any]) -> str:
    best = r.get("best") or {}
    bb = r.get("best_baseline") or {}
    return f"{r['row']} [{r['variant']}]: {r['status']}, ours {_fmt(best.get('us'))} us, best baseline {bb.get('label', '-')} {_fmt(bb.get('us'))} us, ratio {_fmt(r.get('ratio'), 2)} ({r.get('wall_s', 0)} s)"


BASELINE_COLUMNS = ("sdpa_cudnn", "sdpa_flash", "eager", "torch.compile")


def markdown(results: dict[str, Any]) -> str:
    """The results as markdown: header, the table of rows (full pipeline), the ablation table."""
    m = results["meta"]
    lines = [
        f"GPU: {m.get('gpu')}, torch {m.get('torch')} (CUDA {m.get('cuda')}), TileLang {m.get('tilelang')}, {m.get('date')}",
        f"Command: `{m.get('command')}` (kernels from `{m.get('prepare_command')}`); torch.compile mode: {m.get('torch_compile_mode')}",
        "",
        "| row | our best candidate | us | TFLOP/s or TB/s | sdpa cuDNN us | sdpa FA us | eager us | torch.compile us | ratio (best baseline / ours) | rel. error |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    full = [r for r in results["rows"].values() if r["variant"] == "full"]
    full.sort(key=lambda r: _row_order(r["row"]))
    for r in full:
        best = r.get("best")
        if not best:
            lines.append(f"| {r['row']} | {r['status']} | | | {_base_cells(r)} | {_fmt(r.get('ratio'), 2)} | |")
            continue
        perf = f"{best['tflops']:.0f} TFLOP/s" if r.get("metric") == "TFLOP/s" else f"{best['tbps']:.2f} TB/s"
        lines.append(
            f"| {r['row']} | {best['graph']} | {best['us']:.1f} | {perf} | {_base_cells(r)} | {r['ratio']:.2f}x ({r['best_baseline']['label']}) | {best['rel_error']:.1e} |"
            if r.get("ratio") else
            f"| {r['row']} | {best['graph']} | {best['us']:.1f} | {perf} | {_base_cells(r)} | - | {best['rel_error']:.1e} |"
        )
    lines += ["", summary(full, m.get("rounds"))]
    abl = [r for r in results["rows"].values() if r["variant"] != "full"]
    if abl:
        lines += ["", "Ablations (us of the best correct candidate; speed relative to the full pipeline):", ""]
        lines += ["| row | " + " | ".join(VARIANTS) + " |", "| --- |" + " ---: |" * len(VARIANTS)]
        for name in sorted({r["row"] for r in abl}, key=_row_order):
            cells = []
            full_us = (results["rows"].get(f"{name}__full", {}).get("best") or {}).get("us")
            for v in VARIANTS:
                r = results["rows"].get(f"{name}__{v}")
                us = (r or {}).get("best", {}) and r["best"]["us"]  # type: ignore[index]
                if not r:
                    cells.append("-")
                elif us:
                    cells.append(f"{us:.1f} ({full_us / us:.2f}x)" if full_us else f"{us:.1f}")
                else:
                    cells.append(r["status"][:60])
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += ["", "Candidates (every kept candidate: estimated us, compile s, measured us, rel. error):", ""]
    for key, r in sorted(results["rows"].items(), key=lambda kv: (kv[1]["variant"] != "full", _row_order(kv[1]["row"]))):
        for c in r.get("candidates", []):
            state = c.get("failure") or f"{_fmt(c.get('us'))} us, err {c.get('rel_error', float('nan')):.1e}{'' if c.get('ok') else ' WRONG'}"
            lines.append(f"- {key}: {c['graph']} ({len(c['kernels'])} kernels, {c.get('tiles')}): est {c['estimated_us']} us, compile {c['compile_s']} s: {state}")
        for label, b in r.get("baselines", {}).items() if r["variant"] == "full" else []:
            if "na" in b:
                lines.append(f"- {key}: baseline {label}: n/a ({b['na']})")
    return "\n".join(lines) + "\n"


def summary(rows: list[dict[str, Any]], rounds: int | None) -> str:
    """One line computed from the rows: the geometric mean of the ratios, how many rows reach 1.0x and
    0.9x (unrounded: a 0.896x row shows as 0.90x in the table), the rows under 0.9x, and the rows
    timed in fewer rounds than the run asked for (a row budget cut short), and how many rows lack a
    torch.compile time where the run asked for one (their ratios are against the other baselines)."""
    ratios = {r["row"]: r["ratio"] for r in rows if r.get("ratio")}
    if not ratios:
        return "No row has a ratio."
    geo = math.exp(sum(math.log(x) for x in ratios.values()) / len(ratios))
    under = ", ".join(f"{n} {x:.3f}x" for n, x in sorted(ratios.items(), key=lambda kv: kv[1]) if x < 0.9) or "none"
    out = (
        f"Geometric mean over the {len(ratios)} rows with a ratio: {geo:.3f}x; {sum(x >= 1.0 for x in ratios.values())} rows >= 1.0x, "
        f"{sum(x >= 0.9 for x in ratios.values())} >= 0.9x; under 0.9x: {under}."
    )
    if rounds:
        short = sorted(
            r["row"]
            for r in rows
            if any(t.get("rounds", rounds) < rounds for t in [*r.get("candidates", []), *r.get("baselines", {}).values()] if t.get("us"))
        )
        out += f" Timed in fewer than {rounds} rounds: {', '.join(short) or 'no row'}."
    untimed = [r["row"] for r in rows if r["row"] in ratios and "torch.compile" in r.get("baselines", {}) and not r["baselines"]["torch.compile"].get("us")]
    if untimed:
        out += f" **torch.compile not timed on {len(untimed)} of {len(ratios)} rows** ({', '.join(sorted(untimed))}): their ratios leave it out."
    return out


def _base_cells(r: dict[str, Any]) -> str:
    b = r.get("baselines", {})
    cells = []
    for col in BASELINE_COLUMNS:
        vals = [(v["us"], k) for k, v in b.items() if (k == col or k.startswith(col + "_")) and v.get("us")]
        cells.append(f"{min(vals)[0]:.1f}" if vals else ("n/a" if any(k.startswith(col) for k in b) else "-"))
    return " | ".join(cells)


# ---------------------------------------------------------------------------------------- chart


def chart(results_path: Path, out: Path) -> None:
    """A PNG: our ratio to the best baseline per row (log scale, line at 1), and the ablations if present."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    results = json.loads(Path(results_path).read_text())
    full = sorted((r for r in results["rows"].values() if r["variant"] == "full"), key=lambda r: _row_order(r["row"]))
    abl_rows = sorted({r["row"] for r in results["rows"].values() if r["variant"] != "full"}, key=_row_order)
    panels = 2 if abl_rows else 1
    fig, axes = plt.subplots(panels, 1, figsize=(max(8, 0.45 * len(full) + 2), 5 * panels), squeeze=False)
    ax = axes[0][0]
    names = [r["row"] for r in full]
    ratios = [r.get("ratio") for r in full]
    xs = range(len(names))
    ax.bar(xs, [x or 0 for x in ratios], color=["tab:green" if (x or 0) >= 1 else "tab:red" for x in ratios])
    for i, x in enumerate(ratios):
        ax.text(i, x if x else 1, f"{x:.2f}" if x else "n/a", ha="center", va="bottom", fontsize=7)
    ax.axhline(1.0, color="black", linewidth=1)
    ax.set_yscale("log")
    ax.set_xticks(list(xs), names, rotation=60, ha="right", fontsize=8)
    ax.set_ylabel("best baseline time / our time")
    m = results.get("meta", {})
    ax.set_title(f"Cleave-IR vs best baseline ({m.get('gpu', '?')}, {m.get('date', '?')})")
    if abl_rows:
        ax2 = axes[1][0]
        variants = [v for v in VARIANTS if v != "full"]
        width = 0.8 / len(variants)
        for j, v in enumerate(variants):
            vals = []
            for name in abl_rows:
                f = (results["rows"].get(f"{name}__full", {}).get("best") or {}).get("us")
                a = (results["rows"].get(f"{name}__{v}", {}).get("best") or {}).get("us")
                vals.append(f / a if f and a else 0)
            pos = [i + (j - (len(variants) - 1) / 2) * width for i in range(len(abl_rows))]
            ax2.bar(pos, vals, width, label=v)
            for p, val in zip(pos, vals):
                if not val:
                    ax2.text(p, 1, "x", ha="center", va="bottom", fontsize=8, color="gray")
        ax2.axhline(1.0, color="black", linewidth=1)
        ax2.set_yscale("log")
        ax2.set_xticks(range(len(abl_rows)), abl_rows, rotation=30, ha="right", fontsize=8)
        ax2.set_ylabel("time of full pipeline / time of variant")
        ax2.set_title("Ablations (x: no correct kernel or not run)")
        ax2.legend(fontsize=8)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=120)
    plt.close(fig)


# ----------------------------------------------------------------------------------------- main


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: `prepare`, `run` or `chart`."""
    p = argparse.ArgumentParser(prog="gpu_suite.py", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    pp = sub.add_parser("prepare", help="run the pipeline for every row (CPU); write kernels and manifest.json")
    pp.add_argument("--out", required=True, help="directory for the kernels and manifest.json")
    pp.add_argument("-j", "--jobs", type=int, default=1, help="worker processes (default 1)")
    pp.add_argument("--rows", help="only rows whose name matches this regex")
    pp.add_argument("--ablations", action="store_true", help="also the ablation variants of " + ", ".join(ABLATION_ROWS))
    pp.add_argument("--keep", type=int, default=3, help="candidates kept per row (default 3)")
    pp.add_argument("--top-k", type=int, default=2, help="kernels scheduled per graph (default 2)")
    pp.add_argument("--lower", action="store_true", help="also lower every kernel for sm_90a (CPU) and record failures")
    pp.add_argument("--force", action="store_true", help="re-run entries the manifest already has (after a change to the passes or the emitter)")
    pp.add_argument("--models", action="store_true", help="the generality suite's rows (examples/models at their real shapes) instead")
    pp.add_argument("--graphs", nargs="+", metavar="FILE", help="rows from these tgraph files (at their written shapes) instead")
    pp.add_argument("--scale", action="store_true", help=argparse.SUPPRESS)  # scaled-down shapes, for smoke tests
    pr = sub.add_parser("run", help="compile, check and time every row on the GPU")
    pr.add_argument("dir", help="the directory `prepare` wrote")
    pr.add_argument("--out", required=True, help="results JSON (RESULTS.md is written next to it)")
    pr.add_argument("--top-k", type=int, default=3, help="candidates per row to compile and time (default 3)")
    pr.add_argument("--rows", help="only rows whose name matches this regex")
    pr.add_argument("--ablations", action="store_true", help="also the ablation variants in the manifest")
    pr.add_argument("--deadline", type=float, default=480.0, help="seconds for the whole run; later rows are recorded as not run")
    pr.add_argument("--row-budget", type=float, default=90.0, help="seconds per row before its remaining work is cut short")
    pr.add_argument("--torch-compile", default="default", choices=["default", "max-autotune-no-cudagraphs", "off"])
    pr.add_argument("--rounds", type=int, default=3, help="interleaved timing rounds (default 3)")
    pr.add_argument("--iters", type=int, default=10, help="samples per timing (default 10)")
    pr.add_argument("-j", "--jobs", type=int, default=8, help="compile threads (default 8)")
    pr.add_argument("--previous", help="an earlier results JSON: its finished rows are kept, not re-run")
    pt = sub.add_parser("tune", help="tune the rows' candidates on the GPU (as cleave compile --gpu --tune-budget); run times the winners")
    pt.add_argument("dir", help="the directory `prepare` wrote (the manifest records each tuned winner)")
    pt.add_argument("--rows", help="only rows whose name matches this regex")
    pt.add_argument("--budget", type=float, default=40.0, help="tuning seconds per row (default 40)")
    pt.add_argument("--deadline", type=float, default=540.0, help="seconds for the whole command; later rows are not tuned")
    pt.add_argument("-j", "--jobs", type=int, default=8, help="compile threads (default 8)")
    pt.add_argument("--measured", help="an earlier `run`'s results JSON: its candidate times order the variants (as cleave compile --gpu's own measurement does)")
    pc = sub.add_parser("chart", help="PNG chart of the ratios (and ablations)")
    pc.add_argument("results")
    pc.add_argument("--out", required=True)
    args = p.parse_args(argv)
    if args.command == "prepare":
        only = model_rows() if args.models else file_rows(args.graphs) if args.graphs else None
        prepare(Path(args.out), args.jobs, args.rows, args.ablations, args.scale, args.keep, args.top_k, only=only, lower=args.lower, force=args.force)
        return 0
    if args.command == "run":
        return run(args)
    if args.command == "tune":
        return tune_rows(args)
    try:
        chart(Path(args.results), Path(args.out))
    except ImportError:
        print("error: gpu_suite chart needs matplotlib: pip install -e '.[bench]'", file=sys.stderr)
        return 1
    print(f"chart written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
