"""Elementwise op semantics (dialects/semantics.py): each op's numpy meaning against torch, its
algebraic properties checked numerically, its TileLang expression through schedule + lowering +
the tilelang interpreter, and the ops of real layers (gelu, scalar, cast, mean) through the search."""

from __future__ import annotations

from fractions import Fraction
from functools import cache

import numpy as np
import pytest
import torch
from xdsl.context import Context
from xdsl.dialects.builtin import Float64Type, FloatAttr

from cleave_ir.builder import GraphBuilder, module_of
from cleave_ir.diagnostics import CleaveError
from cleave_ir.dialects import itgraph, tgraph
from cleave_ir.dialects.semantics import Domain, Monotone, Semantics
from cleave_ir.interpreter import max_relative_error, run_graph
from cleave_ir.interpreter_tilelang import candidate_kernels, run_kernels
from cleave_ir.passes.decompose import decompose
from cleave_ir.passes.lower_tilelang import lower_module
from cleave_ir.passes.pipeline import PipelinePass
from cleave_ir.passes.superoptimize import superoptimize_graph
from cleave_ir.runtime import torch_reference

SHAPE = (6, 40)


def _scalar(kind: str, c: float) -> dict:
    return {"kind": tgraph.ScalarKindAttr(tgraph.ScalarKind(kind)), "constant": FloatAttr(c, Float64Type())}


# (name, op class, properties): every elementwise op, gelu in both forms, each scalar operation
UNARY_CASES = [
    *((c.short_name(), c, {}) for c in tgraph.UNARY_OPS if c is not tgraph.GeluOp),
    *((f"gelu_{a.value}", tgraph.GeluOp, {"approximate": tgraph.GeluApproximateAttr(a)}) for a in tgraph.GeluApproximate),
    *((f"scalar_{k.value}", tgraph.ScalarOp, _scalar(k.value, c)) for k in tgraph.ScalarKind for c in (2.5, -0.75)),
    ("scale", tgraph.ScaleOp, {"factor": FloatAttr(-1.5, Float64Type())}),
]
BINARY_CASES = [(c.short_name(), c) for c in tgraph.BINARY_OPS]


def _distributions(domain: Domain, rng: np.random.Generator, shape=SHAPE) -> dict[str, np.ndarray]:
    """Inputs of several distributions within `domain`: normal, wide-range (1e-3..1e3), mixed-sign
    small, and all-negative (real domain only)."""
    wide = np.exp(rng.uniform(np.log(1e-3), np.log(1e3), shape))
    out = {
        "normal": rng.standard_normal(shape),
        "wide": wide * rng.choice([-1.0, 1.0], shape),
        "small": rng.standard_normal(shape) * 1e-3,
        "negative": -np.abs(rng.standard_normal(shape)) * 5,
    }
    if domain == Domain.POSITIVE:
        out = {k: np.abs(v) + 1e-3 for k, v in out.items()}
    if domain == Domain.NONZERO:
        out = {k: np.where(np.abs(v) < 1e-3, 1e-3, v) for k, v in out.items()}
    return out


def _unary_graph(cls: type[tgraph.ElementwiseOp], props: dict, shape=SHAPE, elt: str = "f64") -> tgraph.GraphOp:
    b = GraphBuilder("g", elt)
    x = b.input("x", list(shape))
    return b.build(b.elementwise(cls, [x], tgraph.tensor_type(x), props))


def _sem(cls, props) -> Semantics:
    return cls.semantics_of(props)


def _close(want: np.ndarray, got: np.ndarray, rtol: float = 1e-12) -> None:
    """Elementwise rtol, plus rtol of the largest finite |want| (cancellation, e.g. 1 + tanh(-x))."""
    finite = np.abs(want[np.isfinite(want)])
    scale = float(finite.max()) if finite.size else 0.0
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * scale + 1e-300, equal_nan=True)


# --------------------------------------------------------------------------- numpy vs torch


@pytest.mark.parametrize("name,cls,props", UNARY_CASES, ids=[c[0] for c in UNARY_CASES])
def test_unary_interpreter_matches_torch(name: str, cls, props: dict) -> None:
    graph = _unary_graph(cls, props)
    rng = np.random.default_rng(1)
    for dist, x in _distributions(_sem(cls, props).algebra.domain, rng).items():
        (got,) = run_graph(graph, [x])
        (want,) = torch_reference(graph, [torch.from_numpy(x)])
        with np.errstate(all="ignore"):
            _close(want.numpy(), got)


