"""cleave-dynamic-shapes: one kernel serves every size of a dim declared dynamic.

Each example is scaled down, put through the pipeline, made dynamic, and every kept candidate's
kernels (split then combine) are interpreted at sizes that are and are not multiples of the tiles,
against the input graph resized to the same size.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.parser import Parser

from cleave_ir.builder import GraphBuilder, module_of
from cleave_ir.dialects import itgraph, tgraph
from cleave_ir.interpreter import max_relative_error, random_inputs, run_graph
from cleave_ir.interpreter_itgraph import run_kernel
from cleave_ir.passes.dynamic_shapes import DynamicShapesPass, at_sizes
from cleave_ir.passes.pipeline import PipelinePass, rank_candidates
from cleave_ir.run import load_module, make_context, resize_graph
from tests.test_tilelang import EXAMPLES

# example -> (resize of the example, its dynamic dim, sizes to run at)
CASES = {
    "gqa_decode": ({4096: 1024, 8: 2}, "k_d2", [1024, 1, 333, 1500]),
    "mla_decode": ({4096: 1024, 128: 16}, "k_d1", [1024, 33, 2000]),
    "rmsnorm_matmul": ({4096: 256, 6144: 512}, "x_d0", [1, 3, 40]),
    "swiglu": ({4096: 256, 14336: 512}, "x_d0", [1, 5]),
}


# the tests that read `_module`: on one xdist worker, which then runs each example's pipeline once
ON_MODULES_WORKER = pytest.mark.xdist_group("test_dynamic:_module")


@functools.cache
def _module(name: str) -> str:
    resize, _, _ = CASES[name]
    graph = resize_graph(load_module(str(EXAMPLES / f"{name}.mlir")).body.block.first_op, resize)
    graph.attributes.pop("constraints", None)
    graph.bindings = None
    module = module_of(graph.clone())
    PipelinePass(top_k=2, keep=3, split_counts=(4,)).apply(Context(), module)
    DynamicShapesPass().apply(Context(), module)
    module.verify()
    return str(module)


def _names(op, key: str) -> list[str]:  # type: ignore[no-untyped-def]
    return [a.data for a in op.attributes[key].data] if key in op.attributes else []


def _run_candidate(module, names: list[str], xs: list[np.ndarray]) -> np.ndarray:  # type: ignore[no-untyped-def]
    """A candidate's itgraph kernels in launch order; a kernel reads the previous kernel's results,
    then its graph's passthrough values by name (inputs, or results of earlier kernels of a chain)."""
    ops = {op.sym_name.data: op for op in module.body.block.ops if hasattr(op, "sym_name")}
    first = module.body.block.first_op
    values = list(xs)
    env = dict(zip(first.input_names(), xs))
    for name in names:
        kernel = ops[name]
        graph = ops[tgraph.referenced_symbol(kernel, "cleave.schedule_of")]
        extra = [env[p] for p in _names(graph, "cleave.passthrough")]
        args = values[: len(kernel.inputs) - len(extra)] + extra
        env.update(zip(graph.input_names(), args))
        values = list(run_kernel(kernel, args))
        env.update(zip(_names(graph, "cleave.output_names"), values))
    return values[0]


@ON_MODULES_WORKER
@pytest.mark.parametrize("name", list(CASES))
def test_dynamic_kernels_serve_every_size(name: str) -> None:
    module = Parser(make_context(), _module(name)).parse_module()
    _, dim, sizes = CASES[name]
    original = module.body.block.first_op
    units = rank_candidates(module)
    assert units
    kernels = {k.sym_name.data: k for k in module.body.block.ops if isinstance(k, itgraph.KernelOp)}
    dynamic_units = [u for u in units if all("cleave.dynamic" in kernels[k].attributes for k in u[1])]
    assert dynamic_units, f"no candidate of {name} is dynamic"
    for _, names, graph in dynamic_units:
        for n in sizes:
            g = at_sizes(original, {dim: n})
            xs = random_inputs(g, seed=n)
            (ref,) = run_graph(g, xs)
            got = _run_candidate(module, names, xs)
            assert max_relative_error(ref, got.reshape(ref.shape)) < 1e-9, (graph, n)


