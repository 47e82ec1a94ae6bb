"""cleave-schedule: itgraph kernels equal their source graphs; the structures the paper needs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from xdsl.context import Context

from cleave_ir.builder import GraphBuilder, module_of
from cleave_ir.diagnostics import CleaveError
from cleave_ir.dialects import cleave, itgraph, tgraph
from cleave_ir.interpreter import max_relative_error, random_inputs, run_graph
from cleave_ir.interpreter_itgraph import run_kernel
from cleave_ir.passes.concretize import ConcretizePass
from cleave_ir.passes.partition_split_k import PartitionSplitKPass
from cleave_ir.passes.schedule import (
    STREAM_MIN_SPEEDUP, Config, SchedulePass, build_kernel, configs, is_row_stream, plan, proportional_tile, schedule_graph,
)
from cleave_ir.passes.superoptimize import SuperoptimizePass
from cleave_ir.passes.tmap_propagation import Unschedulable
from cleave_ir.run import load_module, resize_graph

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
SMALL = {4096: 256, 8192: 256, 14336: 128, 6144: 64, 576: 48, 512: 32, 128: 32, 32: 2}


def candidates(name: str, resize: dict[int, int] | None = None) -> list[tgraph.GraphOp]:
    """The example's graph and its concrete candidates (split+combine graphs partitioned)."""
    module = load_module(str(EXAMPLES / f"{name}.mlir"))
    if resize:
        g = module.body.block.first_op
        small = resize_graph(g, resize)
        small.attributes.pop("constraints", None)
        module = module_of(small.clone())
    # concretize's own check of each candidate runs at a reduced instance (its full-shape check of an
    # unscaled attention is most of this function's time; concretize's tests cover that check)
    for p in (SuperoptimizePass(), ConcretizePass(split_counts=(2, 4), max_check_gb=0.1), PartitionSplitKPass()):
        p.apply(Context(), module)
    return [g for g in module.body.block.ops if isinstance(g, tgraph.GraphOp)]


def kernel_agrees(graph: tgraph.GraphOp, kernel: itgraph.KernelOp, seed: int = 0) -> float:
    xs = random_inputs(graph, seed)
    want = run_graph(graph, xs)
    got = run_kernel(kernel, xs)
    return max(max_relative_error(w, g) for w, g in zip(want, got))


@pytest.mark.parametrize("top_k", [1, pytest.param(2, marks=pytest.mark.slow)], ids=["top1", "top2"])
@pytest.mark.parametrize(
    "name", ["mha", "gqa", "mla", "gqa_decode", "mla_decode", "rmsnorm_matmul", "swiglu", "matmul_matmul", "matmul_rowsum", "matmul"]
)
def test_every_top_k_kernel_equals_its_graph(name: str, top_k: int) -> None:
    """Scaled-down shapes; every candidate of the search; the best kernel of each (`-m slow`: the top
    2; other configurations: test_every_configuration_of_attention_candidates_is_right)."""
    resize = dict(SMALL)
    if name == "matmul":
        resize = {4096: 256}
    graphs = candidates(name, resize)
    assert len(graphs) >= 2
    checked = 0
    for g in graphs[:8]:
        best, dropped = schedule_graph(g, top_k=top_k)
        if "cleave.candidate_of" not in g.attributes:
            assert best, f"the input graph @{g.sym_name.data} must schedule: {dropped[:3]}"
        for s in best:
            assert kernel_agrees(g, s.kernel) < 1e-9, (g.sym_name.data, s.config)
            checked += 1
    assert checked >= 4


@pytest.mark.parametrize("every", [3, pytest.param(1, marks=pytest.mark.slow)], ids=["a-third", "all"])
def test_every_configuration_of_attention_candidates_is_right(every: int) -> None:
    """All configurations (fused and not), not only the top ones, on a small attention. The default
    run checks every third configuration of each candidate, from a different offset for each one
    (so each configuration is checked on some candidate); `-m slow` checks them all."""
    graphs = candidates("mha", {4096: 128, 128: 16, 32: 2})
    n = 0
    for i, g in enumerate(graphs[:4]):
        xs = random_inputs(g, 1)
        ref = run_graph(g, xs)[0]
        for cfg in (configs(g) + configs(g, fusion=False))[i % every :: every]:
            try:
                kernel = build_kernel(plan(g, cfg), "k")
            except Unschedulable:
                continue
            assert max_relative_error(ref, run_kernel(kernel, xs)[0]) < 1e-9, (g.sym_name.data, cfg)
            n += 1
    assert n > 50 // every


def _fa_candidate(name: str) -> tgraph.GraphOp:
    graphs = candidates(name)
    return next(g for g in graphs if getattr(g.attributes.get("cleave.note"), "data", "") == "div moved after matmul")


@pytest.mark.parametrize("name", ["mha", "gqa"])
def test_flash_attention_structure(name: str) -> None:
    g = _fa_candidate(name)
    best, dropped = schedule_graph(g, top_k=3)
    k = best[0].kernel
    par = k.body.block.first_op
    assert isinstance(par, itgraph.ParallelOp)
    loops = [op for op in par.body.block.ops if isinstance(op, itgraph.SequentialOp)]
    assert len(loops) == 1  # one loop over KV tiles
    loop = loops[0]
    inside = [op.name for op in loop.body.block.ops]
    assert inside.count("tgraph.matmul") == 2 and "tgraph.exp" in inside  # QK^T, exp, P.V ...
    assert any(op.name == "tgraph.reduce" and op.kind.data.value == "sum" for op in loop.body.block.ops)  # ... and the row sum, fused
    assert loop.accumulate_kinds == ["rescaled_sum", "rescaled_sum", "max"]  # online softmax
    after = [op.name for op in par.body.block.ops]
    assert after.index("tgraph.div") > after.index("itgraph.sequential")  # the division after the loop
    # no intermediate larger than a tile: every value in the kernel is a tile of at most 128 x 128
    for op in par.walk():
        for r in op.results:
            assert np.prod([int(d) for d in tgraph.tensor_type(r).shape]) <= 128 * 128
    # the fused loop needs far less than the whole rows the unfused schedules ask for
    assert any("registers" in reason or "shared memory" in reason for _, reason in dropped)


