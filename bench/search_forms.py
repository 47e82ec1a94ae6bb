"""What the algebraic search finds on every example and probe, to compare two versions of the search.

    python bench/search_forms.py record OUT.json [FILES ...]        (default: examples, bench/probes, unseen probes)
    python bench/search_forms.py compare BEFORE.json AFTER.json      (a markdown table on stdout)

`record` runs `superoptimize_graph(graph, max_ops=12)` (default budget, seed 0) on each graph and stores
its CPU seconds, the search's summary line, and the candidates' notes and canonical forms. `compare`
says, per graph, whether the two runs found the same candidates (canonical forms) and the CPU time of
each: a pruning rule should change the times, not the candidates.
"""

from __future__ import annotations

import argparse
import glob
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT = ["examples/*.mlir", "bench/probes/unseen/*.mlir", "bench/probes/*.mlir"]


def record(out: Path, files: list[str]) -> None:
    from cleave_ir.diagnostics import CleaveError
    from cleave_ir.dialects import tgraph
    from cleave_ir.passes.superoptimize import canonical_form, superoptimize_graph
    from cleave_ir.run import load_module

    paths = [p for pattern in (files or [str(REPO / d) for d in DEFAULT]) for p in sorted(glob.glob(pattern))]
    results: dict[str, dict] = {}
    for path in paths:
        for graph in [op for op in load_module(path).walk() if isinstance(op, tgraph.GraphOp)]:
            t = time.process_time()
            key = f"{Path(path).name}:{graph.sym_name.data}"
            try:
                cands, stats = superoptimize_graph(graph, max_ops=12)
            except CleaveError as e:  # a graph the search does not take (several outputs, a concat)
                results[key] = {"error": str(e)}
                continue
            except Exception as e:  # noqa: BLE001 - an older search's crash is recorded, the run goes on
                results[key] = {"error": f"{type(e).__name__}: {e}"}
                continue
            results[key] = {
                "cpu_s": round(time.process_time() - t, 2), "line": stats.line(), "budget_reached": stats.stopped_by_budget,
                "notes": [c.note for c in cands], "forms": sorted(str(canonical_form(c.graph)) for c in cands),
            }
            print(f"{key}: {results[key]['cpu_s']} s, {len(cands)} candidates", file=sys.stderr, flush=True)
            out.write_text(json.dumps(results, indent=1))  # after every graph: a run cut short keeps its rows
    out.write_text(json.dumps(results, indent=1))


def compare(before: Path, after: Path) -> None:
    a, b = json.loads(before.read_text()), json.loads(after.read_text())
    keys = [k for k in a if k in b and "error" not in a[k] and "error" not in b[k]]
    same = sum(a[k]["forms"] == b[k]["forms"] for k in keys)
    print(f"{len(keys)} graphs, the same candidates (canonical forms) on {same}; CPU seconds in all: "
          f"{sum(a[k]['cpu_s'] for k in keys):.0f} before, {sum(b[k]['cpu_s'] for k in keys):.0f} after\n")
    print("| graph | CPU s before | after | candidates before | after | same forms | work budget reached before | after |")
    print("| --- | ---: | ---: | ---: | ---: | --- | --- | --- |")
    for k in sorted(keys, key=lambda k: -a[k]["cpu_s"]):
        x, y = a[k], b[k]
        print(f"| {k} | {x['cpu_s']} | {y['cpu_s']} | {len(x['forms'])} | {len(y['forms'])} | "
              f"{'yes' if x['forms'] == y['forms'] else '**no**'} | {'yes' if x['budget_reached'] else ''} | {'yes' if y['budget_reached'] else ''} |")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("record")
    r.add_argument("out", type=Path)
    r.add_argument("files", nargs="*")
    c = sub.add_parser("compare")
    c.add_argument("before", type=Path)
    c.add_argument("after", type=Path)
    args = p.parse_args()
    if args.command == "record":
        record(args.out, args.files)
    else:
        compare(args.before, args.after)
    return 0


if __name__ == "__main__":
    sys.exit(main())
