"""Algebraic-search times on every example: symbolize + superoptimize + concretize + partition-split-k.

    python bench/search_times.py [--max-ops 12] [--budget N] [--time-limit 600] [examples/*.mlir ...]

Prints a markdown table: terms explored, pruned, classes, candidates found by the search, concrete
graphs after concretize (one per split count, each re-checked at the original shapes), kernels after
the Split-K partition, and the seconds of each pass.
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import io
import platform
import time

from xdsl.context import Context

from cleave_ir.dialects import tgraph
from cleave_ir.passes.concretize import ConcretizePass
from cleave_ir.passes.partition_split_k import PartitionSplitKPass
from cleave_ir.passes.superoptimize import DEFAULT_BUDGET, SuperoptimizePass, superoptimize_graph
from cleave_ir.passes.symbolize import symbolize
from cleave_ir.run import load_module


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("files", nargs="*")
    p.add_argument("--max-ops", type=int, default=12)
    p.add_argument("--budget", type=int, default=DEFAULT_BUDGET, help="search work budget (constructions)")
    p.add_argument("--time-limit", type=float, default=600.0, help="safety net only")
    args = p.parse_args()
    files = args.files or sorted(glob.glob("examples/*.mlir"))
    print(f"max-ops={args.max_ops}, budget={args.budget}, time-limit={args.time_limit} s, {platform.machine()}, "
          f"{time.strftime('%Y-%m-%d')}, command: python bench/search_times.py --max-ops {args.max_ops} --budget {args.budget}")
    print()
    print("| example | explored | pruned | classes | candidates | superoptimize s | concrete graphs | concretize s | graphs after partition | partition s | total s |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for f in files:
        module = load_module(f)
        graph = next(op for op in module.walk() if isinstance(op, tgraph.GraphOp))
        symbolize(graph)
        t0 = time.monotonic()
        # the pass itself (what cleave-opt runs), plus the stats of the same search
        _, st = superoptimize_graph(graph.clone(), max_ops=args.max_ops, time_limit=args.time_limit, budget=args.budget)
        with contextlib.redirect_stderr(io.StringIO()):
            t0 = time.monotonic()
            SuperoptimizePass(max_ops=args.max_ops, time_limit=args.time_limit, budget=args.budget).apply(Context(), module)
            t1 = time.monotonic()
            ConcretizePass().apply(Context(), module)
            t2 = time.monotonic()
            n_concrete = sum(isinstance(op, tgraph.GraphOp) for op in module.body.block.ops) - 1
            PartitionSplitKPass().apply(Context(), module)
            t3 = time.monotonic()
        n_after = sum(isinstance(op, tgraph.GraphOp) for op in module.body.block.ops) - 1
        limit = " (time limit)" if st.stopped_by_time else " (budget)" if st.stopped_by_budget else ""
        print(f"| {graph.sym_name.data} | {st.explored} | {st.pruned} | {st.classes} | {st.candidates} | "
              f"{t1 - t0:.1f}{limit} | {n_concrete} | {t2 - t1:.1f} | {n_after} | {t3 - t2:.2f} | {t3 - t0:.1f} |",
              flush=True)


if __name__ == "__main__":
    main()
