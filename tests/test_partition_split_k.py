"""cleave-partition-split-k: which partials cross in f16 follows the ops' declared algebra.

A matmul's partial products keep their type when everything the combine does with them keeps their
relative precision (`tgraph.keeps_relative_error`, declared on the ops); otherwise they cross in
f32. The pass knows no op by name: an op it has never seen is classified by its algebra.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from collections.abc import Callable
from typing import ClassVar

import numpy as np
import pytest
from xdsl.dialects.builtin import Float16Type
from xdsl.ir import SSAValue
from xdsl.irdl import irdl_op_definition

from cleave_ir.builder import GraphBuilder
from cleave_ir.dialects import tgraph
from cleave_ir.dialects.semantics import Algebra, ElementBuilder, Semantics
from cleave_ir.interpreter import random_inputs, run_graph, run_split_k
from cleave_ir.passes.partition_split_k import partition


def _halve_semantics(algebra: Algebra) -> Semantics:
    def tilelang(b: ElementBuilder, x: SSAValue) -> SSAValue:
        raise AssertionError("not lowered in these tests")

    return Semantics(numpy=lambda x: x / 2, torch=lambda x: x / 2, tilelang=tilelang, algebra=algebra)


@irdl_op_definition
class HalveOp(tgraph.UnaryOp):
    """x / 2, declared to keep relative precision: an op kind the pass has no name for."""

    name = "test.halve"
    SEMANTICS: ClassVar[Semantics] = _halve_semantics(Algebra(relative=True))


@irdl_op_definition
class HalveUndeclaredOp(tgraph.UnaryOp):
    """The same function, its algebra unknown."""

    name = "test.halve_undeclared"
    SEMANTICS: ClassVar[Semantics] = _halve_semantics(Algebra())


Tail = Callable[[GraphBuilder, SSAValue], SSAValue]


def split_k_matmul(tail: Tail) -> tgraph.GraphOp:
    """tail(sum over 4 parts of x[:, part] @ w[part, :]): the partials are the matmul's products."""
    b = GraphBuilder("g", "f16")
    x = b.input("x", [16, 64])
    w = b.input("w", [64, 16])
    partials = b.matmul(b.split(x, 1, 4), b.split(w, 0, 4))
    return b.build(tail(b, b.reduce("sum", partials, 0)))


def partition_checked(g: tgraph.GraphOp, interpret: bool = True) -> tuple[tgraph.GraphOp, tgraph.GraphOp]:
    """The split and combine graphs, checked to compute `g` on fresh inputs of several distributions
    (`interpret`: the interpreter knows every op of `g`)."""
    pair = partition(g)
    assert pair is not None
    split, combine = pair
    for seed, scale, shift in [(0, 1.0, 0.0), (1, 30.0, 0.0), (2, 0.5, 3.0)] if interpret else []:
        xs = [x * scale + shift for x in random_inputs(g, seed)]
        np.testing.assert_allclose(run_split_k(split, combine, xs)[0], run_graph(g, xs)[0], rtol=1e-12)
    return split, combine


def partial_types(g: tgraph.GraphOp, interpret: bool = True) -> list[str]:
    split, combine = partition_checked(g, interpret)
    assert [str(tgraph.tensor_type(a).element_type) for a in combine.inputs] == [
        str(tgraph.tensor_type(t).element_type) for t in split.function_type.outputs.data
    ]
    assert all(isinstance(tgraph.tensor_type(t).element_type, Float16Type) for t in combine.function_type.outputs.data)
    return [str(tgraph.tensor_type(t).element_type) for t in split.function_type.outputs.data]