def test_decode_split_kernel_grid_includes_the_split_dim_and_combine_reduces_over_s() -> None:
    graphs = candidates("gqa_decode")
    split = next(g for g in graphs if g.sym_name.data.endswith("_split") and "2 partial" in g.attributes["cleave.note"].data)
    combine_name = split.attributes["cleave.combine"].root_reference.data
    combine = next(g for g in graphs if g.sym_name.data == combine_name)
    k_split = schedule_graph(split, 1)[0][0].kernel
    par = k_split.body.block.first_op
    assert "p0" in par.var_names  # the parts dim (dim 0 of the partials) is a grid dim
    k_combine = schedule_graph(combine, 1)[0][0].kernel
    reduces = [op for op in k_combine.walk() if isinstance(op, tgraph.ReduceOp)]
    assert reduces and all(op.axis == 0 for op in reduces)


def test_swiglu_matmuls_share_one_loop_and_ablation_splits_them() -> None:
    g = load_module(str(EXAMPLES / "swiglu.mlir")).body.block.first_op
    k = schedule_graph(g, 1)[0][0].kernel
    loops = [op for op in k.walk() if isinstance(op, itgraph.SequentialOp)]
    assert len(loops) == 1
    assert sum(isinstance(op, tgraph.MatmulOp) for op in loops[0].body.block.ops) == 2  # horizontal fusion
    k2 = schedule_graph(g, 1, fusion=False)[0][0].kernel
    assert len([op for op in k2.walk() if isinstance(op, itgraph.SequentialOp)]) == 2
    k3 = schedule_graph(g, 1, iterative=False)
    assert all(not any(isinstance(op, itgraph.SequentialOp) for op in s.kernel.walk()) for s in k3[0])


def test_online_softmax_survives_logits_of_1000() -> None:
    b = GraphBuilder("attn", "f32")
    q = b.input("q", [2, 32, 8])
    k = b.input("k", [2, 128, 8])
    v = b.input("v", [2, 128, 8])
    e = b.exp(b.matmul(q, k, transpose_b=True))
    g = b.build(b.div(b.matmul(e, v), b.reduce("sum", e, 2)))
    kernel = build_kernel(plan(g, Config((1, 32, 8), 32)), "k")
    seq = next(op for op in kernel.walk() if isinstance(op, itgraph.SequentialOp))
    assert "rescaled_sum" in seq.accumulate_kinds
    rng = np.random.default_rng(0)
    qx = rng.standard_normal((2, 32, 8))
    qx *= 1000 / np.abs(qx).max()  # logits reach about +-1000
    kx = np.sign(rng.standard_normal((2, 128, 8)))
    vx = rng.standard_normal((2, 128, 8))
    s = qx @ np.swapaxes(kx, -1, -2)
    assert np.abs(s).max() > 700  # exp overflows float64 beyond ~709
    p = np.exp(s - s.max(-1, keepdims=True))
    stable = (p / p.sum(-1, keepdims=True)) @ vx
    with np.errstate(all="ignore"):
        naive = run_graph(g, [qx, kx, vx])[0]
    assert not np.all(np.isfinite(naive))  # computing exp directly overflows
    got = run_kernel(kernel, [qx, kx, vx])[0]
    assert max_relative_error(stable, got) < 1e-12


def test_online_softmax_reads_its_exp_through_a_cast() -> None:
    """CodeGen's decode attention after the search: exp of f32 logits cast to f16, whose sum and P @ V the
    loop accumulates. The cast commutes with the rescale, so the loop is online softmax (before, plain
    sums of exp: dropped as unstable, and the attention kept PyTorch's at every length but the first)."""
    b = GraphBuilder("attn", "f16")
    s, v = b.input("s", [2, 1, 256], "f32"), b.input("v", [2, 256, 16])
    e = b.cast(b.exp(s), "f16")
    g = b.build(b.div(b.matmul(e, v), b.reduce("sum", e, 2)))
    kernel = build_kernel(plan(g, Config((1, 1, 16), 64)), "k")
    seq = next(op for op in kernel.walk() if isinstance(op, itgraph.SequentialOp))
    assert seq.accumulate_kinds == ["rescaled_sum", "rescaled_sum", "max"]
    rng = np.random.default_rng(1)
    for scale in (1.0, 300.0):  # exp of raw logits of +-300 overflows f32 (and float64 past ~709)
        sx, vx = rng.standard_normal((2, 1, 256)) * scale, rng.uniform(-1, 1, (2, 256, 16))
        p = np.exp(sx - sx.max(-1, keepdims=True))
        want = (p / p.sum(-1, keepdims=True)) @ vx
        got = run_kernel(kernel, [sx, vx])[0]
        assert max_relative_error(want, got) < 1e-12, scale


def test_bad_input_errors() -> None:
    g = candidates("matmul", {4096: 256})[0]
    with pytest.raises(Unschedulable, match="does not divide dim 0"):
        plan(g, Config((48, 64), None))
    with pytest.raises(CleaveError, match="top-k must be at least 1"):
        SchedulePass(top_k=0).apply(Context(), module_of(g.clone()))
    b = GraphBuilder("sym", "f32")
    x = b.input("x", ["N", 8])
    with pytest.raises(CleaveError, match="concretize the graph first"):
        SchedulePass().apply(Context(), module_of(b.build(b.exp(x))))


