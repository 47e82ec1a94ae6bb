"""GPU runtime for emitted TileLang modules: compile, check against float64, time, pick the fastest.

Public API (used by `cleave compile --gpu` and `bench/gpu_suite.py`):

- `torch_reference(graph, inputs)`: float64 outputs of a concrete tgraph graph, computed with torch;
- `random_inputs(graph)`: random inputs of the graph's shapes and dtypes on the GPU;
- `rotating_copies(tensors)`: copies of the inputs whose total exceeds ~3x the L2, for timing;
- `time_us(fn, rotate=...)` / `timed(...)`: median microseconds per call (CUDA graph of a batch of
  launches, CUDA events; plain launches where capture fails);
- `check(got, ref)`: relative error in float64; `run_poisoned(...)`: a candidate's outputs written
  into NaN-filled buffers, so an output element the kernels never write is detected;
- `compile_candidates(module, names, jobs)`: `tilelang.compile` of many kernels in parallel;
- `measure(module_path, graph)`: all of the above for every candidate of a module, with the winner (a
  candidate that hangs ends the process and is skipped the next time: `cleave_ir.hang_guard`).

torch and tilelang are imported lazily: importing this module needs neither.
"""

from __future__ import annotations

import math
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, NamedTuple, TextIO

from cleave_ir.diagnostics import CleaveError
from cleave_ir.dialects import tgraph
from cleave_ir.dialects.cleave import causal_mask
from cleave_ir.hang_guard import HangGuard
from cleave_ir.passes.elementwise_cones import range_inputs
from cleave_ir.tilelang_check import kernel_func, load_module_file, past_ast_races

if TYPE_CHECKING:  # pragma: no cover - typing only
    import torch

L2_BYTES = 60 << 20
"""L2 cache of the H200 (60 MB)."""

TOLERANCE = 1e-2
"""Largest relative error (max abs difference / max abs reference) counted as correct."""

_TORCH_DTYPES = {"f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64"}


def default_jobs() -> int:
    """Default number of parallel compile workers: min(8, cpu count)."""
    import os

    return max(1, min(8, os.cpu_count() or 1))


def one_line(e: BaseException) -> str:
    """The last non-empty line of an exception's message (TileLang errors are long)."""
    lines = [line.strip() for line in str(e).splitlines() if line.strip()]
    return lines[-1] if lines else type(e).__name__


# --------------------------------------------------------------------------- reference and inputs


