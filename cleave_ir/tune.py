"""Measured autotuning of `cleave compile --gpu --tune-budget SECONDS`.

After the search, the schedule and the GPU measurement of the kept candidates, every kept candidate
is tuned over a neighbourhood of its tile configuration: for each of its kernels, output tiles and
reduction tiles within a factor of two of the cost model's choice (with and without a reduction
loop), the threads placement chose or 128 or 256 (where its register tiles lay out over them) and 1
to 4 pipelining stages and the count placement chose (where the shared memory holds them); the
Split-K split counts are those of the kept candidates. Variants are ordered by the (calibrated) cost
model, the configurations the pipeline chose first, and emitted as TileLang modules until the
budget's emission share is spent.

The GPU work runs in child processes (`python -m cleave_ir.tune worker SPEC RESULTS`): a child
compiles its variants in parallel, checks each against the float64 reference of the input graph
(outputs poisoned) before timing it, and writes one JSON line per variant as soon as it is done. A
CUDA error poisons the child's context: the child records that variant and exits, and a fresh child
takes the remaining variants; a child that dies outright (a crash) costs only the variant it was
running. A variant that fails to compile, crashes or disagrees with the reference is recorded with
a one-line reason and never becomes the winner.

The results (`tune.json`, and the winner's module `tuned/kernel.py`) go into the compile's cache
entry, and every measured variant is appended to `<cache>/measurements.jsonl` with its cost-model
terms, for `python -m cleave_ir.calibrate`. When the fastest correct variant beats the pipeline's
own configurations, the output module is replaced by the winner's (one candidate: `run(*tensors)`).

A graph with dynamic dims is tuned at its representative size; every variant is made dynamic again
(`cleave-dynamic-shapes`), so the winner serves every size as the pipeline's candidates do, and a
variant that would only serve the representative size fails to emit.

On the H200 (the lead's check after merging):

    cleave compile examples/matmul.mlir --gpu --tune-budget 120 -o /tmp/matmul_kernel.py
    cleave compile examples/gqa_decode.mlir --gpu --tune-budget 120 -o /tmp/gqa_decode_kernel.py
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol, TextIO

from xdsl.context import Context
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, ModuleOp, UnitAttr, f64, i64
from xdsl.parser import Parser
from xdsl.rewriter import Rewriter

from cleave_ir.diagnostics import CleaveError
from cleave_ir.dialects import cleave, itgraph, tgraph
from cleave_ir.dialects import tilelang as tl
from cleave_ir.passes import cost_model, partition_kernels
from cleave_ir.passes.dynamic_shapes import DynamicShapesPass
from cleave_ir.passes.lower_tilelang import with_cuda_core_time
from cleave_ir.passes.pipeline import rank_candidates
from cleave_ir.passes.place_memory import padded_tile_shapes, place, register_tile_shapes
from cleave_ir.passes.schedule import FALLBACKS, Config, build_kernel, configs, plan
from cleave_ir.passes.tmap_propagation import Unschedulable

THREADS = (128, 256)
STAGES = (1, 2, 3, 4)
SECONDS_PER_VARIANT = 3.0
"""Rough GPU-phase cost of one variant (compile share, check, timing), to size the neighbourhood."""
EMIT_SHARE = 0.35
"""Share of the budget that emission (lowering variants to TileLang) may use."""
GRACE_S = 30.0
"""A child still running this long past the deadline is stopped."""
TOLERANCE = 1e-2
"""Largest relative error counted as correct (as `cleave_ir.runtime.TOLERANCE`)."""
CUDA_POISONED = 3
"""A worker's exit status after a CUDA error: its context is lost, a fresh worker takes the rest."""
DEFAULT_TOTAL_S = 250.0
"""Without `--tune-budget`, tuning gets what is left of this much time for the whole compile."""
COPIED = ("cleave.schedule_of", "cleave.output_names", "cleave.results", "cleave.input_names", "cleave.passthrough")
"""Attributes a variant kernel takes over from the pipeline's kernel of the same graph."""


# ----------------------------------------------------------------------------- variants


@dataclass(frozen=True)
class Choice:
    """One kernel's configuration: tiles, threads, stages; its estimate and cost-model terms."""

    graph: str
    config: Config
    threads: int
    stages: int
    estimated_us: float
    terms: cost_model.Terms | None = None
    fits: bool = True  # within the cost model's register bound
    launch_dependents: bool = False  # the next kernel launches after this one's main loop (`cleave.launch_dependents`)

    def describe(self) -> str:
        return f"{self.config.describe()} t{self.threads} s{self.stages}" + (" early-launch" if self.launch_dependents else "")


@dataclass
class Variant:
    """A kept candidate with one choice per kernel (launch order)."""

    index: int
    candidate: int  # rank of the kept candidate it varies
    head: str  # the candidate's first graph
    choices: list[Choice]
    base: bool = False  # the pipeline's own configuration

    @property
    def estimated_us(self) -> float:
        return sum(c.estimated_us for c in self.choices)

    def describe(self) -> str:
        return "; ".join(c.describe() for c in self.choices)