@ON_MODULES_WORKER
def test_static_only_candidates_are_dropped() -> None:
    """rmsnorm_matmul at T=1 has candidates that only hold for T=1 (a 1x1 matmul): they go."""
    text = _module("rmsnorm_matmul")
    assert "cleave.static_only" not in text
    assert "cleave.dynamic = {x_d0 = 1 : i64}" in text


@ON_MODULES_WORKER
def test_dynamic_kernel_ir() -> None:
    text = _module("gqa_decode")
    assert "!tgraph.tensor<[1, 2, k_d2, 128], f16>" in text  # K and V share one dynamic dim
    assert "itgraph.mask" in text and 'bound k_d2 ' in text
    assert "cleave.dynamic = {k_d2 =" in text


def test_interpreter_pads_and_masks() -> None:
    """Loads past the end read zeros, stores past it are dropped, the mask hides the padding."""
    src = """
itgraph.kernel @k(%x: !tgraph.tensor<[L, 64], f32>, %out0: !tgraph.tensor<[1, 64], f32>) attributes {num_outputs = 1 : i64, cleave.dynamic = {L = 32 : i64}} {
  itgraph.parallel (p0) in (1) {
    %s = itgraph.sequential r0 in L/32 accumulate (max) : !tgraph.tensor<[1, 64], f32> {
      %a = itgraph.load %x at #itgraph.tmap<[32*r0, 0], [32, 64]> : !tgraph.tensor<[L, 64], f32> -> !tgraph.tensor<[32, 64], f32>
      %b = itgraph.mask %a dim 0 offset 32*r0 bound L fill neg_inf : !tgraph.tensor<[32, 64], f32> -> !tgraph.tensor<[32, 64], f32>
      %c = tgraph.reduce max %b dim 0 : !tgraph.tensor<[32, 64], f32> -> !tgraph.tensor<[1, 64], f32>
      itgraph.yield %c : !tgraph.tensor<[1, 64], f32>
    }
    itgraph.store %s, %out0 at #itgraph.tmap<[0, 0], [1, 64]> : !tgraph.tensor<[1, 64], f32>, !tgraph.tensor<[1, 64], f32>
  }
}
"""
    kernel = Parser(make_context(), src).parse_module().body.block.first_op
    x = -np.random.default_rng(0).random((45, 64)) - 1.0  # all negative: zero padding would win a max
    (out,) = run_kernel(kernel, [x])
    assert np.allclose(out[0], x.max(axis=0))


def test_config_attribute_round_trips() -> None:
    from cleave_ir.passes.schedule import Config

    ctx = make_context()
    for c in (Config((1, 128), 32), Config((1, 1, 4, 128), None, False)):
        attr = c.attr()
        assert Parser(ctx, str(attr)).parse_attribute() == attr
        assert Config.of(attr) == c


@ON_MODULES_WORKER
@pytest.mark.parametrize("name", ["gqa_decode", "rmsnorm_matmul"])
def test_lowered_dynamic_kernels_serve_every_size(name: str) -> None:
    """The same through cleave-lower-tilelang: padded loops (T.ceildiv), T.if_then_else masks, safe
    memory access, run by the tilelang interpreter (fp16 tiles, fp32 fragments)."""
    from cleave_ir.interpreter_tilelang import candidate_kernels, run_kernels
    from cleave_ir.passes.lower_tilelang import LowerTileLangPass

    module = Parser(make_context(), _module(name)).parse_module()
    LowerTileLangPass().apply(Context(), module)
    _, dim, sizes = CASES[name]
    original = module.body.block.first_op
    checked = 0
    for _, kernels in candidate_kernels(module):
        if not all("cleave.dynamic" in k.attributes for k in kernels):
            continue
        for n in [{"gqa_decode": 333, "rmsnorm_matmul": 3}[name]]:  # not a multiple of the tiles (and small: the interpreter is slow)
            g = at_sizes(original, {dim: n})
            xs = random_inputs(g, seed=n)
            (ref,) = run_graph(g, xs)
            out = run_kernels(kernels, xs)
            got = np.asarray(out[0] if isinstance(out, (list, tuple)) else out, dtype=np.float64)
            assert max_relative_error(ref, got.reshape(ref.shape)) < 2e-2, (kernels[0].sym_name.data, n)
            checked += 1
    assert checked


