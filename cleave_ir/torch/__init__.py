"""PyTorch front end: capture a model, compile its supported regions, keep PyTorch where it is faster.

    import cleave_ir.torch as ct
    m2 = ct.optimize(model, example_inputs)          # a GraphModule; m2(*inputs) == model(*inputs)
    print(m2.cleave_report)                          # every region: ops, decision, reason, times, error
    ct.explain(model, example_inputs)                # the regions and why, without compiling
    torch.compile(model, backend="cleave")           # the same, as a torch.compile backend

Importing this package imports torch (torch is not a dependency of cleave_ir itself).
Steps: `capture` (torch.export), `partition` (the rule in `partition.RULE`), the compiler
(`compiler.PipelineCompiler`: `cleave compile` and its cache), the `gate`, and `stitch` (a
torch.library custom op per accepted region).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import torch
from torch import fx

from cleave_ir.diagnostics import CleaveError
from cleave_ir.runtime import one_line
from cleave_ir.torch.aten import ATEN, Unsupported
from cleave_ir.torch.capture import Captured, capture, drop_unused_slices, model_runs
from cleave_ir.torch.compiler import Compiler, PipelineCompiler, interpreted_graph
from cleave_ir.torch.gate import Report, Row, Timer, default_timer, gate, input_sets, with_model_runs
from cleave_ir.torch.partition import MAX_OPS, RULE, Plan, Region, other_shapes, partition, region_module
from cleave_ir.torch.partition import example_inputs as region_inputs
from cleave_ir.torch import stitch
from cleave_ir.torch.pieces import InPieces, Piece, SymbolicGraph, in_pieces, static_graphs, static_sizes
from cleave_ir.torch.timings import RememberingTimer, TimingStore, compiler_key, device_name, store_for

__all__ = [
    "ATEN", "RULE", "Captured", "Compiler", "InPieces", "PipelineCompiler", "Plan", "Report", "Row", "Timer", "Unsupported",
    "TimingStore", "backend", "capture", "default_timer", "explain", "in_pieces", "interpreted_graph", "optimize", "partition",
]


def explain(
    model: Any, example_inputs: Sequence[Any], dynamic_shapes: Any = None, *, max_ops: int = MAX_OPS, file: Any = None, quiet: bool = False
) -> Plan:
    """Capture and partition `model`; print every region with its ops, decision and why; return the plan.

    A model torch.export cannot capture whole (data-dependent control flow: a mixture of experts'
    routing loop) is planned in the graphs torch.compile cuts it into (`in_pieces`): the plan of the
    first, its `pieces` the plans of all of them."""
    try:
        plan = partition(capture(model, example_inputs, dynamic_shapes), max_ops)
        plans = [plan]
    except CleaveError as e:
        if not _piecewise(model, dynamic_shapes):
            raise
        plans = []

        def plan_of(gm: fx.GraphModule, args: list[Any]) -> Any:
            try:
                plans.append(partition(capture(gm, args), max_ops))
            except CleaveError:  # a graph torch.export refuses too: PyTorch's, left out of the plan
                pass
            return gm.forward

        with torch.no_grad():
            in_pieces(model, example_inputs, static_graphs(plan_of), static=True)
        if not plans:
            raise
        plan = plans[0]
        plan.pieces = plans
        plan.note = _pieces_note(e, len(plans))
    if not quiet:
        print(plan.text(), end="", file=file)
    return plan


def optimize(
    model: Any,
    example_inputs: Sequence[Any],
    dynamic_shapes: Any = None,
    margin: float = 0.03,
    *,
    compiler: Compiler | None = None,
    timer: Timer = default_timer,
    tolerance: float | None = None,
    max_ops: int = MAX_OPS,
    budget_s: float | None = None,
    baseline: str = "eager",
    verbose: bool = False,
    group_projections: bool = True,
    timings: TimingStore | str | None = "auto",
) -> fx.GraphModule:
    """`model` with every region that passes the gate running our kernels (one custom op each).

    Returns the captured GraphModule (call it like the model); `.cleave_report` holds the `Report`.
    A model torch.export cannot capture whole (data-dependent control flow) and given without
    `dynamic_shapes` is optimized in the graphs torch.compile cuts it into: the result is an `InPieces`
    module, its report the regions of every graph (the code between them runs in PyTorch).
    Any failure in one region (compile, run, check) leaves that region in PyTorch; so does every
    region not started within `budget_s` seconds. Under a budget the regions compile in order of
    PyTorch's time for them, longest first (`by_stake`): what is left uncompiled is where the least
    time is at stake. `baseline`: what our kernel must beat, PyTorch's
    region run "eager" or under torch.compile ("compile", or a torch.compile mode such as
    "max-autotune-no-cudagraphs"). `group_projections`: regions that project one input (q, k and v)
    are first tried as one graph of their outputs (`groups.GROUP_RULE`), their own regions where that loses.
    `timings`: where the gate's timings are remembered (`timings.TimingStore`), so that optimizing the same
    model again re-checks every kernel but reuses its timings; "auto": in `cleave compile`'s cache where the
    default compiler and timer are used, None: always time.
    """
    import time

    t_start = time.perf_counter()
    try:
        captured = capture(model, example_inputs, dynamic_shapes)
    except CleaveError as e:
        if not _piecewise(model, dynamic_shapes):
            raise
        options = dict(compiler=compiler, timer=timer, tolerance=tolerance, max_ops=max_ops, baseline=baseline, verbose=verbose)
        return _optimize_in_pieces(model, example_inputs, e, margin, budget_s, options)
    plan = partition(captured, max_ops)
    runs = model_runs(captured.module, example_inputs)
    compiler = compiler if compiler is not None else PipelineCompiler()
    store = store_for(timings, compiler, timer)
    rows: list[Row] = []
    accepted: list[tuple[Region, Any, Any]] = []
    todo = [r for r in plan.regions if r.worth and r.graph is not None]
    for region in plan.regions:
        if not region.worth or region.graph is None:
            # (the decision column says PyTorch already: "PyTorch: <why>" would read "pytorch | PyTorch: ...")
            rows.append(Row(region.index, region.ops(), "pytorch", region.reason.removeprefix("PyTorch: "), tgraph_ops=region.tgraph_ops()))
    if budget_s is not None:
        todo = by_stake(todo, captured, timer)
    groups = plan.groups if group_projections else []
    if hasattr(compiler, "prepare"):  # the CPU half of every region's compile, in parallel
        compiler.prepare([r.graph for r in [*groups, *todo]])

    def attempt(region: Region) -> Row:
        """Compile, check and time one region (or group); its row. Accepted: added to `accepted`."""
        def refused(why: str) -> Row:
            return Row(region.index, region.ops(), "pytorch", why, tgraph_ops=region.tgraph_ops(), members=[m.index for m in region.members])

        if budget_s is not None and time.perf_counter() - t_start > budget_s:
            return refused(f"not compiled: time budget of {budget_s:.0f} s spent")
        try:
            others = other_shapes(captured, region)
        except ValueError as e:
            return refused(f"not compiled: {one_line(e)}")
        try:
            pytorch = region_module(region)
            kernel = stitch.bind(region, compiler(region.graph), pytorch)
        except Exception as e:  # a failed compile keeps PyTorch's version
            return refused(f"compile failed: {one_line(e)}")
        base = None if baseline == "eager" else torch.compile(pytorch, mode=None if baseline == "compile" else baseline)
        sets = with_model_runs(input_sets(region_inputs(captured, region), others), runs, region)
        material = None if store is None else store.material(region, sets[0][1], {"baseline": baseline, "compiler": compiler_key(compiler), "device": device_name(sets[0][1])})
        remembering = RememberingTimer(timer, None if material is None else store.get(material))
        row = gate(
            region, pytorch, kernel, sets, timer=remembering, margin=margin, tolerance=tolerance, baseline=base,
            reference=region_module(region, float64=True),
        )
        if remembering.reused:
            row.reason += " (timings of an earlier run on this device: `timings=None` times again)"
        elif material is not None and row.pytorch_us is not None and row.cleave_us is not None:
            store.put(material, {"pytorch": row.pytorch_us, "cleave": row.cleave_us})
        if row.decision == "cleave":
            accepted.append((region, kernel, pytorch))
        if verbose:
            print(f"{'group' if region.members else 'region'} {region.index}: {row.decision}: {row.reason}", flush=True)
        return row

    group_of = {m.index: g for g in groups for m in g.members}
    in_group: dict[int, int] = {}  # a member of an accepted group -> the group
    for region in todo:
        group = group_of.pop(region.index, None)
        if group is not None:  # tried before its first member (in `todo`'s order); where it loses, its members go alone
            for m in group.members:
                group_of.pop(m.index, None)
            row = attempt(group)
            if row.decision == "cleave":
                in_group.update((m.index, group.index) for m in group.members)
            else:
                row.reason += "; its regions are tried alone"
            rows.append(row)
        if region.index in in_group:
            g = in_group[region.index]
            rows.append(Row(region.index, region.ops(), "cleave", f"in group {g}", tgraph_ops=region.tgraph_ops(), group=g))
            continue
        rows.append(attempt(region))
    rows.sort(key=lambda r: r.region)
    gm = captured.module
    replaced: dict[fx.Node, fx.Node] = {}
    for region, kernel, pytorch in sorted(accepted, key=lambda a: a[0].index):
        op = stitch.custom_op(stitch.op_name(region), len(region.tensor_inputs()), kernel, pytorch, outputs=len(region.outputs))
        stitch.replace(gm, region, op, kernel, replaced)
    drop_unused_slices(gm)
    stitch.finish(gm)
    gm.cleave_report = Report(rows, margin, plan.text())
    return gm


def by_stake(regions: Sequence[Region], captured: Captured, timer: Timer) -> list[Region]:
    """`regions` by PyTorch's time for each on its example inputs (`timer`), longest first; a region
    whose PyTorch version fails to time goes last. Their order where they tie (tests' fake timers) is kept."""
    if len(regions) < 2:
        return list(regions)

    def stake(region: Region) -> float:
        try:
            with torch.no_grad():
                return float(timer(region_module(region), region_inputs(captured, region), "pytorch", region))
        except Exception:
            return -1.0

    stakes = {r.index: stake(r) for r in regions}
    return sorted(regions, key=lambda r: -stakes[r.index])


def backend(
    margin: float = 0.03, *, rest: str | None = None, reports: list[Report] | None = None, deadline: float | None = None, **options: Any
) -> Any:
    """A torch.compile backend with these `optimize` options (`backend="cleave"` uses the defaults).

    Each graph dynamo hands over is optimized at its first call (`Piece`); its `Report` is appended
    to `reports` where given. `rest="inductor"`: the graph with our regions in it (opaque custom ops)
    is compiled by torch.compile's inductor, which fuses what stays PyTorch's (rotary embeddings,
    casts, residual adds); a graph we do not optimize is inductor's alone. Else those ops run eagerly.
    With `rest="inductor"` the gate times each region against inductor's compile of it (`baseline=
    "compile"`, unless a baseline is given): a region is ours only where it beats what torch.compile
    would have run there. `deadline` (a `time.perf_counter()` value): every graph's compile budget is
    what is left until then."""
    import time

    if rest == "inductor":
        options = {"baseline": "compile", **options}

    def finish(fn: Any) -> Any:
        return fn if rest is None else torch.compile(fn, backend=rest)

    def optimized(model: Any, args: list[Any], dynamic_shapes: Any = None) -> Any:
        """`optimize(model, args)`, or None where it fails (the graph then runs as PyTorch's)."""
        budget = {} if deadline is None else {"budget_s": max(0.0, deadline - time.perf_counter())}
        try:
            m = optimize(model, args, dynamic_shapes, margin=margin, **options, **budget)
        except Exception as e:  # the model always runs
            import sys

            print(f"warning: cleave backend: kept the graph in PyTorch: {one_line(e)}", file=sys.stderr)
            return None
        if reports is not None:
            reports.append(m.cleave_report)
        return m

    def static(gm: fx.GraphModule, args: list[Any]) -> Any:
        m = optimized(gm, args)
        return finish(gm if m is None else m)

    def dynamic(gm: fx.GraphModule, args: list[Any]) -> Any:
        """A graph dynamo made dynamic (a decode step whose cache grows): captured with its symbolic
        dims dynamic, the sizes it takes as ints read from its tensors (`SymbolicGraph`)."""
        graph = SymbolicGraph.of(gm)
        m = None if graph is None else optimized(graph, graph.tensors(args), graph.dynamic_shapes())
        return finish(gm) if m is None else graph.calling(finish(m))

    def compile_fx(gm: fx.GraphModule, example_inputs: Sequence[Any]) -> Any:
        if any(isinstance(x, torch.SymInt) for x in example_inputs) or not static_sizes(example_inputs, tensors_only=False):
            return Piece(gm, dynamic)
        if not static_sizes(example_inputs):
            return gm.forward if rest is None else Piece(gm, lambda g, _: finish(g))
        return Piece(gm, static)

    return compile_fx


def _piecewise(model: Any, dynamic_shapes: Any) -> bool:
    """Whether a model torch.export refused is taken in pieces: a module or function not already an
    FX graph (dynamo's pieces are not cut again), given without dynamic dims (which the pieces,
    compiled for the example's shapes, would not honour: the export error stands)."""
    return dynamic_shapes is None and callable(model) and not isinstance(model, (fx.GraphModule, SymbolicGraph))


def _pieces_note(e: BaseException, n: int) -> str:
    why = str(e).removeprefix("error: ")
    return f"{why}; captured instead in the {n} graphs torch.compile cuts the model into (the code between them runs in PyTorch)"


def _optimize_in_pieces(
    model: Any, example_inputs: Sequence[Any], e: BaseException, margin: float, budget_s: float | None, options: dict[str, Any]
) -> InPieces:
    """`optimize` of each graph torch.compile cuts `model` into, by the backend (so a graph dynamo makes
    dynamic, an expert's token count, is compiled once with that size dynamic); one `Report` over all
    their regions."""
    import time

    reports: list[Report] = []
    deadline = None if budget_s is None else time.perf_counter() + budget_s
    compiled = in_pieces(model, example_inputs, backend(margin, reports=reports, deadline=deadline, **options))
    rows: list[Row] = []
    for rep in reports:
        base = len(rows)  # a graph's rows are its regions (and groups) in index order: renumbered from base

        def renumbered(r: Row) -> Row:
            if r.group is None:
                return dataclasses.replace(r, region=base + r.region, members=[base + m for m in r.members])
            return dataclasses.replace(r, region=base + r.region, group=base + r.group, reason=f"in group {base + r.group}")

        rows += [renumbered(r) for r in rep.rows]
    plans = "".join(f"graph {i}:\n{rep.plan}" for i, rep in enumerate(reports))
    return InPieces(compiled, Report(rows, margin, f"{_pieces_note(e, len(reports))}\n{plans}"))


def _register() -> None:
    from torch._dynamo import list_backends, register_backend

    if "cleave" not in list_backends(exclude_tags=()):
        register_backend(name="cleave")(backend())


_register()
