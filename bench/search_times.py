"""Algebraic-search times: symbolize + superoptimize on every example; prints a markdown table.

    python bench/search_times.py [--max-ops 7] [--time-limit 60] [examples/*.mlir ...]

cleave-concretize and cleave-partition-split-k are not built yet, so only the superoptimizer is timed.
"""

from __future__ import annotations

import argparse
import glob
import platform
import time

from cleave_ir.passes.superoptimize import superoptimize_graph
from cleave_ir.passes.symbolize import symbolize
from cleave_ir.run import load_module
from cleave_ir.dialects import tgraph


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("files", nargs="*")
    p.add_argument("--max-ops", type=int, default=7)
    p.add_argument("--time-limit", type=float, default=60.0)
    args = p.parse_args()
    files = args.files or sorted(glob.glob("examples/*.mlir"))
    print(f"max-ops={args.max_ops} time-limit={args.time_limit}s, {platform.processor() or platform.machine()}, "
          f"{time.strftime('%Y-%m-%d')}")
    print("| example | explored | pruned | classes | candidates | seconds | candidates' notes |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
    for f in files:
        module = load_module(f)
        for g in [op for op in module.walk() if isinstance(op, tgraph.GraphOp)]:
            symbolize(g)
            t0 = time.monotonic()
            cands, st = superoptimize_graph(g, max_ops=args.max_ops, time_limit=args.time_limit)
            dt = time.monotonic() - t0
            notes = "; ".join(c.note for c in cands) or "-"
            stop = " (limit)" if st.stopped_by_time else ""
            print(f"| {g.sym_name.data} | {st.explored} | {st.pruned} | {st.classes} | {len(cands)} | "
                  f"{dt:.1f}{stop} | {notes} |", flush=True)


if __name__ == "__main__":
    main()
