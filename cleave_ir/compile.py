"""`cleave compile FILE [--gpu]`: the whole job for a user, with a report.

Search, schedule, place and emit (`cleave-pipeline -t tilelang`), then lower every kernel for sm_90a.
With `--gpu`, the kernels of every kept candidate are compiled in parallel (`-j`), checked against a
float64 reference of the input graph (outputs poisoned), timed (CUDA graphs, rotating inputs), and
the fastest correct one is reported as the winner (`cleave_ir.runtime`). Without a GPU it stops
after emission and says so.

Results are cached (`cleave_ir.cache`): a second run on the same graph with the same options and
versions reuses the search, the schedules, the emitted module, the lowering, TileLang's compiled
kernels and the measured winner (`--retune` measures again; `--no-cache` disables the cache).

The command is quiet: TileLang's and TVM's log output is shown only with `-v`. The long phases show
progress bars on stderr when it is a terminal (or with `--progress`). `-o` is checked before any
work and written whole or not at all: a failed run leaves an existing file as it was.

`compile_graph` is the same code for library callers; it raises `CleaveError` (one-line message)
for bad input and for any failure, and leaves logging and the process's streams alone.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import json
import logging
import math
import os
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr, i64
from xdsl.printer import Printer

from cleave_ir.blas_threads import one_blas_thread
from cleave_ir.cache import Cache, Entry, cache_key, default_root, key_material
from cleave_ir.diagnostics import CleaveError, LocatingParser, check_output_path, located_line, write_atomically
from cleave_ir.diagnostics import one_line as first_line  # (runtime's one_line takes an exception)
from cleave_ir.dialects import cleave, itgraph, tgraph
from cleave_ir.passes import cost_model
from cleave_ir.passes.dynamic_shapes import refuse_varying_means
from cleave_ir.passes.fold_structural import FoldStructuralPass
from cleave_ir.passes.pipeline import PipelinePass, rank_candidates
from cleave_ir.passes.superoptimize import DEFAULT_BUDGET
from cleave_ir.run import load_module_located
from cleave_ir.runtime import default_jobs, one_line, torch_reference
from cleave_ir.tilelang_check import lower_each
from cleave_ir.tilelang_emitter import module_source

__all__ = ["CleaveError", "compile_graph", "main", "torch_reference"]  # torch_reference lived here before cleave_ir.runtime

ARCH = "sm_90a"

ABLATIONS: dict[str, tuple[str, bool]] = {
    # PipelinePass field: (flag, the field's value without the flag)
    "no_split": ("--no-split", False),
    "no_search": ("--no-search", False),
    "iterative_tiling": ("--no-iterative-tiling", True),
    "horizontal_fusion": ("--no-horizontal-fusion", True),
    "hoist_elementwise": ("--hoist-elementwise", False),
}


def graph_text(graph: tgraph.GraphOp) -> str:
    """The canonical text of a graph, as xDSL's printer writes it."""
    out = io.StringIO()
    Printer(stream=out).print_op(graph)
    return out.getvalue()


def graph_shapes(graph: tgraph.GraphOp) -> list[list[str]]:
    """Shapes of the graph's inputs then outputs, each dim as text."""
    values = list(graph.inputs) + [r for op in graph.block.ops if isinstance(op, tgraph.OutputOp) for r in op.outputs]
    return [[str(d) for d in tgraph.tensor_type(v).shape] for v in values]


def pipeline_options(args: argparse.Namespace) -> dict[str, Any]:
    """Every option that changes the pipeline's result (these enter the cache key)."""
    return {
        "max_ops": args.max_ops,
        "search_budget": args.search_budget,
        "keep": args.keep,
        "top_k": args.top_k,
        "split_counts": tuple(args.split_counts),
        "no_split": args.no_split,
        "no_search": args.no_search,
        "iterative_tiling": not args.no_iterative_tiling,
        "horizontal_fusion": not args.no_horizontal_fusion,
        "hoist_elementwise": args.hoist_elementwise,
        "registers": getattr(args, "registers", False),  # spilling candidates ranked last
        "arch": ARCH,
        "cost_calibration": cost_model.CALIBRATION.constants(),  # a refit changes the ranking
    }