@pytest.mark.parametrize("name,cls", BINARY_CASES, ids=[c[0] for c in BINARY_CASES])
def test_binary_interpreter_matches_torch(name: str, cls) -> None:
    b = GraphBuilder("g", "f64")
    x, col = b.input("x", list(SHAPE)), b.input("col", [SHAPE[0], 1])
    graph = b.build(b.binary(cls, x, col))
    rng = np.random.default_rng(2)
    xs, cols = _distributions(Domain.NONZERO, rng), _distributions(Domain.NONZERO, rng, (SHAPE[0], 1))
    for dist in xs:
        (got,) = run_graph(graph, [xs[dist], cols[dist]])
        (want,) = torch_reference(graph, [torch.from_numpy(xs[dist]), torch.from_numpy(cols[dist])])
        _close(want.numpy(), got)


@pytest.mark.parametrize("kind", list(tgraph.ReduceKind))
def test_reduce_matches_torch(kind: tgraph.ReduceKind) -> None:
    b = GraphBuilder("g", "f64")
    x = b.input("x", list(SHAPE))
    graph = b.build(b.reduce(kind.value, x, 1))
    for x in _distributions(Domain.REAL, np.random.default_rng(3)).values():
        (got,) = run_graph(graph, [x])
        (want,) = torch_reference(graph, [torch.from_numpy(x)])
        _close(want.numpy(), got)


def test_gelu_forms_match_their_definitions() -> None:
    """Independent formulas: erf form via torch.erf, tanh form as written in the GELU paper."""
    x = np.linspace(-8, 8, 401)
    erf = tgraph.GeluOp.semantics_of({"approximate": tgraph.GeluApproximateAttr(tgraph.GeluApproximate.ERF)})
    tanh = tgraph.GeluOp.semantics_of({"approximate": tgraph.GeluApproximateAttr(tgraph.GeluApproximate.TANH)})
    _close(x * 0.5 * (1 + torch.erf(torch.from_numpy(x) / 2**0.5).numpy()), erf.numpy(x))
    _close(0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3))), tanh.numpy(x))
    assert np.max(np.abs(erf.numpy(x) - tanh.numpy(x))) < 1e-3  # the approximation is close, not equal


def test_cast_rounds_in_declared_mode_only() -> None:
    b = GraphBuilder("g", "f32")
    x = b.input("x", [4, 8])
    graph = b.build(b.cast(b.cast(x, "f16"), "f32"))
    v = np.full((4, 8), 1.0 + 2.0**-13)  # not an f16 value
    assert run_graph(graph, [v])[0][0, 0] == v[0, 0]  # float64 reference: the identity
    assert run_graph(graph, [v], mode="declared")[0][0, 0] == 1.0  # rounded through f16


# --------------------------------------------------------------------------- algebraic properties


def _check_unary_algebra(sem: Semantics, x: np.ndarray) -> None:
    a = sem.algebra
    f = sem.numpy
    xs = np.sort(x.ravel())
    xs = xs[np.abs(xs) <= 50]  # exp(3 * 50) is still finite: no inf - inf in the checks
    with np.errstate(all="ignore"):
        y = f(xs)
        if a.monotone == Monotone.INCREASING:
            assert np.all(np.diff(y) >= -1e-12 * np.abs(y[1:])), "not increasing"
        if a.monotone == Monotone.DECREASING:
            assert np.all(np.diff(y) <= 1e-12 * np.abs(y[1:])), "not decreasing"
        if a.nonnegative:
            assert np.all(y >= 0)
        if a.odd:
            _close(-f(xs), f(-xs), 1e-10)
        if a.even:
            _close(f(xs), f(-xs), 1e-10)
        if a.homogeneous is not None:
            for c in (0.5, 3.0):
                _close(c ** float(a.homogeneous) * f(xs), f(c * xs), 1e-10)
        if a.linear:
            ys = xs[::-1].copy()
            _close(f(xs) + f(ys), f(xs + ys), 1e-9)
            _close(-2.0 * f(xs), f(-2.0 * xs), 1e-10)
        if a.monotone == Monotone.INCREASING:  # the rewrite the search may use: f(max) = max(f)
            ys = xs[::-1].copy()
            _close(np.maximum(f(xs), f(ys)), f(np.maximum(xs, ys)), 1e-12)