def torch_reference(graph: tgraph.GraphOp, inputs: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    """Evaluate a concrete tgraph graph with torch in float64 (on the inputs' device); a
    `cleave.causal` input holds its causal mask whatever is passed (as in every interpreter)."""
    import torch

    env = {a: x.double() for a, x in zip(graph.inputs, inputs)}
    for i, offset in graph.causal_inputs().items():
        x = inputs[i]
        env[graph.inputs[i]] = torch.from_numpy(causal_mask(tuple(x.shape), offset)).to(x.device)
    for op in graph.block.ops:
        if isinstance(op, tgraph.OutputOp):
            return [env[o] for o in op.outputs]
        xs = [env[o] for o in op.operands]
        if isinstance(op, tgraph.MatmulOp):
            y = torch.matmul(xs[0], xs[1].transpose(-1, -2) if op.transpose_b is not None else xs[1])
        elif isinstance(op, tgraph.ElementwiseOp):
            y = op.semantics().torch(*xs)
        elif isinstance(op, tgraph.ReduceOp):
            y = op.reduction().torch(xs[0], op.axis)
        elif isinstance(op, tgraph.StructuralOp):
            y = op.torch(xs, [int(d) for d in tgraph.tensor_type(op.results[0]).shape])
        elif isinstance(op, tgraph.ReshapeOp):
            y = xs[0].reshape([int(d) for d in tgraph.tensor_type(op.result).shape])
        elif isinstance(op, tgraph.SplitOp):
            parts = int(tgraph.tensor_type(op.result).shape[0])
            x, ax = xs[0], op.axis
            y = x.reshape(*x.shape[:ax], parts, x.shape[ax] // parts, *x.shape[ax + 1 :]).movedim(ax, 0)
        else:
            raise CleaveError(f"error: no torch reference for {op.name}")
        env[op.results[0]] = y
    raise CleaveError("error: graph without tgraph.output")


def random_inputs(graph: tgraph.GraphOp, seed: int = 0, scale: float = 0.5, device: str = "cuda") -> list[torch.Tensor]:
    """Random normal inputs (times `scale`, never zeros) of the graph's concrete shapes and element types;
    a `cleave.causal` input gets its causal mask, and one read only through element-wise ops that leave
    exp's range (an additive mask, `(mask - 1) * 1e4`: `elementwise_cones.range_inputs`) 0/1 values,
    every row (last dim) keeping a 1: on normal draws its exps overflow in the reference too."""
    import torch

    gen = torch.Generator(device=device).manual_seed(seed)
    out = []
    for a in graph.inputs:
        t = tgraph.tensor_type(a)
        dtype = getattr(torch, _TORCH_DTYPES[str(t.element_type)])
        x = torch.randn([int(d) for d in t.shape], generator=gen, device=device, dtype=torch.float32) * scale
        out.append(x.to(dtype))
    for i in range_inputs(graph):
        keep = out[i] > 0
        if keep.dim() and keep.shape[-1]:
            keep[..., -1] = True
        out[i] = keep.to(out[i].dtype)
    for i, offset in graph.causal_inputs().items():
        out[i] = torch.from_numpy(causal_mask(tuple(out[i].shape), offset)).to(device=device, dtype=out[i].dtype)
    return out


# --------------------------------------------------------------------------- correctness


def check(got: torch.Tensor, ref: torch.Tensor) -> float:
    """Relative error of `got` against `ref`: max |got - ref| / max |ref|, in float64.

    Any NaN or infinity in `got` (a poisoned element never written, an overflow) gives `inf`.
    """
    import torch

    g = got.double().reshape(ref.shape)
    if not bool(torch.isfinite(g).all()):
        return math.inf
    scale = ref.double().abs().max().item()
    diff = (g - ref.double()).abs().max().item()
    return diff / scale if scale > 0 else diff


def given_shapes(meta: dict[str, Any], args: Sequence[Any]) -> list[list[int]]:
    """The shapes of a kernel's inputs `args` (the graph's tensors, as runners pass them) as the kernel
    declares them: an input it reads stored transposed (`meta["transposed"]`) has its last two dims swapped."""
    transposed = meta.get("transposed", ())
    shapes = [[int(n) for n in x.shape] for x in args]
    for i in transposed:
        if i < len(shapes) and len(shapes[i]) >= 2:
            shapes[i][-2], shapes[i][-1] = shapes[i][-1], shapes[i][-2]
    return shapes


def dynamic_sizes(meta: dict[str, Any], args: Sequence[Any], known: dict[str, int] | None = None) -> dict[str, int]:
    """The sizes of a kernel's dynamic dims (the names in its `KERNELS` shapes), read from its inputs.

    `known` holds the sizes the earlier kernels of a chain took (a later kernel reads intermediates
    whose shapes may name a dim only through an expression); the inputs must agree with them.
    """
    sizes: dict[str, int] = dict(known or {})
    for shape, given in zip(meta["shapes"][: meta["inputs"]], given_shapes(meta, args)):
        for d, n in zip(shape, given):
            if isinstance(d, str) and d.isidentifier():
                if sizes.setdefault(d, int(n)) != int(n):
                    raise CleaveError(f"error: dynamic dim {d} is {sizes[d]} for an earlier input, {int(n)} for this kernel's")
    return sizes


def concrete_shape(shape: Sequence[int | str], sizes: dict[str, int]) -> list[int]:
    """A `KERNELS` shape with its dynamic dims (`'L'`, `'L // 16'`, `'T.ceildiv(L, 128)'`) evaluated."""
    env = {"T": _Ceildiv, **sizes}
    try:
        return [d if isinstance(d, int) else int(eval(d, {"__builtins__": {}}, env)) for d in shape]  # noqa: S307 (our own printed expressions)
    except NameError as e:
        raise CleaveError(f"error: the size of {getattr(e, 'name', None) or e} in shape {tuple(shape)} is not known (no input names it)") from None


def check_inputs(name: str, meta: dict[str, Any], args: Sequence[Any], sizes: dict[str, int]) -> None:
    """Raise a CleaveError when an input's shape is not the one kernel `name` declares for `sizes`
    (a static kernel of a chain given another size would read out of bounds)."""
    if len(args) != meta["inputs"]:
        raise CleaveError(f"error: kernel {name} takes {meta['inputs']} inputs, got {len(args)}")
    for i, (shape, given) in enumerate(zip(meta["shapes"][: meta["inputs"]], given_shapes(meta, args))):
        want = concrete_shape(shape, sizes)
        if given != want:
            names = meta.get("input_names") or []
            what = f"%{names[i]}" if i < len(names) else f"input {i}"
            stored = " (read transposed: its last two dims swapped)" if i in meta.get("transposed", ()) else ""
            raise CleaveError(f"error: kernel {name}: {what} has shape {given}{stored}, the kernel takes {want} (declared {tuple(shape)})")


def output_shapes(name: str, meta: dict[str, Any], args: Sequence[Any], known: dict[str, int] | None = None) -> tuple[list[list[int]], dict[str, int]]:
    """The concrete output shapes of kernel `name` for inputs `args` (after checking them), and the
    dynamic sizes so far (`known`: those of the chain's earlier kernels)."""
    sizes = dynamic_sizes(meta, args, known)
    check_inputs(name, meta, args, sizes)
    return [concrete_shape(shape, sizes) for shape in meta["shapes"][meta["inputs"] :]], sizes


class _Ceildiv:
    @staticmethod
    def ceildiv(a: int, b: int) -> int:
        return -(-a // b)


def poisoned_outputs(meta: dict[str, Any], device: str = "cuda", args: Sequence[Any] = (), known: dict[str, int] | None = None) -> list[torch.Tensor]:
    """NaN-filled output buffers for one kernel of an emitted module (`meta` is its `KERNELS` entry);
    `args`, the kernel's inputs, give the sizes of dynamic dims (with `known`, the sizes of the
    chain's earlier kernels)."""
    import torch

    n_in = meta["inputs"]
    sizes = dynamic_sizes(meta, args, known)
    return [
        torch.full(concrete_shape(shape, sizes), float("nan"), device=device, dtype=getattr(torch, dt))
        for shape, dt in zip(meta["shapes"][n_in:], meta["dtypes"][n_in:])
    ]


def kernel_args(kernels: dict[str, dict[str, Any]], name: str, values: list[Any], env: dict[str, Any]) -> list[Any]:
    """Arguments of kernel `name` (`kernels` is a module's `KERNELS`): the previous kernel's results,
    then the named values it lists (original inputs, or results of earlier kernels of a chain);
    `env` learns this kernel's inputs."""
    meta = kernels[name]
    missing = [n for n in meta["passthrough"] if n not in env]
    if missing:
        raise CleaveError(f"error: kernel {name} reads {', '.join(missing)}, which no earlier kernel of its chain computes")
    extra = [env[n] for n in meta["passthrough"]]
    args = values[: meta["inputs"] - len(extra)] + extra
    env.update(zip(meta["input_names"], args))
    return args


def run_chain(
    kernels: dict[str, dict[str, Any]],
    names: Sequence[str],
    inputs: Sequence[Any],
    launch: Callable[[str, list[Any], list[list[int]]], Sequence[Any]],
) -> list[Any]:
    """Run a candidate's kernels in order, as the emitted module's `run` does; returns the last
    kernel's outputs, or the values its `results` names (a cut graph whose earlier kernels compute
    some of its outputs).

    `launch(name, args, shapes)` runs one kernel on its arguments and returns its outputs, whose
    concrete shapes are `shapes`. Each kernel's inputs are checked against its declared shapes;
    dynamic sizes are read from the first kernel's inputs and carried along the chain (a later
    kernel's intermediates need not name every dim).
    """
    values: list[Any] = list(inputs)
    env: dict[str, Any] = dict(zip(kernels[names[0]]["input_names"], inputs))
    sizes: dict[str, int] = {}
    for name in names:
        args = kernel_args(kernels, name, values, env)
        shapes, sizes = output_shapes(name, kernels[name], args, sizes)
        values = list(launch(name, args, shapes))
        env.update(zip(kernels[name].get("output_names", []), values))
    results = kernels[names[-1]].get("results")
    return [env[n] for n in results] if results else values


def run_poisoned(
    mod: ModuleType, kernels: Sequence[str], inputs: Sequence[torch.Tensor], compiled: dict[str, Any], raw_last: Any
) -> list[torch.Tensor]:
    """Run a candidate's kernels in order; the last one writes into NaN-filled outputs, which are returned.

    `compiled` maps kernel names to `tilelang.compile(..., out_idx=outputs)` kernels (they allocate
    their outputs), `raw_last` is the last kernel compiled with `out_idx=None` (it takes its outputs as
    arguments), as in bench/gpu_check.py: an output element the candidate never writes stays NaN and
    `check` reports it.
    """
    import torch

    last = kernels[-1]
    # the module's own launcher (as its `run`): views of the inputs (a graph's boundary, strided
    # tensors) go to kernels compiled for their layout or are copied, and a kernel given tensors whose
    # rows TMA cannot map runs its thread-copy variant; modules emitted before it call the kernels as given
    launcher = getattr(mod, "launch", None)
    if launcher is not None:
        mod._compiled.update({(n, ()): k for n, k in compiled.items() if not isinstance(k, Exception)})
        mod._compiled[(last, (), "into")] = raw_last

    def launch(name: str, args: list[Any], shapes: list[list[int]]) -> list[Any]:
        if name != last:
            if launcher is not None:
                return launcher(name, args).values
            out = compiled[name](*args)
            return list(out) if isinstance(out, (list, tuple)) else [out]
        meta = mod.KERNELS[name]
        outs = [torch.full(s, float("nan"), device=args[0].device, dtype=getattr(torch, dt)) for s, dt in zip(shapes, meta["dtypes"][meta["inputs"] :])]
        if launcher is not None:
            launcher(name, args, outs)
        else:
            raw_last(*args, *outs)
        return outs

    views = getattr(mod, "boundary_inputs", list)  # modules emitted before `BOUNDARY`: the tensors as given
    parts = getattr(mod, "boundary_outputs", list)
    return parts(run_chain(mod.KERNELS, kernels, views(inputs), launch))


# --------------------------------------------------------------------------- timing


def rotating_copies(
    tensors: Sequence[torch.Tensor],
    l2_bytes: int = L2_BYTES,
    *,
    factor: float = 3.0,
    budget_bytes: int = 4 << 30,
    max_copies: int = 512,
) -> list[list[torch.Tensor]]:
    """Argument sets for `time_us(rotate=...)`: the tensors and clones of them.

    Enough sets that their total exceeds `factor` x L2, so that successive launches read data that
    is not in L2; capped by `budget_bytes` of copies and `max_copies` sets. One set (the tensors
    themselves) when they already exceed `factor` x L2.
    """
    size = sum(t.numel() * t.element_size() for t in tensors)
    if size == 0:
        return [list(tensors)]
    n = math.ceil(factor * l2_bytes / size) if size < factor * l2_bytes else 1
    n = max(1, min(n, max_copies, budget_bytes // size))
    return [list(tensors)] + [[t.clone() for t in tensors] for _ in range(n - 1)]


class Timing(NamedTuple):
    """One timing: median microseconds per call, how (`graph` or `launches`), calls per sample, argument sets."""

    us: float
    method: str
    batch: int
    sets: int


def timed(
    fn: Callable[..., Any],
    *,
    rotate: Sequence[Sequence[Any]] | Callable[[int], Sequence[Any]] | None = None,
    batch: int = 50,
    iters: int = 20,
    warmup: int = 3,
) -> Timing:
    """Time `fn` on the current CUDA device: warm-up, then `iters` samples of a batch of calls.

    A sample is CUDA events around one replay of a CUDA graph that captured `batch` calls (where
    capture fails: `batch` plain launches, host overhead included, method `launches`); the result is
    the median sample divided by the batch. With `rotate` (a list of argument sets, or a callable
    from the call index to one), call `j` of a batch is `fn(*set_j)`, so successive calls read
    different copies of the inputs (see `rotating_copies`); the batch is rounded up to a multiple of
    the number of sets. Without it, `fn()`.
    """
    import torch

    if rotate is None:
        sets: int = 1

        def args(j: int) -> Sequence[Any]:
            return ()
    elif callable(rotate):
        sets = 1
        args = rotate
    else:
        seq = list(rotate)
        sets = len(seq)
        batch = sets * math.ceil(batch / sets)

        def args(j: int) -> Sequence[Any]:
            return seq[j % sets]

    def run_batch() -> None:
        for j in range(batch):
            fn(*args(j))

    for j in range(warmup):
        fn(*args(j))
    torch.cuda.synchronize()
    method = "graph"
    try:
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            fn(*args(0))
        torch.cuda.current_stream().wait_stream(s)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            run_batch()
        run: Callable[[], None] = graph.replay
    except Exception:  # capture not supported by this callable: time plain launches
        torch.cuda.synchronize()
        method = "launches"
        run = run_batch
    run()
    torch.cuda.synchronize()
    samples = []
    for _ in range(iters):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        run()
        b.record()
        torch.cuda.synchronize()
        samples.append(a.elapsed_time(b) * 1e3 / batch)
    return Timing(statistics.median(samples), method, batch, sets)


def time_us(
    fn: Callable[..., Any],
    *,
    rotate: Sequence[Sequence[Any]] | Callable[[int], Sequence[Any]] | None = None,
    batch: int = 50,
    iters: int = 20,
    warmup: int = 3,
) -> float:
    """Median microseconds per call of `fn` (see `timed` for the method)."""
    return timed(fn, rotate=rotate, batch=batch, iters=iters, warmup=warmup).us


# --------------------------------------------------------------------------- parallel compilation


def parallel_map(fn: Callable[[Any], Any], items: Iterable[Any], jobs: int) -> list[Any]:
    """`[fn(x) for x in items]` on `jobs` threads, in the order of `items`; an exception is returned, not raised."""

    def safe(x: Any) -> Any:
        try:
            return fn(x)
        except Exception as e:  # reported per item by the caller
            return e

    items = list(items)
    if jobs <= 1 or len(items) <= 1:
        return [safe(x) for x in items]
    with ThreadPoolExecutor(max_workers=min(jobs, len(items)), thread_name_prefix="cleave-compile") as pool:
        return list(pool.map(safe, items))


def compile_kernel(module: ModuleType, name: str, *, raw: bool = False, target: str = "cuda") -> Any:
    """`tilelang.compile` of one kernel of an emitted module.

    Normally with `out_idx` on its outputs (the kernel allocates and returns them, what the module's
    `run` uses); with `raw`, `out_idx=None` (outputs are passed in: see `run_poisoned`).
    """
    import tilelang

    meta = module.KERNELS[name]
    n_in = meta["inputs"]
    out_idx = None if raw else list(range(n_in, n_in + meta["outputs"]))
    func = kernel_func(module, name, target)
    return past_ast_races(lambda: tilelang.compile(func, out_idx=out_idx, target=target, pass_configs=meta.get("pass_configs")))


def compile_candidates(
    module: ModuleType,
    names: Iterable[str],
    jobs: int | None = None,
    *,
    raw: bool = False,
    seconds: dict[str, float] | None = None,
) -> dict[str, Any]:
    """Compile kernels of an emitted module in parallel: name -> compiled kernel, or the exception.

    `tilelang.compile` spends most of its time in nvcc subprocesses, so threads overlap well; the
    result is keyed and ordered by `names` (duplicates compiled once) whatever the completion order.
    Successful (non-raw) kernels also go into the module's own cache, so `module.run` uses them.
    `seconds`, when given, receives each kernel's compile time (wall time in its worker).
    """
    names = list(dict.fromkeys(names))

    def one(n: str) -> Any:
        t0 = time.perf_counter()
        try:
            return compile_kernel(module, n, raw=raw)
        finally:
            if seconds is not None:
                seconds[n] = seconds.get(n, 0.0) + time.perf_counter() - t0

    results = parallel_map(one, names, jobs or default_jobs())
    out = dict(zip(names, results))
    if not raw and hasattr(module, "_compiled"):
        for n, k in out.items():
            if not isinstance(k, Exception):
                module._compiled[(n, ())] = k  # the module's cache key: (name, input layouts), dense row-major
    return out


# --------------------------------------------------------------------------- measure


@dataclass
class CandidateResult:
    """What `measure` found for one candidate."""

    index: int
    graph: str
    kernels: list[str]
    estimated_us: float
    compile_s: float = 0.0
    error: float | None = None
    us: float | None = None
    method: str = ""
    sets: int = 1
    failure: str = ""

    @property
    def ok(self) -> bool:
        """Ran, and matched the reference within `TOLERANCE`."""
        return not self.failure and self.error is not None and self.error < TOLERANCE


@dataclass
class Measurement:
    """Results of `measure`: one row per candidate, and the fastest correct one."""

    device: str
    rows: list[CandidateResult] = field(default_factory=list)
    winner: int | None = None
    compile_s: float = 0.0

    def to_json(self) -> dict[str, Any]:
        """A JSON-able summary (what the cache records)."""
        return {"device": self.device, "winner": self.winner, "compile_s": self.compile_s, "rows": [dict(r.__dict__) for r in self.rows]}

    @staticmethod
    def from_json(data: dict[str, Any]) -> Measurement:
        """Inverse of `to_json`."""
        return Measurement(data["device"], [CandidateResult(**r) for r in data["rows"]], data["winner"], data.get("compile_s", 0.0))


def print_table(m: Measurement, out: TextIO | None = None) -> None:
    """The measurement as a markdown table (to `out`, default the current stdout)."""
    out = out or sys.stdout
    print("| # | candidate | estimated us | compile s | measured us | rel. error |", file=out)
    print("| ---: | --- | ---: | ---: | ---: | --- |", file=out)
    for r in m.rows:
        name = f"{r.graph} ({len(r.kernels)} kernel{'s' if len(r.kernels) > 1 else ''})"
        if r.failure:
            print(f"| {r.index} | {name} | {r.estimated_us} | {r.compile_s:.1f} | {r.failure[:80]} | |", file=out)
            continue
        err = f"{r.error:.2e} {'ok' if r.ok else 'WRONG'}"
        us = f"{r.us:.2f} ({r.method}, {r.sets} input sets)" if r.us is not None else "-"
        print(f"| {r.index} | {name} | {r.estimated_us} | {r.compile_s:.1f} | {us} | {err} |", file=out)


def measure(
    module_path: str | Path,
    graph: tgraph.GraphOp,
    out: TextIO | None = None,
    *,
    jobs: int | None = None,
    candidates: Sequence[int] | None = None,
    time_wrong: bool = False,
) -> Measurement:
    """Compile, check and time candidates of an emitted module on the GPU; print a table; pick the winner.

    The kernels of all candidates (and the raw variants of their last kernels, for the poisoned
    check) are compiled in parallel with `jobs` workers; each candidate is then checked against the
    float64 reference of `graph` (the input graph of the module) on random inputs, and timed with
    `time_us` rotating input copies; the winner is the fastest correct one (`None` when none is).
    `candidates` restricts the work to those indices (default: all); wrong candidates are not timed
    unless `time_wrong`.
    """
    import torch

    mod = load_module_file(module_path, shared=True)
    indices = list(range(len(mod.CANDIDATES))) if candidates is None else list(candidates)
    guard = HangGuard(Path(module_path))
    m = Measurement(torch.cuda.get_device_name())
    xs = random_inputs(graph)
    refs = torch_reference(graph, xs)
    t0 = time.perf_counter()
    seconds: dict[str, float] = {}
    needed = [k for i in indices for k in mod.CANDIDATES[i][1]]
    compiled = compile_candidates(mod, needed, jobs, seconds=seconds)
    raw = compile_candidates(mod, [mod.CANDIDATES[i][1][-1] for i in indices], jobs, raw=True, seconds=seconds)
    m.compile_s = time.perf_counter() - t0
    sets = rotating_copies(xs)
    best_us = math.inf
    for i in indices:
        est, kernels, name = mod.CANDIDATES[i]
        r = CandidateResult(i, name, list(kernels), est, compile_s=sum(seconds.get(k, 0.0) for k in set(kernels)))
        m.rows.append(r)
        bad = [(k, compiled[k]) for k in kernels if isinstance(compiled[k], Exception)]
        if isinstance(raw[kernels[-1]], Exception):
            bad.append((kernels[-1] + " (raw)", raw[kernels[-1]]))
        if bad:
            r.failure = f"compile failed: {bad[0][0]}: {one_line(bad[0][1])}"
            continue
        if guard.hung(name, kernels):
            r.failure = guard.skipped
            continue
        try:
            with guard.running(i, name, kernels):
                got = run_poisoned(mod, kernels, xs, compiled, raw[kernels[-1]])
                torch.cuda.synchronize()
                r.error = max(check(g, ref) for g, ref in zip(got, refs))
                if r.ok or time_wrong:
                    t = timed(lambda *a, i=i: mod.run(*a, candidate=i), rotate=sets)
                    r.us, r.method, r.sets = t.us, t.method, t.sets
        except Exception as e:  # one bad candidate must not hide the others
            r.failure = f"run failed: {one_line(e)}"
            continue
        if r.ok and r.us is not None and r.us < best_us:
            best_us, m.winner = r.us, i
    del sets
    print_table(m, out)
    return m


def verify(module_path: str | Path, graph: tgraph.GraphOp, candidate: int, *, jobs: int | None = None) -> float:
    """Compile one candidate (reusing TileLang's kernel cache) and return its poisoned-check error."""
    import torch

    mod = load_module_file(module_path, shared=True)
    kernels = mod.CANDIDATES[candidate][1]
    compiled = compile_candidates(mod, kernels, jobs)
    raw = compile_candidates(mod, kernels[-1:], jobs, raw=True)
    for k, v in [*compiled.items(), *raw.items()]:
        if isinstance(v, Exception):
            raise CleaveError(f"error: candidate #{candidate}: compile of {k} failed: {one_line(v)}")
    guard = HangGuard(Path(module_path))
    name = mod.CANDIDATES[candidate][2]
    if guard.hung(name, kernels):
        raise CleaveError(f"error: candidate #{candidate} (@{name}) did not finish on the GPU in an earlier run (a hang)")
    xs = random_inputs(graph)
    refs = torch_reference(graph, xs)
    with guard.running(candidate, name, kernels):
        got = run_poisoned(mod, kernels, xs, compiled, raw[kernels[-1]])
        torch.cuda.synchronize()
    return max(check(g, ref) for g, ref in zip(got, refs))
