"""`#cleave.causal`: a graph input promising the causal 0/1 mask, computed in-kernel from indices, and
the FlashAttention loop bounded at the diagonal (passes/causal.py)."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.context import Context

from cleave_ir.builder import module_of
from cleave_ir.diagnostics import CleaveError
from cleave_ir.dialects import itgraph
from cleave_ir.dialects import tilelang as tl
from cleave_ir.dialects.cleave import causal_mask, expr_str
from cleave_ir.interpreter import run_graph
from cleave_ir.interpreter_itgraph import run_kernel as run_itgraph
from cleave_ir.interpreter_tilelang import candidate_kernels, run_kernels
from cleave_ir.passes import cost_model
from cleave_ir.passes.causal import computed_in_users, diagonal_extent
from cleave_ir.passes.lower_tilelang import lower_module
from cleave_ir.passes.pipeline import PipelinePass
from cleave_ir.shapes import symbol
from conftest import parse_text


def T(*shape: int) -> str:
    return f"!tgraph.tensor<[{', '.join(map(str, shape))}], f16>"


def flash(h: int, sq: int, sk: int, d: int, offset: int, attrs: str | None = None) -> str:
    """Causal attention in FlashAttention form (the division after P V), the mask as aten emits it."""
    attrs = attrs if attrs is not None else f"{{cleave.causal = #cleave.causal<offset = {offset}>}}"
    return f"""tgraph.graph @causal(%q: {T(1, h, sq, d)}, %k: {T(1, h, sk, d)}, %v: {T(1, h, sk, d)}, %keep: {T(1, 1, sq, sk)} {attrs}) -> {T(1, h, sq, d)} {{
  %s = tgraph.matmul %q, %k transpose_b : {T(1, h, sq, d)}, {T(1, h, sk, d)} -> {T(1, h, sq, sk)}
  %t = tgraph.scale %s, 0.125 : {T(1, h, sq, sk)}
  %m1 = tgraph.scalar add %keep, -1.0 : {T(1, 1, sq, sk)}
  %m2 = tgraph.scale %m1, 30000.0 : {T(1, 1, sq, sk)}
  %l = tgraph.add %t, %m2 : {T(1, h, sq, sk)}, {T(1, 1, sq, sk)} -> {T(1, h, sq, sk)}
  %e = tgraph.exp %l : {T(1, h, sq, sk)}
  %r = tgraph.reduce sum %e dim 3 : {T(1, h, sq, sk)} -> {T(1, h, sq, 1)}
  %u = tgraph.matmul %e, %v : {T(1, h, sq, sk)}, {T(1, h, sk, d)} -> {T(1, h, sq, d)}
  %o = tgraph.div %u, %r : {T(1, h, sq, d)}, {T(1, h, sq, 1)} -> {T(1, h, sq, d)}
  tgraph.output %o : {T(1, h, sq, d)}
}}"""


def reference(q: np.ndarray, k: np.ndarray, v: np.ndarray, offset: int) -> np.ndarray:
    """softmax(q k^T / 8 with -inf above the diagonal) v in float64, independent of the graph's -30000."""
    s = q @ np.swapaxes(k, -1, -2) * 0.125
    s = np.where(causal_mask(s.shape, offset) > 0, s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v


DISTRIBUTIONS = {
    "normal": lambda rng, s: rng.standard_normal(s),
    "shifted": lambda rng, s: rng.standard_normal(s) + 2.0,
    "wide": lambda rng, s: 4.0 * rng.standard_normal(s),
    "uniform": lambda rng, s: rng.uniform(-1.0, 1.0, s),
}


@pytest.mark.parametrize(
    "sq, sk, offset, bound",
    [
        (512, 512, 0, "(-16*by + 511) floordiv 128 + 1"),  # square, 16-row tiles across 128-key blocks
        (96, 640, 0, "(-16*by + 95) floordiv 64 + 1"),  # more keys than queries, top-left (PyTorch's is_causal)
        (192, 704, 0, "(-16*by + 191) floordiv 64 + 1"),  # keys not a multiple of the query tile
        pytest.param(128, 2048, 1920, "(16*bx + 1935) floordiv 128 + 1", marks=pytest.mark.slow),  # bottom-right: the last query sees every key (-m slow: CI's 8 minutes; at 1536 keys whole rows of 16 queries fit and win)
    ],
)
def test_causal_kernel_matches_float64(sq: int, sk: int, offset: int, bound: str) -> None:
    """The lowered kernel stops its KV loop at the diagonal, never reads the mask (NaN passed), and
    launches its query blocks last and longest first where their loops differ (by = 0 is the last
    query tile; at the bottom-right offset every block runs all 16 iterations: the order stays), and
    equals the float64 -inf-masked softmax in the TileLang interpreter (four input distributions,
    two at the large shapes); the graph and the itgraph kernel agree."""
    graph = parse_text(flash(1, sq, sk, 32, offset)).body.block.first_op
    module = module_of(graph.clone())
    PipelinePass(no_search=True, top_k=1, keep=1).apply(Context(), module)
    [kernel] = [k for k in module.walk() if isinstance(k, itgraph.KernelOp)]
    [seq] = [o for o in kernel.walk() if isinstance(o, itgraph.SequentialOp)]
    assert diagonal_extent(seq) is not None
    mean = cost_model.estimate(kernel).terms.iterations
    lower_module(module)
    [loop] = [o for o in module.walk() if isinstance(o, tl.PipelinedOp)]
    assert expr_str(loop.extent_expr) == bound
    # the cost model counts the iterations the bound leaves, over the grid's 16-row query tiles
    # (about half from the top-left; none fewer at the bottom-right offset here)
    [var] = loop.extent_expr.free_symbols  # the query tile's grid coordinate
    left = [int(loop.extent_expr.subs(var, b)) for b in range(sq // 16)]
    assert mean == pytest.approx(np.mean(left)) and max(left) <= int(seq.extent_dim)
    [(_, kernels)] = candidate_kernels(module)
    rng = np.random.default_rng(sq + sk)
    names = list(DISTRIBUTIONS) if sq * sk <= 192 * 704 else ["shifted", "wide"]  # the large ones: two, for CI time
    for name in names:
        draw = DISTRIBUTIONS[name]
        q, k, v = (draw(rng, s).astype(np.float16).astype(np.float64) for s in ((1, 1, sq, 32), (1, 1, sk, 32), (1, 1, sk, 32)))
        want = reference(q, k, v, offset)
        nan_mask = np.full((1, 1, sq, sk), np.nan)
        (got,) = run_kernels(kernels, [q, k, v, nan_mask])
        err = np.abs(got - want).max() / np.abs(want).max()
        assert err < 2e-3, (name, err)
        (graph_out,) = run_graph(graph, [q, k, v, nan_mask])  # the graph's value ignores what is passed too
        assert np.abs(graph_out - want).max() / np.abs(want).max() < 1e-9, name
    (it_out,) = run_itgraph(kernel, [q, k, v, nan_mask])
    assert np.abs(it_out - want).max() / np.abs(want).max() < 2e-3


def test_no_bound_without_the_proven_pattern() -> None:
    """A plain 0/1 mask input (no promise) is loaded and its loop runs in full; a causal mask added
    with a small penalty (-100: a masked block's weight exp(-100 + ...) is not surely 0) gets no bound."""
    plain = parse_text(flash(1, 512, 512, 32, 0, attrs="")).body.block.first_op
    weak = parse_text(flash(1, 512, 512, 32, 0).replace("30000.0", "100.0")).body.block.first_op
    from cleave_ir.passes.place_memory import PlaceMemoryPass
    from cleave_ir.passes.schedule import SchedulePass

    for graph in (plain, weak):
        module = module_of(graph.clone())
        SchedulePass(top_k=20).apply(Context(), module)  # the configurations with KV loops too
        PlaceMemoryPass().apply(Context(), module)
        seqs = [o for o in module.walk() if isinstance(o, itgraph.SequentialOp)]
        assert seqs and all(diagonal_extent(seq) is None for seq in seqs)
        lower_module(module)
        loops = [o for o in module.walk() if isinstance(o, tl.PipelinedOp)]
        assert loops and all(loop.extent_expr.is_Integer for loop in loops)
        copies = [o for o in module.walk() if isinstance(o, tl.CopyOp) and o.src.name_hint == "keep"]
        assert bool(copies) == (graph is plain)


@pytest.mark.parametrize(
    "attrs, message",
    [
        ("{cleave.causal = #cleave.causal<offset = -1>}", "offset must be >= 0"),
        ("{cleave.causal = 3 : i64}", "must be #cleave.causal<offset = N>"),
    ],
)
def test_verifier_rejects_misuse(attrs: str, message: str) -> None:
    with pytest.raises(CleaveError, match=message):
        parse_text(flash(1, 64, 64, 32, 0, attrs=attrs))


def test_rank_one_causal_input_is_rejected() -> None:
    text = f"""tgraph.graph @g(%m: !tgraph.tensor<[64], f16> {{cleave.causal = #cleave.causal<offset = 0>}}) -> !tgraph.tensor<[64], f16> {{
  tgraph.output %m : !tgraph.tensor<[64], f16>
}}"""
    with pytest.raises(CleaveError, match="needs a query and a key dim"):
        parse_text(text)


def test_attribute_round_trips() -> None:
    graph = parse_text(flash(1, 64, 80, 32, 16)).body.block.first_op
    assert graph.causal_inputs() == {3: 16}
    assert "{cleave.causal = #cleave.causal<offset = 16>}" in str(graph)
    assert parse_text(str(graph)).body.block.first_op.causal_inputs() == {3: 16}


def test_gpu_check_inputs_and_reference_hold_the_mask() -> None:
    """`cleave compile --gpu` checks kernels against `torch_reference` on `random_inputs`: both give a
    causal input its mask (the reference whatever is passed), so a kernel computing it agrees."""
    torch = pytest.importorskip("torch")
    from cleave_ir.runtime import random_inputs, torch_reference

    graph = parse_text(flash(1, 24, 40, 8, 0)).body.block.first_op
    xs = random_inputs(graph, device="cpu")
    assert torch.equal(xs[3][0, 0], torch.ones(24, 40).tril().half())
    (got,) = torch_reference(graph, [*xs[:3], torch.full_like(xs[3], float("nan"))])
    want = reference(*(x.double().numpy() for x in xs[:3]), 0)
    assert np.abs(got.numpy() - want).max() < 1e-12


CUT = """tgraph.graph @cut(%x: !tgraph.tensor<[128, 64], f16>, %w1: !tgraph.tensor<[64, 64], f16>, %w2: !tgraph.tensor<[64, 128], f16>, %keep: !tgraph.tensor<[128, 128], f16> {cleave.causal = #cleave.causal<offset = 0>}) -> !tgraph.tensor<[128, 128], f16> {
  %y = tgraph.matmul %x, %w1 : !tgraph.tensor<[128, 64], f16>, !tgraph.tensor<[64, 64], f16> -> !tgraph.tensor<[128, 64], f16>
  %z = tgraph.matmul %y, %w2 : !tgraph.tensor<[128, 64], f16>, !tgraph.tensor<[64, 128], f16> -> !tgraph.tensor<[128, 128], f16>
  %o = tgraph.mul %z, %keep : !tgraph.tensor<[128, 128], f16>, !tgraph.tensor<[128, 128], f16> -> !tgraph.tensor<[128, 128], f16>
  tgraph.output %o : !tgraph.tensor<[128, 128], f16>
}"""


def test_a_later_piece_of_a_cut_keeps_the_promise() -> None:
    """Cut into one kernel per matmul, the second piece reads the causal input as a passthrough: it
    keeps `cleave.causal` (computed, not loaded), and every kernel chain agrees with the graph
    (cleave-run's inputs are random normals: a piece loading them would disagree)."""
    import io

    from cleave_ir.passes.place_memory import PlaceMemoryPass
    from cleave_ir.passes.schedule import SchedulePass
    from cleave_ir.run import run_module

    module = parse_text(CUT)
    SchedulePass(top_k=1, per_matmul_cut=True).apply(Context(), module)
    PlaceMemoryPass().apply(Context(), module)
    lower_module(module)
    [piece] = [g for g in module.walk() if getattr(g, "sym_name", None) is not None and g.sym_name.data == "cut_mm_p1"]
    assert piece.causal_inputs() == {2: 0}
    out = io.StringIO()
    assert run_module(module, out=out), out.getvalue()
    assert "@cut_mm_k0 + @cut_mm_p1_k0 vs @cut: agree" in out.getvalue()


def test_select_form_is_bounded_too() -> None:
    """Llama's form, select(keep, logits, keep - 1e4) (examples/models/llama3_causal_attention.mlir),
    with the mask promised causal: the loop stops at the diagonal and the kernel equals float64."""
    text = flash(1, 512, 512, 32, 0).replace(
        f"""  %m1 = tgraph.scalar add %keep, -1.0 : {T(1, 1, 512, 512)}
  %m2 = tgraph.scale %m1, 30000.0 : {T(1, 1, 512, 512)}
  %l = tgraph.add %t, %m2 : {T(1, 1, 512, 512)}, {T(1, 1, 512, 512)} -> {T(1, 1, 512, 512)}""",
        f"""  %fill = tgraph.scalar sub %keep, 1.0e4 : {T(1, 1, 512, 512)}
  %l = tgraph.select %keep, %t, %fill : {T(1, 1, 512, 512)}, {T(1, 1, 512, 512)}, {T(1, 1, 512, 512)} -> {T(1, 1, 512, 512)}""",
    )
    assert "tgraph.select" in text
    graph = parse_text(text).body.block.first_op
    module = module_of(graph.clone())
    PipelinePass(no_search=True, top_k=1, keep=1).apply(Context(), module)
    lower_module(module)
    [loop] = [o for o in module.walk() if isinstance(o, tl.PipelinedOp)]
    assert expr_str(loop.extent_expr) == "(-16*by + 511) floordiv 128 + 1"
    [(_, kernels)] = candidate_kernels(module)
    rng = np.random.default_rng(1)
    q, k, v = (rng.standard_normal((1, 1, 512, 32)).astype(np.float16).astype(np.float64) for _ in range(3))
    (got,) = run_kernels(kernels, [q, k, v, np.full((1, 1, 512, 512), np.nan)])
    want = reference(q, k, v, 0)
    assert np.abs(got - want).max() / np.abs(want).max() < 2e-3


def test_causal_kernel_lowers_for_sm90a(tmp_path) -> None:
    """The emitted kernel (bounded T.Pipelined, T.if_then_else mask) lowers to CUDA for sm_90a."""
    pytest.importorskip("tilelang")
    from cleave_ir.tilelang_check import lower_all
    from cleave_ir.tilelang_emitter import module_source

    module = module_of(parse_text(flash(2, 512, 512, 64, 0)).body.block.first_op.clone())
    PipelinePass(no_search=True, top_k=1, keep=1).apply(Context(), module)
    path = tmp_path / "causal.py"
    path.write_text(module_source(module))
    source = path.read_text()
    assert "T.Pipelined(((" in source and "T.if_then_else(" in source and "T.copy(keep" not in source
    [cuda] = lower_all(path).values()
    assert "__global__" in cuda


def test_causal_kernel_without_warp_specialization_lowers_for_sm90a(tmp_path) -> None:
    """K scaled before Q K^T (a gemm operand computed from the loop's load) makes the kernel go without
    warp specialization; its diagonal-bounded loop then runs one stage (TileLang's unspecialized
    pipeline fails in CUDA codegen on a trip count that is not a constant), lowered under the pass
    configs the GPU compiles it with, and the kernel still equals float64."""
    pytest.importorskip("tilelang")
    from cleave_ir.tilelang_check import lower_all
    from cleave_ir.tilelang_emitter import module_source

    text = flash(2, 512, 512, 64, 0).replace(
        f"""  %s = tgraph.matmul %q, %k transpose_b : {T(1, 2, 512, 64)}, {T(1, 2, 512, 64)} -> {T(1, 2, 512, 512)}
  %t = tgraph.scale %s, 0.125 : {T(1, 2, 512, 512)}""",
        f"""  %ks = tgraph.scale %k, 0.125 : {T(1, 2, 512, 64)}
  %t = tgraph.matmul %q, %ks transpose_b : {T(1, 2, 512, 64)}, {T(1, 2, 512, 64)} -> {T(1, 2, 512, 512)}""",
    )
    assert "%ks = tgraph.scale %k" in text
    module = module_of(parse_text(text).body.block.first_op.clone())
    PipelinePass(no_search=True, top_k=1, keep=1).apply(Context(), module)
    path = tmp_path / "causal_no_ws.py"
    path.write_text(module_source(module))
    source = path.read_text()
    assert "'tl.disable_warp_specialized': True" in source and "T.Pipelined(((" in source
    assert "num_stages=1)" in source
    [cuda] = lower_all(path).values()
    assert "__global__" in cuda
    lower_module(module)
    [(_, kernels)] = candidate_kernels(module)
    rng = np.random.default_rng(2)
    q, k, v = (rng.uniform(-2.0, 2.0, (1, 2, 512, 64)).astype(np.float16).astype(np.float64) for _ in range(3))
    (got,) = run_kernels(kernels, [q, k, v, np.full((1, 1, 512, 512), np.nan)])
    want = reference(q, k, v, 0)
    assert np.abs(got - want).max() / np.abs(want).max() < 2e-3


def test_mask_tile_takes_no_registers_and_starts_the_scores() -> None:
    """At Llama-3's shape (D = 128) the mask needs no [128, 128] fp32 tile (its users compute it:
    `computed_in_users`), so 128 x 128 query/key tiles fit the register bound (before: 257 KiB of 256,
    64-key tiles only); lowered, the score accumulator starts at the penalty over the scale instead of
    0, and nothing after the gemm reads the mask (`fold_term`)."""
    from cleave_ir.passes.schedule import schedule_graph

    graph = parse_text(flash(32, 2048, 2048, 128, 0)).body.block.first_op
    ranked, _ = schedule_graph(graph, top_k=1)
    assert ranked[0].config.out_tile[-2:] == (128, 128) and ranked[0].config.reduce_tile == 128
    assert ranked[0].estimate.register_bytes <= cost_model.REGISTER_BYTES
    [keep] = [o for o in ranked[0].kernel.walk() if isinstance(o, itgraph.LoadOp) and o.causal_offset is not None]
    assert computed_in_users(keep)
    module = module_of(graph.clone())
    PipelinePass(no_search=True, top_k=1, keep=1).apply(Context(), module)
    lower_module(module)
    [loop] = [o for o in module.walk() if isinstance(o, tl.PipelinedOp)]
    body = list(loop.body.block.ops)
    gemms = [i for i, o in enumerate(body) if isinstance(o, tl.GemmOp)]
    masked = [i for i, o in enumerate(body) if any(isinstance(x, tl.IndexBelowOp) for x in o.walk())]
    assert masked == [0] and masked[0] < gemms[0], "the mask is computed once, before the scores' gemm"
    assert not any(isinstance(o, tl.ClearOp) and o.operands[0] is body[gemms[0]].c for o in body)


def test_batched_causal_kernel_launches_longest_first_and_matches_float64() -> None:
    """Batch and heads beside the query tiles (more than one grid dim besides them): the query tiles
    are still the slowest grid dim, reversed, and the kernel equals the float64 reference for every
    batch and head in the TileLang interpreter."""
    from cleave_ir.passes.place_memory import PlaceMemoryPass
    from cleave_ir.passes.schedule import SchedulePass

    module = parse_text(flash(2, 512, 512, 32, 0).replace("<[1, 2, ", "<[2, 2, "))
    SchedulePass(top_k=8).apply(Context(), module)  # at this size the best has no KV loop: take one that has
    PlaceMemoryPass().apply(Context(), module)
    lower_module(module)
    kernel = next(k for k in module.walk() if isinstance(k, tl.KernelOp) and any(isinstance(o, tl.PipelinedOp) for o in k.walk()))
    [loop] = [o for o in kernel.walk() if isinstance(o, tl.PipelinedOp)]
    assert len(kernel.grid_extents) == 3
    slowest = kernel.grid_var_names[-1]
    assert loop.extent_expr.free_symbols == {symbol(slowest)}, "the query tiles are not the slowest grid dim"
    trips = [int(loop.extent_expr.subs(symbol(slowest), b)) for b in range(int(kernel.grid_extents[-1]))]
    assert trips == sorted(trips, reverse=True) and trips[0] > trips[-1], "the longest loops do not launch first"
    rng = np.random.default_rng(7)
    q, k, v = (rng.uniform(-2.0, 2.0, (2, 2, 512, 32)).astype(np.float16).astype(np.float64) for _ in range(3))
    (got,) = run_kernels([kernel], [q, k, v, np.full((1, 1, 512, 512), np.nan)])
    want = reference(q, k, v, 0)
    assert np.abs(got - want).max() / np.abs(want).max() < 2e-3


def grouped_flash(kvh: int, g: int, s: int, d: int) -> str:
    """Causal grouped-query attention (`aten.grouped_attention`'s form) in FlashAttention form: q
    [1, kvh, g, s, d] against K/V [1, kvh, 1, s, d], the mask [1, 1, 1, s, s] per query position."""
    q, kv, sc, m = T(1, kvh, g, s, d), T(1, kvh, 1, s, d), T(1, kvh, g, s, s), T(1, 1, 1, s, s)
    return f"""tgraph.graph @gcausal(%q: {q}, %k: {kv}, %v: {kv}, %keep: {m} {{cleave.causal = #cleave.causal<offset = 0>}}) -> {q} {{
  %s = tgraph.matmul %q, %k transpose_b : {q}, {kv} -> {sc}
  %t = tgraph.scale %s, 0.125 : {sc}
  %m1 = tgraph.scalar add %keep, -1.0 : {m}
  %m2 = tgraph.scale %m1, 30000.0 : {m}
  %l = tgraph.add %t, %m2 : {sc}, {m} -> {sc}
  %e = tgraph.exp %l : {sc}
  %r = tgraph.reduce sum %e dim 4 : {sc} -> {T(1, kvh, g, s, 1)}
  %u = tgraph.matmul %e, %v : {sc}, {kv} -> {q}
  %o = tgraph.div %u, %r : {q}, {T(1, kvh, g, s, 1)} -> {q}
  tgraph.output %o : {q}
}}"""


def test_grouped_causal_kernel_is_bounded_exact_and_lowers(tmp_path) -> None:
    """The grouped form (query heads of a kv head as a dim of their own, K/V broadcast over it) gets
    the same diagonal-bounded FlashAttention loop as per-head causal attention, equals the float64
    -inf-masked softmax per query head in the TileLang interpreter, and lowers for sm_90a."""
    kvh, g, s, d = 1, 2, 512, 32
    graph = parse_text(grouped_flash(kvh, g, s, d)).body.block.first_op
    module = module_of(graph.clone())
    PipelinePass(no_search=True, top_k=1, keep=1).apply(Context(), module)
    lower_module(module)
    [loop] = [o for o in module.walk() if isinstance(o, tl.PipelinedOp)]
    assert loop.extent_expr.free_symbols, expr_str(loop.extent_expr)  # bounded by the query block
    [(_, kernels)] = candidate_kernels(module)
    rng = np.random.default_rng(0)
    q = rng.standard_normal((1, kvh, g, s, d)).astype(np.float16).astype(np.float64)
    k, v = (rng.standard_normal((1, kvh, 1, s, d)).astype(np.float16).astype(np.float64) for _ in range(2))
    (got,) = run_kernels(kernels, [q, k, v, np.full((1, 1, 1, s, s), np.nan)])
    want = reference(q, np.broadcast_to(k, q.shape), np.broadcast_to(v, q.shape), 0)
    assert np.abs(got - want).max() / np.abs(want).max() < 2e-3
    pytest.importorskip("tilelang")
    from cleave_ir.tilelang_check import lower_all
    from cleave_ir.tilelang_emitter import module_source

    module = module_of(graph.clone())
    PipelinePass(no_search=True, top_k=1, keep=1).apply(Context(), module)
    path = tmp_path / "gcausal.py"
    path.write_text(module_source(module))
    [cuda] = lower_all(path).values()
    assert "__global__" in cuda
