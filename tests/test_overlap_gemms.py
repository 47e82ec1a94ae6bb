"""cleave-overlap-gemms: the rewritten attention loop computes its graph on inputs of several
distributions, and the interpreter check is not vacuous (a late gemm fed the wrong tile, or a lost
last tile, fails it)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import sympy
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from cleave_ir.dialects import tgraph
from cleave_ir.dialects import tilelang as tl
from cleave_ir.interpreter import input_shapes, max_relative_error, run_graph
from cleave_ir.interpreter_tilelang import run_kernels
from cleave_ir.passes.overlap_gemms import OverlapGemmsPass, plan
from cleave_ir.run import load_module
from cleave_ir.shapes import symbol

INPUT = Path(__file__).parents[1] / "lit_tests" / "passes" / "Inputs" / "attention_kv_loop_128.mlir"
FP16_TOLERANCE = 2e-2
DISTRIBUTIONS = {
    "normal": lambda rng, s: rng.standard_normal(s),
    "uniform": lambda rng, s: rng.uniform(-2.0, 2.0, s),
    "shifted": lambda rng, s: rng.standard_normal(s) * 0.25 + 0.25,
    "sparse": lambda rng, s: rng.standard_normal(s) * (rng.uniform(size=s) < 0.1),
    "peaked": lambda rng, s: rng.standard_normal(s) * 3.0,  # sharp rows: the running max moves often
}


def overlapped() -> ModuleOp:
    module = load_module(str(INPUT))
    OverlapGemmsPass().apply(Context(), module)
    module.verify()
    return module


def error(module: ModuleOp, distribution: str = "normal", seed: int = 0) -> float:
    graph = next(g for g in module.walk() if isinstance(g, tgraph.GraphOp))
    kernels = [k for k in module.walk() if isinstance(k, tl.KernelOp)]
    rng = np.random.default_rng(seed)
    xs = [DISTRIBUTIONS[distribution](rng, s).astype(np.float16).astype(np.float64) for s in input_shapes(graph)]
    return max(max_relative_error(r, o) for r, o in zip(run_graph(graph, xs), run_kernels(kernels, xs)))


@pytest.mark.parametrize("distribution", sorted(DISTRIBUTIONS))
def test_overlapped_loop_computes_its_graph(distribution: str) -> None:
    module = overlapped()
    assert sum(isinstance(op, tl.GemmOp) and op.is_async is not None for op in module.walk()) == 2
    assert error(module, distribution, seed=len(distribution)) < FP16_TOLERANCE


def _late_load(module: ModuleOp) -> tl.CopyOp:
    loop = next(op for op in module.walk() if isinstance(op, tl.PipelinedOp))
    late = [op for op in loop.body.block.ops if isinstance(op, tl.GemmOp)][1]
    return next(op for op in loop.body.block.ops if isinstance(op, tl.CopyOp) and op.dst == late.b)


def test_interpreter_catches_an_unshifted_tile() -> None:
    """V's tile j (not j - 1) beside P of iteration j - 1: every product pairs the wrong rows."""
    module = overlapped()
    assert error(module) < FP16_TOLERANCE
    load = _late_load(module)
    region = load.src_region
    assert region is not None
    r0 = symbol("r0")
    offsets = [128 * r0 if e.has(sympy.Mod) else e for e in region.offset_exprs]
    load.src_region = tl.RegionAttr(offsets, list(region.size_exprs))
    assert error(module) > FP16_TOLERANCE


def test_interpreter_catches_a_lost_last_tile() -> None:
    module = overlapped()
    kernel = next(k for k in module.walk() if isinstance(k, tl.KernelOp))
    epilogue = [op for op in kernel.body.block.ops if isinstance(op, tl.GemmOp)]
    assert len(epilogue) == 1 and epilogue[0].is_async is None
    epilogue[0].detach()
    epilogue[0].erase()
    assert error(module) > FP16_TOLERANCE


def test_plan_is_none_once_applied() -> None:
    """The rewrite applies once: its loop's gemms are async, which a second run leaves alone."""
    module = overlapped()
    loop = next(op for op in module.walk() if isinstance(op, tl.PipelinedOp))
    assert plan(loop, 256) is None


