"""Awkward static sizes (77, 100, 197) are compiled padded, as dynamic dims (passes/padded_dims.py)."""

from __future__ import annotations

import io
import re
from typing import cast
from pathlib import Path

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr

from cleave_ir.builder import GraphBuilder
from cleave_ir.compile import compile_graph
from cleave_ir.dialects import itgraph, tgraph
from cleave_ir.interpreter import max_relative_error, run_graph
from cleave_ir.interpreter_tilelang import candidate_kernels, run_kernels
from cleave_ir.passes.lower_tilelang import LowerTileLangPass
from cleave_ir.passes.padded_dims import awkward, padded_graph, padded_size

ROOT = Path(__file__).resolve().parent.parent


def attention(s: int, d: int = 32, heads: int = 2) -> tgraph.GraphOp:
    """softmax(Q K^T / sqrt(d)) V over `s` queries and keys, stabilized by the row max."""
    b = GraphBuilder("attn")
    q, k, v = (b.input(n, [heads, s, d]) for n in "qkv")
    scores = b.scale(b.matmul(q, k, transpose_b=True), d**-0.5)
    e = b.exp(b.sub(scores, b.reduce("max", scores, 2)))
    return b.build(b.div(b.matmul(e, v), b.reduce("sum", e, 2)))


def test_awkward_sizes_and_their_padding() -> None:
    assert [n for n in (16, 17, 48, 77, 100, 197, 256, 320, 4096, 4097, 4112) if awkward(n)] == [17, 77, 100, 197, 4097, 4112]
    assert [padded_size(n) for n in (17, 77, 100, 197, 300, 1500, 4097)] == [32, 128, 128, 256, 320, 1536, 4352]


def test_long_reduced_rows_without_a_stream_step_are_awkward() -> None:
    """Over LONG_ROW, a reduced dim wants a divisor among the stream steps (1024..2048 by 64): 32000
    (1280, 1600) has one, Llama-3's vocabulary 128256 (= 768 x 167) none; an unreduced dim is judged
    as before. Long dims pad to multiples of 2048."""
    assert [n for n in (20480, 32000, 32768, 128256, 20544) if awkward(n, reduced=True)] == [128256, 20544]
    assert not awkward(128256) and not awkward(20544)
    assert [padded_size(n) for n in (128256, 50257, 20544, 16383)] == [129024, 51200, 22528, 16384]


def test_a_logsumexp_over_a_long_awkward_row_is_split_and_exact(tmp_path: Path) -> None:
    """log(sum exp(x - m)) + m over 2 rows of 20544 (= 64 x 321): streamed as given in 64-wide steps,
    its Split-K chunks in 32-wide ones. Padded to 22528 (11 x 2048), every kernel serves 20544 with
    its loads past it masked; the kept candidates include a Split-K one (each chunk shifted by its own
    max), and each runs in the tilelang interpreter at the real size against float64."""
    b = GraphBuilder("lse_long")
    x = b.input("x", [2, 20544])
    m = b.reduce("max", x, 1)
    graph = b.build(b.add(b.log(b.reduce("sum", b.exp(b.sub(x, m)), 1)), m))
    out = io.StringIO()
    job = compile_graph(graph, tmp_path / "lse.py", ["--no-cache", "--keep", "3"], out=out)
    assert "padded sizes: 20544 -> 22528 (dynamic dims" in out.getvalue()
    module = job.pipeline.clone()  # type: ignore[union-attr]
    LowerTileLangPass().apply(Context(), module)
    candidates = candidate_kernels(module)
    assert any("split" in name for name, _ in candidates), [name for name, _ in candidates]
    rng = np.random.default_rng(5)
    for draw in ("normal", "huge", "masked"):  # compiled once, run on each
        xs = rng.standard_normal((2, 20544)) * (3000.0 if draw == "huge" else 2.0)
        if draw == "masked":
            xs[rng.random(xs.shape) < 0.8] = -np.inf
        xs = xs.astype(np.float16).astype(np.float64)
        mx = xs.max(1, keepdims=True)
        ref = np.log(np.exp(xs - mx).sum(1, keepdims=True)) + mx
        for name, kernels in candidates:
            got = run_kernels(kernels, [xs])
            got = np.asarray(got[0] if isinstance(got, (list, tuple)) else got, dtype=np.float64)
            assert max_relative_error(ref, got.reshape(ref.shape)) < 2e-3, (draw, name)


