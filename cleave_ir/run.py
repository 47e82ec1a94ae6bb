"""`cleave-run`: interpret every graph of a module on random inputs; report checksums and agreement.

Graphs with the same signature (input and output types) get the same random inputs, and their
outputs are compared (max relative error): this is how a pass's output is checked against its input.
Kernels run too: itgraph kernels in float64, tilelang kernels with their fp16/fp32 numerics (compared
within the fp16 tolerance, a Split-K split kernel followed by its combine kernel).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Sequence

import numpy as np
import sympy
from xdsl.context import Context
from xdsl.dialects import get_all_dialects
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue

from cleave_ir.blas_threads import one_blas_thread
from cleave_ir.diagnostics import CleaveError, LocatingParser, one_line, parse_module_text_located, read_source
from cleave_ir.dialects import itgraph, tgraph
from cleave_ir.dialects import tilelang as tl
from cleave_ir.interpreter import (
    InterpretationError,
    concrete_shape,
    max_relative_error,
    random_inputs,
    run_graph,
    run_chain,
)
from cleave_ir.interpreter_itgraph import run_kernel
from cleave_ir.interpreter_tilelang import run_kernels as run_tilelang_kernels
from cleave_ir.passes import partition_kernels
from cleave_ir.passes.symbolize import instantiate, symbolize
from cleave_ir.shapes import evaluate, symbol
from cleave_ir.universe import get_all_dialects as cleave_dialects


def make_context() -> Context:
    """A context with every xDSL dialect and ours (as cleave-opt has)."""
    ctx = Context()
    for name, factory in {**get_all_dialects(), **cleave_dialects()}.items():
        if name not in ctx.registered_dialect_names:
            ctx.register_dialect(name, factory)
    return ctx


def load_module(path: str) -> ModuleOp:
    """Parse and verify a file (`-` for stdin); one-line CleaveError on any failure."""
    return load_module_located(path)[0]


def load_module_located(path: str) -> tuple[ModuleOp, LocatingParser]:
    """`load_module`, with the parser that locates the module's ops in the file."""
    text, name = read_source(path)
    return parse_module_text_located(make_context(), text, name)


class TooLargeToInterpret(CleaveError):
    """A graph or kernel that would need more memory than allowed; `op` is the one in the input."""

    def __init__(self, message: str, op: Operation) -> None:
        super().__init__(message)
        self.op = op


def resize_graph(graph: tgraph.GraphOp, resize: dict[int, int]) -> tgraph.GraphOp:
    """A concrete copy of `graph` where every dim of size OLD has size NEW (`resize[OLD] = NEW`).

    Dims the ops tie together have equal sizes, so mapping sizes (not positions) keeps the graph valid.
    """
    if not resize:
        return graph
    work = graph.clone()
    symbolize(work)
    bindings = {k: resize.get(v, v) for k, v in work.binding_values().items()}
    try:
        return instantiate(work, bindings)
    except Exception as e:  # a resize that breaks a split's divisibility
        raise CleaveError(f"error: @{graph.sym_name.data}: --resize {resize} is not valid here: {str(e).removeprefix('error: ')}") from None


MAX_RANK = 32
"""numpy's arrays have at most 64 dims; the interpreter's broadcasts need some room."""


def estimated_bytes(graph: tgraph.GraphOp, bindings: dict[str, int], itemsize: int) -> tuple[int, str]:
    """Bytes the interpreter holds at once (every value stays alive) and the largest value's shape.

    Python integers: an estimate past int64 must still trip the memory guard.
    """
    total, largest, largest_shape = 0, 0, ""
    values = graph.values()
    for v in values:
        shape = concrete_shape(tgraph.tensor_type(v), {**graph.binding_values(), **bindings})
        if len(shape) > MAX_RANK:
            raise CleaveError(f"error: @{graph.sym_name.data}: cannot interpret a value of rank {len(shape)} (at most {MAX_RANK})")
        n = math.prod(int(d) for d in shape) * itemsize
        total += n
        if n > largest:
            largest, largest_shape = n, str(list(shape))
    return total, largest_shape