@pytest.mark.parametrize("name,cls,props", UNARY_CASES, ids=[c[0] for c in UNARY_CASES])
def test_unary_algebra_holds(name: str, cls, props: dict) -> None:
    sem = _sem(cls, props)
    for x in _distributions(sem.algebra.domain, np.random.default_rng(4)).values():
        _check_unary_algebra(sem, x)


@pytest.mark.parametrize("name,cls", BINARY_CASES, ids=[c[0] for c in BINARY_CASES])
def test_binary_algebra_holds(name: str, cls) -> None:
    sem = cls.SEMANTICS
    a, f = sem.algebra, sem.numpy
    rng = np.random.default_rng(5)
    x, y, z = (rng.standard_normal(64) * 3 for _ in range(3))
    if a.commutative:
        _close(f(x, y), f(y, x))
    if a.associative:
        _close(f(f(x, y), z), f(x, f(y, z)), 1e-9)
    if a.idempotent:
        _close(x, f(x, x))
    if a.identity is not None:
        _close(x, f(np.full_like(x, a.identity), x))
    for g_name in a.distributes_over:
        g = tgraph.BINARY_BY_NAME[g_name].SEMANTICS.numpy
        _close(g(f(x, y), f(x, z)), f(x, g(y, z)), 1e-9)
    if a.linear:
        _close(f(x, y) + f(z, x), f(x + z, y + x), 1e-9)
    for i, linear in enumerate(a.linear_in):
        if linear:  # linear in argument i, the other held fixed
            g = (lambda u: f(u, y)) if i == 0 else (lambda u: f(x, u))
            _close(g(z) + g(2.0 * z[::-1]), g(z + 2.0 * z[::-1]), 1e-9)
            _close(-3.0 * g(z), g(-3.0 * z), 1e-10)
    if isinstance(a.monotone, tuple):
        base = f(x, y)
        for i, m in enumerate(a.monotone):
            bumped = f(x + 1.0, y) if i == 0 else f(x, y + 1.0)
            if m == Monotone.INCREASING:
                assert np.all(bumped >= base)
            elif m == Monotone.DECREASING:
                assert np.all(bumped <= base)


def test_non_monotone_ops_are_not_marked_monotone() -> None:
    """The properties a sound search relies on are not over-claimed for the usual suspects."""
    for cls in (tgraph.SquareOp, tgraph.SiluOp, tgraph.GeluOp, tgraph.AbsOp, tgraph.ReciprocalOp):
        props = {"approximate": tgraph.GeluApproximateAttr(tgraph.GeluApproximate.ERF)} if cls is tgraph.GeluOp else {}
        assert cls.semantics_of(props).algebra.monotone is None, cls.name
    assert tgraph.DivOp.SEMANTICS.algebra.monotone is None and tgraph.MulOp.SEMANTICS.algebra.monotone is None
    # affine, not linear, in each argument alone (sum_k (x_k + c) = sum_k x_k + n c); 1 / x is not linear
    assert not any(tgraph.AddOp.SEMANTICS.algebra.linear_in) and not any(tgraph.SubOp.SEMANTICS.algebra.linear_in)
    assert tgraph.DivOp.SEMANTICS.algebra.linear_in == (True, False)


# --------------------------------------------------------------------------- schedule + lower + tilelang


@cache
def _compiled(name: str) -> tuple:
    """A [64, 128] f16 graph `x -> op -> out` through cleave-pipeline (no search) and the lowering."""
    cls, props = next((c, p) for n, c, p in UNARY_CASES if n == name) if name != "cast" else (None, None)
    b = GraphBuilder("g", "f16")
    x = b.input("x", [64, 128])
    if cls is None:  # f16 -> f32 -> (sum in f32) -> f16
        y = b.cast(b.reduce("sum", b.cast(x, "f32"), 1), "f16")
    else:
        y = b.elementwise(cls, [x], tgraph.tensor_type(x), props)
    graph = b.build(y)
    module = module_of(graph)
    PipelinePass(top_k=1, keep=1, no_search=True).apply(Context(), module)
    lower_module(module)
    return graph, candidate_kernels(module)