def test_padded_graph_declares_the_dims_dynamic_at_the_padded_size() -> None:
    g = attention(100)
    p = padded_graph(g)
    assert p is not None and padded_graph(attention(128)) is None
    assert [p.input_annotation(i, "dynamic") for i in range(3)] == [(1,), (1,), (1,)]
    assert [list(map(int, tgraph.tensor_type(a).shape)) for a in p.inputs] == [[2, 128, 32]] * 3


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, object, Path]:
    """`cleave compile` of attention over 100 keys (the kept candidate, lowered for sm_90a): the
    report, the pipeline's module and the emitted module's path."""
    out = io.StringIO()
    path = tmp_path_factory.mktemp("pad") / "a.py"
    job = compile_graph(attention(100), path, ["--no-cache", "--keep", "1"], out=out)
    return out.getvalue(), job.pipeline, path


def test_attention_over_100_keys_is_a_padded_flash_attention_loop(compiled: tuple[str, object, Path]) -> None:
    """Before: 100 keys had no 16-row tile, and each block took whole rows on the CUDA cores. Now the
    graph is scheduled at 128 with a loop over the keys, and the kernel serves 100."""
    report, pipeline, _ = compiled
    assert "padded sizes: 100 -> 128 (dynamic dims; the kernels serve the real sizes)" in report
    kernels = [k for k in pipeline.walk() if isinstance(k, itgraph.KernelOp)]  # type: ignore[attr-defined]
    assert kernels and all("cleave.dynamic" in k.attributes for k in kernels)
    assert any(isinstance(op, itgraph.SequentialOp) for k in kernels for op in k.walk())


@pytest.mark.parametrize("draw", ["normal", "uniform", "large"])
def test_padded_kernels_equal_the_graph_at_the_real_size(compiled: tuple[str, object, Path], draw: str) -> None:
    _, pipeline, _ = compiled
    module = pipeline.clone()  # type: ignore[attr-defined]
    LowerTileLangPass().apply(Context(), module)
    graph = attention(100)
    rng = np.random.default_rng(7)
    shape = (2, 100, 32)
    xs = {
        "normal": lambda: rng.standard_normal(shape),
        "uniform": lambda: rng.uniform(-1.0, 3.0, shape),
        "large": lambda: 6.0 * rng.standard_normal(shape),  # logits in the hundreds: the running max matters
    }[draw]
    inputs = [xs() for _ in range(3)]
    (ref,) = run_graph(graph, inputs)
    candidates = candidate_kernels(module)
    assert candidates
    for name, kernels in candidates:
        out = run_kernels(kernels, inputs)
        got = np.asarray(out[0] if isinstance(out, (list, tuple)) else out, dtype=np.float64)
        assert max_relative_error(ref, got.reshape(ref.shape)) < 2e-2, name