@pytest.mark.parametrize(
    "tail, crossing",
    [
        (lambda b, r: r, "f16"),
        (lambda b, r: b.neg(r), "f16"),
        (lambda b, r: b.scale(r, 2.0), "f16"),
        (lambda b, r: b.scalar("mul", r, -4.0), "f16"),  # the same function as scale, the same algebra
        (lambda b, r: b.scalar("div", r, 0.5), "f16"),
        # a partial the combine may scale down can exceed fp16 where the output does not (session 49)
        (lambda b, r: b.scale(r, 0.125), "f32"),
        (lambda b, r: b.scalar("mul", r, 0.125), "f32"),
        (lambda b, r: b.scalar("div", r, 1024.0), "f32"),
        (lambda b, r: b.cast(b.mul(b.cast(r, "f32"), b.cast(r, "f32")), "f16"), "f32"),
        (lambda b, r: b.div(r, b.reshape(b.reshape(r, [16, 16]), [1, 16, 16])), "f32"),
        (lambda b, r: b.reciprocal(r), "f32"),
        (lambda b, r: b.scalar("add", r, 1.0), "f32"),
        (lambda b, r: b.exp(b.sub(r, b.reduce("max", r, 2))), "f32"),
        (lambda b, r: b.reduce("sum", b.exp(r), 2), "f32"),
    ],
)
def test_partials_cross_in_f16_only_through_relative_ops(tail: Tail, crossing: str) -> None:
    """A matmul's partial crosses in its own fp16 only where the combine keeps its relative precision and
    cannot make it smaller (sums, negation, scalings by 1 or more)."""
    assert partial_types(split_k_matmul(tail)) == [crossing]


def test_an_op_kind_the_pass_has_no_name_for_is_classified_by_its_algebra() -> None:
    # (the reference interpreter has no implementation of these ops; the cases above check the cut)
    assert partial_types(split_k_matmul(lambda b, r: b.unary(HalveOp, r)), interpret=False) == ["f16"]
    assert partial_types(split_k_matmul(lambda b, r: b.unary(HalveUndeclaredOp, r)), interpret=False) == ["f32"]


def test_an_existing_op_is_classified_by_its_algebra(monkeypatch: pytest.MonkeyPatch) -> None:
    g = split_k_matmul(lambda b, r: b.reciprocal(r))
    assert partial_types(g.clone()) == ["f32"]
    sem = tgraph.ReciprocalOp.SEMANTICS
    monkeypatch.setattr(tgraph.ReciprocalOp, "SEMANTICS", dataclasses.replace(sem, algebra=dataclasses.replace(sem.algebra, relative=True)))
    assert partial_types(g.clone()) == ["f16"]


def test_keeps_relative_error_reads_the_op_declarations() -> None:
    b = GraphBuilder("g", "f16")
    x = b.input("x", [4, 8])
    ops = {
        name: v.owner
        for name, v in [
            ("sum", b.reduce("sum", x, 1)),
            ("max", b.reduce("max", x, 1)),
            ("mean", b.reduce("mean", x, 1)),
            ("matmul", b.matmul(x, x, transpose_b=True)),
            ("reshape", b.reshape(x, [1, 4, 8])),
            ("sub", b.sub(x, x)),
            ("mul", b.mul(x, x)),
            ("rdiv", b.scalar("rdiv", x, 1.0)),
        ]
    }
    assert {k for k, op in ops.items() if tgraph.keeps_relative_error(op)} == {"sum", "matmul", "reshape", "mul"}


def flash_decoding(weights: Callable[[GraphBuilder, SSAValue], SSAValue], parts: int = 4, keys: int = 1024) -> tgraph.GraphOp:
    """Split-K attention decode in f16 as the search writes it: per chunk of keys, `E = weights(s -
    chunk max)`, `E @ V` and `sum E`, combined by the max over the chunks."""
    b = GraphBuilder("fd", "f16")
    q = b.input("q", [2, 4, 16])
    k = b.input("k", [2, keys, 16])
    v = b.input("v", [2, keys, 16])
    s = b.matmul(b.reshape(q, [1, 2, 4, 16]), b.split(k, 1, parts), transpose_b=True)
    m = b.reduce("max", s, 3)
    e = weights(b, b.sub(s, m))
    pv = b.matmul(e, b.split(v, 1, parts))
    gm = b.reduce("max", m, 0)
    rescale = b.exp(b.sub(m, gm))
    o = b.reduce("sum", b.mul(pv, rescale), 0)
    l = b.reduce("sum", b.mul(b.reduce("sum", e, 3), rescale), 0)
    return b.build(b.reshape(b.div(o, l), [2, 4, 16]))


