"""Soundness corpus: random tgraph graphs through the search, every accepted candidate re-checked.

    python bench/soundness_corpus.py --graphs 10000 -j 15 [--budget 20000] [--seed 0] [--json out.json]

Each graph (seeded, so graph i is the same on every machine) is drawn from: matmul, the unary ops,
binary ops with broadcasting (operands [m, n], [m, 1], [1, n] or [1, 1]), scale and reduce sum/max,
2-6 ops over small distinct sizes. It runs through cleave-superoptimize (a low work budget) and
cleave-concretize; every candidate that survives both is compared with its input graph by the
tgraph interpreter in float64 on fresh inputs from distributions the search does not use (uniform,
Laplace, Student-t with 2 degrees of freedom, log-uniform magnitudes with random signs, integers in
[-5, 5], a large positive offset). A candidate that disagrees on any trial where the input graph's
output is finite is a false accept (goal: 0). Prints one summary line and writes a JSON report.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import multiprocessing
import re
import sys
import time
import traceback
from dataclasses import asdict, dataclass, field

import numpy as np
from xdsl.context import Context

from cleave_ir.builder import GraphBuilder, module_of
from cleave_ir.dialects import tgraph
from cleave_ir.interpreter import input_shapes, run_graph
from cleave_ir.passes.concretize import ConcretizePass
from cleave_ir.passes.superoptimize import SuperoptimizePass

UNARY = ["exp", "sqrt", "rsqrt", "neg", "silu", "sigmoid", "square", "reciprocal"]
BINARY = ["add", "sub", "mul", "div", "max"]
SCALES = [0.5, -2.0, 0.125, 3.0, -1.0]


def random_graph(index: int, seed: int = 0) -> tgraph.GraphOp:
    """Random valid graph number `index` (deterministic)."""
    rng = np.random.default_rng([seed, index])
    sizes = [int(s) for s in rng.permutation([2, 3, 4, 5, 6, 7])[:4]]
    b = GraphBuilder(f"g{index}", "f32")
    inputs = 0

    def new_input(shape: list[int]):
        nonlocal inputs
        inputs += 1
        return b.input(f"x{inputs}", shape)

    values = [new_input([sizes[0], sizes[1]])]
    for _ in range(int(rng.integers(2, 7))):
        kind = rng.choice(["matmul", "unary", "binary", "scale", "reduce"], p=[0.25, 0.2, 0.3, 0.1, 0.15])
        v = values[int(rng.integers(len(values)))]
        shape = list(tgraph.tensor_type(v).shape)
        m, n = (int(d) for d in shape)
        if kind == "matmul" and inputs < 4:
            others = [w for w in values if int(tgraph.tensor_type(w).shape[0]) == n]
            if others and rng.random() < 0.3:
                w = others[int(rng.integers(len(others)))]
            else:
                w = new_input([n, int(rng.choice(sizes))])
            values.append(b.matmul(v, w))
        elif kind == "unary":
            values.append(b.unary(str(rng.choice(UNARY)), v))
        elif kind == "binary":
            same = [w for w in values if w is not v and _broadcastable(shape, list(tgraph.tensor_type(w).shape))]
            if same and (rng.random() < 0.5 or inputs >= 4):
                w = same[int(rng.integers(len(same)))]
            else:
                w = new_input([[m, n], [m, 1], [1, n], [1, 1]][int(rng.integers(4))])
            a, c = (v, w) if rng.random() < 0.5 else (w, v)
            values.append(b.binary(str(rng.choice(BINARY)), a, c))
        elif kind == "scale":
            values.append(b.scale(v, float(rng.choice(SCALES))))
        else:
            dims = [d for d in (0, 1) if shape[d] != 1]
            if dims:
                values.append(b.reduce(str(rng.choice(["sum", "max"])), v, int(rng.choice(dims))))
    return b.build(values[-1])


def _broadcastable(a: list, b: list) -> bool:
    return all(x == y or x == 1 or y == 1 for x, y in zip(a, b))


# ---------------------------------------------------------------- the independent check
def _independent_inputs(graph: tgraph.GraphOp, trial: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng([seed, 7_777_777, trial])
    out = []
    for shape in input_shapes(graph):
        kind = trial % 6
        if kind == 0:
            x = rng.uniform(-5, 5, shape)
        elif kind == 1:
            x = rng.laplace(0, 2, shape)
        elif kind == 2:
            x = rng.standard_t(2, shape)
        elif kind == 3:
            x = rng.choice([-1.0, 1.0], shape) * np.exp(rng.uniform(-4, 4, shape))
        elif kind == 4:
            x = rng.integers(-5, 6, shape).astype(np.float64)
        else:
            x = rng.uniform(2, 10, shape)
        out.append(x)
    return out


def independent_check(reference: tgraph.GraphOp, candidate: tgraph.GraphOp, seed: int, trials: int = 12) -> tuple[bool, int]:
    """(agrees, informative trials): float64 interpreter on fresh inputs, elementwise tolerance
    1e-8 relative to the largest finite reference value, over elements finite in the reference."""
    informative = 0
    for t in range(trials):
        xs = _independent_inputs(reference, t, seed)
        with np.errstate(all="ignore"):
            want = run_graph(reference, xs)[0]
            got = run_graph(candidate, xs)[0]
        fin = np.isfinite(want)
        if fin.mean() < 0.5:
            continue
        informative += 1
        scale = max(float(np.max(np.abs(want[fin]))), 1e-300)
        with np.errstate(all="ignore"):
            err = np.abs(got[fin] - want[fin]) / scale
        if not np.all(err <= 1e-8):
            return False, informative
    return True, informative


@dataclass
class GraphResult:
    index: int
    ops: int
    candidates: int = 0
    dropped_by_concretize: int = 0
    false_accepts: list[str] = field(default_factory=list)
    unchecked: int = 0  # candidates whose every independent trial overflowed
    crash: str = ""
    seconds: float = 0.0
    budget_reached: bool = False
    rejected_by_tests: int = 0  # what the search's own check refused (wrong, or a false rejection)
    rejected_by_properties: int = 0


def run_one(args: tuple[int, int, int, int]) -> GraphResult:
    index, seed, budget, max_candidates = args
    t0 = time.monotonic()
    graph = random_graph(index, seed)
    res = GraphResult(index, sum(1 for _ in graph.block.ops) - 1)
    try:
        reference = graph.clone()
        module = module_of(graph)
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            SuperoptimizePass(max_ops=min(res.ops + 3, 9), budget=budget, max_candidates=max_candidates).apply(Context(), module)
            ConcretizePass(split_counts=(2, 3)).apply(Context(), module)
        log = err.getvalue()
        res.budget_reached = "work budget reached" in log
        found = re.search(r"rejected (\d+) \(tests\) (\d+) \(op properties\)", log)
        if found:
            res.rejected_by_tests, res.rejected_by_properties = int(found[1]), int(found[2])
        res.dropped_by_concretize = log.count("warning: cleave-concretize: dropped")
        for g in module.body.block.ops:
            if not isinstance(g, tgraph.GraphOp) or "cleave.candidate_of" not in g.attributes:
                continue
            res.candidates += 1
            ok, informative = independent_check(reference, g, seed + index)
            if not ok:
                res.false_accepts.append(str(g))
            elif informative == 0:
                res.unchecked += 1
    except Exception:
        res.crash = traceback.format_exc(limit=6)
    res.seconds = time.monotonic() - t0
    return res


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--graphs", type=int, default=200)
    p.add_argument("-j", "--jobs", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--start", type=int, default=0, help="first graph index")
    p.add_argument("--budget", type=int, default=20_000, help="search work budget per graph")
    p.add_argument("--max-candidates", type=int, default=8)
    p.add_argument("--json", default="soundness_corpus.json", help="where to write the report")
    args = p.parse_args(argv)
    work = [(i, args.seed, args.budget, args.max_candidates) for i in range(args.start, args.start + args.graphs)]
    t0 = time.monotonic()
    results: list[GraphResult] = []
    if args.jobs > 1:
        with multiprocessing.Pool(args.jobs) as pool:
            results = list(pool.imap_unordered(run_one, work, chunksize=4))
    else:
        results = [run_one(w) for w in work]
    seconds = time.monotonic() - t0
    results.sort(key=lambda r: r.index)
    false = [r for r in results if r.false_accepts]
    crashes = [r for r in results if r.crash]
    summary = {
        "graphs": len(results),
        "first_index": args.start,
        "seed": args.seed,
        "budget": args.budget,
        "jobs": args.jobs,
        "candidates": sum(r.candidates for r in results),
        "false_accepts": sum(len(r.false_accepts) for r in results),
        "graphs_with_false_accepts": [r.index for r in false],
        "dropped_by_concretize": sum(r.dropped_by_concretize for r in results),
        "graphs_dropped_by_concretize": [r.index for r in results if r.dropped_by_concretize],
        "unchecked_candidates": sum(r.unchecked for r in results),
        "budget_reached": sum(r.budget_reached for r in results),
        "rejected_by_search_tests": sum(r.rejected_by_tests for r in results),
        "rejected_by_op_properties": sum(r.rejected_by_properties for r in results),
        "crashes": len(crashes),
        "seconds": round(seconds, 1),
        "graphs_per_second": round(len(results) / seconds, 2) if seconds else None,
        "slowest_graph_seconds": round(max((r.seconds for r in results), default=0.0), 2),
    }
    report = {**summary, "failures": [asdict(r) for r in results if r.false_accepts or r.crash]}
    with open(args.json, "w") as f:
        json.dump(report, f, indent=1)
    print(
        f"soundness corpus: {summary['graphs']} graphs (seed {args.seed}, budget {args.budget}), "
        f"{summary['candidates']} candidates accepted, {summary['false_accepts']} false accepts, "
        f"{summary['dropped_by_concretize']} dropped by concretize, {summary['crashes']} crashes, "
        f"{summary['unchecked_candidates']} unchecked, {summary['graphs_per_second']} graphs/s with -j {args.jobs} "
        f"({summary['seconds']} s); report: {args.json}"
    )
    return 1 if summary["false_accepts"] or summary["crashes"] else 0


if __name__ == "__main__":
    sys.exit(main())
