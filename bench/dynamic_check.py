"""One compiled kernel, many sizes: the dynamic-shape kernels on the GPU (paper §6.3).

    python bench/dynamic_check.py prepare --out DIR        # CPU: emit the examples with dynamic dims
    python bench/dynamic_check.py run DIR                   # GPU: compile once, check and time at many sizes

For every example that declares a dynamic dim (decode attention's sequence length L, the token
count T of rmsnorm_matmul and swiglu), the best candidate of `cleave-pipeline` is compiled once;
then, for sizes that are and are not multiples of the kernel's tiles, the graph is instantiated at
that size, the kernels run on random inputs with their outputs poisoned (NaN), and the result is
checked against a float64 reference and timed.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"
# example -> (the representative size in the example's text, sizes to run at)
CASES = {
    "gqa_decode": (4096, [4096, 1, 77, 1000, 5000, 32768]),
    "mha_decode": (8192, [8192, 100, 3000, 16384]),
    "rmsnorm_matmul": (1, [1, 3, 16, 100, 1024]),
    "swiglu": (1, [1, 5, 16, 128]),
}


def graph_at(name: str, n: int):  # type: ignore[no-untyped-def]
    """The example's graph with its dynamic dim set to `n`."""
    from cleave_ir.run import load_module, resize_graph

    rep, _ = CASES[name]
    text = (EXAMPLES / f"{name}.mlir").read_text()
    if rep == 1:  # the token count: the leading dim of X and of the output
        text = re.sub(r"tensor<\[1, ", f"tensor<[{n}, ", text)
    path = Path("/tmp") / f"dynamic_check_{name}_{n}.mlir"
    path.write_text(text)
    graph = load_module(str(path)).body.block.first_op
    return graph if rep == 1 or n == rep else resize_graph(graph, {rep: n})


def prepare(out: Path) -> None:
    from xdsl.context import Context

    from cleave_ir.builder import module_of
    from cleave_ir.passes.pipeline import PipelinePass
    from cleave_ir.tilelang_emitter import module_source

    out.mkdir(parents=True, exist_ok=True)
    for name in CASES:
        module = module_of(graph_at(name, CASES[name][0]).clone())
        PipelinePass(keep=1).apply(Context(), module)
        (out / f"{name}.py").write_text(module_source(module))
        print(f"{name}: written", file=sys.stderr)


def run(directory: Path) -> None:
    import torch

    from cleave_ir import runtime
    from cleave_ir.tilelang_check import load_module_file

    print(f"GPU: {torch.cuda.get_device_name()}; one compiled kernel per example, run at many sizes\n")
    print("| example | kernels (dynamic dims) | size | rel. error | us |")
    print("| --- | --- | ---: | --- | ---: |")
    results = []
    for name, (_, sizes) in CASES.items():
        mod = load_module_file(directory / f"{name}.py")
        _, kernels, _ = mod.CANDIDATES[0]
        dims = sorted({d for k in kernels for shape in mod.KERNELS[k]["shapes"] for d in shape if isinstance(d, str)})
        try:
            compiled = {k: runtime.compile_kernel(mod, k) for k in kernels}
            raw_last = runtime.compile_kernel(mod, kernels[-1], raw=True)
        except Exception as e:
            print(f"| {name} | {', '.join(kernels)} | compile failed: {runtime.one_line(e)} | | |")
            continue
        for n in sizes:
            graph = graph_at(name, n)
            xs = runtime.random_inputs(graph, seed=n)
            (ref,) = runtime.torch_reference(graph, xs)
            try:
                (got,) = runtime.run_poisoned(mod, kernels, xs, compiled, raw_last)
                err = runtime.check(got, ref)
                us = runtime.time_us(lambda: _run(mod, kernels, xs, compiled), batch=20, iters=10)
                verdict = f"{err:.1e}" + ("" if err < 1e-2 else " WRONG")
            except Exception as e:
                verdict, us = f"failed: {runtime.one_line(e)[:80]}", float("nan")
            print(f"| {name} | {len(kernels)} ({', '.join(dims) or 'static'}) | {n} | {verdict} | {us:.1f} |")
            results.append({"example": name, "size": n, "kernels": kernels, "dynamic": dims, "result": verdict, "us": us})
    (directory / "dynamic_results.json").write_text(json.dumps(results, indent=1))


def _run(mod, kernels, xs, compiled):  # type: ignore[no-untyped-def]
    """The candidate's kernels in order, each allocating its outputs (what the module's `run` does)."""
    values = list(xs)
    first = mod.KERNELS[kernels[0]]["input_names"]
    for k in kernels:
        meta = mod.KERNELS[k]
        extra = [xs[first.index(n)] for n in meta["passthrough"]]
        out = compiled[k](*mod._stored(k, [*values[: meta["inputs"] - len(extra)], *extra]))  # (transposed inputs, as `run`)
        values = list(out) if isinstance(out, (list, tuple)) else [out]
    return values[0]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("prepare")
    a.add_argument("--out", type=Path, required=True)
    b = sub.add_parser("run")
    b.add_argument("dir", type=Path)
    args = p.parse_args(argv)
    if args.cmd == "prepare":
        prepare(args.out)
        return 0
    import torch

    if not torch.cuda.is_available():
        print("error: dynamic_check run: no CUDA GPU on this machine", file=sys.stderr)
        return 1
    run(args.dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