@ON_MODULES_WORKER
def test_at_sizes_follows_tied_dims() -> None:
    graph = Parser(make_context(), _module("gqa_decode")).parse_module().body.block.first_op
    g = at_sizes(graph, {"k_d2": 77})
    assert [list(map(int, tgraph.tensor_type(a).shape)) for a in g.inputs][1:] == [[1, 2, 77, 128], [1, 2, 77, 128]]
    g = at_sizes(Parser(make_context(), _module("rmsnorm_matmul")).parse_module().body.block.first_op, {"x_d0": 5})
    assert [int(d) for d in tgraph.tensor_type(g.output_op.outputs[0]).shape] == [5, 512]


def test_chunks_that_are_all_padding() -> None:
    """FlashDecoding (log-sum-exp form) with 8 chunks at a length that leaves whole chunks empty: their
    running max stays -inf, and the rescale must give 0, not exp(-inf + inf) = NaN (itgraph and tilelang)."""
    from cleave_ir.interpreter_tilelang import run_kernels
    from cleave_ir.passes.lower_tilelang import lower_kernel

    path = EXAMPLES.parent / "lit_tests" / "passes" / "dynamic_shapes.mlir"
    module = load_module(str(path))
    PipelinePass(top_k=3, keep=8, split_counts=(8,)).apply(Context(), module)
    ops = {op.sym_name.data: op for op in module.body.block.ops if hasattr(op, "sym_name")}
    stable = [u for u in rank_candidates(module) if "log-sum-exp" in getattr(ops[u[2]].attributes.get("cleave.note"), "data", "")]
    assert stable, "no stabilized FlashDecoding candidate"
    _, names, _ = stable[0]
    original = module.body.block.first_op
    g = at_sizes(original, {"k_d1": 100})  # 8 chunks of 128: chunks 1..7 hold padding only
    xs = random_inputs(g, seed=1)
    (ref,) = run_graph(g, xs)
    got = _run_candidate(module, names, xs)
    assert np.isfinite(got).all() and max_relative_error(ref, got.reshape(ref.shape)) < 1e-9
    lowered = [lower_kernel(ops[n]) for n in names]
    out = run_kernels(lowered, xs)
    got = np.asarray(out[0] if isinstance(out, (list, tuple)) else out, dtype=np.float64)
    assert np.isfinite(got).all() and max_relative_error(ref, got.reshape(ref.shape)) < 2e-2


@functools.cache
def cut_chain_module() -> str:
    """softmax(x @ w) with a dynamic row count T, cut into five kernels (at most two ops each): the
    later kernels read intermediates of earlier ones by name (`t_c`, `t_c1`, ...), all [T, ...]."""
    from xdsl.dialects.builtin import StringAttr, SymbolRefAttr

    from cleave_ir.builder import GraphBuilder
    from cleave_ir.passes.partition_kernels import partition
    from cleave_ir.passes.place_memory import PlaceMemoryPass
    from cleave_ir.passes.schedule import SchedulePass, unschedulable

    b = GraphBuilder("softmax_xw")
    s = b.matmul(b.input("x", [64, 256], dynamic=[0]), b.input("w", [256, 512]))
    e = b.exp(b.sub(s, b.reduce("max", s, 1)))
    graph = b.build(b.div(e, b.reduce("sum", e, 1)))
    module = module_of(graph)
    cut = graph.clone()
    cut.sym_name = StringAttr("cut")
    pieces = partition(cut, lambda g: unschedulable(g) or (None if len(g.block.ops) <= 3 else "two ops per kernel"), lookahead=1)
    for piece in pieces:
        piece.attributes["cleave.candidate_of"] = SymbolRefAttr("softmax_xw")
        module.body.block.add_op(piece)
    for p in (SchedulePass(top_k=1), PlaceMemoryPass(), DynamicShapesPass()):
        p.apply(Context(), module)
    module.verify()
    return str(module)