def test_the_emitted_module_compiles_padded_dims_at_their_real_size(compiled: tuple[str, object, Path]) -> None:
    """The kernels serve any size of a padded dim, but the graph has one: the emitted module's
    `prim_func` gives TileLang that size (`STATIC_SIZES`), so it knows every stride and trip count
    (an [S, S] mask with S dynamic was copied by 2-byte loads without TMA: Mistral's sliding-window
    attention at S=1000 ran 231.5 us, at S static 83.2, bench/results/split_loops_2026-12-04_H200.md).
    The kernel lowers for sm_90a with no dynamic dim left."""
    import tilelang
    from tilelang import tvm

    from cleave_ir.tilelang_check import EMITTED_FOR, load_module_file

    _, _, path = compiled
    mod = load_module_file(path)
    assert mod.STATIC_SIZES and set(mod.STATIC_SIZES.values()) == {100}
    name = mod.CANDIDATES[0][1][0]
    func = mod.prim_func(name)
    shapes = [list(func.buffer_map[p].shape) for p in func.params if p in func.buffer_map]
    assert all(isinstance(d, tvm.tirx.IntImm) for s in shapes for d in s) and any(int(d) == 100 for s in shapes for d in s)
    with tvm.target.Target(EMITTED_FOR):
        source = tilelang.lower(func).kernel_source
    assert not [v for v in mod.STATIC_SIZES if re.search(rf"\b{v}\b", source)]


def test_a_padded_compile_that_cannot_serve_the_real_size_falls_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """When no candidate of the padded graph serves every size, the graph is compiled as given."""
    monkeypatch.setattr("cleave_ir.passes.padded_dims.serves_every_size", lambda module: False)
    b = GraphBuilder("rowsum")
    x, w = b.input("x", [20, 64]), b.input("w", [64, 32])
    out = io.StringIO()
    job = compile_graph(b.build(b.reduce("sum", b.matmul(x, w), 1)), tmp_path / "r.py", ["--no-cache", "--keep", "1"], out=out)
    assert "padded sizes (20 -> 32): no candidate serves the real sizes; scheduled at the given sizes" in out.getvalue()
    kernels = [k for k in job.pipeline.walk() if isinstance(k, itgraph.KernelOp)]
    assert kernels and not any("cleave.dynamic" in k.attributes for k in kernels)


def causal_attention(s: int, d: int = 32) -> tgraph.GraphOp:
    """softmax(Q K^T / sqrt(d) + (keep - 1) * 3e4) V over [2, 2, s, d], `keep` a causal mask input (as
    the front end writes it)."""
    b = GraphBuilder("catt")
    q, k, v = (b.input(n, [2, 2, s, d]) for n in "qkv")
    keep = b.input("keep", [1, 1, s, s], causal=0)
    e = b.exp(b.add(b.scale(b.matmul(q, k, transpose_b=True), d**-0.5), b.scale(b.scalar("add", keep, -1.0), 30000.0)))
    return b.build(b.matmul(b.div(e, b.reduce("sum", e, 3)), v))


def test_causal_attention_over_77_keys_is_padded_bounded_and_exact(tmp_path: Path) -> None:
    """Padded keys are in every real query's future, so a causal graph pads like any other. Before,
    a causal mask's dims could not be dynamic and 77 tokens (CLIP's) got one-row tiles: measured on
    the H200 at [8, 12, 77, 64], 87.3 us as given against 4.66 us padded (cuDNN 6.89 us,
    bench/results/pending_checks_2026-12-03_H200.md). Now a FlashAttention loop stopping at the
    diagonal. The Split-K candidate merges its split and query-block grid dims into bx: it indexed
    them with the real size (`bx % (q_d2 // 16)`, a division by zero on the GPU below 16 rows, wrong
    rows at 77), and now with the padded one (`T.ceildiv(q_d2, 16)`)."""
    out = io.StringIO()
    job = compile_graph(causal_attention(77), tmp_path / "c.py", ["--no-cache", "--keep", "3", "--top-k", "1", "--split-counts", "2"], out=out)
    assert "padded sizes: 77 -> 128" in out.getvalue()
    source = (tmp_path / "c.py").read_text()
    assert "T.Pipelined(((16*T.ceildiv(q_d2, 16) - 16*" in source  # bounded at the diagonal, longest first
    assert "q_d2 // 16" not in source
    module = job.pipeline.clone()  # type: ignore[union-attr]
    LowerTileLangPass().apply(Context(), module)
    graph = causal_attention(77)
    rng = np.random.default_rng(5)
    mask = np.tril(np.ones((1, 1, 77, 77)))
    candidates = candidate_kernels(module)
    assert any("split" in name for name, _ in candidates)
    for draw in (rng.standard_normal, lambda shape: 4.0 * rng.uniform(-1.0, 1.0, shape)):
        inputs = [draw((2, 2, 77, 32)) for _ in range(3)] + [mask]
        (ref,) = run_graph(graph, inputs)
        for name, kernels in candidates:
            got = run_kernels(kernels, inputs)
            got = np.asarray(got[0] if isinstance(got, (list, tuple)) else got, dtype=np.float64)
            assert max_relative_error(ref, got.reshape(ref.shape)) < 1e-2, name


