"""cleave-canonicalize: softmax written with its max shift, and norms written with div/sqrt, reach the
forms of the examples (hence the same search, candidates and schedules); graphs it cannot prove
equal are left alone.
"""

from __future__ import annotations

import re
from functools import cache

import pytest
from xdsl.context import Context

from cleave_ir.builder import GraphBuilder, module_of
from cleave_ir.dialects import tgraph
from cleave_ir.interpreter import max_relative_error, random_inputs, run_graph
from cleave_ir.passes.canonicalize import CanonicalizePass, canonicalize
from cleave_ir.passes.pipeline import PipelinePass, rank_candidates
from cleave_ir.passes.superoptimize import SuperoptimizePass
from cleave_ir.passes.symbolize import SymbolizePass
from cleave_ir.run import resize_graph
from conftest import ROOT, SMALL, load_example, only_graph, parse_text

INPUTS = ROOT / "lit_tests" / "passes" / "Inputs"


def max_form(name: str) -> tgraph.GraphOp:
    """lit_tests/passes/Inputs/<name>_max.mlir: the example with softmax written as exp(x - max x) / sum."""
    return only_graph(parse_text((INPUTS / f"{name}_max.mlir").read_text(), f"{name}_max.mlir"))


@pytest.mark.parametrize("name", ["mha", "gqa_decode"])
def test_max_form_becomes_the_example(name: str) -> None:
    g = max_form(name)
    xs = [x * 0.05 for x in random_inputs(resize_graph(g, SMALL), 0)]
    before = run_graph(resize_graph(g, SMALL), xs)[0]
    assert canonicalize(g)
    assert str(g) == str(load_example(name))  # the same graph, names and all: the same search
    assert max_relative_error(before, run_graph(resize_graph(g, SMALL), xs)[0]) < 1e-9


def _search(graph: tgraph.GraphOp, capsys: pytest.CaptureFixture[str]) -> tuple[list[str], str]:
    module = module_of(graph)
    capsys.readouterr()
    for p in (CanonicalizePass(), SymbolizePass(), SuperoptimizePass()):
        p.apply(Context(), module)
    stats = re.search(r"explored (\d+), pruned (\d+), classes (\d+), candidates (\d+)", capsys.readouterr().err)
    assert stats is not None
    notes = sorted(str(getattr(x.attributes.get("cleave.note"), "data", "")) for x in module.body.block.ops if isinstance(x, tgraph.GraphOp))
    return notes, stats.group(0)


def test_max_form_search_finds_the_same_candidates_at_the_same_cost(capsys: pytest.CaptureFixture[str]) -> None:
    """gqa_decode with exp(s - max s): the FlashDecoding candidates, the same terms explored."""
    plain, plain_stats = _search(resize_graph(load_example("gqa_decode"), SMALL), capsys)
    shifted, shifted_stats = _search(resize_graph(max_form("gqa_decode"), SMALL), capsys)
    assert shifted == plain and shifted_stats == plain_stats
    assert any("split %k dim 2 by s, split %v dim 2 by s, 2 partial results" in n for n in shifted)


def test_norm_forms_become_the_rsqrt_form() -> None:
    """x / sqrt(mean(x*x)) and x * reciprocal(sqrt(..)) written the other way round: the example."""
    example = [op.name for op in load_example("rmsnorm_matmul").block.ops]
    for form in ("div", "reciprocal"):
        b = GraphBuilder("rmsnorm_matmul", "f16")
        x = b.input("x", [1, 4096], dynamic=[0])
        w = b.input("w", [4096, 64])
        ms = b.scale(b.reduce("sum", b.mul(x, x), 1), 1 / 4096)
        sd = b.sqrt(ms)
        n = b.div(x, sd) if form == "div" else b.mul(b.reciprocal(sd), x)
        g = b.build(b.matmul(n, w))
        xs = random_inputs(g, 0)
        before = run_graph(g, xs)[0]
        assert canonicalize(g)
        ops = [op.name for op in g.block.ops]
        assert ops == example == ["tgraph.square", "tgraph.reduce", "tgraph.scale", "tgraph.rsqrt", "tgraph.mul", "tgraph.matmul", "tgraph.output"], (form, ops)
        mul = next(op for op in g.block.ops if isinstance(op, tgraph.MulOp))
        assert mul.lhs is g.inputs[0]  # x * rsqrt(..), as the example
        assert max_relative_error(before, run_graph(g, xs)[0]) < 1e-9


