"""Soundness corpus: random tgraph graphs through the search, every accepted candidate re-checked.

    python bench/soundness_corpus.py --graphs 10000 -j 15 [--budget 20000] [--seed 0] [--json out.json]

Each graph (seeded, so graph i is the same on every machine) is drawn from every op kind the
search enumerates: matmul, the unary ops (gelu in both forms, tanh, exp2, log, abs, ...), binary ops
with broadcasting (operands [m, n], [m, 1], [1, n] or [1, 1]), scale, `tgraph.scalar` (every kind),
a cast through f16, reduce sum/max/mean, and `tgraph.select` on 0/1 mask inputs (fills as in masked
logits, mask - 1e4, or other values), 2-6 ops over small distinct sizes; reductions meet masked
tensors wherever they follow a select. 12% of the graphs are a masked softmax (over x or scaled
q @ k^T, max-subtracted or max-free, optionally followed by @ v). It runs through
cleave-superoptimize (a low work budget) and cleave-concretize; every candidate that survives both
is compared with its input graph by the
tgraph interpreter in float64 on fresh inputs from distributions the search does not use (uniform,
Laplace, Student-t with 2 degrees of freedom, log-uniform magnitudes with random signs, integers in
[-5, 5], a large positive offset; masks: Bernoulli 0.5, 0.2, 0.8 and causal, drawn here).
A candidate that disagrees on any trial where the input graph's
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
from cleave_ir.passes.equivalence import condition_inputs
from cleave_ir.passes.concretize import ConcretizePass
from cleave_ir.passes.superoptimize import SuperoptimizePass

UNARY = ["exp", "exp2", "log", "sqrt", "rsqrt", "neg", "abs", "tanh", "silu", "sigmoid", "square", "reciprocal"]
GELU = ["erf", "tanh"]
BINARY = ["add", "sub", "mul", "div", "max", "min"]
SCALES = [0.5, -2.0, 0.125, 3.0, -1.0]
# tgraph.scalar (kind, constant): x + c, x - c, c - x, x * c (both signs), x / c, c / x, max, min
SCALARS = [("add", 1.5), ("sub", 0.5), ("rsub", 1.0), ("mul", -2.0), ("mul", 0.25), ("div", 4.0),
           ("rdiv", 1.0), ("max", 0.0), ("min", 1.0)]
REDUCTIONS = ["sum", "max", "mean"]
FILL = 1e4  # masked logits: select(mask, x, mask - FILL), as Llama's causal mask
MASKED_SOFTMAX = 0.12  # share of graphs that are a masked softmax (with or without matmuls, max)
# every op kind the search enumerates, as `op_kinds` names them (the CI slice must meet them all)
OP_KINDS = (
    {"matmul", "scale", "select", "cast", "masked_softmax"} | set(UNARY) | {f"gelu_{a}" for a in GELU}
    | set(BINARY) | {f"scalar_{k}" for k, _ in SCALARS} | {f"reduce_{r}" for r in REDUCTIONS}
    | {"reduce_over_select"}
)


def _masked_softmax(b: GraphBuilder, rng: np.random.Generator, sizes: list[int], new_input, new_mask):
    """softmax(select(mask, logits, mask - FILL)) over the last dim, max-subtracted or max-free,
    logits x or scale(q @ k^T), optionally followed by @ v."""
    m, n, d = sizes[0], sizes[1], sizes[2]
    if rng.random() < 0.5:
        s = b.scale(b.matmul(new_input([m, d]), new_input([n, d]), transpose_b=True), 0.5)
    else:
        s = new_input([m, n])
    mask = new_mask([m, n] if rng.random() < 0.7 else [1, n])
    t = b.elementwise(tgraph.SelectOp, [mask, s, b.scalar("sub", mask, FILL)], tgraph.tensor_type(s))
    if rng.random() < 0.5:
        t = b.sub(t, b.reduce("max", t, 1))
    e = b.exp(t)
    p = b.div(e, b.reduce("sum", e, 1))
    return b.matmul(p, new_input([n, sizes[3]])) if rng.random() < 0.5 else p


def random_graph(index: int, seed: int = 0) -> tgraph.GraphOp:
    """Random valid graph number `index` (deterministic)."""
    rng = np.random.default_rng([seed, index])
    sizes = [int(s) for s in rng.permutation([2, 3, 4, 5, 6, 7])[:4]]
    b = GraphBuilder(f"g{index}", "f32")
    inputs = 0
    masks: list = []

    def new_input(shape: list[int]):
        nonlocal inputs
        inputs += 1
        return b.input(f"x{inputs}", shape)

    def new_mask(shape: list[int]):
        nonlocal inputs
        inputs += 1
        masks.append(b.input(f"mask{inputs}", shape))
        return masks[-1]

    if rng.random() < MASKED_SOFTMAX:
        return b.build(_masked_softmax(b, rng, sizes, new_input, new_mask))
    values = [new_input([sizes[0], sizes[1]])]
    for _ in range(int(rng.integers(2, 7))):
        kind = rng.choice(
            ["matmul", "unary", "binary", "scale", "scalar", "reduce", "select", "cast"],
            p=[0.2, 0.18, 0.22, 0.06, 0.1, 0.13, 0.09, 0.02],
        )
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
            name = str(rng.choice(UNARY + ["gelu"] * 2))
            values.append(b.gelu(v, str(rng.choice(GELU))) if name == "gelu" else b.unary(name, v))
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
        elif kind == "scalar":
            k, c = SCALARS[int(rng.integers(len(SCALARS)))]
            values.append(b.scalar(k, v, c))
        elif kind == "cast":  # through f16 and back: the search keeps both element types apart
            values.append(b.cast(b.cast(v, "f16"), "f32"))
        elif kind == "select":
            fits = [k for k in masks if _broadcastable(shape, list(tgraph.tensor_type(k).shape))]
            if fits and (rng.random() < 0.5 or inputs >= 5):
                mask = fits[int(rng.integers(len(fits)))]
            else:
                mask = new_mask([[m, n], [m, n], [1, n], [m, 1]][int(rng.integers(4))])
            mshape = list(tgraph.tensor_type(mask).shape)
            out_shape = [max(x, y) for x, y in zip(shape, mshape)]
            same = [w for w in values if w is not v and _broadcastable(out_shape, list(tgraph.tensor_type(w).shape))]
            r = rng.random()
            if r < 0.4:
                w = b.scalar("sub", mask, FILL)  # the masked-logits fill
            elif same and (r < 0.7 or inputs >= 5):
                w = same[int(rng.integers(len(same)))]
            else:
                w = new_input([[m, n], [1, 1]][int(rng.integers(2))])
            a, c = (v, w) if rng.random() < 0.75 else (w, v)
            result = tgraph.tensor_type(v).with_shape(
                [max(x, y, z) for x, y, z in zip(mshape, tgraph.tensor_type(a).shape, tgraph.tensor_type(c).shape)]
            )
            values.append(b.elementwise(tgraph.SelectOp, [mask, a, c], result))
        else:
            dims = [d for d in (0, 1) if shape[d] != 1]
            if dims:
                values.append(b.reduce(str(rng.choice(REDUCTIONS)), v, int(rng.choice(dims))))
    return b.build(values[-1])


def _broadcastable(a: list, b: list) -> bool:
    return all(x == y or x == 1 or y == 1 for x, y in zip(a, b))


def op_kinds(graph: tgraph.GraphOp) -> set[str]:
    """The OP_KINDS names of the ops of `graph` (a select is also `masked_softmax` when it feeds
    an exp through at most a max subtraction, `reduce_over_select` when a reduction consumes it)."""
    out: set[str] = set()
    for op in graph.block.ops:
        if isinstance(op, tgraph.MatmulOp):
            out.add("matmul")
        elif isinstance(op, tgraph.ReduceOp):
            out.add(f"reduce_{op.kind.data.value}")
            if isinstance(op.input.owner, tgraph.SelectOp):
                out.add("reduce_over_select")
        elif isinstance(op, tgraph.GeluOp):
            out.add(f"gelu_{op.approximate.data.value}")
        elif isinstance(op, tgraph.ScalarOp):
            out.add(f"scalar_{op.scalar_kind.value}")
        elif isinstance(op, tgraph.SelectOp):
            out.add("select")
            users = {u.operation for u in op.result.uses}
            users |= {u.operation for x in users if isinstance(x, tgraph.SubOp) for u in x.result.uses}
            if any(isinstance(x, tgraph.ExpOp) for x in users):
                out.add("masked_softmax")
        elif isinstance(op, tgraph.OutputOp):
            continue
        else:
            out.add(op.name.split(".")[1])
    return out


# ---------------------------------------------------------------- the independent check
def _independent_mask(rng: np.random.Generator, kind: int, shape: tuple[int, ...]) -> np.ndarray:
    """A 0/1 select condition: Bernoulli(0.5, 0.2, 0.8) or causal (lower-triangular), with a
    nonzero in every row of the last dim where it has more than one element (a fully masked row is
    where exp(x - max) / sum and exp(x) / sum part in float64 by underflow, not in real numbers);
    a mask of one column keeps its zeros (its rows are whole rows of the select) but not all."""
    if kind % 4 == 3 and len(shape) >= 2:
        x = np.broadcast_to(np.tril(np.ones(shape[-2:])), shape).copy()
    else:
        x = (rng.uniform(size=shape) < (0.5, 0.2, 0.8, 0.5)[kind % 4]).astype(np.float64)
    if shape and shape[-1] > 1:
        empty = ~np.any(x != 0, axis=-1)
        x[empty, int(rng.integers(shape[-1]))] = 1.0
    elif x.size and not x.any():
        x.flat[int(rng.integers(x.size))] = 1.0
    return x


def _independent_inputs(graph: tgraph.GraphOp, trial: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng([seed, 7_777_777, trial])
    masks = condition_inputs(graph)
    out = []
    for i, shape in enumerate(input_shapes(graph)):
        kind = trial % 6
        if i in masks:
            x = _independent_mask(rng, trial, shape)
        elif kind == 0:
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
    1e-8 relative to the largest finite reference value (absolute where that is below 1), over
    elements finite in the reference."""
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
        # a reference that is ~0 (x - x, a mean of integers summing to 0) is compared absolutely:
        # rounding leaves ~1e-16 there, which is not a disagreement
        scale = max(float(np.max(np.abs(want[fin]))), 1.0)
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
            SuperoptimizePass(max_ops=min(res.ops + 3, 12), budget=budget, max_candidates=max_candidates).apply(Context(), module)
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
