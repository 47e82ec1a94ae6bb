"""cleave-symbolize: every non-1 dim becomes a symbol, dims the ops tie share one, the bindings
restore the original shapes, splits record their divisibility constraints."""

from __future__ import annotations

import numpy as np
import pytest
import sympy
from xdsl.dialects.builtin import ArrayAttr, StringAttr

from conftest import EXAMPLE_IDS, load_example, only_graph, parse_text, value_types
from cleave_ir.diagnostics import CleaveError
from cleave_ir.dialects import tgraph
from cleave_ir.interpreter import random_inputs, run_graph
from cleave_ir.passes.symbolize import instantiate, symbolize
from cleave_ir.shapes import evaluate_shape


def symbolized(graph: tgraph.GraphOp) -> tgraph.GraphOp:
    g = graph.clone()
    symbolize(g)
    g.verify()
    return g


def sym_shape(value) -> tuple[sympy.Expr, ...]:
    return tgraph.tensor_type(value).shape


def ops_of(graph: tgraph.GraphOp, op_type):
    return [op for op in graph.block.ops if isinstance(op, op_type)]


# --------------------------------------------------------------------------- every example


@pytest.mark.parametrize("name", EXAMPLE_IDS)
def test_every_non_unit_dim_becomes_a_symbol(name: str):
    original = load_example(name)
    sym = symbolized(original)
    used: set[str] = set()
    for t0, t1 in zip(value_types(original), value_types(sym)):
        assert t0.rank == t1.rank and t0.element_type == t1.element_type
        for d0, d1 in zip(t0.shape, t1.shape):
            if d0 == 1:
                assert d1 == 1  # size-1 dims stay literal 1s
            else:
                assert isinstance(d1, sympy.Symbol), (name, t1)
                used.add(d1.name)
    # the symbols are d0, d1, ... (no split here, so no s), and each one is bound
    assert used == {f"d{i}" for i in range(len(used))}
    assert set(sym.binding_values()) == used
    assert "constraints" not in sym.attributes  # no split in the examples
    # the input annotations (dynamic dims) survive
    assert sym.arg_attrs == original.arg_attrs


@pytest.mark.parametrize("name", EXAMPLE_IDS)
def test_bindings_restore_the_original_shapes(name: str):
    original = load_example(name)
    sym = symbolized(original)
    bindings = sym.binding_values()
    assert all(isinstance(v, int) and v >= 1 for v in bindings.values())
    # evaluated in place ...
    for t0, t1 in zip(value_types(original), value_types(sym)):
        assert evaluate_shape(t1.shape, bindings) == tuple(int(d) for d in t0.shape)
    # ... and instantiated: the types print exactly as in the original text
    back = instantiate(sym, bindings)
    back.verify()
    assert [str(t) for t in value_types(back)] == [str(t) for t in value_types(original)]
    assert str(back) == str(original)
    # the symbolic text itself round-trips through the parser
    assert str(only_graph(parse_text(str(sym)))) == str(sym)


@pytest.mark.parametrize("name", EXAMPLE_IDS)
def test_symbolize_is_idempotent(name: str):
    once = symbolized(load_example(name))
    twice = symbolized(once)
    assert str(twice) == str(once)


@pytest.mark.parametrize("name", EXAMPLE_IDS)
def test_ops_that_tie_dims_share_a_symbol(name: str):
    """Checked op by op on the symbolic graph: the verifier's equalities hold symbol by symbol."""
    sym = symbolized(load_example(name))
    for op in sym.block.ops:
        if isinstance(op, tgraph.MatmulOp):
            a, b, r = sym_shape(op.lhs), sym_shape(op.rhs), sym_shape(op.result)
            k2 = b[-1] if op.transpose_b is not None else b[-2]
            n = b[-2] if op.transpose_b is not None else b[-1]
            assert a[-1] == k2  # contracting dims: one symbol
            assert r[-2:] == (a[-2], n)
            for x, y, z in zip(a[:-2], b[:-2], r[:-2]):
                assert z == (y if x == 1 else x)
                if x != 1 and y != 1:
                    assert x == y
        elif isinstance(op, tgraph.BinaryOp):
            a, b, r = sym_shape(op.lhs), sym_shape(op.rhs), sym_shape(op.result)
            for x, y, z in zip(a, b, r):
                assert z == (y if x == 1 else x)
                if x != 1 and y != 1:
                    assert x == y
        elif isinstance(op, (tgraph.UnaryOp, tgraph.ScaleOp)):
            assert sym_shape(op.result) == sym_shape(op.input)
        elif isinstance(op, tgraph.ReduceOp):
            x, r = sym_shape(op.input), sym_shape(op.result)
            assert r == tuple(1 if i == op.axis else d for i, d in enumerate(x))