LOWERED = ["tanh", "gelu_erf", "gelu_tanh", "exp2", "log", "abs", "silu", "sigmoid", "reciprocal",
           "scalar_rsub", "scalar_rdiv", "scalar_max", "scalar_min", "cast"]


@pytest.mark.parametrize("name", LOWERED)
def test_elementwise_ops_lower_and_compute(name: str) -> None:
    graph, candidates = _compiled(name)
    assert candidates
    rng = np.random.default_rng(6)
    x = rng.standard_normal((64, 128)) * 3
    if name == "log":
        x = np.abs(x) + 0.1
    if name in ("reciprocal", "scalar_rdiv"):
        x = np.where(np.abs(x) < 0.1, 0.1, x)
    x = x.astype(np.float16).astype(np.float64)
    (want,) = run_graph(graph, [x])
    for _, kernels in candidates:
        (got,) = run_kernels(kernels, [x])
        assert max_relative_error(want, got) < 2e-3, name


def test_min_lowers_and_computes() -> None:
    b = GraphBuilder("g", "f16")
    x, col = b.input("x", [64, 128]), b.input("col", [64, 1])
    graph = b.build(b.min(x, col))
    module = module_of(graph)
    PipelinePass(top_k=1, keep=1, no_search=True).apply(Context(), module)
    lower_module(module)
    rng = np.random.default_rng(7)
    xs = [rng.standard_normal(s).astype(np.float16).astype(np.float64) for s in ((64, 128), (64, 1))]
    (want,) = run_graph(graph, xs)
    for _, kernels in candidate_kernels(module):
        assert max_relative_error(want, run_kernels(kernels, xs)[0]) == 0.0


# --------------------------------------------------------------------------- decompose and search


def test_mean_decomposes_to_sum_and_scale() -> None:
    b = GraphBuilder("g", "f32")
    x = b.input("x", [4, 64])
    graph = b.build(b.reduce("mean", x, 1))
    xs = [np.random.default_rng(8).standard_normal((4, 64))]
    (want,) = run_graph(graph, xs)
    module = module_of(graph)
    decompose(module)
    names = [op.name for op in graph.block.ops]
    assert names == ["tgraph.reduce", "tgraph.scale", "tgraph.output"]
    _close(want, run_graph(graph, xs)[0])


def test_mean_over_a_symbolic_dim_is_refused() -> None:
    b = GraphBuilder("g", "f32")
    x = b.input("x", [4, "N"])
    module = module_of(b.build(b.reduce("mean", x, 1)))
    with pytest.raises(CleaveError, match="reduce mean over dim 1 of symbolic size N"):
        decompose(module)


def test_search_handles_layer_ops() -> None:
    """tgraph.scalar, cast and mean in the input graph (an f32 norm before an f16 matmul): the search
    evaluates them (opaque where they have no kind of their own), keeps the output's element type,
    and its candidates are equivalent to the input."""
    b = GraphBuilder("n", "f16")
    x, w = b.input("x", [8, 16]), b.input("w", [16, 12])
    x32 = b.cast(x, "f32")
    r = b.rsqrt(b.scalar("add", b.reduce("mean", b.square(x32), 1), 1e-6))
    h = b.matmul(b.cast(b.mul(x32, r), "f16"), w)
    graph = b.build(h)
    cands, stats = superoptimize_graph(graph, max_ops=8, time_limit=60)
    assert cands, stats.line()
    out_elt = tgraph.tensor_type(graph.function_type.outputs.data[0]).element_type
    assert all(tgraph.tensor_type(c.graph.function_type.outputs.data[0]).element_type == out_elt for c in cands)
    # the rescale after the matmul: some candidate multiplies x by w directly
    assert any(
        isinstance(op, tgraph.MatmulOp) and op.lhs in c.graph.inputs for c in cands for op in c.graph.block.ops
    )
    rng = np.random.default_rng(9)
    xs = [rng.standard_normal((8, 16)), rng.standard_normal((16, 12))]
    (want,) = run_graph(graph, xs)
    for c in cands:
        c.graph.verify()
        assert max_relative_error(want, run_graph(c.graph, xs, bindings={"s": 2})[0]) < 1e-9, c.note


