"""Kernels keep the range and precision of the computation a tensor core would do, at input magnitudes
far from N(0, 1) (found by `bench/range_sweep.py` over graphs no example has, session 49).

A matmul's products on CUDA cores and a column's sum of squares were computed in fp16 before the fp32
sum: 1e3-scale operands put each product's rounding (0.5 apiece) into results that cancel, and 1e6-scale
ones overflowed to inf - inf = nan, where cuBLAS and our tensor-core kernels sum exact products.
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import Float16Type, ModuleOp

from cleave_ir.builder import GraphBuilder
from cleave_ir.dialects import tgraph
from cleave_ir.dialects import tilelang as tl
from cleave_ir.interpreter import max_relative_error, random_inputs, round_to, run_graph
from cleave_ir.interpreter_tilelang import candidate_kernels, run_kernels
from tests.test_unseen_graphs import lowered

ROOT = Path(__file__).resolve().parents[1]
TOL = 2e-2


def tanh_of_a_broadcast_product() -> tgraph.GraphOp:
    """tanh(x @ w) with a weight broadcast over the batch: two rows a block, products on CUDA cores."""
    b = GraphBuilder("bb")
    return b.build(b.tanh(b.matmul(b.input("x", [3, 10, 72]), b.input("w", [1, 72, 40]))))


def columns_normalized() -> tgraph.GraphOp:
    """w / ||w||, columns (weight normalization): a sum of squares over the leading dim."""
    b = GraphBuilder("l2c")
    w = b.input("w", [128, 24])
    return b.build(b.mul(w, b.rsqrt(b.reduce("sum", b.square(w), 0))))


GRAPHS = {"tanh_of_a_broadcast_product": tanh_of_a_broadcast_product, "columns_normalized": columns_normalized}


@functools.cache
def compiled(name: str) -> tuple[tgraph.GraphOp, ModuleOp]:
    graph = GRAPHS[name]()
    return graph, lowered(graph)


@pytest.mark.parametrize(
    ("name", "scales"),
    [
        ("tanh_of_a_broadcast_product", (1.0, 1e3)),
        ("tanh_of_a_broadcast_product", (1e3, 1.0)),
        ("tanh_of_a_broadcast_product", (1e3, 1e3)),
        ("columns_normalized", (1e3,)),
        ("columns_normalized", (1e-2,)),
    ],
)
def test_kernels_hold_inputs_far_from_unit_scale(name: str, scales: tuple[float, ...]) -> None:
    """Every candidate's kernels (TileLang interpreter) against the graph in float64, both reading the
    inputs rounded to their fp16 type (before: relative errors 0.18-0.5 and nan for the product, 1.0
    for the columns at 1e3: every element 0)."""
    graph, module = compiled(name)
    types = [tgraph.tensor_type(a).element_type for a in graph.inputs]
    for seed, dist in ((0, "normal"), (1, "uniform")):
        rng = np.random.default_rng(seed)
        base = random_inputs(graph, seed) if dist == "normal" else [rng.uniform(-1, 1, x.shape) for x in random_inputs(graph, seed)]
        xs = [round_to(x * s, t) for x, s, t in zip(base, scales, types, strict=True)]
        want = run_graph(graph, xs)
        for candidate, kernels in candidate_kernels(module):
            got = run_kernels(kernels, xs)
            for ref, out in zip(want, got, strict=True):
                err = max_relative_error(ref, np.asarray(out, dtype=np.float64).reshape(ref.shape))
                assert err <= TOL, f"@{candidate} at {scales} ({dist}): max relative error {err:.3g}"


def test_cuda_core_products_are_fp32() -> None:
    """No kernel multiplies two fp16 values: the products of a matmul and of a square are taken in fp32."""
    for name in GRAPHS:
        _, module = compiled(name)
        for kernel in module.walk():
            if isinstance(kernel, tl.KernelOp):
                for op in kernel.walk():
                    if op.name == "arith.mulf":
                        assert not isinstance(op.results[0].type, Float16Type), f"{name}: @{kernel.sym_name.data} multiplies in fp16: {op}"


def _range_sweep():  # noqa: ANN202 - the bench module
    spec = importlib.util.spec_from_file_location("range_sweep", ROOT / "bench" / "range_sweep.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_range_sweep_judges_a_graph_with_a_transpose(tmp_path: Path) -> None:
    """`bench/range_sweep.py` on a graph whose transposed output the pipeline folds into the boundary
    (the kernels write x @ w, the caller views it transposed): the graph is folded first and its kernels
    judged against the folded graph, and no candidate is reported (before: every candidate 'failed:
    operands could not be broadcast'; a graph with a concat was 'not compiled')."""
    path = tmp_path / "transposed.mlir"
    path.write_text(
        "tgraph.graph @to(%x: !tgraph.tensor<[32, 40], f16>, %w: !tgraph.tensor<[40, 24], f16>) -> !tgraph.tensor<[24, 32], f16> {\n"
        "  %y = tgraph.matmul %x, %w : !tgraph.tensor<[32, 40], f16>, !tgraph.tensor<[40, 24], f16> -> !tgraph.tensor<[32, 24], f16>\n"
        "  %t = tgraph.transpose %y perm [1, 0] : !tgraph.tensor<[32, 24], f16> -> !tgraph.tensor<[24, 32], f16>\n"
        "  tgraph.output %t : !tgraph.tensor<[24, 32], f16>\n"
        "}\n"
    )
    lines, candidates, checked = _range_sweep().sweep(str(path), 256, [1.0, 1e3], 20_000)
    assert candidates >= 1 and checked == 3  # x1e3 and w1e3: past fp16, skipped
    assert lines == []