def _memory_guard(
    name: str, graph: tgraph.GraphOp, bindings: dict[str, int], itemsize: int, max_memory_gb: float, origin: Operation
) -> None:
    """TooLargeToInterpret (about `origin`, the op of the input that `graph` stands for) if
    interpreting `graph` would need more than `max_memory_gb`."""
    need, largest = estimated_bytes(graph, bindings, itemsize)
    if graph.body.block.first_op is None:  # a kernel's stand-in: its outputs are no op's results
        sizes = {**graph.binding_values(), **bindings}
        shapes = [concrete_shape(tgraph.tensor_type(t), sizes) for t in graph.function_type.outputs.data]
        need += sum(math.prod(int(d) for d in shape) * itemsize for shape in shapes)
    if need > max_memory_gb * 2**30 or need >= 2**63:
        gib = f"{need / 2**30:.1f}" if need < 2**100 else f"2^{need.bit_length() - 31}"
        raise TooLargeToInterpret(
            f"error: @{name} needs about {gib} GiB to interpret (largest value "
            f"{largest}); shrink it with --resize (e.g. --resize 4096=256) or raise --max-memory-gb",
            origin,
        )


def _pair_signature(split: tgraph.GraphOp, combine: tgraph.GraphOp) -> tgraph.GraphOp:
    """A stand-in graph with the pair's signature: the split's inputs, the combine's outputs."""
    return tgraph.GraphOp(
        split.sym_name.data,
        [tgraph.tensor_type(a) for a in split.inputs],
        [tgraph.tensor_type(t) for t in combine.function_type.outputs.data],
    )


def signature(graph: tgraph.GraphOp) -> str:
    return str(graph.function_type)


def _parse_pairs(items: Sequence[str], what: str, keys_int: bool) -> dict:
    out: dict = {}
    for item in items:
        for part in item.replace(",", " ").split():
            k, _, v = part.partition("=")
            if not v.isdigit() or int(v) < 1 or (keys_int and not k.isdigit()):
                raise CleaveError(f"error: {what} expects {'SIZE' if keys_int else 'NAME'}=POSITIVE_INT, got '{part}'")
            out[int(k) if keys_int else k] = int(v)
    return out