ATTENTION = ["mha", "mqa", "gqa", "mla"]


@pytest.mark.parametrize("name", ATTENTION + ["mha_decode", "gqa_decode", "mla_decode"])
def test_attention_symbols(name: str):
    sym = symbolized(load_example(name))
    q, k, v = (sym_shape(a) for a in sym.inputs)
    (o,) = (tgraph.tensor_type(t).shape for t in sym.function_type.outputs.data)
    assert q[-1] == k[-1]  # Q K^T: the head dim (D, or 576 for MLA) is one symbol
    assert k[-2] == v[-2]  # P V: the KV length is one symbol
    assert o[-1] == v[-1] and o[-2] == q[-2]
    if name in ATTENTION:
        # query length and KV length are both 4096 but nothing ties them: different symbols
        assert q[-2] != k[-2]
        b = sym.binding_values()
        assert b[q[-2].name] == b[k[-2].name] == 4096
    # V's head dim is not tied to Q/K's (128 = 128 in mha, but an independent symbol)
    assert v[-1] != q[-1]


def test_mha_symbolic_types_exactly():
    sym = symbolized(load_example("mha"))
    assert [str(t) for t in sym.function_type.inputs.data] == [
        "!tgraph.tensor<[1, d0, d1, d2], f16>",
        "!tgraph.tensor<[1, d0, d3, d2], f16>",
        "!tgraph.tensor<[1, d0, d3, d4], f16>",
    ]
    assert sym.binding_values() == {"d0": 32, "d1": 4096, "d2": 128, "d3": 4096, "d4": 128}


def test_broadcast_heads_share_symbol_only_where_not_one():
    # gqa: Q [1, 8, 4, S, D], K [1, 8, 1, S, D]: the 8 KV heads tie, the group dim of K stays 1
    sym = symbolized(load_example("gqa"))
    q, k, v = (sym_shape(a) for a in sym.inputs)
    assert q[1] == k[1] == v[1]
    assert k[2] == 1 and v[2] == 1 and q[2] != 1


def test_swiglu_ties_both_weight_matrices():
    sym = symbolized(load_example("swiglu"))
    x, wg, wu = (sym_shape(a) for a in sym.inputs)
    assert wg == wu  # mul(silu(X Wg), X Wu) ties the N dims; the K dims tie through X
    assert x[1] == wg[0]


def test_symbolic_graph_runs_at_other_sizes():
    """A symbolized example instantiated at new sizes is a valid graph computing the same function
    (checked on mha against the numpy reference)."""
    from reference_numpy import REFERENCES

    sym = symbolized(load_example("mha"))
    small = {"d0": 2, "d1": 5, "d2": 8, "d3": 7, "d4": 3}
    inputs = random_inputs(sym, 0, small)
    (direct,) = run_graph(sym, inputs, bindings=small)
    np.testing.assert_allclose(direct, REFERENCES["mha"](*inputs), rtol=1e-10)
    concrete = instantiate(sym, small)
    concrete.verify()
    (inst,) = run_graph(concrete, inputs)
    np.testing.assert_array_equal(inst, direct)


# --------------------------------------------------------------------------- split

SPLIT2 = """tgraph.graph @g(%a: !tgraph.tensor<[4, 16], f32>) -> !tgraph.tensor<[2, 2, 4, 1], f32> {
  %b = tgraph.split %a dim 1 : !tgraph.tensor<[4, 16], f32> -> !tgraph.tensor<[2, 4, 8], f32>
  %c = tgraph.split %b dim 2 : !tgraph.tensor<[2, 4, 8], f32> -> !tgraph.tensor<[2, 2, 4, 4], f32>
  %r = tgraph.reduce max %c dim 3 : !tgraph.tensor<[2, 2, 4, 4], f32> -> !tgraph.tensor<[2, 2, 4, 1], f32>
  tgraph.output %r : !tgraph.tensor<[2, 2, 4, 1], f32>
}
"""