@dataclass
class Result:
    """What tuning found for one variant; `status` is ok, wrong, compile failed, run failed,
    crashed, skipped or emit failed."""

    index: int
    status: str
    reason: str = ""
    error: float | None = None
    us: float | None = None
    method: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok" and self.us is not None and self.error is not None and self.error < TOLERANCE


def _loop_load_bytes(kernel: itgraph.KernelOp) -> int:
    return sum(
        cost_model.tile_bytes(op.result)
        for seq in kernel.walk()
        if isinstance(seq, itgraph.SequentialOp)
        for op in seq.body.block.ops
        if isinstance(op, itgraph.LoadOp)
    )


def _near(a: Config, b: Config) -> bool:
    """Whether `a` is in the neighbourhood of `b`: every tile within a factor of two, with or without
    a reduction loop (rmsnorm_matmul T=5's Split-K kernel: its whole K chunk in one tile 24.1 us, a loop
    of 128-wide steps over it 16.8, bench/results/split_loops_2026-12-04_H200.md)."""
    if len(a.out_tile) != len(b.out_tile) or a.fusion != b.fusion:
        return False
    pairs = list(zip(a.out_tile, b.out_tile))
    if a.reduce_tile is not None and b.reduce_tile is not None:
        pairs.append((a.reduce_tile, b.reduce_tile))
    return all(max(x, y) <= 2 * min(x, y) for x, y in pairs)


def kernel_choices(graph: tgraph.GraphOp, base: Config, calibration: cost_model.Calibration | None = None) -> list[tuple[Choice, itgraph.KernelOp]]:
    """The neighbourhood of `base` for `graph`: placed kernels with threads and stages set.

    Configurations whose tiles exceed the shared memory are left out; the register bound of the
    cost model is not applied (it is loose: measurement decides).
    """
    out: list[tuple[Choice, itgraph.KernelOp]] = []
    seen: set[str] = set()
    cfgs = [c for fallback in FALLBACKS for c in configs(graph, True, base.fusion, *fallback) if _near(c, base)]
    if base not in cfgs:
        cfgs.insert(0, base)
    for cfg in dict.fromkeys(cfgs):
        try:
            kernel = build_kernel(plan(graph, cfg), f"{graph.sym_name.data}_k0")
            est = cost_model.estimate(kernel, calibration)
        except Unschedulable:
            continue
        if not est.fits and "registers" not in est.reason:
            continue
        try:
            place(kernel)
        except CleaveError:
            continue
        text = str(kernel)
        if text in seen:  # a reduction tile that tiles nothing repeats a configuration
            continue
        seen.add(text)
        loop = _loop_load_bytes(kernel)
        placed_stages = kernel.attributes["cleave.stages"].value.data  # type: ignore[attr-defined]
        shared = kernel.attributes["cleave.smem_bytes"].value.data - (placed_stages - 1) * loop  # type: ignore[attr-defined]
        serial = cost_model.serialized(est, calibration)  # one stage, where its loads then wait
        placed_threads = kernel.attributes["cleave.threads"].value.data  # type: ignore[attr-defined]
        for threads in dict.fromkeys((placed_threads, *THREADS)):
            for stages in (sorted({placed_stages, *STAGES}) if loop else (1,)):
                smem = shared + (stages - 1) * loop
                if smem > cost_model.SMEM_BYTES:
                    continue
                k = kernel.clone()
                k.attributes["cleave.threads"] = IntegerAttr(threads, i64)
                k.attributes["cleave.stages"] = IntegerAttr(stages, i64)
                k.attributes["cleave.smem_bytes"] = IntegerAttr(smem, i64)
                k.attributes["cleave.tiles"] = cfg.attr()
                if not lays_out_on(k, threads):  # at these stages its rows may not pad (shared memory)
                    continue  # TileLang would fail it: "no available layout found"
                e = cost_model.with_pipeline_depth(est if cost_model.overlaps(k) else serial, k, calibration)
                e = with_cuda_core_time(e, k, threads, calibration)
                k.attributes["cleave.estimated_us"] = FloatAttr(round(e.microseconds, 3), f64)
                out.append((Choice(graph.sym_name.data, cfg, threads, stages, e.microseconds, e.terms, e.fits), k))
    return out


def early_launch_choice(choice: Choice, kernel: itgraph.KernelOp) -> tuple[Choice, itgraph.KernelOp] | None:
    """`choice` with the next kernel launched once this one's main loop is done, or None for a kernel
    without a loop (the trigger would come at its exit). Measured, not modelled: on the H100 it saved
    0.1-0.95 us on six Split-K rows and cost 1.0 us on mla_decode B1, whose combine is the heaviest
    (bench/results/fused_combine_2026-12-07s46_H100.md)."""
    if choice.launch_dependents or not any(isinstance(op, itgraph.SequentialOp) for op in kernel.walk()):
        return None
    k = kernel.clone()
    k.attributes[tl.LAUNCH_DEPENDENTS] = UnitAttr()
    return replace(choice, launch_dependents=True), k