# --------------------------------------------------------------------------- select and data movement


def _layout_graph() -> tgraph.GraphOp:
    b = GraphBuilder("g", "f32")
    x, y, m = b.input("x", [2, 3, 4]), b.input("y", [2, 3, 4]), b.input("m", [1, 3, 4])
    t = b._add(tgraph.TransposeOp(x, [0, 2, 1]))
    s = b._add(tgraph.SliceOp(x, 2, 1, 2))
    c = b._add(tgraph.ConcatOp([x, y], 1))
    w = b._add(tgraph.SelectOp(m, x, y))
    return b.build(t, s, c, w)


def test_select_and_data_movement_match_torch() -> None:
    graph = _layout_graph()
    rng = np.random.default_rng(10)
    for scale in (1.0, 1e3):
        xs = [rng.standard_normal((2, 3, 4)) * scale, -np.abs(rng.standard_normal((2, 3, 4))), np.tril(np.ones((3, 4)))[None]]
        got = run_graph(graph, xs)
        want = torch_reference(graph, [torch.from_numpy(v) for v in xs])
        for g, w in zip(got, want):
            _close(w.numpy(), g)
    np.testing.assert_array_equal(got[0], np.swapaxes(xs[0], 1, 2))
    np.testing.assert_array_equal(got[1], xs[0][:, :, 1:3])
    np.testing.assert_array_equal(got[3], np.where(xs[2] != 0, xs[0], xs[1]))


def test_data_movement_verifiers() -> None:
    b = GraphBuilder("g", "f32")
    x = b.input("x", [2, 8])
    with pytest.raises(Exception, match=r"perm \[0, 0\] is not a permutation"):
        b._add(tgraph.TransposeOp(x, [0, 0]))
    with pytest.raises(Exception, match=r"elements \[6, 10\) of dim 1 exceed its size 8"):
        b._add(tgraph.SliceOp(x, 1, 6, 4))
    y = b.input("y", [3, 8])
    with pytest.raises(Exception, match="differs from operand 0 in dim 0"):
        b._add(tgraph.ConcatOp([x, y], 1))


def test_causal_select_lowers_and_computes() -> None:
    """A causal mask on attention scores: select(mask, s, 0) fused before exp and the row sum."""
    b = GraphBuilder("g", "f16")
    q, k, m = b.input("q", [64, 64]), b.input("k", [64, 64]), b.input("mask", [64, 64])
    s = b.matmul(q, k, transpose_b=True)
    s = b._add(tgraph.SelectOp(m, s, b.scalar("mul", s, 0.0)))
    graph = b.build(b.reduce("sum", b.exp(s), 1))
    module = module_of(graph)
    PipelinePass(top_k=1, keep=1, no_search=True).apply(Context(), module)
    lower_module(module)
    rng = np.random.default_rng(11)
    xs = [rng.standard_normal((64, 64)).astype(np.float16).astype(np.float64) * 0.2 for _ in range(2)]
    xs.append(np.tril(np.ones((64, 64))))
    (want,) = run_graph(graph, xs)
    for _, kernels in candidate_kernels(module):
        assert max_relative_error(want, run_kernels(kernels, xs)[0]) < 2e-3


def test_pipeline_moves_data_movement_to_the_boundary_or_refuses_it_in_one_line() -> None:
    """The layout graph's transpose, slice and concat of inputs leave it (`cleave-fold-structural`:
    its outputs are copies of views); concats along two dims stay, refused in one line."""
    module = module_of(_layout_graph())
    PipelinePass(no_search=True).apply(Context(), module)
    assert any(isinstance(op, itgraph.KernelOp) for op in module.walk())
    b = GraphBuilder("g", "f32")
    x, y = b.input("x", [2, 3, 4]), b.input("y", [2, 3, 4])
    rows = b._add(tgraph.ConcatOp([x, y], 2))
    grid = b._add(tgraph.ConcatOp([rows, rows], 1))  # concats along two dims
    module = module_of(b.build(b.unary("exp", grid)))
    with pytest.raises(CleaveError, match=r"^error: cleave-schedule: tgraph.concat is not supported by the scheduler yet in @g$"):
        PipelinePass(no_search=True).apply(Context(), module)
