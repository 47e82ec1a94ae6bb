"""Probe (GPU): do pipelined loops of one-wave grids want more stages than placement gives them?

`cleave-place-memory` gives a K loop 2 or 3 stages, and 4 only where that keeps as many blocks per SM.
A grid of fewer blocks than SMs (decode projections, an LM head's GEMV, decode attention's split
kernels) has one block per SM whatever the stages; its loads' latency is hidden only by the bytes a
block keeps in flight. This probe compiles each graph (`--keep 3`), and for every kept candidate
times the pipeline's configuration with the stages of one looped kernel changed to 1..8 (where the
shared memory holds them), the tiles and threads as the pipeline chose; every variant is checked
against float64 before it is timed (`cleave_ir.tune`'s workers):

    bash bench/on_device.sh python bench/probes/deep_stages.py GRAPH.mlir ... --out $OUT/deep_stages.json

`--ws` also times each variant that the lowering compiles without TileLang's warp specialization
with it (a probe only: such kernels may race); `--dry` lists the variants on the CPU.
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

DEEP = (1, 2, 3, 4, 5, 6, 8)
NO_WS = "'tl.disable_warp_specialized': True"
WS_OFFSET = 100_000


def same_tiles(a: tune.Config, b: tune.Config) -> bool:
    return a == b


def stage_variants(space: tune.Space) -> list[tune.Variant]:
    """Each candidate's base, and the variants that change only one kernel's stages."""
    bases = {v.head: v for v in space.variants if v.base}
    keep = []
    for v in space.variants:
        base = bases.get(v.head)
        if base is None or len(v.choices) != len(base.choices):
            continue
        diff = [(c, b) for c, b in zip(v.choices, base.choices) if c != b]
        if v.base or (len(diff) == 1 and diff[0][0].threads == diff[0][1].threads and diff[0][0].config == diff[0][1].config):
            keep.append(v)
    return keep


def probe(path: str, budget: float, jobs: int, dry: bool, ws: bool) -> list[dict]:
    text = Path(path).read_text()
    graph = next(g for g in parse_module_text(make_context(), text, path).body.block.ops if isinstance(g, tgraph.GraphOp))
    with tempfile.TemporaryDirectory() as d:
        job = compile_graph(graph, Path(d) / "k.py", ["--keep", "3", "--no-cache"], out=sys.stderr)
        tune._near = same_tiles  # type: ignore[assignment]
        tune.STAGES = DEEP  # type: ignore[assignment]
        space = tune.neighbourhood(job.pipeline, 10_000)
        keep = stage_variants(space)
        for i, v in enumerate(keep):
            v.index = i
        space.variants = keep
        print(f"deep_stages: {path}: {len(keep)} variants", file=sys.stderr, flush=True)
        if dry:
            for v in keep:
                print(v.head, v.describe(), round(v.estimated_us, 2), "base" if v.base else "")
            return []
        t0 = time.time()
        paths, results = tune.emit_variants(space, Path(d) / "variants", t0 + budget)
        todo = [{"index": i, "path": str(p)} for i, p in sorted(paths.items())]
        if ws:  # the same module with TileLang's warp specialization where the lowering turned it off
            for i, p in sorted(paths.items()):
                src = Path(p).read_text()
                if NO_WS in src:
                    q = Path(p).with_name(Path(p).stem + "_ws.py")
                    q.write_text(src.replace(NO_WS, ""))
                    todo.append({"index": WS_OFFSET + i, "path": str(q)})
        results.update(tune.run_isolated(todo, str(job.source), Path(d), t0 + budget, jobs=jobs))
    rows = []
    for v in keep:
        for index, tag in ((v.index, ""), (WS_OFFSET + v.index, " ws")):
            r = results.get(index)
            if tag and r is None:
                continue
            rows.append({"graph": path, "candidate": v.head, "variant": v.describe() + tag, "base": v.base,
                         "est_us": round(v.estimated_us, 2), "us": None if r is None else r.us,
                         "status": None if r is None else r.status, "error": None if r is None else r.error,
                         "reason": "" if r is None else r.reason[:200]})
    return rows


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("graphs", nargs="+")
    p.add_argument("--out", required=True)
    p.add_argument("--budget", type=float, default=60.0, help="seconds per graph")
    p.add_argument("-j", "--jobs", type=int, default=15)
    p.add_argument("--ws", action="store_true", help="also each variant the lowering compiles without warp specialization, with it")
    p.add_argument("--dry", action="store_true", help="list the variants only (CPU)")
    args = p.parse_args()
    rows: list[dict] = []
    for g in args.graphs:
        try:
            rows += probe(g, args.budget, args.jobs, args.dry, args.ws)
        except Exception as e:  # noqa: BLE001 - one graph's failure does not lose the others
            print(f"deep_stages: {g}: {type(e).__name__}: {e}", file=sys.stderr)
        Path(args.out).write_text(json.dumps(rows, indent=1))
    for r in rows:
        us = "-" if r["us"] is None else f"{r['us']:.2f}"
        print(f"{Path(r['graph']).stem:28s} {r['candidate']:36s} {r['variant'][:90]:90s} {'base' if r['base'] else '    '} est {r['est_us']:8.2f} {us:>9s} {r['status']} {r['reason'][:50]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
