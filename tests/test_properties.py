"""Property tests (hypothesis): graphs built with the Python API on random small shapes, run by the
interpreter, against independent numpy formulas; and the verifier's broadcasting rules."""

from __future__ import annotations

import math
import re

import numpy as np
import sympy
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type, Float64Type
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

from conftest import build_graph, only_graph, parse_text, value_types
from cleave_ir.diagnostics import CleaveError
from cleave_ir.dialects.cleave import ExprAttr
from cleave_ir.dialects import tgraph
from cleave_ir.interpreter import round_to, run_graph
from cleave_ir.passes.symbolize import instantiate, symbolize
from cleave_ir.run import make_context
from cleave_ir.shapes import as_dim, symbol

SETTINGS = settings(
    max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

ELEMENT_TYPES = [Float16Type(), BFloat16Type(), Float32Type(), Float64Type()]
dims = st.integers(1, 5)
shapes = st.lists(dims, min_size=1, max_size=4).map(tuple)
element_types = st.sampled_from(ELEMENT_TYPES)
seeds = st.integers(0, 2**32 - 1)


def T(shape, elt=Float64Type()) -> tgraph.TensorType:
    return tgraph.TensorType(list(shape), elt)


def run1(graph: tgraph.GraphOp, *inputs: np.ndarray, **kw) -> np.ndarray:
    (out,) = run_graph(graph, list(inputs), **kw)
    return out


def _sigmoid(x: np.ndarray) -> np.ndarray:
    # an independent formula (the interpreter uses 1 / (1 + exp(-x)))
    return 0.5 * (1.0 + np.tanh(0.5 * x))


@st.composite
def broadcast_pair(draw, max_rank: int = 4):
    """Two equal-rank shapes that broadcast: each dim is shared or is 1 on one (or both) sides."""
    base = draw(st.lists(dims, min_size=1, max_size=max_rank))
    lhs, rhs = [], []
    for d in base:
        where = draw(st.sampled_from(["both", "lhs1", "rhs1", "all1"]))
        lhs.append(1 if where in ("lhs1", "all1") else d)
        rhs.append(1 if where in ("rhs1", "all1") else d)
    return tuple(lhs), tuple(rhs)


# --------------------------------------------------------------------------- elementwise

BINARY = {
    tgraph.AddOp: lambda a, b: a + b,
    tgraph.SubOp: lambda a, b: a - b,
    tgraph.MulOp: lambda a, b: a * b,
    tgraph.DivOp: lambda a, b: a / b,
    tgraph.MaxOp: lambda a, b: np.where(a >= b, a, b),
    tgraph.MinOp: lambda a, b: np.where(a <= b, a, b),
}


@SETTINGS
@given(st.sampled_from(sorted(BINARY, key=lambda c: c.name)), broadcast_pair(), element_types, seeds)
def test_binary_broadcasting_matches_numpy(op_type, pair, elt, seed):
    ls, rs = pair
    graph = build_graph([T(ls, elt), T(rs, elt)], lambda a: [op_type(a[0], a[1])])
    expected_shape = np.broadcast_shapes(ls, rs)
    out_t = graph.function_type.outputs.data[0]
    assert tuple(int(d) for d in out_t.shape) == expected_shape
    assert out_t.element_type == elt

    rng = np.random.default_rng(seed)
    a = rng.standard_normal(ls)
    b = rng.uniform(0.5, 2.0, rs) * rng.choice([-1.0, 1.0], rs)  # no division by ~0
    got = run1(graph, a, b)
    assert got.shape == expected_shape
    np.testing.assert_allclose(got, BINARY[op_type](a, b), rtol=1e-15, atol=0)


UNARY = {
    # op: (numpy formula, input sampler)
    tgraph.ExpOp: (np.exp, "normal"),
    tgraph.SqrtOp: (lambda x: x**0.5, "positive"),
    tgraph.RsqrtOp: (lambda x: x**-0.5, "positive"),
    tgraph.NegOp: (lambda x: 0.0 - x, "normal"),
    tgraph.SiluOp: (lambda x: x * _sigmoid(x), "normal"),
    tgraph.SigmoidOp: (_sigmoid, "normal"),
    tgraph.SquareOp: (lambda x: x * x, "normal"),
    tgraph.ReciprocalOp: (lambda x: 1.0 / x, "nonzero"),
    tgraph.TanhOp: (lambda x: 2.0 * _sigmoid(2.0 * x) - 1.0, "normal"),
    tgraph.GeluOp: (lambda x: x * 0.5 * (1.0 + np.vectorize(math.erf)(x / math.sqrt(2.0))), "normal"),  # erf form
    tgraph.Exp2Op: (lambda x: 2.0**x, "normal"),
    tgraph.LogOp: (lambda x: np.log2(x) * math.log(2.0), "positive"),
    tgraph.AbsOp: (lambda x: np.where(x < 0, -x, x), "normal"),
}


def test_every_unary_op_is_covered():
    assert set(UNARY) == set(tgraph.UNARY_OPS)
    assert set(BINARY) == set(tgraph.BINARY_OPS)


def _sample(rng: np.random.Generator, shape, kind: str) -> np.ndarray:
    if kind == "positive":
        return rng.uniform(0.05, 10.0, shape)
    if kind == "nonzero":
        return rng.uniform(0.1, 10.0, shape) * rng.choice([-1.0, 1.0], shape)
    return rng.standard_normal(shape) * 3.0


@SETTINGS
@given(st.sampled_from(sorted(UNARY, key=lambda c: c.name)), shapes, element_types, seeds)
def test_unary_matches_numpy(op_type, shape, elt, seed):
    fn, kind = UNARY[op_type]
    graph = build_graph([T(shape, elt)], lambda a: [op_type(a[0])])
    assert graph.function_type.outputs.data[0] == T(shape, elt)
    x = _sample(np.random.default_rng(seed), shape, kind)
    # atol: the tanh form of the sigmoid loses relative accuracy for sigmoid(x) ~ 1e-13
    np.testing.assert_allclose(run1(graph, x), fn(x), rtol=1e-13, atol=1e-15)


@SETTINGS
@given(shapes, st.floats(-100, 100, allow_nan=False), seeds)
def test_scale_matches_numpy(shape, factor, seed):
    graph = build_graph([T(shape)], lambda a: [tgraph.ScaleOp(a[0], factor)])
    x = np.random.default_rng(seed).standard_normal(shape)
    np.testing.assert_array_equal(run1(graph, x), x * factor)


# --------------------------------------------------------------------------- reduce, split, reshape


@SETTINGS
@given(shapes, st.data(), st.sampled_from(["sum", "max"]), seeds)
def test_reduce_matches_numpy_keepdims(shape, data, kind, seed):
    dim = data.draw(st.integers(0, len(shape) - 1), label="dim")
    graph = build_graph([T(shape)], lambda a: [tgraph.ReduceOp(kind, a[0], dim)])
    expected_shape = tuple(1 if i == dim else d for i, d in enumerate(shape))
    assert tuple(int(d) for d in graph.function_type.outputs.data[0].shape) == expected_shape
    x = np.random.default_rng(seed).standard_normal(shape)
    fn = np.sum if kind == "sum" else np.max
    got = run1(graph, x)
    assert got.shape == expected_shape
    np.testing.assert_allclose(got, fn(x, axis=dim, keepdims=True), rtol=1e-13, atol=1e-13)


@st.composite
def split_case(draw):
    shape = list(draw(shapes))
    dim = draw(st.integers(0, len(shape) - 1))
    parts = draw(st.integers(1, 4))
    piece = draw(st.integers(1, 3))
    shape[dim] = parts * piece  # the split dim is a multiple of the part count
    return tuple(shape), dim, parts


@SETTINGS
@given(split_case(), seeds)
def test_split_matches_numpy(case, seed):
    shape, dim, parts = case
    graph = build_graph([T(shape)], lambda a: [tgraph.SplitOp(a[0], dim, parts)])
    k = shape[dim] // parts
    expected_shape = (parts, *(k if i == dim else d for i, d in enumerate(shape)))
    assert tuple(int(d) for d in graph.function_type.outputs.data[0].shape) == expected_shape
    x = np.random.default_rng(seed).standard_normal(shape)
    got = run1(graph, x)
    assert got.shape == expected_shape
    for p in range(parts):
        chunk = np.take(x, range(p * k, (p + 1) * k), axis=dim)  # the p-th contiguous chunk
        np.testing.assert_array_equal(got[p], chunk)
    np.testing.assert_array_equal(got, np.stack(np.split(x, parts, axis=dim)))


@SETTINGS
@given(shapes, st.lists(st.integers(0, 4), max_size=3), seeds)
def test_reshape_adding_and_dropping_unit_dims(shape, insert_at, seed):
    # the result: the non-1 dims in order, with size-1 dims inserted at random places
    core = [d for d in shape if d != 1]
    result = list(core)
    for pos in insert_at:
        result.insert(min(pos, len(result)), 1)
    if not result:
        result = [1]
    graph = build_graph([T(shape)], lambda a: [tgraph.ReshapeOp(a[0], T(result))])
    x = np.random.default_rng(seed).standard_normal(shape)
    np.testing.assert_array_equal(run1(graph, x), x.reshape(result))


def test_reshape_rejects_reordering_non_unit_dims():
    with pytest.raises(VerifyException, match=r"tgraph.reshape may only add or drop size-1 dims"):
        build_graph([T((2, 3))], lambda a: [tgraph.ReshapeOp(a[0], T((3, 2)))])


def test_reshape_with_symbolic_dim_bound_to_one():
    text = """
    tgraph.graph @g(%a: !tgraph.tensor<[N, 4], f64>) -> !tgraph.tensor<[N, 1, 4], f64> {
      %c = tgraph.reshape %a : !tgraph.tensor<[N, 4], f64> -> !tgraph.tensor<[N, 1, 4], f64>
      tgraph.output %c : !tgraph.tensor<[N, 1, 4], f64>
    }"""
    graph = only_graph(parse_text(text))
    x = np.arange(4.0).reshape(1, 4)
    np.testing.assert_array_equal(run1(graph, x, bindings={"N": 1}), x.reshape(1, 1, 4))


# --------------------------------------------------------------------------- matmul


@st.composite
def matmul_case(draw):
    batch_l, batch_r = draw(broadcast_pair(max_rank=2)) if draw(st.booleans()) else ((), ())
    m, k, n = draw(dims), draw(dims), draw(dims)
    transpose_b = draw(st.booleans())
    lhs = (*batch_l, m, k)
    rhs = (*batch_r, n, k) if transpose_b else (*batch_r, k, n)
    return lhs, rhs, transpose_b


@SETTINGS
@given(matmul_case(), seeds)
def test_matmul_matches_numpy(case, seed):
    lhs, rhs, transpose_b = case
    out_shape = (*np.broadcast_shapes(lhs[:-2], rhs[:-2]), lhs[-2], rhs[-2] if transpose_b else rhs[-1])
    inferred = tgraph.MatmulOp.infer_shape(T(lhs).shape, T(rhs).shape, transpose_b)
    assert tuple(int(d) for d in inferred) == out_shape
    graph = build_graph(
        [T(lhs), T(rhs)], lambda a: [tgraph.MatmulOp(a[0], a[1], T(out_shape), transpose_b)]
    )
    rng = np.random.default_rng(seed)
    a, b = rng.standard_normal(lhs), rng.standard_normal(rhs)
    spec = "...mk,...nk->...mn" if transpose_b else "...mk,...kn->...mn"
    expected = np.einsum(spec, a, b)
    got = run1(graph, a, b)
    assert got.shape == out_shape
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


@SETTINGS
@given(matmul_case(), dims)
def test_matmul_verifier_rejects_wrong_result_or_contracting_dim(case, extra):
    lhs, rhs, transpose_b = case
    good = tgraph.MatmulOp.infer_shape(T(lhs).shape, T(rhs).shape, transpose_b)
    bad_result = (*good[:-1], good[-1] + extra)
    with pytest.raises(VerifyException, match=r"tgraph.matmul: result shape .* does not match"):
        build_graph(
            [T(lhs), T(rhs)], lambda a: [tgraph.MatmulOp(a[0], a[1], T(bad_result), transpose_b)]
        )
    bad_lhs = (*lhs[:-1], lhs[-1] + extra)
    with pytest.raises(VerifyException, match=r"tgraph.matmul: contracting dims differ: \d+ vs \d+"):
        tgraph.MatmulOp.infer_shape(T(bad_lhs).shape, T(rhs).shape, transpose_b)


# --------------------------------------------------------------------------- verifier


@st.composite
def non_broadcastable_pair(draw):
    ls, rs = (list(s) for s in draw(broadcast_pair()))
    i = draw(st.integers(0, len(ls) - 1))
    a = draw(st.integers(2, 5))
    b = draw(st.integers(2, 5).filter(lambda v: v != a))
    ls[i], rs[i] = a, b
    return tuple(ls), tuple(rs), i


@SETTINGS
@given(st.sampled_from(sorted(BINARY, key=lambda c: c.name)), non_broadcastable_pair())
def test_verifier_rejects_non_broadcastable_shapes(op_type, case):
    ls, rs, _ = case
    bad = [j for j, (x, y) in enumerate(zip(ls, rs)) if x != y and 1 not in (x, y)]
    first = bad[0]
    # building the op infers the result shape, which fails
    with pytest.raises(VerifyException) as exc:
        build_graph([T(ls), T(rs)], lambda a: [op_type(a[0], a[1])])
    msg = str(exc.value)
    assert f"{op_type.name}: dim {first} does not broadcast: {ls[first]} vs {rs[first]}" in msg
    # the same graph as text (with some result type) is rejected by the verifier, one located line
    f = lambda s: "!tgraph.tensor<[" + ", ".join(map(str, s)) + "], f32>"  # noqa: E731
    text = (
        f"tgraph.graph @g(%a: {f(ls)}, %b: {f(rs)}) -> {f(ls)} {{\n"
        f"  %c = {op_type.name} %a, %b : {f(ls)}, {f(rs)} -> {f(ls)}\n"
        f"  tgraph.output %c : {f(ls)}\n}}\n"
    )
    with pytest.raises(CleaveError) as exc2:
        parse_text(text, "t.mlir")
    line = str(exc2.value)
    assert "\n" not in line
    assert re.match(
        rf"t\.mlir:2:3: error: {re.escape(op_type.name)}: dim {first} does not broadcast: "
        rf"{ls[first]} vs {rs[first]}",
        line,
    ), line


@SETTINGS
@given(shapes, shapes)
def test_verifier_rejects_rank_mismatch(ls, rs):
    assume(len(ls) != len(rs))
    with pytest.raises(VerifyException, match=r"tgraph.add: operands must have the same rank"):
        build_graph([T(ls), T(rs)], lambda a: [tgraph.AddOp(a[0], a[1])])


# --------------------------------------------------------------------------- round-trips


@SETTINGS
@given(st.sampled_from(sorted(BINARY, key=lambda c: c.name)), broadcast_pair(), element_types)
def test_random_graph_text_roundtrip_and_symbolize(op_type, pair, elt):
    ls, rs = pair

    def body(a):
        c = op_type(a[0], a[1])
        e = tgraph.ExpOp(c)
        return [c, e, tgraph.ReduceOp("sum", e, len(ls) - 1)]

    graph = build_graph([T(ls, elt), T(rs, elt)], body)
    text = str(graph)
    assert str(only_graph(parse_text(text))) == text
    symbolic = graph.clone()
    symbolize(symbolic)
    symbolic.verify()
    # every non-1 dim is a symbol; broadcast partners share it
    for t in value_types(symbolic):
        assert all(d == 1 or d.is_Symbol for d in t.shape)
    out = symbolic.block.first_op.results[0].type.shape  # the binary op's result
    a_t, b_t = (x.type.shape for x in symbolic.inputs)
    for i, (x, y) in enumerate(zip(a_t, b_t)):
        if x != 1 and y != 1:
            assert x == y == out[i]
    assert str(only_graph(parse_text(str(symbolic)))) == str(symbolic)
    back = instantiate(symbolic, symbolic.binding_values())
    assert value_types(back) == value_types(graph)




@pytest.mark.parametrize(
    "dim, value",
    [
        ("K", 12),
        ("K/s", 4),
        ("2*s", 6),
        ("(K/s)/2", 2),
        ("K*s/2", 18),
        ("K/(s*t)", 2),
        ("K*K", 144),
        ("K/t/t", 3),
    ],
)
def test_symbolic_dim_text_roundtrip(dim, value):
    b = {"K": 12, "s": 3, "t": 2}
    t = f"!tgraph.tensor<[2, {dim}], f32>"
    text = f"""tgraph.graph @g(%a: {t}) -> {t} {{
      %b = tgraph.neg %a : {t}
      tgraph.output %b : {t}
    }}"""
    graph = only_graph(parse_text(text))
    printed = str(graph)
    assert str(only_graph(parse_text(printed))) == printed
    x = np.ones((2, value))
    np.testing.assert_array_equal(run1(graph, x, bindings=b), -x)


def parse_type(text: str) -> tgraph.TensorType:
    t = Parser(make_context(), text).parse_type()
    assert isinstance(t, tgraph.TensorType)
    return t


def test_tensor_dims_are_exprs_and_roundtrip():
    text = "!tgraph.tensor<[1, 32, N, 2*N, N/2, K/(s*t), K*K], f16>"
    t = parse_type(text)
    assert all(isinstance(d, ExprAttr) for d in t.dims.data)
    # .shape hands out the stored sympy exprs, not a re-parse of text
    assert all(s is d.data for s, d in zip(t.shape, t.dims.data))
    N, K, s, u = symbol("N"), symbol("K"), symbol("s"), symbol("t")
    assert t.shape == (1, 32, N, 2 * N, N / 2, K / (s * u), K * K)
    assert str(t) == text
    assert parse_type(str(t)) == t
    assert tgraph.TensorType(["1", 32, N, "2*N", N / 2, "K/(s*t)", K**2], Float16Type()) == t


@pytest.mark.parametrize(
    "spellings, canonical",
    [
        (["(K/s)/2", "K/s/2", "K/(2*s)", "K*s/(2*s*s)"], "K/(2*s)"),
        (["2*N/2", "(N)", "N*s/s"], "N"),
        (["N/N", "1"], "1"),
        (["s*K*2", "2*K*s", "K*(2*s)"], "2*K*s"),
    ],
)
def test_tensor_dims_written_differently_are_one_type(spellings, canonical):
    types = [parse_type(f"!tgraph.tensor<[{d}, 4], f32>") for d in spellings]
    built = [tgraph.TensorType([d, 4], Float32Type()) for d in spellings]
    # a plain sympy symbol becomes the dim symbol of its name
    dim = as_dim(canonical)
    plain = tgraph.TensorType([dim.xreplace({x: sympy.Symbol(x.name) for x in dim.free_symbols}), 4], Float32Type())
    for t in [*types, *built, plain]:
        assert t == types[0] and hash(t) == hash(types[0])
        assert str(t) == f"!tgraph.tensor<[{canonical}, 4], f32>"


def test_tensor_dims_outside_the_grammar_are_rejected():
    with pytest.raises(VerifyException, match="products and quotients"):
        tgraph.TensorType([symbol("N") + 1, 4], Float32Type())
    with pytest.raises(VerifyException, match="positive integers"):
        tgraph.TensorType([symbol("N") / symbol("N") / 2], Float32Type())


# --------------------------------------------------------------------------- declared-mode rounding


@SETTINGS
@given(st.lists(st.floats(-1e4, 1e4, allow_nan=False, width=32), min_size=1, max_size=20))
def test_round_to_bf16_is_round_to_nearest_even(values):
    x = np.array(values, dtype=np.float32)
    got = round_to(x, BFloat16Type())
    assert got.dtype == np.float32
    # reference: keep 8 significant bits (frexp mantissa in [0.5, 1)), ties to even
    m, e = np.frexp(x.astype(np.float64))
    tiny = np.abs(x) < np.finfo(np.float32).tiny  # (sub)normals: compare on the normal range only
    expected = np.ldexp(np.round(m * 256.0) / 256.0, e)
    np.testing.assert_array_equal(got[~tiny], expected[~tiny].astype(np.float32))


def test_round_to_bf16_keeps_nan():
    bits = np.array([0x7FC00000, 0x7FFFFFFF, 0xFFFFFFFF, 0x7FFF8000], dtype=np.uint32)
    got = round_to(bits.view(np.float32), BFloat16Type())
    assert np.all(np.isnan(got)), got


@SETTINGS
@given(st.lists(st.floats(-7e4, 7e4, allow_nan=False), min_size=1, max_size=20))
def test_round_to_f16_and_f32(values):
    x = np.array(values)
    with np.errstate(over="ignore"):  # beyond 65504 is inf in f16, as it should be
        f16 = round_to(x, Float16Type())
        np.testing.assert_array_equal(f16, x.astype(np.float16).astype(np.float32))
    np.testing.assert_array_equal(round_to(x, Float32Type()), x.astype(np.float32))
    assert round_to(x, Float64Type()).dtype == np.float64