def test_schedule_pass_adds_ranked_kernels() -> None:
    g = candidates("matmul_rowsum", {4096: 256})[0]
    module = module_of(g.clone())
    SchedulePass(top_k=2).apply(Context(), module)
    kernels = [op for op in module.body.block.ops if isinstance(op, itgraph.KernelOp)]
    assert [k.sym_name.data for k in kernels] == ["matmul_rowsum_k0", "matmul_rowsum_k1"]
    costs = [k.attributes["cleave.estimated_us"].value.data for k in kernels]
    assert costs == sorted(costs)
    assert kernels[0].attributes["cleave.schedule_of"].root_reference.data == "matmul_rowsum"


def test_placement_keeps_kernels_equal_and_hoists_loads() -> None:
    from cleave_ir.passes.place_memory import place

    b = GraphBuilder("fa", "f16")
    q = b.input("q", [2, 128, 16])
    k = b.input("k", [2, 256, 16])
    v = b.input("v", [2, 256, 16])
    e = b.exp(b.matmul(q, k, transpose_b=True))
    g = b.build(b.div(b.matmul(e, v), b.reduce("sum", e, 2)))
    kernel = build_kernel(plan(g, Config((1, 64, 16), 64)), "k")
    place(kernel)
    seq = next(op for op in kernel.walk() if isinstance(op, itgraph.SequentialOp))
    loads_in_loop = [op.source.name_hint for op in seq.body.block.ops if isinstance(op, itgraph.LoadOp)]
    assert sorted(loads_in_loop) == ["k", "v"]  # q's tile does not change with the KV loop: hoisted
    assert all(cleave.memory(op) == cleave.Memory.SHARED for op in kernel.walk() if isinstance(op, itgraph.LoadOp))
    assert kernel.attributes["cleave.threads"].value.data == 128
    assert kernel_agrees(g, kernel) < 1e-9


def test_unschedulable_graph_reports_the_reasons_its_configurations_were_dropped(capsys: pytest.CaptureFixture[str]) -> None:
    """Every configuration is dropped, each with its Config and reason; the pass names the reasons."""
    b = GraphBuilder("g", "f32")
    x = b.input("x", [64, 32])
    g = b.build(b.exp(x), b.reshape(b.neg(x), [1, 64, 32]))
    best, dropped = schedule_graph(g, top_k=3)
    assert not best and dropped
    assert {type(cfg) for cfg, _ in dropped} == {Config}
    assert {reason for _, reason in dropped} == {"outputs of different ranks cannot share one grid"}
    failures: dict[str, str] = {}
    assert not SchedulePass()._schedule(module_of(g), g, failures)
    assert failures == {"g": "outputs of different ranks cannot share one grid"}
    assert capsys.readouterr().err == "warning: cleave-schedule: skipped @g: outputs of different ranks cannot share one grid\n"


def _matmul(m: int, k: int, n: int) -> tgraph.GraphOp:
    text = f"""
tgraph.graph @mm(%x: !tgraph.tensor<[{m}, {k}], f16>, %w: !tgraph.tensor<[{k}, {n}], f16>) -> !tgraph.tensor<[{m}, {n}], f16> {{
  %o = tgraph.matmul %x, %w : !tgraph.tensor<[{m}, {k}], f16>, !tgraph.tensor<[{k}, {n}], f16> -> !tgraph.tensor<[{m}, {n}], f16>
  tgraph.output %o : !tgraph.tensor<[{m}, {n}], f16>
}}
"""
    from conftest import parse_text

    return parse_text(text).body.block.first_op


def test_192_column_tiles_fill_the_last_wave() -> None:
    """1024 x 6144 outputs: 128 x 256 tiles make 192 blocks, a second wave of 132 SMs 45% full; 128 x 192
    tiles make 256, two full waves (gpu_suite_2026-12-02n: rmsnorm_matmul T1024 99.2 -> 84.0 us). The
    schedule offers 192 (and 512) columns only under 64+ rows and up to 128 x 256 elements; a one-row
    GEMV keeps power-of-two column tiles (its 16-byte vectors divide them)."""
    best, _ = schedule_graph(_matmul(1024, 4096, 6144))
    assert best[0].config.out_tile == (128, 192)
    tiles = {c.out_tile for c in configs(_matmul(1024, 4096, 6144))}
    assert {(64, 192), (128, 192), (64, 512)} <= tiles
    assert not {(256, 192), (128, 512)} & tiles
    assert not any(t[-1] in (192, 512) for c in configs(_matmul(1, 4096, 6144)) for t in [c.out_tile])


def test_register_estimate_counts_computed_tiles_only() -> None:
    """The cost model's register peak (`cost_model.peak_live_bytes`) leaves out what the lowering keeps
    elsewhere: a reshape of a loaded tile (a view of the shared tile: Split-K kernels reshape every
    operand), the P @ V product that T.gemm accumulates into its rescaled accumulator, and the epilogue's
    divide, which overwrites the accumulator. MLA decode B1's Split-K kernel at 64 heads was rejected
    for 352 KiB of "registers", 288 of them those three."""
    from cleave_ir.passes import cost_model

    from cleave_ir.passes.pipeline import PipelinePass

    module = module_of(resize_graph(load_module(str(EXAMPLES / "mla_decode.mlir")).body.block.first_op, {4096: 256}))
    passes = PipelinePass(split_counts=(2,)).passes()
    for p in passes[: [type(p) for p in passes].index(SchedulePass)]:  # the search, up to the schedule
        p.apply(Context(), module)
    graph = next(g for g in module.body.block.ops if isinstance(g, tgraph.GraphOp) and g.sym_name.data == "mla_decode_c4_s2_split")
    kernel = build_kernel(plan(graph, Config((1, 1, 64, 1), 32, True)), "k")
    par = kernel.body.block.first_op
    (loop,) = [op for op in par.walk() if isinstance(op, itgraph.SequentialOp)]
    assert loop.running_max_form() and len(loop.in_place_products()) == 1
    # computed tiles: the [64, 32] scores and what follows them, in fp32 (no 64 x 576 query view, no
    # 64 x 512 product or quotient)
    assert cost_model.peak_live_bytes(par) <= 3 * 64 * 32 * 4
    assert cost_model.estimate(kernel).fits


