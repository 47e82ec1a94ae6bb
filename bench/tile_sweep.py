"""Measure a graph's kernels over a grid of tile sizes, pipelining stages and thread counts.

What the cost model would pick next to what the GPU says, to calibrate it:

    python bench/tile_sweep.py prepare --out DIR matmul swiglu_t4096 mha      # CPU: emit the variants
    python bench/tile_sweep.py run DIR [-j 14]                                 # GPU: compile, check, time

A case is an example (`matmul`, `mha`, ...), `swiglu_tN` / `rmsnorm_matmul_tN` (the example with T=N),
or a `.mlir` file holding one graph (e.g. a region of a captured layer; the case is named by its stem).
Attention cases use the best candidate of the algebraic search (FlashAttention); the others their
input graph. Each variant is scheduled with `cleave-schedule`'s plan for one configuration, placed, and
its thread count / stages overridden; `run` prints one table per case (measured us and TFLOP/s,
estimated us, relative error against a float64 reference) sorted by measured time.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"


def _graph(case: str):  # type: ignore[no-untyped-def]
    from xdsl.context import Context

    from cleave_ir.builder import module_of
    from cleave_ir.dialects import tgraph
    from cleave_ir.passes.concretize import ConcretizePass
    from cleave_ir.passes.superoptimize import SuperoptimizePass
    from cleave_ir.passes.symbolize import SymbolizePass
    from cleave_ir.run import load_module
    from xdsl.dialects.builtin import ModuleOp

    if case.endswith(".mlir"):  # a first line naming attention asks for the search's FlashAttention form
        path, text = Path(case), Path(case).read_text()
    else:
        m = re.fullmatch(r"(swiglu|rmsnorm_matmul)_t(\d+)", case)
        name = m.group(1) if m else case
        text = (EXAMPLES / f"{name}.mlir").read_text()
        if m:  # the token count T is the leading dim of X and of the output
            t = m.group(2)
            text = re.sub(r"tensor<\[1, ", f"tensor<[{t}, ", text)
        path = Path("/tmp") / f"tile_sweep_{case}.mlir"
        path.write_text(text)
    graph = load_module(str(path)).body.block.first_op
    if isinstance(graph, ModuleOp):  # a module holding the graph
        graph = graph.body.block.first_op
    assert isinstance(graph, tgraph.GraphOp), f"{case}: the first op is not a tgraph.graph"
    if "attention" not in text.splitlines()[0].lower():
        return graph
    module = module_of(graph.clone())
    for p in (SymbolizePass(), SuperoptimizePass(), ConcretizePass(split_counts=(2,), max_check_gb=0.25)):
        p.apply(Context(), module)
    cands = [g for g in module.body.block.ops if isinstance(g, tgraph.GraphOp) and "cleave.split_count" not in g.attributes and "cleave.candidate_of" in g.attributes]
    return cands[0] if cands else graph


def _flops(graph) -> int:  # type: ignore[no-untyped-def]
    import math

    from cleave_ir.dialects import tgraph

    total = 0
    for op in graph.block.ops:
        if isinstance(op, tgraph.MatmulOp):
            k = int(tgraph.tensor_type(op.lhs).shape[-1])
            total += 2 * k * math.prod(int(d) for d in tgraph.tensor_type(op.result).shape)
    return total


def prepare(cases: list[str], out: Path, min_tile: int = 64, stage_options: tuple[int, ...] = (1, 2, 3), thread_options: tuple[int, ...] = (128, 256), reduce_options: tuple[int | None, ...] = (32, 64, 128)) -> None:
    """Emit one TileLang module per case with every fitting variant; write sweep.json."""
    from xdsl.dialects.builtin import FloatAttr, IntegerAttr, ModuleOp, StringAttr, SymbolRefAttr, f64, i64

    from cleave_ir.dialects import itgraph
    from cleave_ir.passes import cost_model
    from cleave_ir.passes.place_memory import place
    from cleave_ir.passes.schedule import build_kernel, configs, plan
    from cleave_ir.passes.tmap_propagation import Unschedulable
    from cleave_ir.tilelang_emitter import module_source

    out.mkdir(parents=True, exist_ok=True)
    manifest: dict[str, Any] = json.loads((out / "sweep.json").read_text()) if (out / "sweep.json").exists() else {}
    for path in cases:
        graph = _graph(path)
        case = Path(path).stem if path.endswith(".mlir") else path
        name = graph.sym_name.data
        kernels, rows = [], []
        for cfg in configs(graph):
            if cfg.reduce_tile not in reduce_options or min(t for t in cfg.out_tile if t > 1) < min_tile:
                continue
            try:
                base = build_kernel(plan(graph, cfg), "k")
            except Unschedulable:
                continue
            est = cost_model.estimate(base)
            if not est.fits and "registers" not in est.reason:  # the register bound is loose: let TileLang decide
                continue
            for stages, threads in itertools.product(stage_options, thread_options):
                kernel = base.clone()
                try:
                    place(kernel)
                except Exception:
                    continue
                loads = [op for op in kernel.walk() if isinstance(op, itgraph.LoadOp)]
                in_loop = sum(cost_model.tile_bytes(op.result) for op in loads if isinstance(op.parent_op(), itgraph.SequentialOp))
                if sum(cost_model.tile_bytes(op.result) for op in loads) + (stages - 1) * in_loop > cost_model.SMEM_BYTES:
                    continue
                kname = f"{name}_{len(kernels)}"
                kernel.sym_name = StringAttr(kname)
                kernel.attributes["cleave.schedule_of"] = SymbolRefAttr(name)
                kernel.attributes["cleave.tiles"] = cfg.attr()
                kernel.attributes["cleave.estimated_us"] = FloatAttr(round(est.microseconds, 3), f64)
                kernel.attributes["cleave.stages"] = IntegerAttr(stages, i64)
                kernel.attributes["cleave.threads"] = IntegerAttr(threads, i64)
                kernels.append(kernel)
                rows.append({"kernel": kname, "tiles": cfg.describe(), "stages": stages, "threads": threads, "estimated_us": round(est.microseconds, 3), "fits_model": est.fits})
        module = ModuleOp([graph.clone(), *kernels])
        (out / f"{case}.py").write_text(module_source(module))
        manifest[case] = {"graph": str(graph), "flops": _flops(graph), "variants": rows}
        print(f"{case}: {len(rows)} variants", file=sys.stderr)
    (out / "sweep.json").write_text(json.dumps(manifest, indent=1))


def run(directory: Path, jobs: int, top: int, out: Path | None = None) -> None:
    """Compile, check and time every variant (GPU); print one table per case as soon as it is done
    (and, with `out`, write every measurement there after each case)."""
    import torch

    from cleave_ir import runtime
    from cleave_ir.run import make_context
    from cleave_ir.tilelang_check import load_module_file
    from xdsl.parser import Parser

    manifest = json.loads((directory / "sweep.json").read_text())
    print(f"GPU: {torch.cuda.get_device_name()}; tile sweep of {directory}", flush=True)
    everything: dict[str, Any] = {}
    for case, entry in manifest.items():
        mod = load_module_file(directory / f"{case}.py")
        graph = Parser(make_context(), entry["graph"]).parse_module().body.block.first_op
        xs = runtime.random_inputs(graph)
        (ref,) = runtime.torch_reference(graph, xs)
        names = [r["kernel"] for r in entry["variants"]]
        compiled = runtime.compile_candidates(mod, names, jobs)
        results = []
        for r in entry["variants"]:
            k = compiled[r["kernel"]]
            if isinstance(k, BaseException):
                results.append({**r, "error": runtime.one_line(k)})
                continue
            try:
                got = k(*xs)
                err = runtime.check(got if torch.is_tensor(got) else got[0], ref)
                us = runtime.time_us(lambda: k(*xs), batch=20, iters=10)
                results.append({**r, "us": us, "err": err})
            except Exception as e:
                results.append({**r, "error": runtime.one_line(e)})
        results.sort(key=lambda r: r.get("us", float("inf")))
        est_best = min((r for r in results if "us" in r), key=lambda r: (r["estimated_us"], names.index(r["kernel"])), default=None)
        print(f"\n### {case} ({len(results)} variants; the cost model's pick is marked *)\n")
        print("| tiles | stages | threads | measured us | TFLOP/s | estimated us | rel. error |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
        for r in results[:top] + ([est_best] if est_best is not None and est_best not in results[:top] else []):
            mark = " *" if r is est_best else ""
            if "us" in r:
                print(f"| {r['tiles']}{mark} | {r['stages']} | {r['threads']} | {r['us']:.1f} | {entry['flops'] / r['us'] / 1e6:.0f} | {r['estimated_us']} | {r['err']:.1e} |")
            else:
                print(f"| {r['tiles']}{mark} | {r['stages']} | {r['threads']} | failed: {r['error'][:70]} | | {r['estimated_us']} | |")
        failed = sum(1 for r in results if "error" in r)
        print(f"\n{failed} of {len(results)} variants failed to compile or run", flush=True)
        everything[case] = results
        if out is not None:
            out.write_text(json.dumps(everything, indent=1))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("prepare")
    a.add_argument("cases", nargs="+")
    a.add_argument("--out", type=Path, required=True)
    a.add_argument("--min-tile", type=int, default=64, help="smallest output tile (default 64)")
    a.add_argument("--stages", default="1,2,3", help="pipelining stages to try (default 1,2,3)")
    a.add_argument("--threads", default="128,256", help="threads per block to try (default 128,256)")
    a.add_argument("--reduce", default="32,64,128", help="reduction tiles to try, `none` for the whole reduced dim (default 32,64,128)")
    b = sub.add_parser("run")
    b.add_argument("dir", type=Path)
    b.add_argument("-j", "--jobs", type=int, default=8)
    b.add_argument("--top", type=int, default=8, help="rows per table (the cost model's pick is always shown)")
    b.add_argument("--out", type=Path, help="write the measurements (JSON) here after every case")
    args = p.parse_args(argv)
    if args.cmd == "prepare":
        stages, threads = (tuple(int(x) for x in v.split(",")) for v in (args.stages, args.threads))
        reduce = tuple(None if x == "none" else int(x) for x in args.reduce.split(","))
        prepare(args.cases, args.out, args.min_tile, stages, threads, reduce)
    else:
        import torch

        if not torch.cuda.is_available():
            print("error: tile_sweep run: no CUDA GPU on this machine", file=sys.stderr)
            return 1
        run(args.dir, args.jobs, args.top, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