def lays_out_on(kernel: itgraph.KernelOp, threads: int) -> bool:
    """Whether the kernel's register tiles lay out over `threads` (with its few-row matmuls' rows
    padded where the lowering pads them), as placement requires of the count it chooses."""
    shapes = padded_tile_shapes(kernel, threads) or register_tile_shapes(kernel)
    return cost_model.layout_threads(shapes, threads) == threads


@dataclass
class Space:
    """The variants of a pipeline module and the kernels behind their choices."""

    module: ModuleOp
    variants: list[Variant] = field(default_factory=list)
    kernels: dict[Choice, itgraph.KernelOp] = field(default_factory=dict)
    originals: dict[str, itgraph.KernelOp] = field(default_factory=dict)  # graph -> the pipeline's kernel
    notes: list[str] = field(default_factory=list)


def _int_attr(op: itgraph.KernelOp, name: str, default: int) -> int:
    a = op.attributes.get(name)
    return a.value.data if isinstance(a, IntegerAttr) else default


def neighbourhood(
    module: ModuleOp,
    limit: int,
    calibration: cost_model.Calibration | None = None,
    measured: Mapping[str, float | None] | None = None,
) -> Space:
    """Up to `limit` variants of the kept candidates of a pipeline module: the pipeline's own
    configurations first, then the others by estimated time, fewest changes first on ties (a kernel
    launching its successor early, `early_launch_choice`, changes no tile: it leads its ties), those
    over the cost model's register bound last. Early launches used to precede every other variant:
    those of the Split-K forms measured 9% slower than mha S8192 D64's winner took 2 of its 10 (s48).

    `measured` (a kept candidate's graph -> its measured us, None where it failed its check) scales
    each candidate's estimates by its measured / estimated ratio, so that the neighbourhood of the
    measured winner is tuned first, not that of the candidate the cost model favours (rmsnorm_matmul
    T128 on the H200: 28 of 30 variants went to a Split-K form estimated 39 us and measured 27, none
    near the 23 us one-kernel winner); a candidate that failed is tuned last."""
    space = Space(module)
    ratio: dict[int, float] = {}  # candidate rank -> measured / estimated
    failed: set[int] = set()
    graphs = {g.sym_name.data: g for g in module.body.block.ops if isinstance(g, tgraph.GraphOp)}
    kernels = {k.sym_name.data: k for k in module.body.block.ops if isinstance(k, itgraph.KernelOp)}
    others: list[tuple[bool, int, int, Variant]] = []  # (over the register bound, candidate rank, changes, variant)
    for rank, (_, names, head) in enumerate(rank_candidates(module)):
        chain = partition_kernels.chain(graphs[head], graphs) or [graphs[head]]
        base: list[Choice] = []
        options: list[list[Choice]] = []
        try:
            for g, name in zip(chain, names):
                k = kernels[name]
                space.originals[g.sym_name.data] = k
                tiles = cleave.tiles(k)
                if tiles is None:
                    raise Unschedulable(f"@{name}: no cleave.tiles configuration")
                cfg = Config.of(tiles)
                got = kernel_choices(g, cfg, calibration)
                for c, kk in got:
                    space.kernels[c] = kk
                threads, stages = _int_attr(k, "cleave.threads", 128), _int_attr(k, "cleave.stages", 2)
                mine = [c for c, _ in got if c.config == cfg and c.threads == threads and c.stages == stages]
                if not mine:
                    raise Unschedulable(f"@{g.sym_name.data}: its configuration {cfg.describe()} t{threads} s{stages} does not schedule again")
                base.append(mine[0])
                options.append([c for c, _ in got])
        except (Unschedulable, CleaveError) as e:
            space.notes.append(f"candidate #{rank} @{head}: not tuned: {str(e).removeprefix('error: ')}")
            continue
        space.variants.append(Variant(0, rank, head, base, base=True))
        if measured is not None and head in measured:
            us = measured[head]
            if us is None:
                failed.add(rank)
            else:
                ratio[rank] = us / max(space.variants[-1].estimated_us, 1e-9)
        for pos, opts in enumerate(options):
            for c in opts:
                if c == base[pos]:
                    continue
                changes = (c.config != base[pos].config) + (c.threads != base[pos].threads) + (c.stages != base[pos].stages)
                v = Variant(0, rank, head, base[:pos] + [c] + base[pos + 1 :])
                others.append((not all(x.fits for x in v.choices), rank, changes, v))
        for pos in range(len(base) - 1):  # a kernel with a successor may let it launch early
            early = early_launch_choice(base[pos], space.kernels[base[pos]])
            if early is not None:
                space.kernels[early[0]] = early[1]
                v = Variant(0, rank, head, base[:pos] + [early[0]] + base[pos + 1 :])
                others.append((not all(x.fits for x in v.choices), rank, 0, v))  # no tile changes: first on ties
    others.sort(key=lambda t: (t[0], t[1] in failed, t[3].estimated_us * ratio.get(t[1], 1.0), t[2]))
    space.variants = (space.variants + [t[3] for t in others])[: max(limit, len(space.variants))]
    for i, v in enumerate(space.variants):
        v.index = i
    return space


