"""cleave-split-projections: a Split-K candidate for graphs of several projections (which the search does
not take). The candidate and its kernels run in the interpreters against float64 on fresh inputs of
several distributions; graphs outside the form get no candidate. Random graphs of 2-4 projections with
epilogues run under the `slow` marker: `python -m pytest tests/test_split_projections.py -m slow`."""

from __future__ import annotations

from functools import cache

import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cleave_ir.builder import GraphBuilder, module_of
from cleave_ir.dialects import tgraph
from cleave_ir.interpreter import max_relative_error, run_graph
from cleave_ir.interpreter_tilelang import candidate_kernels, run_kernels
from cleave_ir.passes.concretize import ConcretizePass
from cleave_ir.passes.lower_tilelang import lower_module
from cleave_ir.passes.pipeline import PipelinePass
from cleave_ir.passes.split_projections import MIN_K, SplitProjectionsPass, split_projections_graph
from cleave_ir.passes.symbolize import SymbolizePass
from cleave_ir.run import make_context

T, K = 8, 1024


def projections(k: int = K, rows: int = T) -> tgraph.GraphOp:
    """q = x @ wq [K, 96], k = x @ wk^T (nn.Linear's [32, K]), v = silu(x @ wv) + r: three outputs of three widths."""
    b = GraphBuilder("proj")
    x = b.input("x", [rows, k])
    wq, wk, wv = b.input("wq", [k, 96]), b.input("wk", [32, k]), b.input("wv", [k, 16])
    r = b.input("r", [rows, 16])
    return b.build(b.matmul(x, wq), b.matmul(x, wk, transpose_b=True), b.add(b.unary("silu", b.matmul(x, wv)), r))


def inputs(graph: tgraph.GraphOp, dist: str, seed: int = 3) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for a in graph.inputs:
        shape = tuple(int(d) for d in tgraph.tensor_type(a).shape)
        if dist == "normal":
            x = rng.standard_normal(shape)
        elif dist == "uniform":  # all positive: no cancellation between the parts
            x = rng.uniform(0.0, 1.0, shape)
        else:  # heavy tails, a few large entries per row
            x = rng.standard_t(2, shape)
        out.append((x / np.sqrt(shape[-1]) if a.name_hint and a.name_hint.startswith("w") else x).astype(np.float16).astype(np.float64))
    return out


@cache
def concretized():  # noqa: ANN201 - the module with the input graph and one concrete candidate per split count
    module = module_of(projections())
    ctx = make_context()
    for p in (SymbolizePass(), SplitProjectionsPass(), ConcretizePass(split_counts=(2, 8))):
        p.apply(ctx, module)
    return module


@pytest.mark.parametrize("dist", ["normal", "uniform", "heavy"])
def test_candidate_equals_the_graph(dist: str) -> None:
    graph = projections()
    xs = inputs(graph, dist)
    want = run_graph(graph, xs)
    cands = [g for g in concretized().walk() if isinstance(g, tgraph.GraphOp) and "cleave.candidate_of" in g.attributes]
    assert sorted(g.sym_name.data for g in cands) == ["proj_split_s2", "proj_split_s8"]
    for g in cands:
        got = run_graph(g, xs)
        assert max(max_relative_error(w, o) for w, o in zip(want, got, strict=True)) < 1e-9, g.sym_name.data