def test_a_weighted_sum_crosses_divided_by_its_weights_sum() -> None:
    """`E @ V` over 256 keys of values 300 (or 2048 keys of values 32) is past f16's range though the
    attention's output is not: the split stores it over `sum E`, the combine multiplies back."""
    g = flash_decoding(lambda b, x: b.exp(x))
    split, combine = partition_checked(g)
    assert partial_types(g) == ["f32", "f16", "f32"]  # chunk max, E @ V / sum E, sum E
    ops = [op.name for op in split.block.ops]
    assert ops[-4:] == ["tgraph.scalar", "tgraph.div", "tgraph.cast", "tgraph.output"]
    assert [op.name for op in combine.block.ops][:2] == ["tgraph.cast", "tgraph.mul"]
    q = np.zeros((2, 4, 16))  # every score equal: E = 1 on all 256 keys of a chunk
    k = np.random.default_rng(0).standard_normal((2, 1024, 16))
    for value in (300.0, -300.0, 6e4):
        v = np.full((2, 1024, 16), value)
        out = run_split_k(split, combine, [q, k, v], mode="declared")[0]
        np.testing.assert_allclose(out, value, rtol=1e-3)
    rng = np.random.default_rng(1)
    for scale in (1.0, 30.0):
        xs = [rng.standard_normal(x.shape) * scale for x in (q, k, k)]
        ref = run_graph(g, xs)[0]
        assert np.max(np.abs(run_split_k(split, combine, xs, mode="declared")[0] - ref)) <= 2e-3 * np.max(np.abs(ref))


@pytest.mark.parametrize(
    "weights, normalized",
    [
        (lambda b, x: b.exp2(x), True),
        (lambda b, x: b.square(b.exp(x)), True),
        (lambda b, x: b.scale(b.exp(x), -1.0), False),  # negative weights: no convex combination
        (lambda b, x: b.tanh(x), False),
    ],
)
def test_only_non_negative_weights_are_normalized(weights: Callable[[GraphBuilder, SSAValue], SSAValue], normalized: bool) -> None:
    split, _ = partition_checked(flash_decoding(weights))
    assert ("tgraph.div" in [op.name for op in split.block.ops]) == normalized


def test_split_k_decode_kernels_stay_finite_at_large_values() -> None:
    """The same through the whole pipeline, kernels lowered and run by the tilelang interpreter (their
    fp16/fp32 numerics): gqa_decode at L=512, every logit equal, V around 1000. The Split-K pairs' f16
    P.V of 128 or 256 keys was inf before (the H200's kernels too:
    bench/results/split_k_values_2026-12-05s27_H200.md)."""
    from test_compile_any_graph import check_interpreted, compile_graph

    from cleave_ir.interpreter_tilelang import candidate_kernels
    from cleave_ir.run import load_module, resize_graph

    root = Path(__file__).resolve().parent.parent
    g = resize_graph(load_module(str(root / "examples" / "gqa_decode.mlir")).body.block.first_op, {4096: 512})
    module = compile_graph(g, search=True)
    assert any("_split" in name for name, _ in candidate_kernels(module))
    rng = np.random.default_rng(0)
    xs = [np.zeros((1, 8, 4, 128)), rng.standard_normal((1, 8, 512, 128)), 1000 * (1 + 0.05 * rng.standard_normal((1, 8, 512, 128)))]
    assert check_interpreted(g, module, inputs=xs) == 3