def variant_module(space: Space, v: Variant) -> ModuleOp:
    """The pipeline module with the kernels of variant `v` only (dynamic dims made symbolic again)."""
    module = space.module.clone()
    for op in list(module.body.block.ops):
        if isinstance(op, itgraph.KernelOp):
            Rewriter.erase_op(op)
    graphs = {g.sym_name.data: g for g in module.body.block.ops if isinstance(g, tgraph.GraphOp)}
    for c in v.choices:
        k = space.kernels[c].clone()
        original = space.originals[c.graph]
        k.sym_name = original.sym_name
        for name in COPIED:
            if name in original.attributes:
                k.attributes[name] = original.attributes[name]
        module.body.block.insert_op_after(k, graphs[c.graph])
    DynamicShapesPass().apply(Context(), module)
    for c, k in zip(v.choices, [op for op in module.body.block.ops if isinstance(op, itgraph.KernelOp)]):
        k.attributes["cleave.threads"] = IntegerAttr(c.threads, i64)  # dynamic-shapes placed it again
        k.attributes["cleave.stages"] = IntegerAttr(c.stages, i64)
        if "cleave.dynamic" in space.originals[c.graph].attributes and "cleave.dynamic" not in k.attributes:
            why = getattr(k.attributes.get("cleave.static_only"), "data", "")
            raise CleaveError(f"error: @{k.sym_name.data} would only serve the representative size ({why})")
    return module


def emit_variants(space: Space, directory: Path, deadline: float, clock: Callable[[], float] = time.time) -> tuple[dict[int, Path], dict[int, Result]]:
    """Write `v<index>.py` for every variant until `deadline`; emission failures are results."""
    from cleave_ir.tilelang_emitter import module_source

    directory.mkdir(parents=True, exist_ok=True)
    paths: dict[int, Path] = {}
    failed: dict[int, Result] = {}
    for v in space.variants:
        if clock() > deadline and not v.base:
            failed[v.index] = Result(v.index, "skipped", "budget spent while emitting")
            continue
        try:
            with contextlib.redirect_stderr(io.StringIO()):  # the passes' notes, per variant
                src = module_source(variant_module(space, v))
        except Exception as e:  # one line per variant, whatever the lowering raised
            failed[v.index] = Result(v.index, "emit failed", _one_line(e))
            continue
        path = directory / f"v{v.index}.py"
        path.write_text(src)
        paths[v.index] = path
    return paths, failed


def _one_line(e: BaseException) -> str:
    lines = [line.strip() for line in str(e).splitlines() if line.strip()]
    return lines[-1] if lines else type(e).__name__


# ----------------------------------------------------------------------------- the worker (child)


class Ops(Protocol):
    """What a worker needs from the GPU (faked in tests)."""

    def prepare(self, variants: Sequence[dict[str, Any]]) -> dict[int, str | None]:
        """Compile every variant (in parallel): index -> None, or why it failed."""

    def check(self, index: int) -> float:
        """The variant's relative error against the float64 reference (raises when it cannot run)."""

    def time(self, index: int) -> tuple[float, str]:
        """Microseconds per call and the timing method."""

    def poisoned(self, error: BaseException) -> bool:
        """Whether `error` left the CUDA context unusable."""


def serve(spec: dict[str, Any], results: Path, ops: Ops, clock: Callable[[], float] = time.time) -> int:
    """Run a worker's variants, one JSON line each in `results` (a `start` line before each run).

    Returns 0, or `CUDA_POISONED` after a CUDA error (the variants left are for a fresh worker).
    """
    variants = spec["variants"]
    with open(results, "a") as out:

        def write(**row: Any) -> None:
            out.write(json.dumps(row) + "\n")
            out.flush()

        prepared = ops.prepare(variants)
        for v in variants:
            i = v["index"]
            if prepared.get(i):
                write(index=i, status="compile failed", reason=prepared[i])
                continue
            if clock() > spec["deadline"]:
                write(index=i, status="skipped", reason="budget spent")
                continue
            write(index=i, event="start")
            step = "check"
            try:
                err = ops.check(i)
                if not (err < TOLERANCE):  # NaN, inf (unwritten outputs) or too far off
                    write(index=i, status="wrong", reason=f"rel. error {err:.2e} vs the float64 reference", error=err if math.isfinite(err) else None)
                    continue
                step = "time"
                us, method = ops.time(i)
            except Exception as e:  # one variant's failure is its own row
                if ops.poisoned(e):
                    write(index=i, status="crashed", reason=f"CUDA error during {step}: {_one_line(e)}")
                    return CUDA_POISONED
                write(index=i, status="run failed", reason=f"{step}: {_one_line(e)}")
                continue
            write(index=i, status="ok", error=err, us=us, method=method)
    return 0