def test_cut_chain_serves_every_size() -> None:
    """Every kernel of a chain is made dynamic, also those reading only intermediates (they were left
    static at T=64 while the chain counted as serving every T); itgraph and tilelang interpreters."""
    from cleave_ir.interpreter_tilelang import candidate_kernels, run_kernels
    from cleave_ir.passes.lower_tilelang import LowerTileLangPass

    module = Parser(make_context(), cut_chain_module()).parse_module()
    ((_, names, head),) = rank_candidates(module)
    assert head == "cut" and len(names) == 5
    ops = {op.sym_name.data: op for op in module.body.block.ops if hasattr(op, "sym_name")}
    assert all(itgraph.dynamic_quanta(ops[n]) == {"x_d0": 16} for n in names)
    assert any(p for n in names if (p := _names(ops[tgraph.referenced_symbol(ops[n], "cleave.schedule_of")], "cleave.passthrough")))
    original = module.body.block.first_op
    for t in (64, 1, 17, 100):
        g = at_sizes(original, {"x_d0": t})
        xs = random_inputs(g, seed=t)
        (ref,) = run_graph(g, xs)
        assert max_relative_error(ref, _run_candidate(module, names, xs)) < 1e-9, t
    LowerTileLangPass().apply(Context(), module)
    ((_, kernels),) = candidate_kernels(module)
    g = at_sizes(original, {"x_d0": 17})
    xs = random_inputs(g, seed=17)
    (ref,) = run_graph(g, xs)
    (got,) = run_kernels(kernels, xs)
    assert max_relative_error(ref, got) < 2e-2


def emitted_cut_chain(path):  # type: ignore[no-untyped-def]
    """The emitted TileLang module of `cut_chain_module` written to `path` and imported; with the
    input graph (T=64, x_d0 dynamic) and a torch `launch` for `cleave_ir.runtime.run_chain` that
    evaluates each kernel's graph in float64 (CPU) and checks the output shapes it is given."""
    import torch

    from cleave_ir.runtime import torch_reference
    from cleave_ir.tilelang_check import load_module_file
    from cleave_ir.tilelang_emitter import module_source

    module = Parser(make_context(), cut_chain_module()).parse_module()
    path.write_text(module_source(module))
    mod = load_module_file(path)
    graphs = {k: Parser(make_context(), "builtin.module {\n" + mod.GRAPHS[m["graph"]] + "\n}").parse_module().body.block.first_op for k, m in mod.KERNELS.items()}

    def launch(name, args, shapes):  # type: ignore[no-untyped-def]
        meta = mod.KERNELS[name]
        outs = torch_reference(graphs[name], args)
        assert [list(o.shape) for o in outs] == shapes, name
        return [o.to(getattr(torch, d)) for o, d in zip(outs, meta["dtypes"][meta["inputs"] :])]

    return mod, module.body.block.first_op, launch