def run_module(
    module: ModuleOp,
    *,
    seed: int = 0,
    graph_name: str | None = None,
    bindings: dict[str, int] | None = None,
    resize: dict[int, int] | None = None,
    mode: str = "float64",
    rtol: float | None = None,
    max_memory_gb: float = 8.0,
    out=None,
) -> bool:
    """Run the module's graphs and print the report; return False when same-signature graphs disagree."""
    out = sys.stdout if out is None else out
    graphs = [op for op in module.walk() if isinstance(op, tgraph.GraphOp)]
    has_kernels = any(isinstance(op, (itgraph.KernelOp, tl.KernelOp)) for op in module.walk())
    if graph_name is not None and has_kernels:
        raise CleaveError("error: --graph does not select among kernels yet; run the whole module")
    if graph_name is not None:
        graphs = [g for g in graphs if g.sym_name.data == graph_name]
        if not graphs:
            raise CleaveError(f"error: no graph @{graph_name} in the module")
    if not graphs and not has_kernels:
        raise CleaveError("error: the module holds no tgraph.graph, itgraph.kernel or tilelang.kernel")
    bindings = bindings or {}
    tol = rtol if rtol is not None else (1e-9 if mode == "float64" else 2e-2)
    itemsize = 8 if mode == "float64" else 4
    results: dict[str, list[tuple[str, tuple[np.ndarray, ...]]]] = {}
    approximate: set[str] = set()  # members computed in fp16/fp32 (tilelang kernels)
    by_name = {g.sym_name.data: g for g in graphs}
    for graph in graphs:
        if not partition_kernels.chain_head(graph):
            continue  # run after the graph before it
        g = resize_graph(graph, resize or {})
        name = graph.sym_name.data
        links = partition_kernels.chain(graph, by_name) or [graph]
        _memory_guard(name, g, bindings, itemsize, max_memory_gb, graph)
        inputs = random_inputs(g, seed, bindings)
        if len(links) > 1:  # a Split-K pair or a cut graph: the graphs in order, reported as one
            rest = [resize_graph(x, resize or {}) for x in links[1:]]
            outputs = run_chain([g, *rest], inputs, mode=mode, bindings=bindings)  # type: ignore[list-item]
            name = " + @".join([name, *(x.sym_name.data for x in links[1:])])
            g = _pair_signature(g, rest[-1])  # type: ignore[arg-type]
        else:
            outputs = run_graph(g, inputs, mode=mode, bindings=bindings)  # type: ignore[arg-type]
        for i, (value, t) in enumerate(zip(outputs, g.function_type.outputs.data)):
            elt = tgraph.tensor_type(t).element_type
            print(
                f"@{name} output {i}: shape {list(value.shape)} {elt} "
                f"sum {float(np.sum(value)):.9g} abs-sum {float(np.sum(np.abs(value))):.9g}",
                file=out,
            )
        results.setdefault(signature(g), []).append((name, outputs))
    ikernels = [op for op in module.walk() if isinstance(op, itgraph.KernelOp)]
    all_graphs = {g.sym_name.data: g for g in module.walk() if isinstance(g, tgraph.GraphOp)}
    for kernel in ikernels:
        if resize:
            raise CleaveError("error: --resize does not apply to itgraph kernels (their tiles are fixed); schedule a smaller graph")
        graph = all_graphs.get(tgraph.referenced_symbol(kernel, "cleave.schedule_of") or "")
        if graph is not None and partition_kernels.chain(graph, all_graphs) is not None and not partition_kernels.chain_head(graph):
            continue  # runs after the kernel before it
        program = [(kernel, graph)]
        for nxt in (partition_kernels.chain(graph, all_graphs) or [graph])[1:] if graph is not None else []:
            k = next((k for k in ikernels if tgraph.referenced_symbol(k, "cleave.schedule_of") == nxt.sym_name.data), None)
            if k is None:
                break
            program.append((k, nxt))
        name = " + @".join(k.sym_name.data for k, _ in program)
        # a dynamic kernel runs at its representative sizes unless --bind gives others
        sizes = {**itgraph.representative_sizes(kernel), **(bindings or {})}
        stand_in = tgraph.GraphOp(
            kernel.sym_name.data,
            [_bound_type(a, sizes) for a in kernel.inputs],
            [_bound_type(o, sizes) for o in program[-1][0].outputs],
        )
        _memory_guard(kernel.sym_name.data, stand_in, bindings, itemsize, max_memory_gb, kernel)
        inputs = random_inputs(stand_in, seed, bindings)
        outputs = _run_itgraph_chain(program, inputs, bindings)
        for i, value in enumerate(outputs):
            print(
                f"@{name} output {i}: shape {list(value.shape)} "
                f"sum {float(np.sum(value)):.9g} abs-sum {float(np.sum(np.abs(value))):.9g}",
                file=out,
            )
        results.setdefault(signature(stand_in), []).append((name, outputs))
    fp16_tol = rtol if rtol is not None else max(tol, 2e-2)  # tilelang kernels compute in fp16/fp32
    tkernels = [op for op in module.walk() if isinstance(op, tl.KernelOp)]
    graph_of = {k: tgraph.referenced_symbol(k, "cleave.schedule_of") for k in tkernels}
    for tkernel in tkernels:
        if resize:
            raise CleaveError("error: --resize does not apply to tilelang kernels (their tiles are fixed); schedule a smaller graph")
        graph = all_graphs.get(graph_of[tkernel] or "")
        if graph is not None and not partition_kernels.chain_head(graph):
            continue  # runs after the kernel before it
        program = [tkernel]
        # a Split-K pair or a cut graph: then a kernel of each following graph
        for nxt in (partition_kernels.chain(graph, all_graphs) or [graph])[1:] if graph is not None else []:
            k = next((k for k in tkernels if graph_of[k] == nxt.sym_name.data), None)
            if k is None:
                break
            program.append(k)
        name = " + @".join(k.sym_name.data for k in program)
        # a dynamic kernel runs at its representative sizes unless --bind gives others
        rep = tkernel.attributes.get("cleave.representative")
        sizes = {**({k: v.value.data for k, v in rep.data.items()} if rep is not None else {}), **bindings}  # type: ignore[attr-defined]
        stand_in = tgraph.GraphOp(
            tkernel.sym_name.data,
            [_buffer_tensor_type(a, sizes) for a in tkernel.inputs],
            [_buffer_tensor_type(o, sizes) for o in program[-1].outputs],
        )
        _memory_guard(name, stand_in, bindings, 4, max_memory_gb, tkernel)
        inputs = random_inputs(stand_in, seed, bindings)
        outputs = tuple(np.asarray(x, dtype=np.float64) for x in run_tilelang_kernels(program, inputs, sizes))
        for i, value in enumerate(outputs):
            print(
                f"@{name} output {i}: shape {list(value.shape)} "
                f"sum {float(np.sum(value)):.9g} abs-sum {float(np.sum(np.abs(value))):.9g}",
                file=out,
            )
        results.setdefault(signature(stand_in), []).append((name, outputs))
        approximate.add(name)
    ok = True
    for members in results.values():
        if len(members) < 2:
            continue
        ref_name, ref = members[0]
        for name, outs in members[1:]:
            err = max(max_relative_error(r, o) for r, o in zip(ref, outs))
            pair_tol = fp16_tol if approximate & {name, ref_name} else tol
            agree = err <= pair_tol
            ok &= agree
            verdict = "agree" if agree else "DISAGREE"
            print(f"@{name} vs @{ref_name}: {verdict} (max relative error {err:.3g}, tolerance {pair_tol:g})", file=out)
    return ok