class GpuOps:
    """`Ops` on the GPU with TileLang (`cleave_ir.runtime`)."""

    def __init__(self, graph: tgraph.GraphOp, jobs: int) -> None:
        from cleave_ir import runtime

        self.rt = runtime
        self.graph = graph
        self.jobs = jobs
        self.xs = runtime.random_inputs(graph)
        self.refs = runtime.torch_reference(graph, self.xs)
        self.sets = runtime.rotating_copies(self.xs)
        self.mods: dict[int, Any] = {}
        self.compiled: dict[int, tuple[dict[str, Any], Any]] = {}

    def prepare(self, variants: Sequence[dict[str, Any]]) -> dict[int, str | None]:
        from cleave_ir.tilelang_check import load_module_file

        def one(v: dict[str, Any]) -> str | None:
            mod = load_module_file(v["path"])
            kernels = mod.CANDIDATES[0][1]
            compiled = self.rt.compile_candidates(mod, kernels, 1)
            raw = self.rt.compile_candidates(mod, kernels[-1:], 1, raw=True)
            bad = [(k, e) for k, e in [*compiled.items(), *[(k + " (raw)", e) for k, e in raw.items()]] if isinstance(e, BaseException)]
            if bad:
                return f"{bad[0][0]}: {_one_line(bad[0][1])}"
            self.mods[v["index"]] = mod
            self.compiled[v["index"]] = (compiled, raw[kernels[-1]])
            return None

        got = self.rt.parallel_map(one, variants, self.jobs)
        return {v["index"]: (_one_line(r) if isinstance(r, BaseException) else r) for v, r in zip(variants, got)}

    def check(self, index: int) -> float:
        import torch

        mod = self.mods[index]
        compiled, raw = self.compiled[index]
        got = self.rt.run_poisoned(mod, mod.CANDIDATES[0][1], self.xs, compiled, raw)
        torch.cuda.synchronize()
        return max(self.rt.check(g, r) for g, r in zip(got, self.refs))

    def time(self, index: int) -> tuple[float, str]:
        mod = self.mods[index]
        t = self.rt.timed(lambda *a: mod.run(*a, candidate=0), rotate=self.sets)
        return t.us, t.method

    def poisoned(self, error: BaseException) -> bool:
        import torch

        text = str(error)
        if "CUDA error" in text or "illegal" in text.lower() or type(error).__name__ == "AcceleratorError":
            return True
        try:
            torch.cuda.synchronize()
        except Exception:
            return True
        return False


def worker_main(argv: Sequence[str]) -> int:
    """`python -m cleave_ir.tune worker SPEC RESULTS`: the GPU side of tuning, in its own process."""
    from cleave_ir.run import make_context

    spec_path, results = Path(argv[0]), Path(argv[1])
    spec = json.loads(spec_path.read_text())
    graph = Parser(make_context(), spec["graph"]).parse_module().body.block.first_op
    assert isinstance(graph, tgraph.GraphOp)
    return serve(spec, results, GpuOps(graph, spec["jobs"]))


# ----------------------------------------------------------------------------- isolation (parent)


def worker_command(spec: Path, results: Path) -> list[str]:
    """The command of a real worker. `-P`: the caller's directory is not put first on the worker's
    `sys.path`, where a checkout's `cleave_ir/` source folder (whose `passes/` the install maps in)
    would shadow the installed package (on the H200, tuning from the checkout's root failed in every
    worker with `No module named 'cleave_ir.passes'`)."""
    return [sys.executable, "-P", "-m", "cleave_ir.tune", "worker", str(spec), str(results)]