@pytest.mark.parametrize("dist", ["normal", "uniform", "sparse"])
def test_192_column_tiles_compute_the_matmul(dist: str) -> None:
    """A [128, 192] tile of a 256 x 576 output (2 x 3 blocks, K of 96 in 3 steps of 32)
    computes x @ W, run by the itgraph interpreter against the graph on fresh inputs."""
    graph = _matmul(256, 96, 576)
    assert Config((128, 192), 32, True) in configs(graph)
    kernel = build_kernel(plan(graph, Config((128, 192), 32, True)), "k")
    rng = np.random.default_rng(3)
    draw = {"normal": rng.standard_normal, "uniform": lambda s: rng.uniform(-2, 2, s), "sparse": lambda s: rng.standard_normal(s) * (rng.uniform(size=s) < 0.1)}[dist]
    xs = [draw((256, 96)), draw((96, 576))]
    assert max_relative_error(run_graph(graph, xs)[0], run_kernel(kernel, xs)[0]) < 1e-9


def test_matmuls_without_a_k_loop_do_not_overlap_their_loads() -> None:
    """`cost_model.unlooped_matmul`: 5 or 16 rows times a [512, 3072] weight with the whole K in one tile
    wait for their loads (serialized), a loop of 128-wide K steps overlaps them, and the schedule ranks
    a looped configuration first (Split-K kernels of rmsnorm_matmul T=5 on the H200: 24.1 us unlooped,
    16.8 looped; q/k/v projections at T64 in 16-row tiles on the H100: 12.4 unlooped, 7.0 looped). A
    depth of 64 (nothing to pipeline) and a one-row GEMV (its own streaming rule) keep the old rule."""
    from cleave_ir.passes import cost_model, place_memory

    def placed(m: int, k: int, cols: int, reduce: int | None) -> itgraph.KernelOp:
        kernel = build_kernel(plan(_matmul(m, k, 3072), Config((m, cols), reduce, True)), "k")
        place_memory.place(kernel)
        return kernel

    for unlooped in (placed(5, 512, 64, None), placed(16, 512, 64, None)):
        assert cost_model.unlooped_matmul(unlooped) and not cost_model.overlaps(unlooped)
    for kernel in (placed(5, 512, 64, 128), placed(16, 512, 64, 128), placed(5, 64, 64, None), placed(1, 512, 64, None)):
        assert not cost_model.unlooped_matmul(kernel)
    for rows in (5, 16):
        ranked, _ = schedule_graph(_matmul(rows, 512, 3072), 1)
        assert ranked[0].config.reduce_tile is not None


def test_a_cuda_core_fold_of_a_matmul_costs_its_serial_steps() -> None:
    """`lower_tilelang.cuda_core_steps`: rmsnorm(x) @ W at 3 rows with the whole K = 4096 in one tile
    (the normalized rows computed, too long to pad) folds K on the CUDA cores in 4096 / 2 steps; the
    estimate adds them (`cost_model.SERIAL_STEP_S`). On the H200 such a kernel ran 26.3-31.0 us, its
    estimate without the steps 7.9, and it ranked first. K = 512 pads its rows for T.gemm: no steps."""
    from cleave_ir.builder import GraphBuilder
    from cleave_ir.passes import cost_model, place_memory
    from cleave_ir.passes.lower_tilelang import cuda_core_steps

    def rmsnorm_matmul(k: int) -> tgraph.GraphOp:
        b = GraphBuilder("rmsnorm_matmul")
        x, w = b.input("x", [3, k]), b.input("w", [k, 16])
        return b.build(b.matmul(b.mul(x, b.rsqrt(b.scale(b.reduce("sum", b.square(x), 1), 1 / k))), w))

    steps = {}
    for k in (4096, 512):
        kernel = build_kernel(plan(rmsnorm_matmul(k), Config((3, 16), None, True)), "k")
        place_memory.place(kernel)
        steps[k] = cuda_core_steps(kernel, kernel.attributes["cleave.threads"].value.data)  # type: ignore[attr-defined]
    assert steps == {4096: 2048, 512: 0}
    ranked, _ = schedule_graph(rmsnorm_matmul(4096), 100)
    (fold,) = [s for s in ranked if s.config == Config((3, 16), None, True)]
    assert fold.estimate.terms.serial_s == 2048 * cost_model.SERIAL_STEP_S  # type: ignore[union-attr]
    assert fold.estimate.microseconds > 2048 * cost_model.SERIAL_STEP_S * 1e6


