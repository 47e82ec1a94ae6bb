"""cleave-partition-split-k: which partials cross in f16 follows the ops' declared algebra.

A matmul's partial products keep their type when everything the combine does with them keeps their
relative precision (`tgraph.keeps_relative_error`, declared on the ops); otherwise they cross in
f32. The pass knows no op by name: an op it has never seen is classified by its algebra.
"""

from __future__ import annotations

import dataclasses
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
        (lambda b, r: b.scale(r, 0.125), "f16"),
        (lambda b, r: b.scalar("mul", r, 0.125), "f16"),  # the same function as scale, the same algebra
        (lambda b, r: b.cast(b.mul(b.cast(r, "f32"), b.cast(r, "f32")), "f16"), "f16"),
        (lambda b, r: b.div(r, b.reshape(b.reshape(r, [16, 16]), [1, 16, 16])), "f16"),
        (lambda b, r: b.reciprocal(r), "f32"),
        (lambda b, r: b.scalar("add", r, 1.0), "f32"),
        (lambda b, r: b.exp(b.sub(r, b.reduce("max", r, 2))), "f32"),
        (lambda b, r: b.reduce("sum", b.exp(r), 2), "f32"),
    ],
)
def test_partials_cross_in_f16_only_through_relative_ops(tail: Tail, crossing: str) -> None:
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
