"""`cleave compile FILE [--gpu]`: the whole job for a user, with a report.

Search, schedule, place and emit (`cleave-pipeline -t tilelang`), then lower every kernel for sm_90a.
With `--gpu`, every kept candidate is also compiled, checked against a float64 reference of the
input graph (computed with torch on the GPU, outputs poisoned before the call), timed (CUDA-graph
replays), and the fastest correct one is reported as the winner. Without a GPU it stops after
emission and says so.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from xdsl.context import Context

from cleave_ir.diagnostics import CleaveError
from cleave_ir.dialects import tgraph
from cleave_ir.passes.pipeline import PipelinePass
from cleave_ir.run import load_module
from cleave_ir.tilelang_check import load_module_file, lower_all
from cleave_ir.tilelang_emitter import module_source


def torch_reference(graph: tgraph.GraphOp, inputs):  # type: ignore[no-untyped-def]
    """Evaluate a concrete tgraph graph with torch in float64 (on the inputs' device)."""
    import torch

    env = {a: x.double() for a, x in zip(graph.inputs, inputs)}
    unary = {
        "exp": torch.exp, "sqrt": torch.sqrt, "rsqrt": torch.rsqrt, "neg": torch.neg,
        "silu": torch.nn.functional.silu, "sigmoid": torch.sigmoid, "square": torch.square,
        "reciprocal": torch.reciprocal,
    }
    binary = {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div, "max": torch.maximum}
    for op in graph.block.ops:
        if isinstance(op, tgraph.OutputOp):
            return [env[o] for o in op.outputs]
        xs = [env[o] for o in op.operands]
        kind = op.name.split(".")[1]
        if isinstance(op, tgraph.MatmulOp):
            y = torch.matmul(xs[0], xs[1].transpose(-1, -2) if op.transpose_b is not None else xs[1])
        elif kind in unary:
            y = unary[kind](xs[0])
        elif kind in binary:
            y = binary[kind](xs[0], xs[1])
        elif isinstance(op, tgraph.ScaleOp):
            y = xs[0] * op.value
        elif isinstance(op, tgraph.ReduceOp):
            y = xs[0].sum(op.axis, keepdim=True) if op.kind.data == tgraph.ReduceKind.SUM else xs[0].amax(op.axis, keepdim=True)
        elif isinstance(op, tgraph.ReshapeOp):
            y = xs[0].reshape([int(d) for d in tgraph.tensor_type(op.result).shape])
        elif isinstance(op, tgraph.SplitOp):
            parts = int(tgraph.tensor_type(op.result).shape[0])
            x, ax = xs[0], op.axis
            y = x.reshape(*x.shape[:ax], parts, x.shape[ax] // parts, *x.shape[ax + 1 :]).movedim(ax, 0)
        else:
            raise CleaveError(f"error: no torch reference for {op.name}")
        env[op.results[0]] = y
    raise CleaveError("error: graph without tgraph.output")


def _time_us(fn, batch: int = 50, iters: int = 20) -> float:  # type: ignore[no-untyped-def]
    import torch

    fn()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        fn()
    torch.cuda.current_stream().wait_stream(s)
    with torch.cuda.graph(graph):
        for _ in range(batch):
            fn()
    graph.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        graph.replay()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b) * 1e3 / batch)
    return statistics.median(times)


def measure(module_path: Path, graph: tgraph.GraphOp, out=sys.stdout) -> int | None:
    """Compile, check and time every candidate on the GPU; print a table; return the winner's index."""
    import torch

    mod = load_module_file(module_path)
    gen = torch.Generator(device="cuda").manual_seed(0)
    shapes = [[int(d) for d in tgraph.tensor_type(a).shape] for a in graph.inputs]
    xs = [torch.randn(s, generator=gen, device="cuda", dtype=torch.float16) * 0.5 for s in shapes]
    (ref,) = torch_reference(graph, xs)
    print("| # | candidate | estimated us | compile s | measured us | rel. error |", file=out)
    print("| ---: | --- | ---: | ---: | ---: | --- |", file=out)
    best: tuple[float, int] | None = None
    for i, (est, kernels, name) in enumerate(mod.CANDIDATES):
        t0 = time.perf_counter()
        try:
            for k in kernels:
                mod.compile_kernel(k)
        except Exception as e:
            print(f"| {i} | {name} | {est} | compile failed: {str(e).splitlines()[-1][:60]} | | |", file=out)
            continue
        compile_s = time.perf_counter() - t0
        result = mod.run(*xs, candidate=i)
        torch.cuda.synchronize()
        got = result if torch.is_tensor(result) else result[0]
        err = ((got.double().reshape(ref.shape) - ref).abs().max() / ref.abs().max()).item()
        us = _time_us(lambda: mod.run(*xs, candidate=i))
        ok = err < 1e-2
        print(f"| {i} | {name} ({len(kernels)} kernels) | {est} | {compile_s:.1f} | {us:.1f} | {err:.2e} {'ok' if ok else 'WRONG'} |", file=out)
        if ok and (best is None or us < best[0]):
            best = (us, i)
    return None if best is None else best[1]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `cleave`."""
    p = argparse.ArgumentParser(prog="cleave", description="Cleave-IR: optimize a tgraph subgraph into TileLang kernels")
    sub = p.add_subparsers(dest="command", required=True)
    c = sub.add_parser("compile", help="search, schedule, emit and lower; with --gpu also compile, check and time")
    c.add_argument("file")
    c.add_argument("-o", "--output", default="kernel.py")
    c.add_argument("--gpu", action="store_true", help="compile, verify and time the candidates on a CUDA GPU")
    c.add_argument("--keep", type=int, default=3, help="candidates to keep and emit (default 3)")
    c.add_argument("--max-ops", type=int, default=12)
    args = p.parse_args(argv)
    t0 = time.perf_counter()
    try:
        module = load_module(args.file)
        graphs = [g for g in module.body.block.ops if isinstance(g, tgraph.GraphOp)]
        if len(graphs) != 1:
            raise CleaveError(f"error: {args.file}: cleave compile takes one tgraph.graph, found {len(graphs)}")
        source = graphs[0].clone()
        log = io.StringIO()
        with contextlib.redirect_stderr(log):
            PipelinePass(max_ops=args.max_ops, keep=args.keep).apply(Context(), module)
        for line in log.getvalue().splitlines():
            if line.startswith(("cleave-superoptimize", "cleave-pipeline")):
                print(line)
        Path(args.output).write_text(module_source(module))
        print(f"kernel module written to {args.output} ({time.perf_counter() - t0:.1f} s)")
        lowered = lower_all(args.output)
        print(f"{len(lowered)} kernels lower to CUDA for sm_90a")
        if not args.gpu:
            return 0
        import torch

        if not torch.cuda.is_available():
            print(
                f"error: --gpu: no CUDA GPU on this machine; stopped after emission ({args.output} is written and lowers for sm_90a)",
                file=sys.stderr,
            )
            return 1
        winner = measure(Path(args.output), source)
        if winner is None:
            print("error: no candidate ran correctly on the GPU", file=sys.stderr)
            return 1
        print(f"winner: candidate #{winner} (run(*tensors, candidate={winner}) in {args.output}); total {time.perf_counter() - t0:.1f} s")
        return 0
    except CleaveError as e:
        print(str(e), file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
