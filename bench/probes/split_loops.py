"""Probe (GPU): do Split-K kernels of few-row projections want a pipelined K loop?

The schedule gives every Split-K kernel of a few-row projection its whole K chunk as one tile
(`reduce=none`): one load, no pipelining. The tuner's neighbourhood keeps that (`tune._near` pairs a
loop only with a loop). This probe measures, for each kept Split-K candidate of a graph, its split
kernel over output tiles of 16..256 columns, no loop or a loop of 64/128-wide K tiles, and 2..4
stages (128 threads), the combine kernel as the pipeline chose it; every variant is checked
against float64 before it is timed (`cleave_ir.tune`'s workers):

    bash bench/on_device.sh python bench/probes/split_loops.py bench/probes/unseen/rmsnorm_matmul_t5_n3000.mlir --out $OUT/t5.json

Results: bench/results/split_loops_<date>_H200.md.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from cleave_ir import tune
from cleave_ir.compile import compile_graph
from cleave_ir.diagnostics import parse_module_text
from cleave_ir.dialects import tgraph
from cleave_ir.run import make_context


def wide_near(a: tune.Config, b: tune.Config) -> bool:
    """Any loop or none, the same rows, 32..256 columns."""
    if len(a.out_tile) != len(b.out_tile) or a.fusion != b.fusion:
        return False
    return a.out_tile[:-1] == b.out_tile[:-1] and 32 <= a.out_tile[-1] <= 256


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("graph")
    p.add_argument("--out", required=True)
    p.add_argument("--budget", type=float, default=200.0)
    p.add_argument("-j", "--jobs", type=int, default=15)
    p.add_argument("--dry", action="store_true", help="list the variants only (CPU)")
    args = p.parse_args()
    text = Path(args.graph).read_text()
    graph = next(g for g in parse_module_text(make_context(), text, args.graph).body.block.ops if isinstance(g, tgraph.GraphOp))
    with tempfile.TemporaryDirectory() as d:
        job = compile_graph(graph, Path(d) / "k.py", ["--keep", "12", "--no-cache"], out=sys.stderr)
        module = job.pipeline
        tune._near = wide_near  # type: ignore[assignment]
        space = tune.neighbourhood(module, 10_000)
        keep = []
        for v in space.variants:
            if "_split" not in v.head:
                continue
            split = v.choices[0]
            rest_base = all(c == b for c, b in zip(v.choices[1:], _base(space, v)[1:]))
            red = split.config.reduce_tile
            if split.threads == 128 and rest_base and red in (None, 128) and split.stages in ((1,) if red is None else (2, 4)):
                keep.append(v)
        for i, v in enumerate(keep):
            v.index = i
        space.variants = keep
        print(f"split_loops: {len(keep)} variants", file=sys.stderr, flush=True)
        if args.dry:
            for v in keep:
                print(v.head, v.describe(), round(v.estimated_us, 2))
            return 0
        t0 = time.time()
        paths, results = tune.emit_variants(space, Path(d) / "variants", t0 + args.budget)
        todo = [{"index": i, "path": str(p)} for i, p in sorted(paths.items())]
        results.update(tune.run_isolated(todo, str(job.source), Path(d), t0 + args.budget, jobs=args.jobs))
        rows = []
        for v in keep:
            r = results.get(v.index)
            rows.append({"candidate": v.head, "variant": v.describe(), "est_us": round(v.estimated_us, 2),
                         "us": None if r is None else r.us, "status": None if r is None else r.status,
                         "error": None if r is None else r.error, "reason": "" if r is None else r.reason[:200]})
    rows.sort(key=lambda r: (r["us"] is None, r["us"] or 0))
    Path(args.out).write_text(json.dumps({"graph": args.graph, "rows": rows}, indent=1))
    for r in rows[:40]:
        print(f"{r['candidate']:32s} {r['variant']:70s} est {r['est_us']:7.2f}  {r['us'] if r['us'] is None else round(r['us'], 2)}  {r['status']} {r['reason'][:60]}")
    return 0


def _base(space: tune.Space, v: tune.Variant) -> list[tune.Choice]:
    return next(b.choices for b in space.variants if b.base and b.head == v.head)


if __name__ == "__main__":
    sys.exit(main())