def test_lowered_cuda_releases_each_tile_after_its_wait(tmp_path: Path) -> None:
    """The emitted kernel lowered for sm_90a (TileLang, no GPU): warp-specialized (a producer
    warpgroup beside the 256 threads), and each tile a gemm reads is handed back to the producer
    (`mbarrier[...].arrive()`) only after the wait that retires that gemm: before, TileLang released it
    right after issuing the gemm, and the producer could refill it under a running WGMMA."""
    from cleave_ir.tilelang_check import lower_all
    from cleave_ir.tilelang_emitter import module_source

    path = tmp_path / "k.py"
    path.write_text(module_source(overlapped()))
    [cuda] = lower_all(path).values()
    assert "__launch_bounds__(384" in cuda
    lines = [line.strip() for line in cuda.splitlines()]
    waits = [n for n, line in enumerate(lines) if line.startswith("tl::wait_wgmma<")]
    assert [lines[n] for n in waits] == ["tl::wait_wgmma<1>();", "tl::wait_wgmma<0>();"]
    releases = [n for n, line in enumerate(lines) if line.startswith("mbarrier[") and line.endswith(".arrive();")]
    assert len(releases) == 2  # K's and V's slots, once each per iteration
    for wait, release in zip(waits, releases):
        assert wait < release and lines[wait + 1].startswith("hold[0] = ")


@pytest.mark.slow
def test_model_attention_at_its_real_shape_overlaps_and_computes_its_graph() -> None:
    """A graph that is none of the examples: BART's cross-attention at its real shape (Q [1, 16, 256,
    64], K and V [1, 16, 1024, 64]: 8 KV tiles of 128) through the whole pipeline. Its one-kernel
    candidate gets the overlap, and every candidate's lowered kernels compute the graph (30 s:
    `./test.sh -m slow`)."""
    from cleave_ir.builder import module_of
    from cleave_ir.interpreter_tilelang import candidate_kernels
    from cleave_ir.passes.lower_tilelang import LowerTileLangPass
    from cleave_ir.passes.pipeline import PipelinePass
    from cleave_ir.run import resize_graph

    path = Path(__file__).parents[1] / "examples" / "models" / "bart_cross_attention.mlir"
    graph = next(g for g in load_module(str(path)).walk() if isinstance(g, tgraph.GraphOp))
    graph = resize_graph(graph, {2: 16, 32: 256, 64: 1024, 16: 64})
    module = module_of(graph)
    PipelinePass().apply(Context(), module)
    LowerTileLangPass().apply(Context(), module)
    assert any(isinstance(op, tl.GemmOp) and op.is_async is not None for op in module.walk())
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal(s).astype(np.float16).astype(np.float64) for s in input_shapes(graph)]
    (ref,) = run_graph(graph, xs)
    for name, kernels in candidate_kernels(module):
        (out,) = run_kernels(kernels, xs)
        assert max_relative_error(ref, out) < FP16_TOLERANCE, name


def test_a_k_tile_over_128_wide_keeps_its_gemms_synchronous(tmp_path: Path) -> None:
    """GQA decode at Gemma's head dim 256 (bench/probes/unseen/gqa_decode_d256_bf16.mlir): the one-kernel
    candidate's K tile is [128, 256]. Overlapped, its read after the wait failed TileLang's
    StorageRewrite ("Can't fetch the lanes of a scalable vector"; the same kernel at head dim 128
    lowers), and `cleave compile` dropped the candidate. The loop now keeps its gemms synchronous
    (`MAX_RETIRED_ROW`); every kept kernel lowers for sm_90a."""
    pytest.importorskip("tilelang")
    from cleave_ir.passes.lower_tilelang import LowerTileLangPass
    from cleave_ir.passes.pipeline import PipelinePass
    from cleave_ir.tilelang_check import lower_each
    from cleave_ir.tilelang_emitter import module_source

    path = Path(__file__).parents[1] / "bench" / "probes" / "unseen" / "gqa_decode_d256_bf16.mlir"
    module = load_module(str(path))
    PipelinePass().apply(Context(), module)
    LowerTileLangPass().apply(Context(), module)
    kernels = {k.sym_name.data: k for k in module.walk() if isinstance(k, tl.KernelOp)}
    assert "gqa_decode_d256_c1_k0" in kernels
    assert not any(isinstance(op, tl.GemmOp) and op.is_async is not None for op in kernels["gqa_decode_d256_c1_k0"].walk())
    out = tmp_path / "k.py"
    out.write_text(module_source(module))
    failed = {name: str(r)[:100] for name, r in lower_each(out, jobs=2).items() if isinstance(r, Exception)}
    assert not failed