def outside_the_form() -> list[tgraph.GraphOp]:
    """Graphs the pass leaves alone: one output; a short K; a matmul of a computed value; an output
    computed from no product; contracting dims that differ."""
    out = []
    b = GraphBuilder("one_output")
    x, w = b.input("x", [T, K]), b.input("w", [K, 64])
    out.append(b.build(b.matmul(x, w)))
    b = GraphBuilder("short_k")
    x = b.input("x", [T, MIN_K // 2])
    out.append(b.build(b.matmul(x, b.input("wa", [MIN_K // 2, 64])), b.matmul(x, b.input("wb", [MIN_K // 2, 32]))))
    b = GraphBuilder("chain")  # LoRA: (x @ A) @ B reads a product
    x = b.input("x", [T, K])
    d = b.matmul(x, b.input("a", [K, 16]))
    out.append(b.build(b.add(b.matmul(x, b.input("w", [K, 64])), b.matmul(d, b.input("bb", [16, 64]))), d))
    b = GraphBuilder("no_product")
    x = b.input("x", [T, K])
    out.append(b.build(b.matmul(x, b.input("w", [K, 64])), b.scale(x, 2.0)))
    b = GraphBuilder("two_ks")
    x, y = b.input("x", [T, K]), b.input("y", [T, 2 * K])
    out.append(b.build(b.matmul(x, b.input("wa", [K, 64])), b.matmul(y, b.input("wb", [2 * K, 64]))))
    return out


def test_graphs_outside_the_form_get_no_candidate() -> None:
    ctx = make_context()
    for g in outside_the_form():
        module = module_of(g)
        SymbolizePass().apply(ctx, module)
        (sym,) = [op for op in module.walk() if isinstance(op, tgraph.GraphOp)]
        assert split_projections_graph(sym, "c") is None, g.sym_name.data


def test_pipeline_kernels_agree_with_the_graph() -> None:
    """The whole pipeline keeps the split candidate beside the one-kernel form and the per-matmul cut;
    every candidate's TileLang kernels, interpreted, agree with the graph."""
    graph = projections()
    module = module_of(graph.clone())
    PipelinePass(keep=4).apply(make_context(), module)
    lower_module(module)
    names = [name for name, _ in candidate_kernels(module)]
    assert any(n.startswith("proj_split_s") for n in names), names
    for dist in ("normal", "heavy"):
        xs = inputs(graph, dist, seed=5)
        want = run_graph(graph, xs)
        for name, kernels in candidate_kernels(module):
            got = run_kernels(kernels, xs)
            err = max(max_relative_error(w, o) for w, o in zip(want, got, strict=True))
            assert err < 2e-2, f"{name} on {dist}: {err:.3g}"


@st.composite
def random_projections(draw) -> tgraph.GraphOp:
    """2-4 projections of one x [M, K] (M 1-64, K 1024-3072), against [K, N] or nn.Linear's [N, K] weights of
    widths 8-1024, each output the product, its silu, the product plus a residual input, or silu of one times
    another of the same width (SwiGLU's gate and up)."""
    rnd = random.Random(draw(st.integers(0, 2**16)))
    m, k = rnd.choice((1, 3, 16, 48, 64)), rnd.choice((1024, 2048, 3072))
    b = GraphBuilder("proj")
    x = b.input("x", [m, k])
    products = []
    for i in range(rnd.randint(2, 4)):
        n = rnd.choice((8, 24, 64, 200, 256, 1024))
        transposed = rnd.random() < 0.4
        w = b.input(f"w{i}", [n, k] if transposed else [k, n])
        products.append(b.scale(b.matmul(x, w, transpose_b=transposed), 1.0 / k**0.5))
    outs = []
    for p in products:
        kind = rnd.choice(["product", "silu", "residual", "gated"])
        twin = [q for q in products if q is not p and tgraph.tensor_type(q).shape == tgraph.tensor_type(p).shape]
        if kind == "silu":
            outs.append(b.unary("silu", p))
        elif kind == "residual":
            outs.append(b.add(p, b.input(f"r{len(outs)}", [m, int(tgraph.tensor_type(p).shape[1])])))
        elif kind == "gated" and twin:
            outs.append(b.mul(b.unary("silu", p), twin[0]))
        else:
            outs.append(p)
    return b.build(*outs)


@pytest.mark.slow
@settings(max_examples=20, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(random_projections())
def test_random_projection_graphs_compile(graph: tgraph.GraphOp) -> None:
    """Every kept candidate (the split forms among them) agrees with the graph, its kernels interpreted."""
    module = module_of(graph.clone())
    PipelinePass(keep=3).apply(make_context(), module)
    lower_module(module)
    names = [name for name, _ in candidate_kernels(module)]
    assert any(n.startswith("proj_split_s") for n in names), names
    xs = inputs(graph, "normal", seed=7)
    want = run_graph(graph, xs)
    for name, kernels in candidate_kernels(module):
        got = run_kernels(kernels, xs)
        err = max(max_relative_error(w, o) for w, o in zip(want, got, strict=True))
        assert err < 2e-2, f"{name}: {err:.3g}"
