"""Scheduling times: cleave-schedule on every example's concrete candidates; prints a markdown table.

    python bench/schedule_times.py [--top-k 3] [examples/*.mlir ...]

The candidates come from superoptimize + concretize (split counts 4 and 16) + partition-split-k, as in
the pipeline; only cleave-schedule is timed. "best" is the lowest estimated time over all candidates,
a Split-K candidate costing its split plus its combine kernel (cost-model estimates, not measurements:
the model ignores L2 reuse, so absolute numbers are pessimistic for attention).
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import io
import platform
import time

from xdsl.context import Context

from cleave_ir.dialects import cleave, itgraph, tgraph
from cleave_ir.passes.concretize import ConcretizePass
from cleave_ir.passes.partition_split_k import PartitionSplitKPass
from cleave_ir.passes.pipeline import rank_candidates
from cleave_ir.passes.schedule import SchedulePass
from cleave_ir.passes.superoptimize import SuperoptimizePass
from cleave_ir.run import load_module


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("files", nargs="*")
    p.add_argument("--top-k", type=int, default=3)
    args = p.parse_args()
    files = args.files or sorted(glob.glob("examples/*.mlir"))
    print(f"top-k={args.top_k}, {platform.machine()}, {time.strftime('%Y-%m-%d')}, "
          f"command: python bench/schedule_times.py --top-k {args.top_k}")
    print()
    print("| example | graphs scheduled | kernels | schedule s | input graph: best config, est. us | best candidate: graph, config, est. us |")
    print("| --- | ---: | ---: | ---: | --- | --- |")
    for f in files:
        module = load_module(f)
        name = next(op for op in module.walk() if isinstance(op, tgraph.GraphOp)).sym_name.data
        with contextlib.redirect_stderr(io.StringIO()):
            for pass_ in (SuperoptimizePass(), ConcretizePass(split_counts=(4, 16)), PartitionSplitKPass()):
                pass_.apply(Context(), module)
            n_graphs = sum(isinstance(op, tgraph.GraphOp) for op in module.body.block.ops)
            t0 = time.monotonic()
            SchedulePass(top_k=args.top_k).apply(Context(), module)
            dt = time.monotonic() - t0
        kernels = [op for op in module.body.block.ops if isinstance(op, itgraph.KernelOp)]

        ranked = rank_candidates(module)
        units = {g.removesuffix("_split"): (us, ks) for us, ks, g in ranked}
        tiles = {k.sym_name.data: t.describe() for k in kernels if (t := cleave.tiles(k)) is not None}

        def describe(ks: list[str]) -> str:
            return tiles[ks[0]] + (" + combine" if len(ks) > 1 else "")

        own_text = "does not fit (softmax rows whole)"
        if name in units:
            own_text = f"{describe(units[name][1])}, {units[name][0]:.1f}"
        bname = min(units, key=lambda n: units[n][0])
        print(f"| {name} | {n_graphs} | {len(kernels)} | {dt:.1f} | {own_text} | "
              f"{bname}, {describe(units[bname][1])}, {units[bname][0]:.1f} |", flush=True)


if __name__ == "__main__":
    main()
