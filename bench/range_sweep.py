"""Every candidate's kernels at input magnitudes far from N(0, 1), on the CPU.

The search proves candidates equal in exact arithmetic and the pipeline checks them on normal
inputs; a kernel can still lose its range in fp16 where its input graph does not: a Split-K
partial that grows with the chunk's length, an exp shifted by the max of another value. This tool
runs each graph (dims above `--max-dim` shrunk to it) through `cleave-pipeline` (small search
budget) and `cleave-lower-tilelang`, then every candidate's kernels in the tilelang interpreter
(their fp16/fp32 numerics) on the inputs scaled by every combination of `--scales` (one input at a
time for graphs of more than 3 inputs), against the graph in float64. Elements whose float64 value
is past fp16's range are left out, and a set with more than 1% of them is skipped (fp16 cannot
hold that result); a candidate is reported when its error is above 2e-2, or when one of its kernels
multiplies, adds or divides in fp16/bf16 (products and sums are fp32, as a tensor core's).

    python bench/range_sweep.py examples/*.mlir bench/probes/unseen/*.mlir --out range.md

Results: bench/results/range_sweep_*.md. An output below fp16's normal range (6e-5; every input
scaled by 1e-3 into a chain of products) loses relative precision in any fp16 computation: such
sets are reported apart ("underflow"), as what fp16 cannot express, not as a kernel's defect; so are
sets where the graph run in its declared types overflows on the way ("the graph's types overflow": an
fp16 x @ W of 1e3-scale operands before a norm), where a kernel computing in fp32 may still be right.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import BFloat16Type, Float16Type

from cleave_ir.builder import module_of
from cleave_ir.dialects import cleave, tgraph
from cleave_ir.interpreter import max_relative_error, random_inputs, round_to, run_graph
from cleave_ir.interpreter_tilelang import candidate_kernels, run_kernels
from cleave_ir.passes.fold_structural import FoldStructuralPass
from cleave_ir.passes.lower_tilelang import lower_module
from cleave_ir.passes.pipeline import PipelinePass
from cleave_ir.run import load_module, resize_graph
from cleave_ir.runtime import one_line

F16_MAX = 65504.0
F16_TINY = 6.1e-5  # the smallest normal fp16
TOLERANCE = 2e-2
ROUNDING_OPS = ("arith.mulf", "arith.addf", "arith.subf", "arith.divf")  # reported where a kernel computes them in fp16


def shrunk(graph: tgraph.GraphOp, max_dim: int) -> tgraph.GraphOp:
    """`graph` with every constant input dim above `max_dim` set to it (a detached copy)."""
    dims = {int(d) for a in graph.inputs for d in tgraph.tensor_type(a).shape if getattr(d, "is_Integer", False) and int(d) > max_dim}
    return resize_graph(graph, {d: max_dim for d in dims}) if dims else graph.clone()


def views(boundary: cleave.BoundaryAttr | None, xs: list[np.ndarray]) -> list[np.ndarray]:
    """The folded graph's inputs from the given graph's `xs` (no boundary: `xs`)."""
    return xs if boundary is None else [np.ascontiguousarray(v) for v in boundary.views(xs, np.transpose, np.concatenate)]


def input_sets(n: int, scales: list[float]) -> list[tuple[float, ...]]:
    if n <= 3:
        return list(itertools.product(scales, repeat=n))
    return sorted({tuple(s if i == j else 1.0 for i in range(n)) for j in range(n) for s in scales})


def sweep(path: str, max_dim: int, scales: list[float], budget: int) -> tuple[list[str], int, int]:
    """(report lines for `path`, candidates, input sets checked)."""
    source = load_module(path)
    # a graph with a concat or slice is folded before it is shrunk (the resize symbolizes it), and then judged
    # as folded: its kernels against the folded graph, both on the folded graph's inputs
    folded_first = any(isinstance(op, tgraph.StructuralOp) for op in source.walk())
    if folded_first:
        FoldStructuralPass().apply(Context(), source)
    graph = shrunk(source.body.block.first_op, max_dim)
    module = module_of(graph)
    PipelinePass(search_budget=budget, split_counts=(2, 4), top_k=1).apply(Context(), module)
    lower_module(module)
    candidates = candidate_kernels(module)
    boundary = None if folded_first else next(
        (g.attributes["cleave.boundary"] for g in module.walk() if isinstance(g, tgraph.GraphOp) and "cleave.boundary" in g.attributes), None
    )
    base = random_inputs(graph, 0)
    dtypes = [tgraph.tensor_type(a).element_type for a in graph.inputs]
    lines, checked = [], 0
    for name, kernels in candidates:  # products and sums in fp32, as a tensor core's (session 49)
        half = next((f"@{k.sym_name.data}: {op.name}" for k in kernels for op in k.walk()
                     if op.name in ROUNDING_OPS and isinstance(op.results[0].type, (Float16Type, BFloat16Type))), None)
        if half is not None:
            lines.append(f"| {Path(path).name} | {name} | - | failed: fp16 arithmetic ({half}) |")
    for combo in input_sets(len(base), scales):
        # the kernels read inputs of their dtype: the reference gets the same values (x * 1000 in f16
        # is off by up to 3e-1, which flips clamps and saturations of results near 0)
        xs = [round_to(x * s, t) for x, s, t in zip(base, combo, dtypes)]
        want = run_graph(graph, xs)
        if any(np.mean(np.abs(w) > F16_MAX) > 0.01 for w in want):
            continue  # fp16 cannot hold the result
        checked += 1
        underflow = all(np.max(np.abs(w)) < F16_TINY * 1e3 for w in want)
        # the graph's own types overflow on the way (x @ W of 1e3-scale operands, declared fp16, then a
        # norm): the graph as written gives inf or nan there, so a kernel that does too is not wrong
        typed = run_graph(graph, xs, mode="declared")
        overflows = any(not np.all(np.isfinite(d[np.abs(w) <= F16_MAX])) for d, w in zip(typed, want, strict=True))
        for name, kernels in candidates:
            try:
                got = run_kernels(kernels, views(boundary, xs))
                if boundary is not None:  # the graph was folded: its kernels compute views and parts of it
                    got = boundary.assemble(list(got), lambda ps, dim: np.concatenate(ps, axis=dim), np.transpose)
                err = max(
                    max_relative_error(np.where(np.abs(w) <= F16_MAX, w, 0), np.where(np.abs(w) <= F16_MAX, g, 0))
                    for w, g in zip(want, got, strict=True)
                )
            except Exception as e:  # noqa: BLE001 - a kernel that fails to run is reported
                lines.append(f"| {Path(path).name} | {name} | {combo} | failed: {one_line(e)[:80]} |")
                continue
            if not err <= TOLERANCE:
                kind = "underflow" if underflow else "the graph's types overflow" if overflows else "WRONG"
                lines.append(f"| {Path(path).name} | {name} | {', '.join(f'{s:g}' for s in combo)} | {err:.3g} ({kind}) |")
    return lines, len(candidates), checked


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("files", nargs="+")
    p.add_argument("--out", help="markdown report (else stdout only)")
    p.add_argument("--max-dim", type=int, default=256, help="input dims above this are shrunk to it (default 256)")
    p.add_argument("--scales", default="1e-3,1,1e3", help="input scales (default 1e-3,1,1e3)")
    p.add_argument("--search-budget", type=int, default=200_000, help="the search's work budget per graph (default 200000)")
    args = p.parse_args(argv)
    scales = [float(s) for s in args.scales.split(",")]
    report = [
        f"Command: `python bench/range_sweep.py {' '.join(args.files)} --max-dim {args.max_dim} --scales {args.scales}`",
        "",
        "| graph | candidate | input scales | max rel. error |",
        "| --- | --- | --- | ---: |",
    ]
    summary = []
    wrong = 0
    for f in args.files:
        t0 = time.perf_counter()
        try:
            lines, n, checked = sweep(f, args.max_dim, scales, args.search_budget)
        except Exception as e:  # noqa: BLE001 - a graph that does not compile is reported, the others go on
            summary.append(f"- {Path(f).name}: not compiled: {one_line(e)[:120]}")
            print(summary[-1], file=sys.stderr, flush=True)
            continue
        wrong += sum("WRONG" in line or "failed" in line for line in lines)
        report.extend(lines)
        summary.append(f"- {Path(f).name}: {n} candidates x {checked} input sets, {len(lines)} over {TOLERANCE:g} ({time.perf_counter() - t0:.0f} s)")
        print(summary[-1], file=sys.stderr, flush=True)
    text = "\n".join(report + ["", *summary, "", f"{wrong} wrong (not underflow, not an overflow of the graph's own types) in all."]) + "\n"
    if args.out:
        Path(args.out).write_text(text)
    print(text)
    return 1 if wrong else 0


if __name__ == "__main__":
    raise SystemExit(main())