def test_a_mean_over_an_awkward_dim_divides_by_its_real_size(tmp_path: Path) -> None:
    """A mean over 100 columns, padded to 128, became a sum scaled by 1/128 in kernels serving 100:
    `cleave compile` shipped it (max relative error 0.22 against the graph, since 1f28bd6). The padded
    graph now writes the mean as a sum scaled by 1/100 before it pads (a padded graph runs at its real
    sizes only), and cleave-decompose still refuses a mean over a dim that varies."""
    b = GraphBuilder("rowmean")
    x = b.input("x", [64, 100])
    graph = b.build(b.reduce("mean", x, 1))
    padded = padded_graph(graph)
    assert padded is not None
    assert not [op for op in padded.body.walk() if isinstance(op, tgraph.ReduceOp) and op.kind.data == tgraph.ReduceKind.MEAN]
    assert [op.value for op in padded.body.walk() if isinstance(op, tgraph.ScaleOp)] == [pytest.approx(1 / 100)]
    job = compile_graph(graph, tmp_path / "m.py", ["--no-cache", "--keep", "2"], out=io.StringIO())
    module = job.pipeline.clone()  # type: ignore[union-attr]
    LowerTileLangPass().apply(Context(), module)
    rng = np.random.default_rng(3)
    for xs in (rng.uniform(-1.0, 3.0, (64, 100)), 4.0 * rng.standard_normal((64, 100))):
        (ref,) = run_graph(graph, [xs])
        for name, kernels in candidate_kernels(module):
            out = run_kernels(kernels, [xs])
            got = np.asarray(out[0] if isinstance(out, (list, tuple)) else out, dtype=np.float64)
            assert max_relative_error(ref, got.reshape(ref.shape)) < 1e-2, name