def run_isolated(
    variants: Sequence[dict[str, Any]],
    graph_text: str,
    workdir: Path,
    deadline: float,
    *,
    jobs: int = 1,
    command: Callable[[Path, Path], list[str]] | None = None,
    on_result: Callable[[Result], None] | None = None,
    clock: Callable[[], float] = time.time,
    poll_s: float = 0.2,
) -> dict[int, Result]:
    """Run `variants` in worker processes until each has a result or the time is up.

    A worker that exits after a CUDA error, or dies, is replaced by a fresh one for the variants it
    had not finished; the variant it was running when it died is recorded as crashed. `command`
    (default `worker_command`) gives a worker's command line from its spec and results files.
    """
    command = command or worker_command
    results: dict[int, Result] = {}
    pending = list(variants)
    attempt = 0
    while pending:
        attempt += 1
        spec = workdir / f"spec{attempt}.json"
        out = workdir / f"results{attempt}.jsonl"
        err_path = workdir / f"worker{attempt}.log"
        spec.write_text(json.dumps({"graph": graph_text, "variants": pending, "deadline": deadline, "jobs": jobs}))
        out.write_text("")
        started: list[int] = []
        before = len(results)
        with open(err_path, "w") as err:
            proc = subprocess.Popen(command(spec, out), stdout=err, stderr=subprocess.STDOUT, cwd=os.getcwd())
            seen = 0
            killed = False
            while True:
                rc = proc.poll()
                text = out.read_text()
                lines = text[: text.rfind("\n") + 1].splitlines()  # whole lines only: one may be half written
                for line in lines[seen:]:
                    try:
                        row = json.loads(line)
                    except ValueError:  # garbage from a dying worker
                        continue
                    if row.get("event") == "start":
                        started.append(row["index"])
                        continue
                    r = Result(row["index"], row["status"], row.get("reason", ""), row.get("error"), row.get("us"), row.get("method", ""))
                    results[r.index] = r
                    if on_result is not None:
                        on_result(r)
                seen = len(lines)
                if rc is not None:
                    break
                if clock() > deadline + GRACE_S:
                    proc.kill()
                    proc.wait()
                    killed = True
                    break
                time.sleep(poll_s)
        tail = _last_line(err_path)
        running = [i for i in started if i not in results]
        for i in running[-1:]:
            why = "stopped: past the budget" if killed else f"crashed: the worker died (exit {proc.returncode})" + (f": {tail}" if tail else "")
            r = Result(i, "crashed", why)
            results[i] = r
            if on_result is not None:
                on_result(r)
        pending = [v for v in pending if v["index"] not in results]
        if pending and (killed or len(results) == before or proc.returncode == 0):
            why = "budget spent" if killed else f"the worker stopped without a result (exit {proc.returncode})" + (f": {tail}" if tail else "")
            for v in pending:
                r = Result(v["index"], "skipped" if killed else "crashed", why)
                results[r.index] = r
                if on_result is not None:
                    on_result(r)
            pending = []
    return results