def test_cleave_compile_warns_when_a_declared_dynamic_dim_stays_static(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    """Softmax over 100 columns declared dynamic: no kernel serves every width (its two reductions need
    different tiles at 200), so the kept kernel is static. `cleave compile` said nothing of it; now a
    warning names the kernel and why."""
    from cleave_ir.compile import main

    b = GraphBuilder("sm", "f32")
    x = b.input("x", [4, 100], dynamic=[1])
    e = b.exp(b.sub(x, b.reduce("max", x, 1)))
    (tmp_path / "sm.mlir").write_text(str(module_of(b.build(b.div(e, b.reduce("sum", e, 1))))))
    assert main(["compile", str(tmp_path / "sm.mlir"), "-o", str(tmp_path / "sm.py"), "--no-cache", "--keep", "2", "-j", "1"]) == 0
    err = capsys.readouterr().err
    assert "warning: cleave compile: @sm_k0 (candidate @sm) serves only the sizes it was scheduled at" in err, err


# the decode attention of `generate`'s dynamic graph (GPT-2, transformers 5.17, tiny config): one query
# row against the cache's 18 keys, a float mask over them; the length is dynamic
DECODE_ATTENTION = """
tgraph.graph @decode(%q: !tgraph.tensor<[1, 4, 1, 16], f16>, %k: !tgraph.tensor<[1, 4, 18, 16], f16> {dynamic = array<i64: 2>}, %v: !tgraph.tensor<[1, 4, 18, 16], f16> {dynamic = array<i64: 2>}, %mask: !tgraph.tensor<[1, 1, 1, 18], f16> {dynamic = array<i64: 3>}) -> !tgraph.tensor<[1, 4, 1, 16], f16> {
  %0 = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[1, 4, 1, 16], f16>, !tgraph.tensor<[1, 4, 18, 16], f16> -> !tgraph.tensor<[1, 4, 1, 18], f16>
  %1 = tgraph.scale %0, 2.500000e-01 : !tgraph.tensor<[1, 4, 1, 18], f16>
  %2 = tgraph.scalar add %mask, -3.000000e+04 : !tgraph.tensor<[1, 1, 1, 18], f16>
  %3 = tgraph.select %mask, %1, %2 : !tgraph.tensor<[1, 1, 1, 18], f16>, !tgraph.tensor<[1, 4, 1, 18], f16>, !tgraph.tensor<[1, 1, 1, 18], f16> -> !tgraph.tensor<[1, 4, 1, 18], f16>
  %4 = tgraph.exp %3 : !tgraph.tensor<[1, 4, 1, 18], f16>
  %5 = tgraph.reduce sum %4 dim 3 : !tgraph.tensor<[1, 4, 1, 18], f16> -> !tgraph.tensor<[1, 4, 1, 1], f16>
  %6 = tgraph.div %4, %5 : !tgraph.tensor<[1, 4, 1, 18], f16>, !tgraph.tensor<[1, 4, 1, 1], f16> -> !tgraph.tensor<[1, 4, 1, 18], f16>
  %7 = tgraph.matmul %6, %v : !tgraph.tensor<[1, 4, 1, 18], f16>, !tgraph.tensor<[1, 4, 18, 16], f16> -> !tgraph.tensor<[1, 4, 1, 16], f16>
  tgraph.output %7 : !tgraph.tensor<[1, 4, 1, 16], f16>
}
"""


# mha: the same rounding as mqa's (which also needs the looping configuration) under `-m slow` (CI's 8 minutes)
@pytest.mark.parametrize("kv_heads", [pytest.param(4, marks=pytest.mark.slow), 1], ids=["mha", "mqa"])
def test_a_small_representative_length_is_rounded_up_until_a_kernel_serves_every_length(capsys, kv_heads: int) -> None:  # type: ignore[no-untyped-def]
    """At its 18 keys every kernel of the decode attention took the whole length as one tile (a tile size
    that changes with the length): all stayed static, and the front end's gate refused the region at
    any other length. The pipeline schedules it again at 256 keys, where its kernels stream fixed tiles,
    masked: they serve 18 keys and every other length. Multi-query (Falcon: one K/V head under the four
    query heads) ranks its one-tile form first at 256 keys too; the schedule keeps its best looping
    configuration beside it, as the length is reduced over (`reduces_dynamic_dim`)."""
    text = DECODE_ATTENTION.replace("[1, 4, 18, 16]", f"[1, {kv_heads}, 18, 16]")
    original = Parser(make_context(), text).parse_module().body.block.first_op
    module = module_of(original.clone())
    PipelinePass(top_k=2, keep=2).apply(Context(), module)
    err = capsys.readouterr().err
    kv = f"[1, {kv_heads}, 256, 16]"
    assert f"cleave-pipeline: @decode scheduled again at its dynamic sizes rounded up ([1, 4, 1, 16], {kv}, {kv}, [1, 1, 1, 256])" in err, err
    kernels = {k.sym_name.data: k for k in module.body.block.ops if isinstance(k, itgraph.KernelOp)}
    units = rank_candidates(module)
    assert units and all("cleave.static_only" not in kernels[k].attributes for _, names, _ in units for k in names)
    rng = np.random.default_rng(0)
    for n in (18, 5, 37):
        g = at_sizes(original, {"k_d2": n})
        xs = random_inputs(g, seed=n)
        xs[3] = (rng.random(xs[3].shape) < 0.8).astype(np.float64)  # the mask keeps about 4 keys of 5
        (ref,) = run_graph(g, xs)
        for _, names, graph in units:
            got = _run_candidate(module, names, xs)
            assert max_relative_error(ref, got.reshape(ref.shape)) < 1e-9, (graph, n)