def test_a_norm_over_awkward_widths_holds_its_padded_width(tmp_path: Path) -> None:
    """A LayerNorm (no affine) and GELU over 37 rows of 3000 (bf16): no tile of a prime row count and a
    width no thread count divides lays out, so the graph was cut into three kernels (the first a
    single block over all 37 rows). Its rows padded alone (37 -> 64) gave one kernel of [4, 3000]
    tiles, which lay out over 32 threads only: 255 registers and 7 KB of spills a thread (ptxas for
    sm_90a). Padded whole (37 -> 64, 3000 -> 3072), its whole-row kernels cannot serve another width,
    but they serve every width up to 3072: the width is held (`cleave.bounded`), each row one block
    of 128 threads, the padding masked before both sums. Interpreted against the graph at the real
    size."""
    b = GraphBuilder("ln_gelu")
    x = b.input("x", [37, 3000], "bf16")
    xc = b.sub(x, b.reduce("mean", x, 1))
    n = b.mul(xc, b.rsqrt(b.scalar("add", b.reduce("mean", b.square(xc), 1), 1e-5)))
    graph = b.build(b.gelu(n))
    out = io.StringIO()
    job = compile_graph(graph, tmp_path / "ln.py", ["--no-cache", "--keep", "2"], out=out)
    assert "padded sizes: 37 -> 64, 3000 -> 3072 (dynamic dims" in out.getvalue()
    module = job.pipeline.clone()  # type: ignore[union-attr]
    kernels = [k for k in module.walk() if isinstance(k, itgraph.KernelOp)]
    assert kernels and all(itgraph.bounded_sizes(k) == {"x_d1": 3072} for k in kernels)
    assert all(cast(IntegerAttr, k.attributes["cleave.threads"]).value.data >= 128 for k in kernels)
    LowerTileLangPass().apply(Context(), module)
    candidates = candidate_kernels(module)
    assert candidates and all(len(kernels) == 1 for _, kernels in candidates)
    rng = np.random.default_rng(9)
    for shift in (0.0, 40.0):  # normal, and shifted far from zero
        raw = rng.standard_normal((37, 3000)).astype(np.float32) + np.float32(shift)
        bits = raw.view(np.uint32)  # rounded to bf16 (to nearest even): the graph and the kernels read the same values
        xs = ((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000).astype(np.uint32).view(np.float32).astype(np.float64)
        (ref,) = run_graph(graph, [xs])
        for name, kernels in candidates:
            got = run_kernels(kernels, [xs])
            got = np.asarray(got[0] if isinstance(got, (list, tuple)) else got, dtype=np.float64)
            assert max_relative_error(ref, got.reshape(ref.shape)) < 2e-2, (shift, name)


def test_a_mean_over_a_declared_dynamic_dim_is_not_decomposed_for_padding() -> None:
    """A graph with an awkward static dim (100 rows) and a mean over a declared dynamic dim: writing
    that mean as a sum scaled by its representative size would hold at one size only, so the graph has
    no padded form (compiled as given, cleave-decompose refuses it in one line)."""
    b = GraphBuilder("dynmean")
    x = b.input("x", [100, 256], dynamic=[1])
    assert padded_graph(b.build(b.reduce("mean", x, 1))) is None


def test_a_bounded_kernel_is_kept_beside_a_candidate_that_serves_every_size(tmp_path: Path) -> None:
    """Stable Diffusion's self-attention at head dim 40 (bench/probes/unseen/sd_self_attention_d40.mlir, here 2
    heads of 1024 tokens, not 8 of 4096, so that the kernels interpret in seconds): padded to 64, its
    FlashAttention and Split-K kernels serve 40 only held at 64 (a tile spans the head dim). They were
    dropped because the candidate that materializes the [S, S] scores serves every size (at 4096 tokens
    estimated 114.5 us against 30.3). Now a padded graph's kernels are also held where every candidate
    that serves every size is estimated `BOUNDED_SPEEDUP` times slower; each kept candidate equals the
    graph at the real size."""
    from cleave_ir.run import load_module

    text = (ROOT / "bench/probes/unseen/sd_self_attention_d40.mlir").read_text().replace("[1, 8, ", "[1, 2, ").replace("4096", "1024")
    (tmp_path / "sd.mlir").write_text(text)
    graph = load_module(str(tmp_path / "sd.mlir")).body.block.first_op
    out = io.StringIO()
    job = compile_graph(graph.clone(), tmp_path / "sd.py", ["--no-cache", "--keep", "2"], out=out)
    report = out.getvalue()
    assert "padded sizes: 40 -> 64" in report and "@sd_self_attention_mm" not in report, report
    module = job.pipeline.clone()  # type: ignore[attr-defined]
    kernels = [k for k in module.walk() if isinstance(k, itgraph.KernelOp)]
    assert any("cleave.bounded" in k.attributes for k in kernels)
    LowerTileLangPass().apply(Context(), module)
    rng = np.random.default_rng(11)
    xs = [3.0 * rng.standard_normal((1, 2, 1024, 40)) for _ in range(3)]  # logits in the tens: the max matters
    (ref,) = run_graph(graph, xs)
    for name, ks in candidate_kernels(module):
        got = np.asarray(run_kernels(ks, xs)[0], dtype=np.float64)
        assert max_relative_error(ref, got.reshape(ref.shape)) < 2e-2, name