def test_split_records_constraints():
    original = only_graph(parse_text(SPLIT2))
    sym = symbolized(original)
    constraints = sym.attributes["constraints"]
    assert isinstance(constraints, ArrayAttr)
    assert [c.data for c in constraints.data if isinstance(c, StringAttr)] == ["s | d1", "s1 | d1/s"]
    assert sym.binding_values() == {"d0": 4, "d1": 16, "s": 2, "s1": 2}
    b, c = (op.result for op in ops_of(sym, tgraph.SplitOp))
    assert str(b.type) == "!tgraph.tensor<[s, d0, d1/s], f32>"
    assert str(c.type) == "!tgraph.tensor<[s1, s, d0, d1/(s*s1)], f32>"
    # the two part counts are both 2 but independent symbols; the binding restores the original
    back = instantiate(sym, sym.binding_values())
    assert str(back) == str(original)
    assert "constraints" not in back.attributes and back.bindings is None
    # the constraints text survives the parser
    assert str(only_graph(parse_text(str(sym)))) == str(sym)


def test_split_symbolic_graph_at_other_sizes_matches_numpy():
    sym = symbolized(only_graph(parse_text(SPLIT2)))
    b = {"d0": 3, "d1": 24, "s": 3, "s1": 4}  # s | d1 and s1 | d1/s
    concrete = instantiate(sym, b)
    concrete.verify()
    (x,) = random_inputs(concrete, 5)
    (got,) = run_graph(concrete, [x])
    # numpy: split 24 into 3 chunks of 8, each into 4 chunks of 2; max over the last dim
    parts = np.stack(np.split(x, 3, axis=1))  # [3, 3, 8]
    parts = np.stack(np.split(parts, 4, axis=2))  # [4, 3, 3, 2]
    np.testing.assert_array_equal(got, parts.max(axis=3, keepdims=True))
    (direct,) = run_graph(sym, [x], bindings=b)
    np.testing.assert_array_equal(direct, got)


def test_instantiate_rejects_bindings_breaking_a_constraint():
    sym = symbolized(only_graph(parse_text(SPLIT2)))
    with pytest.raises(CleaveError, match=r"d1/s is not an integer"):
        instantiate(sym, {"s": 5})


def test_symbolize_avoids_user_symbols_in_result_types():
    """A user symbol that appears only in a result type (split parts `d0`) is not reused as a
    fresh name (this clashed before commit 469d388)."""
    text = """tgraph.graph @g(%a: !tgraph.tensor<[4, K], f32>) -> !tgraph.tensor<[d0, 4, K/d0], f32> attributes {bindings = {K = 12 : i64, d0 = 3 : i64}} {
  %c = tgraph.split %a dim 1 : !tgraph.tensor<[4, K], f32> -> !tgraph.tensor<[d0, 4, K/d0], f32>
  tgraph.output %c : !tgraph.tensor<[d0, 4, K/d0], f32>
}"""
    original = only_graph(parse_text(text))
    sym = symbolized(original)
    names = {s.name for t in value_types(sym) for d in t.shape for s in d.free_symbols}
    assert {"K", "d0"} <= names and len(names) == 3  # the 4 got a fresh name other than d0
    back = instantiate(sym, sym.binding_values())
    assert [str(t) for t in value_types(back)] == [
        "!tgraph.tensor<[4, 12], f32>",
        "!tgraph.tensor<[3, 4, 4], f32>",
    ]


def test_symbolize_keeps_user_symbols():
    text = """tgraph.graph @g(%a: !tgraph.tensor<[N, 8], f32>, %b: !tgraph.tensor<[8, 4], f32>) -> !tgraph.tensor<[N, 4], f32> attributes {bindings = {N = 6 : i64}} {
  %c = tgraph.matmul %a, %b : !tgraph.tensor<[N, 8], f32>, !tgraph.tensor<[8, 4], f32> -> !tgraph.tensor<[N, 4], f32>
  tgraph.output %c : !tgraph.tensor<[N, 4], f32>
}"""
    sym = symbolized(only_graph(parse_text(text)))
    assert [str(t) for t in sym.function_type.inputs.data] == [
        "!tgraph.tensor<[N, d0], f32>",
        "!tgraph.tensor<[d0, d1], f32>",
    ]
    assert sym.binding_values() == {"N": 6, "d0": 8, "d1": 4}