def _last_line(path: Path) -> str:
    try:
        lines = [line.strip() for line in path.read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        return ""
    return lines[-1][:200] if lines else ""


# ----------------------------------------------------------------------------- the tuning loop


@dataclass
class Tuning:
    """A tuning run: its variants, results, winner and the best of the pipeline's own configurations."""

    device: str
    budget_s: float
    variants: list[Variant]
    results: dict[int, Result]
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    @property
    def winner(self) -> int | None:
        ok = [r for r in self.results.values() if r.ok]
        return min(ok, key=lambda r: (r.us, r.index)).index if ok else None

    @property
    def base_best(self) -> int | None:
        ok = [r for r in self.results.values() if r.ok and self.variants[r.index].base]
        return min(ok, key=lambda r: (r.us, r.index)).index if ok else None

    @property
    def improved(self) -> bool:
        """Whether the winner beats the best of the pipeline's own configurations (or they all failed)."""
        winner, base = self.winner, self.base_best
        return winner is not None and (base is None or (winner != base and self.us(winner) < self.us(base)))  # type: ignore[operator]

    def us(self, index: int | None) -> float | None:
        return None if index is None else self.results[index].us

    def to_json(self) -> dict[str, Any]:
        return {
            "device": self.device,
            "budget_s": self.budget_s,
            "seconds": self.seconds,
            "notes": self.notes,
            "winner": self.winner,
            "variants": [
                {"index": v.index, "candidate": v.candidate, "head": v.head, "base": v.base, "config": v.describe(), "estimated_us": v.estimated_us}
                for v in self.variants
            ],
            "results": [dataclasses.asdict(r) for r in sorted(self.results.values(), key=lambda r: r.index)],
        }


def print_table(t: Tuning, out: TextIO) -> None:
    """The tuning results as a markdown table, fastest correct first, then the failures."""
    print("| variant | config | est us | measured us | error |", file=out)
    print("| ---: | --- | ---: | ---: | --- |", file=out)
    order = sorted(t.results.values(), key=lambda r: (not r.ok, r.us if r.ok else math.inf, r.index))
    for r in order:
        v = t.variants[r.index]
        name = f"{r.index}{' (pipeline)' if v.base else ''} #{v.candidate}"
        if r.ok:
            mark = " winner" if r.index == t.winner else ""
            print(f"| {name} | {v.describe()} | {v.estimated_us:.1f} | {r.us:.2f}{mark} | {r.error:.1e} ok |", file=out)
        else:
            err = f"{r.error:.1e} " if r.error is not None else ""
            print(f"| {name} | {v.describe()} | {v.estimated_us:.1f} | - | {err}{r.status}: {r.reason[:100]} |", file=out)


class _Progress:
    """A tqdm bar on stderr when it is a terminal and tqdm is installed; otherwise nothing."""

    def __init__(self, total: int, desc: str) -> None:
        self.bar = None
        if sys.stderr.isatty():
            try:
                from tqdm import tqdm

                self.bar = tqdm(total=total, desc=desc, file=sys.stderr, leave=False)
            except ImportError:
                pass

    def update(self, _: object = None) -> None:
        if self.bar is not None:
            self.bar.update(1)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def tune(
    module: ModuleOp,
    source: tgraph.GraphOp,
    budget_s: float,
    workdir: Path,
    *,
    device: str,
    jobs: int = 1,
    command: Callable[[Path, Path], list[str]] | None = None,
    clock: Callable[[], float] = time.time,
    limit: int | None = None,
    measured: Mapping[str, float | None] | None = None,
) -> tuple[Tuning, dict[int, Path]]:
    """Tune the kept candidates of the pipeline module `module` within `budget_s` seconds, over at
    most `limit` variants (default: as many as the budget should cover), nearest the candidates
    that `measured` (see `neighbourhood`) found fastest first."""
    t0 = clock()
    deadline = t0 + budget_s
    limit = limit if limit is not None else max(4, int(budget_s / SECONDS_PER_VARIANT))
    space = neighbourhood(module, limit, measured=measured)
    paths, results = emit_variants(space, workdir / "variants", t0 + EMIT_SHARE * budget_s, clock)
    tuning = Tuning(device, budget_s, space.variants, dict(results), notes=list(space.notes))
    todo = [{"index": i, "path": str(p)} for i, p in sorted(paths.items())]
    bar = _Progress(len(todo), "tuning")
    try:
        tuning.results.update(run_isolated(todo, str(source), workdir, deadline, jobs=jobs, command=command, on_result=bar.update, clock=clock))
    finally:
        bar.close()
    tuning.seconds = clock() - t0
    return tuning, paths


def records(t: Tuning, group: str, date: str) -> list[dict[str, Any]]:
    """One measurement record per correctly measured variant (for `cleave_ir.calibrate`); `group`
    names the tuning run (its variants are ranked against each other)."""
    out = []
    for r in sorted(t.results.values(), key=lambda r: r.index):
        if not r.ok:
            continue
        v = t.variants[r.index]
        if any(c.launch_dependents for c in v.choices):  # the cost model has no term for it
            continue
        out.append(
            {
                "device": t.device,
                "date": date,
                "group": group,
                "candidate": v.head,
                "variant": v.describe(),
                "estimated_us": v.estimated_us,
                "kernels": len(v.choices),
                "terms": [c.terms.to_json() if c.terms is not None else None for c in v.choices],
                "us": r.us,
            }
        )
    return out


# ----------------------------------------------------------------------------- `cleave compile`


def default_budget(elapsed_s: float) -> float:
    """Without `--tune-budget`: what keeps the whole compile under `DEFAULT_TOTAL_S` (30 s at least)."""
    return max(30.0, min(150.0, DEFAULT_TOTAL_S - elapsed_s))


def shipped_us(measurement: Any) -> float | None:
    """The fastest correct candidate of the GPU phase's measurement (`runtime.Measurement`), or None."""
    times = [r.us for r in (measurement.rows if measurement is not None else []) if r.ok and r.us is not None]
    return min(times) if times else None


def tune_job(job: Any, elapsed_s: float) -> None:
    """The tuning phase of `cleave compile --gpu` (after the measurement of the kept candidates).

    Reuses the cache entry's `tune.json` when it was measured on this GPU (unless `--retune`),
    else tunes, records the results in the entry and the measurements in `measurements.jsonl`.
    The output module becomes the winner's when it beats the pipeline's configurations.
    """
    import torch

    from cleave_ir import runtime
    from cleave_ir.run import make_context

    args = job.args
    budget = args.tune_budget if args.tune_budget is not None else default_budget(elapsed_s)
    if budget <= 0:
        return
    out = job.out or sys.stdout
    device = torch.cuda.get_device_name()
    entry = job.entry
    if entry is not None and "tune.json" in entry.files and "tuned/kernel.py" in entry.files and not args.retune:
        recorded = entry.json("tune.json")
        if recorded.get("device") == device:
            job.say(f"tune: cache hit (entry {entry.short}, {len(recorded['results'])} variants measured on {device}; --retune to measure again)")
            for line in recorded.get("table", []):
                job.say(line)
            won = recorded.get("winner")
            won_us = next((r["us"] for r in recorded.get("results", []) if r.get("index") == won and r.get("status") == "ok"), None)
            shipped = shipped_us(job.measurement)
            if recorded.get("improved") and won_us is not None and shipped is not None and won_us >= shipped:
                job.say(f"tune: the recorded tuned winner ({won_us:.2f} us) does not beat this run's measured winner ({shipped:.2f} us); {args.output} keeps the pipeline's candidates")
            elif recorded.get("improved") and entry.files["tuned/kernel.py"]:
                with tempfile.TemporaryDirectory() as d:
                    path = Path(d) / "tuned_kernel.py"
                    path.write_bytes(entry.files["tuned/kernel.py"])
                    err = runtime.verify(path, job.source, 0, jobs=args.jobs)
                if err < TOLERANCE:
                    _replace_output(job, entry.files["tuned/kernel.py"])
                    job.say(f"tuned winner re-checked (rel. error {err:.2e}); {args.output} holds it: run(*tensors)")
                else:
                    job.say(f"the recorded tuned winner fails its check now (rel. error {err:.2e}); {args.output} keeps the pipeline's candidates")
            return
    module = job.pipeline
    if module is None:
        if entry is None or "pipeline.mlir" not in entry.files:
            job.say("tune: skipped (the pipeline's module is not available)")
            return
        module = Parser(make_context(), entry.text("pipeline.mlir")).parse_module()
    if job.cache is not None:
        job.cache.use_tilelang_cache()  # children inherit it: compiled kernels are shared
    with tempfile.TemporaryDirectory(prefix="cleave-tune-") as d:
        m = job.measurement
        measured = {r.graph: (r.us if r.ok else None) for r in m.rows} if m is not None else None
        tuning, paths = tune(module, job.source, budget, Path(d), device=device, jobs=args.jobs, measured=measured)
        winner, base = tuning.winner, tuning.base_best
        buf = io.StringIO()
        print_table(tuning, buf)
        table = buf.getvalue().splitlines()
        for line in table:
            job.say(line)
        for note in tuning.notes:
            job.say(f"  {note}")
        failed = sum(1 for r in tuning.results.values() if not r.ok)
        job.say(f"tune: {len(tuning.results)} variants in {tuning.seconds:.1f} s (budget {budget:.0f} s), {failed} failed or skipped")
        # the winner must beat the pipeline's configurations it was tuned from and every candidate the
        # GPU phase measured: a candidate the tuner cannot vary may be the fastest of all
        shipped = shipped_us(job.measurement)
        improved = tuning.improved and (shipped is None or tuning.us(winner) < shipped)  # type: ignore[operator]
        winner_src = paths[winner].read_bytes() if improved and winner is not None else b""
    if winner is None:
        job.say("tune: no variant ran correctly; the pipeline's candidates stay")
    elif improved:
        _replace_output(job, winner_src)
        known = [u for u in (tuning.us(base), shipped) if u is not None]
        base_text = f"{min(known):.2f} us" if known else "none correct"
        job.say(f"tuned winner: variant {winner} ({tuning.variants[winner].describe()}), {tuning.us(winner):.2f} us vs the pipeline's {base_text}; {args.output} holds it: run(*tensors)")
    elif shipped is not None and tuning.us(winner) >= shipped:  # type: ignore[operator]
        job.say(f"tune: no variant beats the measured winner ({shipped:.2f} us; the fastest variant: {winner}, {tuning.us(winner):.2f} us); {args.output} keeps the pipeline's candidates")
    else:
        job.say(f"tune: the pipeline's configuration is the fastest (variant {winner}, {tuning.us(winner):.2f} us)")
    data = {**tuning.to_json(), "table": table, "improved": improved}
    if job.cache is not None:
        date = time.strftime("%Y-%m-%dT%H:%M:%S")
        try:
            with open(job.cache.root / "measurements.jsonl", "a") as f:
                for rec in records(tuning, f"{job.source.sym_name.data} {date}", date):
                    f.write(json.dumps(rec) + "\n")
        except OSError as e:
            print(f"warning: tune: could not record the measurements: {e.strerror or e}", file=sys.stderr)
        if job.entry is not None:
            try:
                job.entry = job.cache.update(job.entry, job.material, {"tune.json": json.dumps(data, indent=1), "tuned/kernel.py": winner_src})
                job.say(f"cache: recorded the tuning in entry {job.entry.short}")
            except OSError as e:
                print(f"warning: cache: could not record the tuning: {e.strerror or e}", file=sys.stderr)


def _replace_output(job: Any, source: bytes) -> None:
    """Write the tuned winner's module (one candidate) as the output; the job's winner is its index."""
    Path(job.args.output).write_bytes(source)
    if job.measurement is not None:  # `run(*tensors, candidate=winner)` of the output module
        job.measurement.winner = 0


def _main(argv: Sequence[str]) -> int:
    if len(argv) == 3 and argv[0] == "worker":
        return worker_main(argv[1:])
    print("usage: python -m cleave_ir.tune worker SPEC.json RESULTS.jsonl (started by cleave compile --gpu --tune-budget)", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