def _softmax_like(kind: str) -> tgraph.GraphOp:
    b = GraphBuilder(kind, "f32")
    x = b.input("x", [4, 64])
    v = b.input("v", [64, 16])
    m = b.reduce("max", x, 0 if kind == "max_over_rows" else 1)
    e = b.exp(b.sub(x, m))
    if kind in ("attention", "max_over_rows", "plus_input"):
        r = b.reduce("sum", e, 1)
    if kind == "attention":  # (e v) / sum e: degree 1 - 1
        return b.build(b.div(b.matmul(e, v), r))
    if kind == "max_over_rows":  # the shift varies along the contracted dim
        return b.build(b.div(b.matmul(e, v), r))
    if kind == "numerator":
        return b.build(e)
    if kind == "sigmoid":
        s = b.sigmoid(e)
        return b.build(b.div(s, b.reduce("sum", s, 1)))
    if kind == "plus_input":
        return b.build(b.add(b.div(e, r), e))
    if kind == "ratio_of_squares":  # (sum e)^2 / sum e^2: degree 2 - 2, through rsqrt and square
        r = b.reduce("sum", e, 1)
        return b.build(b.mul(b.square(b.mul(r, b.rsqrt(b.reduce("sum", b.square(e), 1)))), b.reduce("sum", x, 1)))
    raise AssertionError(kind)


@pytest.mark.parametrize(
    "kind, rewritten",
    [("attention", True), ("ratio_of_squares", True), ("max_over_rows", False), ("numerator", False), ("sigmoid", False), ("plus_input", False)],
)
def test_shift_removed_only_where_proven(kind: str, rewritten: bool) -> None:
    g = _softmax_like(kind)
    before_text = str(g)
    xs = random_inputs(g, 1)
    before = run_graph(g, xs)[0]
    assert canonicalize(g) == rewritten
    maxes = [op for op in g.block.ops if isinstance(op, tgraph.ReduceOp) and op.kind.data == tgraph.ReduceKind.MAX]
    if rewritten:
        assert not maxes
        assert max_relative_error(before, run_graph(g, xs)[0]) < 1e-9
    else:
        assert str(g) == before_text


# --------------------------------------------------------------------------- the default pipeline
# cleave-pipeline runs cleave-canonicalize by default: softmax written with its max shift and norms
# written with div/sqrt reach the candidates, schedules and estimates of the example forms, at the
# same search cost (the search's stats line is identical).


@cache
def _pipelined(text: str, name: str) -> tuple[list[tuple[float, list[str], str]], str, str]:
    """(ranked units, superoptimize stats, graph notes) of `text` (one graph) after the default cleave-pipeline."""
    import contextlib
    import io

    module = module_of(resize_graph(only_graph(parse_text(text, name)), SMALL))
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        PipelinePass(split_counts=(4,), keep=20, top_k=1).apply(Context(), module)
    stats = re.search(r"explored (\d+), pruned (\d+), classes (\d+), candidates (\d+)", err.getvalue())
    assert stats is not None
    notes = " | ".join(sorted(str(getattr(g.attributes.get("cleave.note"), "data", "")) for g in module.body.block.ops if isinstance(g, tgraph.GraphOp)))
    return rank_candidates(module), stats.group(0), notes


@pytest.mark.parametrize("name", ["mha", "gqa_decode"])
def test_default_pipeline_max_form_reaches_the_example_schedules(name: str) -> None:
    plain = _pipelined((ROOT / "examples" / f"{name}.mlir").read_text(), name)
    shifted = _pipelined((INPUTS / f"{name}_max.mlir").read_text(), f"{name}_max")
    assert shifted == plain  # the same kept candidates, kernels, estimates and search stats
    units, _, notes = shifted
    assert units
    assert "div moved after matmul" in notes  # FlashAttention's form is kept
    if name == "gqa_decode":
        assert "exp shifted by the chunk max (log-sum-exp combine)" in notes  # FlashDecoding is kept