def pipeline_pass(options: dict[str, Any]) -> PipelinePass:
    """The PipelinePass for `options`; an ablation this PipelinePass lacks is an error when asked for."""
    fields = {f.name for f in dataclasses.fields(PipelinePass)}
    kwargs = {k: options[k] for k in ("max_ops", "search_budget", "keep", "top_k", "split_counts")}
    for name, (flag, default) in ABLATIONS.items():
        if name in fields:
            kwargs[name] = options[name]
        elif options[name] != default:
            raise CleaveError(f"error: {flag}: not supported by this cleave-pipeline (PipelinePass has no field {name})")
    return PipelinePass(**kwargs)


def _split_counts(text: str) -> list[int]:
    try:
        counts = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None
    if not counts or any(c < 2 for c in counts):
        raise argparse.ArgumentTypeError(f"split counts must be integers >= 2, got {text!r}")
    return counts


def _tune_budget(text: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, got {text!r}") from None
    if not math.isfinite(seconds) or seconds < 0:
        raise argparse.ArgumentTypeError(f"the tuning budget must be >= 0 seconds, got {text!r}")
    return seconds


class _OptionsParser(argparse.ArgumentParser):
    """The command line for `compile_graph`'s options: a bad option is a CleaveError, not an exit."""

    def error(self, message: str) -> Any:
        raise CleaveError(f"error: cleave compile options: {message}")


def parser(cls: type[argparse.ArgumentParser] = argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The `cleave` command line."""
    p = cls(prog="cleave", description="Cleave-IR: optimize a tgraph subgraph into TileLang kernels")
    sub = p.add_subparsers(dest="command", required=True)
    c = sub.add_parser("compile", help="search, schedule, emit and lower; with --gpu also compile, check and time")
    c.add_argument("file")
    c.add_argument("-o", "--output", default="kernel.py")
    c.add_argument("--gpu", action="store_true", help="compile, verify and time the candidates on a CUDA GPU")
    c.add_argument("--keep", type=int, default=3, help="candidates to keep and emit (default 3)")
    c.add_argument("--max-ops", type=int, default=12, help="ops of a searched graph, at least (default 12); a larger graph raises it to its own op count plus what its Split-K forms add")
    c.add_argument("--search-budget", type=int, default=DEFAULT_BUDGET, help=f"search work budget: constructions considered (default {DEFAULT_BUDGET}); the result does not depend on machine load")
    c.add_argument("--top-k", type=int, default=2, help="tile configurations scheduled per candidate (default 2)")
    c.add_argument("--split-counts", type=_split_counts, default=[2, 4, 8, 16, 32], help="Split-K counts tried (default 2,4,8,16,32)")
    c.add_argument("-j", "--jobs", type=int, default=default_jobs(), help="parallel compile/lowering workers (default min(8, cpus))")
    c.add_argument("--cache-dir", help="cache directory (default $CLEAVE_CACHE_DIR, else ~/.cache/cleave-ir)")
    c.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    c.add_argument("--retune", action="store_true", help="with --gpu: measure again even when the cache holds results")
    c.add_argument("-v", "--verbose", action="store_true", help="show TileLang's and TVM's log output (hidden by default)")
    c.add_argument("--progress", action="store_true", help="progress bars on stderr even when it is not a terminal")
    c.add_argument("--registers", action="store_true", help="compile each kept kernel with nvcc (no GPU needed): report its registers, rank candidates whose kernels spill after the others")
    c.add_argument("--tune-budget", type=_tune_budget, default=None, metavar="SECONDS", help="with --gpu: seconds for measured tuning of tile configurations (cleave_ir.tune); default: what keeps the whole compile under 5 minutes; 0: no tuning")
    for name, (flag, default) in ABLATIONS.items():
        c.add_argument(flag, action="store_true", help=f"ablation: PipelinePass({name}={not default})")
    return p


@dataclasses.dataclass
class Job:
    """One `cleave compile` run: its arguments, input graph, cache entry and report stream."""

    args: argparse.Namespace
    source: tgraph.GraphOp
    cache: Cache | None
    key: str
    material: dict[str, Any]
    out: Any = None
    entry: Entry | None = None
    lower_s: float = 0.0
    measurement: Any = None  # runtime.Measurement of the GPU phase (`compile_graph` reads its winner)
    pipeline: ModuleOp | None = None  # `compile_graph`: the pipeline's module (None on a cache hit: see pipeline.mlir)
    quiet: bool = False  # drop TileLang's and TVM's native log output (the command without -v)
    progress: Progress | None = None

    def say(self, line: str) -> None:
        """One line of the report (to `out`, default the current stdout)."""
        print(line, file=self.out or sys.stdout, flush=True)

    @contextlib.contextmanager
    def phase(self, desc: str, tilelang: bool = False) -> Iterator[Callable[[str], None]]:
        """A long phase: its progress bar (if shown); with `tilelang`, TileLang/TVM run in it (quieted)."""
        with (self.progress or Progress(None)).phase(desc) as note, _native_output(keep=not (self.quiet and tilelang)):
            yield note


class Progress:
    """Progress bars (tqdm) on `stream` for the long phases; none when `stream` is None.

    The phases report no fraction done, so a bar shows the phase, its elapsed time (refreshed twice a
    second) and its latest note, and is erased when the phase ends (the report says how long it took).
    """

    def __init__(self, stream: Any) -> None:
        self.stream = stream

    @contextlib.contextmanager
    def phase(self, desc: str) -> Iterator[Callable[[str], None]]:
        if self.stream is None:
            yield lambda note: None
            return
        from tqdm import tqdm

        width = shutil.get_terminal_size().columns  # 80 where the terminal reports no size
        bar = tqdm(total=None, desc=desc, file=self.stream, bar_format="{desc}: {elapsed}{postfix}", leave=False, ncols=width)
        done = threading.Event()

        def tick() -> None:
            while not done.wait(0.5):
                bar.refresh()

        ticker = threading.Thread(target=tick, name="cleave-progress", daemon=True)
        ticker.start()
        try:
            yield lambda note: bar.set_postfix_str(note[:60], refresh=True)
        finally:
            done.set()
            ticker.join()
            bar.close()


@contextlib.contextmanager
def _native_output(keep: bool) -> Iterator[None]:
    """Unless `keep`, what C++ code (TVM's LOG lines) writes to file descriptor 2 meanwhile is dropped.

    TVM logs from C++ straight to the descriptor, past Python's sys.stderr; our own messages are
    raised as exceptions and printed after the phase.
    """
    if keep:
        yield
        return
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):
        yield
        return
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)


class _LogLines(io.StringIO):
    """The pipeline's stderr log, each line also passed to `note` as it is written (for the progress bar)."""

    def __init__(self, note: Callable[[str], None]) -> None:
        super().__init__()
        self.note = note

    def write(self, text: str) -> int:
        for line in text.splitlines():
            if line.strip():
                self.note(line.strip())
        return super().write(text)


def _search_and_emit(job: Job, module: ModuleOp) -> None:
    """Run the pipeline and emission, write the module, lower it; store a cache entry."""
    args = job.args
    t0 = time.perf_counter()
    with job.phase("search+schedule") as note:
        log = _LogLines(note)
        with contextlib.redirect_stderr(log):
            FoldStructuralPass().apply(Context(), module)  # the padded graph is made of the folded one
            padding = _padded_pipeline(job, module)
            if not padding:  # nothing awkward, or the padded compile was dropped
                pipeline_pass(pipeline_options(args)).apply(Context(), module)
    lines = [line for line in log.getvalue().splitlines() if line.startswith(("cleave-superoptimize", "cleave-pipeline", "cleave-padded-dims"))]
    search_s = time.perf_counter() - t0
    job.say(f"search+schedule: {search_s:.1f} s")
    if padding:
        lines.insert(0, padding)
    for line in lines:
        job.say(f"  {line}")
    t0 = time.perf_counter()
    source = module_source(module)
    candidates = [[u, ks, g] for u, ks, g in rank_candidates(module)]
    emit_s = time.perf_counter() - t0
    _report_candidates(job, candidates)
    _warn_static(module, candidates)
    with tempfile.TemporaryDirectory(prefix="cleave-") as d:  # -o is written once it lowers
        staged = Path(d) / Path(args.output).name
        staged.write_text(source)
        lowered, failed = _lower(job, staged)
        if failed:  # such kernels are dropped; the candidates left (another configuration of a graph) ship
            _drop_kernels(module, failed)
            candidates = [[u, ks, g] for u, ks, g in rank_candidates(module)]
            if not candidates:
                name, e = next(iter(failed.items()))
                raise CleaveError(f"error: {args.output}: lowering for {ARCH} failed: {one_line(e)}")
            for name, e in failed.items():
                print(f"warning: cleave compile: dropped kernel @{name}: lowering for {ARCH} failed: {one_line(e)}", file=sys.stderr)
            _report_candidates(job, candidates)
            source = module_source(module)
            staged.write_text(source)
        if args.registers and _mark_spills(job, module, lowered):
            ranked = [[u, ks, g] for u, ks, g in rank_candidates(module)]
            if ranked != candidates:  # a spilling candidate moved after the others
                candidates = ranked
                _report_candidates(job, candidates)
                source = module_source(module)
        write_atomically(args.output, source)
    job.say(f"emit: {emit_s:.1f} s; kernel module written to {args.output}")
    job.say(f"lower ({ARCH}, {args.jobs} jobs): {len(lowered)} kernels in {job.lower_s:.1f} s")
    if job.cache is None:
        return
    buf = io.StringIO()
    Printer(stream=buf).print_op(module)
    report = {"log": lines, "candidates": candidates, "seconds": {"search+schedule": search_s, "emit": emit_s}, "arch": ARCH, "lowered": list(lowered)}
    files: dict[str, str | bytes] = {"kernel.py": source, "pipeline.mlir": buf.getvalue(), "report.json": json.dumps(report, indent=1)}
    files.update({f"cuda/{name}.cu": src for name, src in lowered.items()})
    try:
        job.entry = job.cache.store(job.key, job.material, files)
    except OSError as e:  # the result is written; only the cache is lost
        print(f"warning: cache: could not store entry {job.key[:12]} in {job.cache.root}: {e.strerror or e}", file=sys.stderr)
        return
    job.say(f"cache: stored entry {job.entry.short} in {job.cache.root}")


def _warn_static(module: ModuleOp, candidates: list[list[Any]]) -> None:
    """A warning for each kept kernel that serves only the sizes it was scheduled at although its
    graph declares dynamic dims (`cleave-dynamic-shapes` left it static: no candidate serves every size)."""
    static = {
        k.sym_name.data: why.data
        for k in module.body.block.ops
        if isinstance(k, itgraph.KernelOp) and (why := cleave.get(k, "cleave.static_only", StringAttr)) is not None
    }
    for _, kernels, graph in candidates:
        for name in kernels:
            if name in static:
                print(f"warning: cleave compile: @{name} (candidate @{graph}) serves only the sizes it was scheduled at, "
                      f"not other sizes of the graph's dynamic dims: {static[name]}", file=sys.stderr)


def _padded_pipeline(job: Job, module: ModuleOp) -> str | None:
    """The pipeline on the graph of `module` with its awkward static sizes padded and dynamic
    (`passes/padded_dims.py`), put in `module` when its kernels serve the real sizes: a line saying
    what was padded. "" when the padded compile was dropped, None when nothing is awkward."""
    from cleave_ir.passes.padded_dims import apply_padded

    done = apply_padded(pipeline_pass(pipeline_options(job.args)), module)
    if done is None:
        return None
    said, ok = done
    if not ok:
        job.say(f"padded sizes ({said}): no candidate serves the real sizes; scheduled at the given sizes")
        return ""
    return f"padded sizes: {said} (dynamic dims; the kernels serve the real sizes)"


def _reuse(job: Job, entry: Entry) -> None:
    """Write the cached module and report what the entry holds."""
    report = entry.json("report.json")
    job.say(f"search+schedule: cache hit (entry {entry.short})")
    for line in report["log"]:
        job.say(f"  {line}")
    _report_candidates(job, report["candidates"])
    write_atomically(job.args.output, entry.files["kernel.py"])
    job.say(f"emit: cache hit (entry {entry.short}); kernel module written to {job.args.output}")
    job.say(f"lower ({ARCH}): cache hit ({len(report['lowered'])} kernels lowered when the entry was made)")


def _report_candidates(job: Job, candidates: list[list[Any]]) -> None:
    if not candidates:
        raise CleaveError("error: no candidate could be scheduled and placed")
    job.say(f"kept {len(candidates)} candidate{'s' if len(candidates) > 1 else ''}:")
    for i, (us, ks, g) in enumerate(candidates):
        job.say(f"  #{i} @{g}: {len(ks)} kernel{'s' if len(ks) > 1 else ''} ({', '.join(ks)}), estimated {us:.1f} us")


def _mark_spills(job: Job, module: ModuleOp, lowered: dict[str, str]) -> int:
    """ptxas's registers for every lowered kernel (`tilelang_check.register_usage`, nvcc on the CPU);
    kernels that spill get `cleave.spill_bytes`, which ranks their candidates after the others
    (`rank_candidates`). Returns how many spill; CleaveError without nvcc."""
    from cleave_ir.tilelang_check import RegisterUsage, register_usages

    t0 = time.perf_counter()
    used = register_usages(lowered, ARCH, job.args.jobs)
    failed = [(n, u) for n, u in used.items() if isinstance(u, RuntimeError)]
    if failed:
        raise CleaveError(f"error: --registers: @{failed[0][0]}: {failed[0][1]}")
    kernels = {k.sym_name.data: k for k in module.body.block.ops if isinstance(k, itgraph.KernelOp)}
    spilling = {n: u for n, u in used.items() if isinstance(u, RegisterUsage) and u.spills}
    for name, u in spilling.items():
        if name in kernels:
            kernels[name].attributes["cleave.spill_bytes"] = IntegerAttr(u.spill_stores + u.spill_loads, i64)
    job.say(f"registers (nvcc, {ARCH}): {len(used)} kernels in {time.perf_counter() - t0:.1f} s, "
            + (", ".join(f"@{n} spills {u.spill_stores} B stored / {u.spill_loads} B loaded a thread" for n, u in spilling.items()) or "none spills"))
    return len(spilling)


def _lower(job: Job, path: Path) -> tuple[dict[str, str], dict[str, Exception]]:
    """Lower every kernel of the module at `path` (the staged `-o`) for ARCH: the CUDA sources, and
    the kernels that failed with why."""
    t0 = time.perf_counter()
    try:
        with job.phase(f"lower ({ARCH})", tilelang=True):
            results = lower_each(path, ARCH, jobs=job.args.jobs)
    except Exception as e:  # one line for the user, whatever TileLang raised
        raise CleaveError(f"error: {job.args.output}: lowering for {ARCH} failed: {one_line(e)}") from None
    job.lower_s = time.perf_counter() - t0
    failed = {n: r for n, r in results.items() if isinstance(r, Exception)}
    return {n: r for n, r in results.items() if not isinstance(r, Exception)}, failed


def _drop_kernels(module: ModuleOp, names: Sequence[str] | dict[str, Any]) -> None:
    """Erase the kernels `names` from the pipeline's module (a candidate without all its kernels is no
    longer ranked: `rank_candidates`)."""
    from xdsl.rewriter import Rewriter

    for op in [op for op in module.body.block.ops if getattr(op, "sym_name", None) is not None and op.sym_name.data in names]:
        if op.name.endswith(".kernel"):
            Rewriter.erase_op(op)


def _gpu(job: Job, t_start: float) -> None:
    """The GPU phase: compile, check, time (or reuse recorded results), report the winner; CleaveError if none."""
    from cleave_ir import runtime

    args = job.args
    try:
        import torch
    except ImportError:
        torch = None  # type: ignore[assignment]
    if torch is None or not torch.cuda.is_available():
        raise CleaveError(f"error: --gpu: no CUDA GPU on this machine; stopped after emission ({args.output} is written and lowers for {ARCH})")
    if job.cache is not None:
        job.say(f"tilelang kernel cache: {job.cache.use_tilelang_cache()}")
    device = torch.cuda.get_device_name()
    m = None
    entry = job.entry
    if entry is not None and "gpu.json" in entry.files and not args.retune:
        recorded = runtime.Measurement.from_json(entry.json("gpu.json"))
        if recorded.device != device:
            job.say(f"compile+check+time: recorded on {recorded.device}, not {device}; measuring")
        elif recorded.winner is None:
            job.say("compile+check+time: the recorded run found no correct candidate; measuring again")
        else:
            job.say(f"compile+check+time: cache hit (entry {entry.short}, measured on {device}; --retune to measure again)")
            runtime.print_table(recorded, job.out or sys.stdout)
            t0 = time.perf_counter()
            with job.phase("re-check winner", tilelang=True):
                err = runtime.verify(args.output, job.source, recorded.winner, jobs=args.jobs)
            ok = err < runtime.TOLERANCE
            job.say(f"winner re-checked: candidate #{recorded.winner}, rel. error {err:.2e} {'ok' if ok else 'WRONG'} ({time.perf_counter() - t0:.1f} s)")
            if ok:
                m = recorded
            else:
                job.say("the recorded winner fails its check now; measuring again")
    if m is None:
        t0 = time.perf_counter()
        with job.phase("compile+check+time", tilelang=True):
            m = runtime.measure(args.output, job.source, job.out or sys.stdout, jobs=args.jobs)
        job.say(f"compile+check+time: {time.perf_counter() - t0:.1f} s (parallel compile {m.compile_s:.1f} s, {args.jobs} jobs)")
        if job.cache is not None and entry is not None:
            try:
                job.entry = job.cache.update(entry, job.material, {"gpu.json": json.dumps(m.to_json(), indent=1)})
                job.say(f"cache: recorded the measurements in entry {job.entry.short}")
            except OSError as e:
                print(f"warning: cache: could not record the measurements: {e.strerror or e}", file=sys.stderr)
    job.measurement = m
    if m.winner is None:
        raise CleaveError(f"error: @{job.source.sym_name.data}: no candidate ran correctly on the GPU ({_why_not(m)})")
    us = next(r.us for r in m.rows if r.index == m.winner)
    job.say(f"winner: candidate #{m.winner}, {us:.2f} us (run(*tensors, candidate={m.winner}) in {args.output}); total {time.perf_counter() - t_start:.1f} s")
    if args.tune_budget != 0:
        from cleave_ir import tune

        tune.tune_job(job, time.perf_counter() - t_start)
        job.say(f"total {time.perf_counter() - t_start:.1f} s")


def _why_not(m: Any) -> str:
    """Each candidate's failure in a few words, for the one line that says none ran correctly."""
    def one(r: Any) -> str:
        if r.failure:
            return f"#{r.index}: {first_line(r.failure, 100)}"
        return f"#{r.index}: rel. error {r.error:.1e}" if r.error is not None else f"#{r.index}: not checked"

    if not m.rows:
        return "no candidates"
    return "; ".join(one(r) for r in m.rows[:3]) + ("; ..." if len(m.rows) > 3 else "")


def _check_args(args: argparse.Namespace) -> None:
    """Options that would fail late, checked before any work: -j, the -o path."""
    if args.jobs < 1:
        raise CleaveError("error: -j/--jobs must be at least 1")
    check_output_path(args.output)


def _run(args: argparse.Namespace, graph: tgraph.GraphOp, module: ModuleOp, t_start: float, **job_fields: Any) -> Job:
    """The whole job for `graph` (held in `module`, which the pipeline rewrites): cache, search,
    emission, lowering and, with `--gpu`, the GPU phase. Raises CleaveError on failure."""
    _check_args(args)
    if args.gpu and "cleave.boundary" in graph.attributes:
        # its ops leave out its boundary's views and parts: no reference of the graph it stands for
        raise CleaveError(
            f"error: --gpu: @{graph.sym_name.data} is already folded (cleave.boundary), so the GPU check has no reference for it; "
            "compile the graph as written (cleave-fold-structural runs first)",
            op=graph,
        )
    source = graph.clone()
    options = pipeline_options(args)
    pipeline_pass(options)  # an unsupported ablation fails before any work
    material = key_material(graph_text(source), graph_shapes(source), options)
    key = cache_key(material)
    cache = None if args.no_cache else Cache(default_root(args.cache_dir))
    job = Job(args, source, cache, key, material, **job_fields)
    if cache is None:
        job.say("cache: off (--no-cache)")
    else:
        job.entry = cache.load(key, material, required=("kernel.py", "report.json", "pipeline.mlir"))
        job.say(f"cache: {'hit' if job.entry else 'miss'}, entry {key[:12]} in {cache.root}")
    if job.entry is not None:
        _reuse(job, job.entry)
    else:
        job.pipeline = module
        with one_blas_thread():
            _search_and_emit(job, module)
    if args.gpu:
        _gpu(job, t_start)
    else:
        job.say(f"total {time.perf_counter() - t_start:.1f} s")
    return job


def compile_graph(graph: tgraph.GraphOp, output: str | Path, options: Sequence[str] = (), *, gpu: bool = False, out: Any = None) -> Job:
    """`cleave compile` of an in-memory graph for library callers (`cleave_ir.torch`).

    `options` are `cleave compile` flags (`--keep 2`, `--no-cache`, ...). The same search, emission,
    lowering, GPU phase and cache as the command; the report goes to `out` (default stdout). Returns
    the job: `job.args.output` is the emitted module, `job.pipeline` the pipeline's IR (on a cache
    miss), `job.measurement` the GPU results (with `gpu`).

    Raises `CleaveError` (its message one line: `error: ...`) for a bad graph, bad options, an
    unwritable `output` and any failure of the compile; no other exception escapes.
    """
    t_start = time.perf_counter()
    try:
        if not isinstance(graph, tgraph.GraphOp):
            raise CleaveError(f"error: compile_graph: expected a tgraph.graph, got {type(graph).__name__}")
        if isinstance(options, str):
            raise CleaveError("error: compile_graph: options must be a sequence of flags, not a string")
        name = graph.sym_name.data
        args = parser(_OptionsParser).parse_args(["compile", f"@{name}", "-o", str(output), *(["--gpu"] if gpu else []), *map(str, options)])
        try:
            graph.verify()
        except Exception as e:
            raise CleaveError(f"error: @{name}: {one_line(e)}") from None
        refuse_varying_means(graph)  # before any work (cleave-decompose refuses it too)
        return _run(args, graph, ModuleOp([graph.clone()]), t_start, out=out)
    except CleaveError:
        raise
    except OSError as e:
        raise CleaveError(f"error: {e.filename or ''}: {e.strerror or e}") from None
    except Exception as e:  # one documented exception type for library callers; CLEAVE_DEBUG=1 shows the original
        if os.environ.get("CLEAVE_DEBUG"):
            raise
        raise CleaveError(f"error: internal error ({type(e).__name__}): {one_line(e)}") from None


def load_module(path: str) -> tuple[ModuleOp, LocatingParser]:
    """The module in `path` (one-line CleaveError on failure) and the parser that locates its ops."""
    return load_module_located(path)


def _stderr_terminal() -> Any:
    """A stream on the terminal's stderr that `_native_output` does not capture (a duplicate of fd 2)."""
    try:
        if sys.stderr.fileno() == 2:
            return os.fdopen(os.dup(2), "w", buffering=1)
    except (AttributeError, OSError, ValueError):
        pass
    return sys.stderr


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `cleave`."""
    args = parser().parse_args(argv)
    t_start = time.perf_counter()
    disabled = logging.root.manager.disable
    if not args.verbose:  # before TileLang is imported (lazily, by the lowering): its log records stay off,
        # CRITICAL ones too (a failed lowering's dump of TileLang's internals: the one-line error says it)
        logging.disable(logging.CRITICAL)
    bars = _stderr_terminal() if args.progress or sys.stderr.isatty() else None
    located: LocatingParser | None = None
    try:
        _check_args(args)
        module, located = load_module(args.file)
        graphs = [g for g in module.body.block.ops if isinstance(g, tgraph.GraphOp)]
        if len(graphs) != 1:
            raise CleaveError(f"error: {args.file}: cleave compile takes one tgraph.graph, found {len(graphs)}")
        refuse_varying_means(graphs[0])  # before any work (cleave-decompose refuses it too)
        _run(args, graphs[0], module, t_start, quiet=not args.verbose, progress=Progress(bars))
        return 0
    except CleaveError as e:
        print(located_line(e, located, args.file), file=sys.stderr)
        return 1
    except OSError as e:
        print(f"error: {e.filename or ''}: {e.strerror or e}", file=sys.stderr)
        return 1
    except Exception as e:  # no tracebacks for users; CLEAVE_DEBUG=1 shows them
        if os.environ.get("CLEAVE_DEBUG"):
            raise
        print(f"error: internal error ({type(e).__name__}): {one_line(e)} (CLEAVE_DEBUG=1 shows the traceback)", file=sys.stderr)
        return 1
    finally:
        logging.disable(disabled)
        if bars is not None and bars is not sys.stderr:
            bars.close()


if __name__ == "__main__":
    sys.exit(main())