def test_cuda_core_steps_in_a_loop_count_every_iteration() -> None:
    """`cuda_core_steps` counts a loop's few-row CUDA-core matmuls once per iteration. 8 KV heads of a
    4-row decode product in one block ([8, 4, 32] logits, a batch T.gemm cannot take) fold 128 + 32
    steps in each of 4096 / 32 iterations; one head a block pads its rows for T.gemm: none. Uncounted,
    GQA decode B64 L4096's 2-split candidate took the first form: estimated 227 us, measured 4630
    (bench/results/gpu_suite_2026-12-04s18_H200.md); counted, its schedule is one head a block."""
    from cleave_ir.passes import cost_model, place_memory
    from cleave_ir.passes.lower_tilelang import cuda_core_steps

    b = GraphBuilder("qkv")
    q, k, v = b.input("q", [64, 8, 4, 128]), b.input("k", [64, 8, 4096, 128]), b.input("v", [64, 8, 4096, 128])
    graph = b.build(b.matmul(b.matmul(q, k, transpose_b=True), v))
    heads, one = Config((1, 8, 4, 128), 32, True), Config((1, 1, 4, 128), 128, True)
    steps, us = {}, {}
    for cfg in (heads, one):
        kernel = build_kernel(plan(graph, cfg), "k")
        place_memory.place(kernel)
        steps[cfg] = cuda_core_steps(kernel, kernel.attributes["cleave.threads"].value.data)  # type: ignore[attr-defined]
        us[cfg] = cost_model.with_serial_steps(cost_model.estimate(kernel), steps[cfg]).microseconds
    assert steps == {heads: 4096 // 32 * (128 + 32), one: 0}
    assert us[heads] > 3 * us[one]


def test_many_row_cuda_core_matmuls_cost_their_multiply_adds() -> None:
    """`many_row_fold_s`: 4 heads of 32 query rows in one tile (a batch no T.gemm takes) fold their
    logits ([4, 32, 32] over K 128) and products ([4, 32, 128] over 32 keys) on the CUDA cores in each
    of 1024 / 32 iterations, at `cost_model.FOLD_FMAS_PER_S`; one head of 64 rows runs on T.gemm: none."""
    from cleave_ir.passes import cost_model, place_memory
    from cleave_ir.passes.lower_tilelang import many_row_fold_s

    b = GraphBuilder("qkv")
    q, k, v = b.input("q", [1, 8, 256, 128]), b.input("k", [1, 8, 1024, 128]), b.input("v", [1, 8, 1024, 128])
    graph = b.build(b.matmul(b.matmul(q, k, transpose_b=True), v))
    seconds = {}
    for cfg in (Config((1, 4, 32, 128), 32, True), Config((1, 1, 64, 128), 64, True)):
        kernel = build_kernel(plan(graph, cfg), "k")
        place_memory.place(kernel)
        seconds[cfg.out_tile] = many_row_fold_s(kernel, kernel.attributes["cleave.threads"].value.data)  # type: ignore[attr-defined]
    fmas = 1024 // 32 * (4 * 32 * 32 * 128 + 4 * 32 * 128 * 32)
    assert seconds == {(1, 4, 32, 128): pytest.approx(fmas / cost_model.FOLD_FMAS_PER_S), (1, 1, 64, 128): 0.0}
    ranked, _ = schedule_graph(graph, 3)
    assert all(s.config.out_tile[1] == 1 for s in ranked)


def test_blocks_alone_on_their_sm_in_several_waves_do_not_overlap_their_loads() -> None:
    """`cost_model.overlaps`: a one-step GEMV over 512 rows of a [512, 24576] weight, in [512, 128]
    tiles (128 KiB: one block per SM, 192 blocks in 2 waves) waits for its loads; [512, 64] tiles (two
    blocks to an SM) and a single wave of 128-column tiles overlap them. The estimate of the first
    adds the exposed latency, and the schedule ranks the 64-column tiles before it (rmsnorm_matmul
    T1's Split-K GEMV on the H200: 24.3 us against 17.1)."""
    from cleave_ir.passes import cost_model, place_memory

    def placed(n: int, cols: int) -> itgraph.KernelOp:
        kernel = build_kernel(plan(_matmul(1, 512, n), Config((1, cols), None, True)), "k")
        place_memory.place(kernel)
        return kernel

    alone, paired, one_wave = placed(24576, 128), placed(24576, 64), placed(128 * 128, 128)
    assert alone.attributes["cleave.stages"].value.data == 1  # type: ignore[attr-defined]
    assert not cost_model.overlaps(alone) and cost_model.overlaps(paired) and cost_model.overlaps(one_wave)
    bare = build_kernel(plan(_matmul(1, 512, 24576), Config((1, 128), None, True)), "k")
    overlapped = cost_model.estimate(bare)
    serial = cost_model.serialized(overlapped)
    assert serial.microseconds > overlapped.microseconds + serial.terms.waves * cost_model.EXPOSED_LOAD_S * 1e6 * 0.99  # type: ignore[union-attr]
    ranked, _ = schedule_graph(_matmul(1, 512, 24576), 100)
    us = {(s.config.out_tile, s.config.reduce_tile): s.estimate.microseconds for s in ranked}
    assert us[(1, 128), None] > us[(1, 64), None] + 2 * cost_model.EXPOSED_LOAD_S * 1e6  # 2 waves


def _row_lse(rows: int, cols: int) -> tgraph.GraphOp:
    """The row statistics of a log-softmax: max(l) and log(sum(exp(l - max(l)))) per row."""
    b = GraphBuilder("row_lse")
    logits = b.input("l", [rows, cols])
    m = b.reduce("max", logits, 1)
    lse = b.log(b.reduce("sum", b.exp(b.sub(logits, m)), 1))
    return b.build(m, lse)


def test_few_long_rows_stream_through_every_sm() -> None:
    """A log-softmax's row statistics over GPT-2's vocabulary ([512, 32768] logits) in tiles of 16 rows
    are 32 blocks on 132 SMs; `row_streams` offers a few rows a block with reduction steps of 512-2048
    columns, and the schedule takes 4 rows in 2048-column steps (128 blocks). On the H200 the row
    (`gpt2_log_softmax`, with its GEMM and the subtraction) ran 199.1 -> 85.9 us. Kernels whose
    ordinary tiles fill the GPU, and kernels with a matmul, are offered none."""
    best, _ = schedule_graph(_row_lse(512, 32768))
    assert best[0].config == Config((4, 1), 2048, True)
    assert best[0].estimate.grid == 128
    assert not any(c.reduce_tile and c.reduce_tile > 128 for c in configs(_row_lse(4096, 32768)))
    assert not any(c.reduce_tile and c.reduce_tile > 128 for c in configs(_matmul(64, 4096, 64)))


def test_row_streams_are_ranked_only_where_clearly_faster() -> None:
    """A row stream is ranked only where it is estimated `STREAM_MIN_SPEEDUP` times faster than every
    ordinary tile. The statistics of 64 rows of 1024 stream in 4.6 us by the estimate, against 5.0 for
    16-row tiles: a tie of the kind that displaced a measured winner, so no stream is kept; with the
    gate at 1.0 one ranks first. Over 2048 columns (1.8x by the estimate) a stream ranks first."""
    graph = _row_lse(64, 1024)
    assert any(is_row_stream(c) for c in configs(graph))
    best, _ = schedule_graph(graph, top_k=100)
    assert not any(is_row_stream(s.config) for s in best)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("cleave_ir.passes.schedule.STREAM_MIN_SPEEDUP", 1.0)
        ungated, _ = schedule_graph(graph, top_k=100)
    assert is_row_stream(ungated[0].config)
    assert ungated[0].estimate.microseconds * STREAM_MIN_SPEEDUP > best[0].estimate.microseconds
    assert is_row_stream(schedule_graph(_row_lse(64, 2048))[0][0].config)


def test_row_streams_step_by_divisors_of_odd_vocabularies(monkeypatch: pytest.MonkeyPatch) -> None:
    """Llama-2's 32000-word vocabulary has no power-of-two divisor over 256: the streams step by its
    divisors that are multiples of 64 and of 256 where one is (1280; any step: 640, 1280, 1600). The
    LM-head softmax of 4 decode rows then reads its logits in 4 blocks of 25 steps, not one block of
    250 128-column steps."""
    graph = _row_lse(4, 32000)
    assert {c.reduce_tile for c in configs(graph) if is_row_stream(c)} == {1280}
    best, _ = schedule_graph(graph)
    assert best[0].config == Config((1, 1), 1280, True)
    assert best[0].estimate.grid == 4
    monkeypatch.setattr("cleave_ir.passes.schedule.STREAM_STEP_FACTOR", 1)
    assert {c.reduce_tile for c in configs(graph) if is_row_stream(c)} == {640, 1280, 1600}


def test_streams_step_by_a_multiple_of_256_where_one_divides(monkeypatch: pytest.MonkeyPatch) -> None:
    """`schedule.STREAM_STEP_FACTOR`: the 4 rows of 32000 stream in 1280-column steps on 128 threads
    (measured faster on the H100: stream_steps_2026-12-05s32); with any step allowed (1), in the
    1600-column steps that 1600 = 64 x 25 lays out over 64 threads."""
    from cleave_ir.passes import place_memory, schedule

    def placed() -> tuple[int | None, int]:
        (best, *_), _ = schedule_graph(_row_lse(4, 32000), top_k=1)
        kernel = best.kernel.clone()
        place_memory.place(kernel)
        return best.config.reduce_tile, kernel.attributes["cleave.threads"].value.data  # type: ignore[attr-defined]

    assert placed() == (1280, 128)
    monkeypatch.setattr(schedule, "STREAM_STEP_FACTOR", 1)
    assert placed() == (1600, 64)


@pytest.mark.parametrize("dist", ["normal", "wide", "shifted"])
def test_row_stream_kernels_compute_the_row_statistics(dist: str) -> None:
    """Every streaming configuration of 16 rows of 2048 (one block of 16 rows otherwise), run by the
    itgraph interpreter against the graph: logits of a normal, of +-60 (the online max rescales by
    large factors) and shifted by +30."""
    graph = _row_lse(16, 2048)
    streams = [c for c in configs(graph) if is_row_stream(c)]
    assert {c.out_tile for c in streams} == {(1, 1), (2, 1), (4, 1), (8, 1)}
    rng = np.random.default_rng(5)
    x = {"normal": rng.standard_normal, "wide": lambda s: rng.uniform(-60, 60, s), "shifted": lambda s: rng.standard_normal(s) + 30}[dist]((16, 2048))
    want = run_graph(graph, [x])
    for cfg in streams:
        got = run_kernel(build_kernel(plan(graph, cfg), "k"), [x])
        assert max(max_relative_error(w, g) for w, g in zip(want, got)) < 1e-9, cfg


def _masked_attention(heads: int, seq: int, dim: int) -> tgraph.GraphOp:
    """Hugging Face's eager attention with a 0/1 mask input, the division after P @ V (a search candidate)."""
    a, m, s = f"!tgraph.tensor<[1, {heads}, {seq}, {dim}], f16>", f"!tgraph.tensor<[1, 1, {seq}, {seq}], f16>", f"!tgraph.tensor<[1, {heads}, {seq}, {seq}], f16>"
    r = f"!tgraph.tensor<[1, {heads}, {seq}, 1], f16>"
    text = f"""
tgraph.graph @masked(%q: {a}, %k: {a}, %v: {a}, %mask: {m}) -> {a} {{
  %0 = tgraph.matmul %q, %k transpose_b : {a}, {a} -> {s}
  %1 = tgraph.scale %0, 0.088388347648318433 : {s}
  %2 = tgraph.scalar sub %mask, 1.000000e+04 : {m}
  %3 = tgraph.select %mask, %1, %2 : {m}, {s}, {m} -> {s}
  %4 = tgraph.exp %3 : {s}
  %5 = tgraph.matmul %4, %v : {s}, {a} -> {a}
  %6 = tgraph.reduce sum %4 dim 3 : {s} -> {r}
  %7 = tgraph.div %5, %6 : {a}, {r} -> {a}
  tgraph.output %7 : {a}
}}
"""
    from conftest import parse_text

    return parse_text(text).body.block.first_op


def test_masked_attention_holds_one_score_tile() -> None:
    """`select(mask, s * c, mask - 1e4)`: the lowering computes the scale and the fill where the select
    reads them (`lower_tilelang.computed_where_used`), so 128 x 128 score tiles hold one fp32 tile, not
    three, and fit the registers beside the 128 x 128 accumulator (the estimate counted 257 KiB and
    dropped them). On the H200, Llama-3's masked attention at S2048 D128 with 128 keys a step ran
    297.9 us against 319.2 with 64 (ptxas: 168 registers either way, no spills)."""
    from cleave_ir.passes import cost_model

    graph = _masked_attention(32, 2048, 128)
    kernel = build_kernel(plan(graph, Config((1, 1, 128, 128), 128, True)), "k")
    par = kernel.body.block.first_op
    assert cost_model.peak_live_bytes(par) <= 2 * 128 * 128 * 4 + 4 * 128 * 4
    assert cost_model.estimate(kernel).fits
    best, _ = schedule_graph(graph)
    assert best[0].config == Config((1, 1, 128, 128), 128, True)


def test_a_long_gemm_loop_takes_the_k_tile_that_fits_three_stages() -> None:
    """`cost_model.shallow_pipeline`: a 4096^3 matmul's 128 x 256 tiles with 128-wide K steps fit two
    pipelining stages only, with 64-wide steps four; each two-stage iteration costs SHALLOW_ITERATION_S
    more, and the schedule ranks the deeper pipeline first (H100, gemm_inflight_2026-12-06s43: 216.1
    against 205.7 us). Attention's loop of two matmuls stays on two stages at no charge, and so does a
    loop of fewer than three trips."""
    from cleave_ir.passes import cost_model, place_memory

    def placed(graph: tgraph.GraphOp, cfg: Config) -> itgraph.KernelOp:
        kernel = build_kernel(plan(graph, cfg), "k")
        place_memory.place(kernel)
        return kernel

    wide, deep = (placed(_matmul(4096, 4096, 4096), Config((128, 256), k, True)) for k in (128, 64))
    assert [k.attributes["cleave.stages"].value.data for k in (wide, deep)] == [2, 4]  # type: ignore[attr-defined]
    assert cost_model.shallow_pipeline(wide) and not cost_model.shallow_pipeline(deep)
    bare = cost_model.estimate(build_kernel(plan(_matmul(4096, 4096, 4096), Config((128, 256), 128, True)), "k"))
    charged = cost_model.with_pipeline_depth(bare, wide)
    assert charged.terms.shallow_iterations == bare.terms.iterations == 32  # type: ignore[union-attr]
    extra = charged.terms.waves * 32 * cost_model.SHALLOW_ITERATION_S * 1e6  # type: ignore[union-attr]
    assert charged.microseconds == pytest.approx(bare.microseconds + extra)
    assert cost_model.with_pipeline_depth(bare, deep) is bare
    best, _ = schedule_graph(_matmul(4096, 4096, 4096))
    assert best[0].config.reduce_tile == 64 and best[0].estimate.terms.shallow_iterations == 0  # type: ignore[union-attr]
    short = placed(_matmul(256, 256, 256), Config((128, 256), 128, True))  # two trips
    assert short.attributes["cleave.stages"].value.data == 2 and not cost_model.shallow_pipeline(short)  # type: ignore[attr-defined]
    attention = schedule_graph(_fa_candidate("mha"))[0][0].kernel
    place_memory.place(attention)
    assert cost_model.loop_matmuls(attention) == 2 and not cost_model.shallow_pipeline(attention)


def test_a_repeated_plan_is_built_once_with_the_same_ranking(monkeypatch: pytest.MonkeyPatch) -> None:
    """Configurations whose plans are equal (a reduction tile that tiles nothing, an output tile clipped to
    its dim) build their kernel once: the ranking, the kept kernels and the dropped reasons are those of
    building every configuration's plan."""
    from cleave_ir.passes import schedule

    graphs = candidates("mha", dict(SMALL))[:4]
    built: list[int] = []
    real_attempt = schedule._attempt_plan
    monkeypatch.setattr(schedule, "_attempt_plan", lambda p: built.append(1) or real_attempt(p))

    def ranking() -> list[tuple[list[tuple[str, float, Config]], list[tuple[Config, str]]]]:
        out = []
        for g in graphs:
            kept, dropped = schedule_graph(g, top_k=8)
            out.append(([(str(s.kernel), s.estimate.microseconds, s.config) for s in kept], dropped))
        return out

    memo = ranking()
    n_memo = len(built)
    built.clear()
    keys = iter(range(1 << 30))
    monkeypatch.setattr(schedule, "_plan_key", lambda p: next(keys))  # every plan its own key: no repeats
    assert ranking() == memo
    assert n_memo < len(built)


def _projections(rows: int, k: int, widths: tuple[int, ...], dynamic_rows: bool = False) -> tgraph.GraphOp:
    """x @ W_i for each width: separate projections of one input (q, k, v), one output each; with
    `dynamic_rows`, x's rows are declared dynamic."""
    from conftest import parse_text

    ws = ", ".join(f"%w{i}: !tgraph.tensor<[{k}, {n}], f16>" for i, n in enumerate(widths))
    outs = ", ".join(f"!tgraph.tensor<[{rows}, {n}], f16>" for n in widths)
    body = "\n".join(
        f"  %o{i} = tgraph.matmul %x, %w{i} : !tgraph.tensor<[{rows}, {k}], f16>, !tgraph.tensor<[{k}, {n}], f16> -> !tgraph.tensor<[{rows}, {n}], f16>"
        for i, n in enumerate(widths)
    )
    names = ", ".join(f"%o{i}" for i in range(len(widths)))
    dyn = " {dynamic = array<i64: 0>}" if dynamic_rows else ""
    text = f"tgraph.graph @proj(%x: !tgraph.tensor<[{rows}, {k}], f16>{dyn}, {ws}) -> ({outs}) {{\n{body}\n  tgraph.output {names} : {outs}\n}}\n"
    return parse_text(text).body.block.first_op


@pytest.mark.parametrize("dist", ["normal", "uniform", "sparse", "large"])
@pytest.mark.parametrize("reduce_tile", [None, 32])
def test_outputs_of_different_widths_share_one_grid(dist: str, reduce_tile: int | None) -> None:
    """Projections of one x to 256, 64 and 64 columns (q, k, v at grouped-query widths): the first output's
    32-column tiles give the others 8-column tiles, as many blocks, and one kernel computes all three
    (before, "outputs differ in dim 1: no common grid" cut them into three kernels that each read x).
    The itgraph interpreter runs the kernel against the graph on fresh inputs."""
    graph = _projections(32, 96, (256, 64, 64))
    p = plan(graph, Config((16, 32), reduce_tile, True))
    assert p.grid == [("p0", 2), ("p1", 8)]
    outs = list(graph.output_op.outputs)
    assert [p.tiles[o].shape for o in outs] == [(16, 32), (16, 8), (16, 8)]
    kernel = build_kernel(p, "k")
    rng = np.random.default_rng(5)
    draw = {
        "normal": rng.standard_normal, "uniform": lambda s: rng.uniform(-2, 2, s),
        "sparse": lambda s: rng.standard_normal(s) * (rng.uniform(size=s) < 0.1), "large": lambda s: 300 * rng.standard_normal(s),
    }[dist]
    xs = [draw((32, 96))] + [draw((96, n)) for n in (256, 64, 64)]
    for want, got in zip(run_graph(graph, xs), run_kernel(kernel, xs)):
        assert max_relative_error(want, got) < 1e-9


def test_outputs_whose_widths_the_first_tiles_do_not_divide_are_not_gridded_together() -> None:
    """100 columns beside 256 cut in 32-column tiles: 8 tiles do not divide 100, and the configuration is
    dropped with that reason; 64-column tiles (4 of them) give 25-column tiles."""
    graph = _projections(32, 64, (256, 100))
    with pytest.raises(Unschedulable, match="8 tiles of the first do not divide the other"):
        plan(graph, Config((16, 32), None, True))
    assert plan(graph, Config((16, 64), None, True)).tiles[graph.output_op.outputs[1]].shape == (16, 25)
    best, _ = schedule_graph(graph)
    assert best and len({s.config for s in best}) == len(best)


def test_proportional_tiles_hold_a_16_byte_vector() -> None:
    """256 columns beside 16 (a LoRA down projection beside its linear): 8 tiles of the first leave the second
    2-column tiles (4 bytes of fp16), refused with that reason; 2 tiles leave it 8 columns (16 bytes). Measured on
    the H100, such 1-column tiles made the one kernel of a linear and its LoRA down projection 57.4 us and q/k/v in
    16- and 4-column tiles 39.6 us, where 32- and 8-column ones took 22.8. The leading dims keep any tile."""
    graph = _projections(32, 64, (256, 16))
    with pytest.raises(Unschedulable, match="leave 2 of the other, under 8"):
        plan(graph, Config((16, 32), None, True))
    assert plan(graph, Config((16, 128), None, True)).tiles[graph.output_op.outputs[1]].shape == (16, 8)
    assert proportional_tile(48, 96, 16, 0) == 8  # a leading dim: no least width
    assert proportional_tile(4, 64, 64, 1, least=8) == 4  # one tile: the whole dim, however narrow


def test_outputs_of_different_widths_keep_apart_in_a_graph_with_dynamic_dims() -> None:
    """With x's rows dynamic, the shared grid is refused: at another row count the grid may cut a dim that
    the representative size leaves whole, where the outputs differ (a Split-K part copying x [s, T, 1024] and
    W [s, 1024, 6144] lost its whole candidate so). The per-matmul cut still serves every size."""
    graph = _projections(32, 96, (256, 64, 64), dynamic_rows=True)
    with pytest.raises(Unschedulable, match="graph with dynamic dims: no common grid"):
        plan(graph, Config((16, 32), None, True))
    assert plan(graph, Config((16, 256), None, True)).grid == [("p0", 2)]  # whole rows of every output: no shared column grid


def test_few_input_rows_read_by_every_column_block_count_once() -> None:
    """`cost_model.few_row_sharers`: a [16, 512] input tile that the 8 column blocks of x @ W [512, 256] all
    read is counted from DRAM once (the others hit L2); 64-row tiles, and the weight tiles, are counted in
    every block as before."""
    from cleave_ir.passes import cost_model, place_memory

    def loads(rows: int, tile: tuple[int, int]) -> dict[str, int]:
        kernel = build_kernel(plan(_matmul(rows, 512, 256), Config(tile, None, True)), "k")
        place_memory.place(kernel)
        par = kernel.body.block.first_op
        return {op.source.name_hint: cost_model.few_row_sharers(op, par) for op in par.walk() if isinstance(op, itgraph.LoadOp)}

    assert loads(32, (16, 32)) == {"x": 8, "w": 1}
    assert loads(128, (64, 32)) == {"x": 1, "w": 1}