@pytest.mark.parametrize("form", ["div_sqrt", "mean_div_sqrt"])
def test_default_pipeline_norm_forms_reach_the_rsqrt_form(form: str) -> None:
    """x / sqrt(sum(x^2) / n), and x / sqrt(mean(x * x)): the candidates of examples/rmsnorm_matmul.mlir."""
    example = "\n".join(line for line in (ROOT / "examples" / "rmsnorm_matmul.mlir").read_text().splitlines() if not line.startswith("//"))
    written = example.replace("tgraph.rsqrt", "tgraph.sqrt").replace("tgraph.mul %x, %rs", "tgraph.div %x, %rs")
    if form == "mean_div_sqrt":
        lines = written.splitlines()
        sq = next(i for i, line in enumerate(lines) if "%sq = " in line)
        lines[sq] = "  %sq = tgraph.mul %x, %x : !tgraph.tensor<[1, 4096], f16>, !tgraph.tensor<[1, 4096], f16> -> !tgraph.tensor<[1, 4096], f16>"
        lines[sq + 1] = "  %ms = tgraph.reduce mean %sq dim 1 : !tgraph.tensor<[1, 4096], f16> -> !tgraph.tensor<[1, 1], f16>"
        del lines[sq + 2]  # the scale by 1/n
        written = "\n".join(lines)
    assert "tgraph.div %x, %rs" in written and "rsqrt" not in written
    assert _pipelined(written, form) == _pipelined(example, "rmsnorm_matmul")


def _attention_with_lse(keys: int = 1024, rows_of_r: bool = True) -> tgraph.GraphOp:
    """softmax(q k^T / sqrt(d)) v and its log-sum-exp m + log(sum exp(s - m)): two outputs, not searched.
    With `rows_of_r` False, the divisor varies along the keys instead (a column sum): no rewrite."""
    b = GraphBuilder("attention_lse")
    q, k, v = b.input("q", [1, 2, 64, 32]), b.input("k", [1, 2, keys, 32]), b.input("v", [1, 2, keys, 32])
    s = b.scale(b.matmul(q, k, transpose_b=True), 32**-0.5)
    m = b.reduce("max", s, 3)
    e = b.exp(b.sub(s, m))
    r = b.reduce("sum", e, 3 if rows_of_r else 2)
    lse = b.cast(b.add(b.log(r), m), "f32") if rows_of_r else b.cast(b.reduce("sum", r, 3), "f32")
    return b.build(b.matmul(b.div(e, r), v), lse)


def test_attention_that_returns_its_log_sum_exp_is_one_streaming_kernel() -> None:
    """Two outputs, so the search does not rewrite the graph: `RowScaleAfterMatmul` writes `(e @ v) / r`,
    and the schedule streams the keys with a running max, the log-sum-exp read after the loop (before:
    two kernels, the first materializing what the second re-reads). Every candidate, interpreted,
    computes both outputs on normal inputs, on inputs of scale 8, and with q of scale 30 (peaked rows)."""
    from cleave_ir.interpreter_tilelang import candidate_kernels, run_kernels
    from cleave_ir.passes.lower_tilelang import lower_module
    from cleave_ir.run import make_context
    import numpy as np

    graph = _attention_with_lse()
    module = module_of(graph.clone())
    PipelinePass(no_search=True, top_k=1).apply(make_context(), module)
    lower_module(module)
    candidates = candidate_kernels(module)
    assert [len(kernels) for _, kernels in candidates][0] == 1, [n for n, _ in candidates]
    for scales in ((1, 1, 1), (8, 8, 8), (30, 1, 1)):
        xs = [x * c for x, c in zip(random_inputs(graph, 5), scales)]
        refs = run_graph(graph, xs)
        for name, kernels in candidates:
            got = run_kernels(kernels, xs)
            for ref, out in zip(refs, got):
                err = max_relative_error(ref, np.asarray(out, dtype=np.float64).reshape(ref.shape))
                assert err <= 2e-2, f"@{name} with q, k, v scaled by {scales}: {err:.3g}"


def test_row_scale_moves_after_the_matmul_only_for_a_row_sum() -> None:
    """`(e / r) @ v` -> `(e @ v) / r` where `r` is one value per row of `e`; not where it varies along
    the keys the matmul sums over (a column sum: the division does not commute with that sum)."""
    moved = _attention_with_lse()
    assert canonicalize(moved)
    names = [o.name for o in moved.block.ops]
    assert names.index("tgraph.matmul", names.index("tgraph.exp")) < names.index("tgraph.div")
    kept = _attention_with_lse(rows_of_r=False)
    canonicalize(kept)
    div = next(o for o in kept.block.ops if isinstance(o, tgraph.DivOp))
    assert any(isinstance(u.operation, tgraph.MatmulOp) for u in div.result.uses)