def _run_itgraph_chain(
    program: Sequence[tuple[itgraph.KernelOp, tgraph.GraphOp | None]], inputs: Sequence[np.ndarray], bindings: dict[str, int] | None
) -> tuple[np.ndarray, ...]:
    """Run itgraph kernels in order: each takes the previous one's outputs, then the named values its
    graph's `cleave.passthrough` lists (inputs of the first, or results `cleave.output_names` names)."""

    def names(g: tgraph.GraphOp | None, key: str) -> list[str]:
        return [a.data for a in getattr(g.attributes.get(key), "data", ())] if g is not None else []  # type: ignore[attr-defined]

    values = list(inputs)
    first = program[0][0]
    env = dict(zip([a.name_hint or "" for a in first.inputs], inputs))
    for kernel, graph in program:
        extra = [env[n] for n in names(graph, "cleave.passthrough")]
        args = values[: len(kernel.inputs) - len(extra)] + extra
        env.update(zip([a.name_hint or "" for a in kernel.inputs], args))
        values = list(run_kernel(kernel, args, bindings))
        env.update(zip(names(graph, "cleave.output_names"), values))
    results = names(program[-1][1], "cleave.results")
    return tuple(env[n] for n in results) if results else tuple(values)


def _bound_type(value: SSAValue, sizes: dict[str, int]) -> tgraph.TensorType:
    t = tgraph.tensor_type(value)
    return t.with_shape([sympy.Integer(evaluate(d, sizes)) if d.free_symbols <= {symbol(k) for k in sizes} else d for d in t.shape])


def _buffer_tensor_type(value: SSAValue, sizes: dict[str, int]) -> tgraph.TensorType:
    """The tgraph type of a tilelang kernel parameter (symbols in `sizes` evaluated)."""
    t = tl.buffer_type(value)
    return tgraph.TensorType([sympy.Integer(evaluate(d, sizes)) if d.free_symbols <= {symbol(k) for k in sizes} else d for d in t.shape], t.element_type)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `cleave-run`."""
    p = argparse.ArgumentParser(
        prog="cleave-run",
        description="Interpret every tgraph.graph of FILE on random inputs (numpy reference interpreter).",
    )
    p.add_argument("file", help="input .mlir file, or - for stdin")
    p.add_argument("--seed", type=int, default=0, help="random seed for the inputs (default 0)")
    p.add_argument("--graph", help="run only this graph")
    p.add_argument("--mode", choices=["float64", "declared"], default="float64",
                   help="float64 everywhere, or round each op to its declared element type")
    p.add_argument("--bind", action="append", default=[], metavar="NAME=N",
                   help="value of a symbolic dim (overrides the graph's bindings)")
    p.add_argument("--resize", action="append", default=[], metavar="OLD=NEW",
                   help="give every dim of size OLD the size NEW (to run large graphs quickly)")
    p.add_argument("--rtol", type=float, help="agreement tolerance (default 1e-9, or 2e-2 in declared mode)")
    p.add_argument("--max-memory-gb", type=float, default=8.0, help="refuse graphs needing more (default 8)")
    args = p.parse_args(argv)
    parser: LocatingParser | None = None
    try:
        module, parser = load_module_located(args.file)
        with one_blas_thread():
            ok = run_module(
                module,
                seed=args.seed,
                graph_name=args.graph,
                bindings=_parse_pairs(args.bind, "--bind", keys_int=False),
                resize=_parse_pairs(args.resize, "--resize", keys_int=True),
                mode=args.mode,
                rtol=args.rtol,
                max_memory_gb=args.max_memory_gb,
            )
    except TooLargeToInterpret as e:
        loc = parser.location(e.op) if parser is not None else None
        print(f"{loc if loc is not None else args.file}: {one_line(str(e))}", file=sys.stderr)
        return 1
    except CleaveError as e:
        print(one_line(str(e)), file=sys.stderr)
        return 1
    except InterpretationError as e:
        print(f"error: {one_line(str(e))}", file=sys.stderr)
        return 1
    except RecursionError:
        print(f"{args.file}: error: input nested too deeply", file=sys.stderr)
        return 1
    except MemoryError:
        print(f"error: out of memory interpreting {args.file}; shrink it with --resize or lower --max-memory-gb", file=sys.stderr)
        return 1
    except Exception as e:  # no tracebacks for users; CLEAVE_DEBUG=1 shows them
        if os.environ.get("CLEAVE_DEBUG"):
            raise
        print(f"error: internal error ({type(e).__name__}): {one_line(str(e))} (CLEAVE_DEBUG=1 shows the traceback)", file=sys.stderr)
        return 1
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
