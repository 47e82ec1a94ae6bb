"""`cleave-fold-structural`: graphs written with transposes, slices and concats (rotary embeddings, a
packed QKV weight, `x @ w.T`, a transposed input, outputs joined from parts) compile.

The rewrite is checked in float64 (the folded graph on views of the inputs, its parts concatenated,
against the graph as written, on three distributions), then through the whole pipeline: every kept
candidate's kernels, lowered and run in the TileLang interpreter on the views, against float64. The
emitted module's `boundary_inputs` / `boundary_outputs` make the same views and joins on torch tensors.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.context import Context
from xdsl.ir import SSAValue
from xdsl.parser import Parser

from cleave_ir.builder import GraphBuilder, module_of
from cleave_ir.diagnostics import CleaveError
from cleave_ir.dialects import tgraph
from cleave_ir.dialects.cleave import BoundaryAttr, JoinAttr, PartAttr, ViewAttr
from cleave_ir.interpreter import max_relative_error, run_graph
from cleave_ir.interpreter_tilelang import candidate_kernels, run_kernels
from cleave_ir.passes.fold_structural import FoldStructuralPass
from cleave_ir.passes.lower_tilelang import lower_module
from cleave_ir.passes.pipeline import PipelinePass
from cleave_ir.run import make_context
from cleave_ir.tilelang_emitter import module_source
from conftest import boundary_of, boundary_views, emulated_gpu_check, fp16_inputs, interpreting_compile
from xdsl.utils.exceptions import VerifyException

ROPE = """
tgraph.graph @rope(%q: !tgraph.tensor<[4, 8, 64], f16>, %cos: !tgraph.tensor<[4, 1, 64], f16>, %sin: !tgraph.tensor<[4, 1, 64], f16>) -> !tgraph.tensor<[4, 8, 64], f16> {
  %q1 = tgraph.slice %q dim 2 start 0 : !tgraph.tensor<[4, 8, 64], f16> -> !tgraph.tensor<[4, 8, 32], f16>
  %q2 = tgraph.slice %q dim 2 start 32 : !tgraph.tensor<[4, 8, 64], f16> -> !tgraph.tensor<[4, 8, 32], f16>
  %n2 = tgraph.neg %q2 : !tgraph.tensor<[4, 8, 32], f16>
  %rh = tgraph.concat %n2, %q1 dim 2 : !tgraph.tensor<[4, 8, 32], f16>, !tgraph.tensor<[4, 8, 32], f16> -> !tgraph.tensor<[4, 8, 64], f16>
  %a = tgraph.mul %q, %cos : !tgraph.tensor<[4, 8, 64], f16>, !tgraph.tensor<[4, 1, 64], f16> -> !tgraph.tensor<[4, 8, 64], f16>
  %b = tgraph.mul %rh, %sin : !tgraph.tensor<[4, 8, 64], f16>, !tgraph.tensor<[4, 1, 64], f16> -> !tgraph.tensor<[4, 8, 64], f16>
  %o = tgraph.add %a, %b : !tgraph.tensor<[4, 8, 64], f16>, !tgraph.tensor<[4, 8, 64], f16> -> !tgraph.tensor<[4, 8, 64], f16>
  tgraph.output %o : !tgraph.tensor<[4, 8, 64], f16>
}
"""

# q and k sliced out of one packed projection, then their scores softmaxed
PACKED_QK = """
tgraph.graph @packed_qk(%x: !tgraph.tensor<[64, 128], f16>, %w: !tgraph.tensor<[384, 128], f16>) -> !tgraph.tensor<[64, 64], f16> {
  %y = tgraph.matmul %x, %w transpose_b : !tgraph.tensor<[64, 128], f16>, !tgraph.tensor<[384, 128], f16> -> !tgraph.tensor<[64, 384], f16>
  %q = tgraph.slice %y dim 1 start 0 : !tgraph.tensor<[64, 384], f16> -> !tgraph.tensor<[64, 128], f16>
  %k = tgraph.slice %y dim 1 start 128 : !tgraph.tensor<[64, 384], f16> -> !tgraph.tensor<[64, 128], f16>
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[64, 128], f16>, !tgraph.tensor<[64, 128], f16> -> !tgraph.tensor<[64, 64], f16>
  %t = tgraph.scale %s, 8.838834764831845e-02 : !tgraph.tensor<[64, 64], f16>
  %m = tgraph.reduce max %t dim 1 : !tgraph.tensor<[64, 64], f16> -> !tgraph.tensor<[64, 1], f16>
  %z = tgraph.sub %t, %m : !tgraph.tensor<[64, 64], f16>, !tgraph.tensor<[64, 1], f16> -> !tgraph.tensor<[64, 64], f16>
  %e = tgraph.exp %z : !tgraph.tensor<[64, 64], f16>
  %r = tgraph.reduce sum %e dim 1 : !tgraph.tensor<[64, 64], f16> -> !tgraph.tensor<[64, 1], f16>
  %p = tgraph.div %e, %r : !tgraph.tensor<[64, 64], f16>, !tgraph.tensor<[64, 1], f16> -> !tgraph.tensor<[64, 64], f16>
  tgraph.output %p : !tgraph.tensor<[64, 64], f16>
}
"""

# gate and up projections written apart and joined, then SiLU of the joined first half times its second
GATE_UP = """
tgraph.graph @gate_up(%x: !tgraph.tensor<[16, 256], f16>, %wg: !tgraph.tensor<[512, 256], f16>, %wu: !tgraph.tensor<[512, 256], f16>) -> !tgraph.tensor<[16, 512], f16> {
  %g = tgraph.matmul %x, %wg transpose_b : !tgraph.tensor<[16, 256], f16>, !tgraph.tensor<[512, 256], f16> -> !tgraph.tensor<[16, 512], f16>
  %u = tgraph.matmul %x, %wu transpose_b : !tgraph.tensor<[16, 256], f16>, !tgraph.tensor<[512, 256], f16> -> !tgraph.tensor<[16, 512], f16>
  %gu = tgraph.concat %g, %u dim 1 : !tgraph.tensor<[16, 512], f16>, !tgraph.tensor<[16, 512], f16> -> !tgraph.tensor<[16, 1024], f16>
  %a = tgraph.slice %gu dim 1 start 0 : !tgraph.tensor<[16, 1024], f16> -> !tgraph.tensor<[16, 512], f16>
  %b = tgraph.slice %gu dim 1 start 512 : !tgraph.tensor<[16, 1024], f16> -> !tgraph.tensor<[16, 512], f16>
  %s = tgraph.silu %a : !tgraph.tensor<[16, 512], f16>
  %y = tgraph.mul %s, %b : !tgraph.tensor<[16, 512], f16>, !tgraph.tensor<[16, 512], f16> -> !tgraph.tensor<[16, 512], f16>
  tgraph.output %y : !tgraph.tensor<[16, 512], f16>
}
"""

# two linear layers' outputs returned as one tensor, and the row sums of a transposed input
JOINED = """
tgraph.graph @joined(%x: !tgraph.tensor<[32, 128], f16>, %w1: !tgraph.tensor<[64, 128], f16>, %w2: !tgraph.tensor<[96, 128], f16>, %c: !tgraph.tensor<[128, 32], f16>) -> (!tgraph.tensor<[32, 160], f16>, !tgraph.tensor<[32, 1], f16>) {
  %a = tgraph.matmul %x, %w1 transpose_b : !tgraph.tensor<[32, 128], f16>, !tgraph.tensor<[64, 128], f16> -> !tgraph.tensor<[32, 64], f16>
  %b = tgraph.matmul %x, %w2 transpose_b : !tgraph.tensor<[32, 128], f16>, !tgraph.tensor<[96, 128], f16> -> !tgraph.tensor<[32, 96], f16>
  %ab = tgraph.concat %a, %b dim 1 : !tgraph.tensor<[32, 64], f16>, !tgraph.tensor<[32, 96], f16> -> !tgraph.tensor<[32, 160], f16>
  %y = tgraph.scalar max %ab, 0.000000e+00 : !tgraph.tensor<[32, 160], f16>
  %ct = tgraph.transpose %c perm [1, 0] : !tgraph.tensor<[128, 32], f16> -> !tgraph.tensor<[32, 128], f16>
  %cs = tgraph.slice %ct dim 1 start 64 : !tgraph.tensor<[32, 128], f16> -> !tgraph.tensor<[32, 64], f16>
  %s = tgraph.reduce sum %cs dim 1 : !tgraph.tensor<[32, 64], f16> -> !tgraph.tensor<[32, 1], f16>
  tgraph.output %y, %s : !tgraph.tensor<[32, 160], f16>, !tgraph.tensor<[32, 1], f16>
}
"""

FP16_TOLERANCE = 1e-2  # max error relative to the output's max |value| (runtime.TOLERANCE, the GPU check's)

# decode attention over a cache with the new token's key and value appended (torch.cat): the sums over
# the keys and the product with v regroup per part in f32
KV_APPEND = """
tgraph.graph @kv_append(%q: !tgraph.tensor<[4, 1, 32], f16>, %kc: !tgraph.tensor<[4, 63, 32], f16>, %vc: !tgraph.tensor<[4, 63, 32], f16>, %kn: !tgraph.tensor<[4, 1, 32], f16>, %vn: !tgraph.tensor<[4, 1, 32], f16>) -> !tgraph.tensor<[4, 1, 32], f16> {
  %k = tgraph.concat %kc, %kn dim 1 : !tgraph.tensor<[4, 63, 32], f16>, !tgraph.tensor<[4, 1, 32], f16> -> !tgraph.tensor<[4, 64, 32], f16>
  %v = tgraph.concat %vc, %vn dim 1 : !tgraph.tensor<[4, 63, 32], f16>, !tgraph.tensor<[4, 1, 32], f16> -> !tgraph.tensor<[4, 64, 32], f16>
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[4, 1, 32], f16>, !tgraph.tensor<[4, 64, 32], f16> -> !tgraph.tensor<[4, 1, 64], f16>
  %t = tgraph.scale %s, 1.767766952966369e-01 : !tgraph.tensor<[4, 1, 64], f16>
  %m = tgraph.reduce max %t dim 2 : !tgraph.tensor<[4, 1, 64], f16> -> !tgraph.tensor<[4, 1, 1], f16>
  %z = tgraph.sub %t, %m : !tgraph.tensor<[4, 1, 64], f16>, !tgraph.tensor<[4, 1, 1], f16> -> !tgraph.tensor<[4, 1, 64], f16>
  %e = tgraph.exp %z : !tgraph.tensor<[4, 1, 64], f16>
  %r = tgraph.reduce sum %e dim 2 : !tgraph.tensor<[4, 1, 64], f16> -> !tgraph.tensor<[4, 1, 1], f16>
  %p = tgraph.div %e, %r : !tgraph.tensor<[4, 1, 64], f16>, !tgraph.tensor<[4, 1, 1], f16> -> !tgraph.tensor<[4, 1, 64], f16>
  %o = tgraph.matmul %p, %v : !tgraph.tensor<[4, 1, 64], f16>, !tgraph.tensor<[4, 64, 32], f16> -> !tgraph.tensor<[4, 1, 32], f16>
  tgraph.output %o : !tgraph.tensor<[4, 1, 32], f16>
}
"""

# linear attention, phi(q) @ (phi(k)^T @ v): a transposed computed value as a matmul's first operand
LINEAR_ATTENTION = """
tgraph.graph @linear_attention(%q: !tgraph.tensor<[64, 32], f16>, %k: !tgraph.tensor<[64, 32], f16>, %v: !tgraph.tensor<[64, 32], f16>) -> !tgraph.tensor<[64, 32], f16> {
  %fq = tgraph.sigmoid %q : !tgraph.tensor<[64, 32], f16>
  %fk = tgraph.sigmoid %k : !tgraph.tensor<[64, 32], f16>
  %kt = tgraph.transpose %fk perm [1, 0] : !tgraph.tensor<[64, 32], f16> -> !tgraph.tensor<[32, 64], f16>
  %kv = tgraph.matmul %kt, %v : !tgraph.tensor<[32, 64], f16>, !tgraph.tensor<[64, 32], f16> -> !tgraph.tensor<[32, 32], f16>
  %o = tgraph.matmul %fq, %kv : !tgraph.tensor<[64, 32], f16>, !tgraph.tensor<[32, 32], f16> -> !tgraph.tensor<[64, 32], f16>
  tgraph.output %o : !tgraph.tensor<[64, 32], f16>
}
"""

# an RMSNorm reads q whole (its sum of squares) before the rotary embedding reads it in halves
NORM_ROPE = """
tgraph.graph @norm_rope(%q: !tgraph.tensor<[4, 8, 64], f16>, %cos: !tgraph.tensor<[4, 1, 64], f16>, %sin: !tgraph.tensor<[4, 1, 64], f16>) -> !tgraph.tensor<[4, 8, 64], f16> {
  %sq = tgraph.square %q : !tgraph.tensor<[4, 8, 64], f16>
  %ss = tgraph.reduce sum %sq dim 2 : !tgraph.tensor<[4, 8, 64], f16> -> !tgraph.tensor<[4, 8, 1], f16>
  %ms = tgraph.scale %ss, 1.5625e-02 : !tgraph.tensor<[4, 8, 1], f16>
  %r = tgraph.rsqrt %ms : !tgraph.tensor<[4, 8, 1], f16>
  %n = tgraph.mul %q, %r : !tgraph.tensor<[4, 8, 64], f16>, !tgraph.tensor<[4, 8, 1], f16> -> !tgraph.tensor<[4, 8, 64], f16>
  %q1 = tgraph.slice %n dim 2 start 0 : !tgraph.tensor<[4, 8, 64], f16> -> !tgraph.tensor<[4, 8, 32], f16>
  %q2 = tgraph.slice %n dim 2 start 32 : !tgraph.tensor<[4, 8, 64], f16> -> !tgraph.tensor<[4, 8, 32], f16>
  %n2 = tgraph.neg %q2 : !tgraph.tensor<[4, 8, 32], f16>
  %rh = tgraph.concat %n2, %q1 dim 2 : !tgraph.tensor<[4, 8, 32], f16>, !tgraph.tensor<[4, 8, 32], f16> -> !tgraph.tensor<[4, 8, 64], f16>
  %a = tgraph.mul %n, %cos : !tgraph.tensor<[4, 8, 64], f16>, !tgraph.tensor<[4, 1, 64], f16> -> !tgraph.tensor<[4, 8, 64], f16>
  %b = tgraph.mul %rh, %sin : !tgraph.tensor<[4, 8, 64], f16>, !tgraph.tensor<[4, 1, 64], f16> -> !tgraph.tensor<[4, 8, 64], f16>
  %o = tgraph.add %a, %b : !tgraph.tensor<[4, 8, 64], f16>, !tgraph.tensor<[4, 8, 64], f16> -> !tgraph.tensor<[4, 8, 64], f16>
  tgraph.output %o : !tgraph.tensor<[4, 8, 64], f16>
}
"""

GRAPHS = {
    "rope": ROPE,
    "packed_qk": PACKED_QK,
    "gate_up": GATE_UP,
    "joined": JOINED,
    "kv_append": KV_APPEND,
    "linear_attention": LINEAR_ATTENTION,
    "norm_rope": NORM_ROPE,
}


def _graph(text: str) -> tgraph.GraphOp:
    return Parser(make_context(), text).parse_module().body.block.first_op  # type: ignore[return-value]


def _folded(text: str):  # noqa: ANN202 - (graph as written, its module after the pass)
    graph = _graph(text)
    module = module_of(graph.clone())
    FoldStructuralPass().apply(Context(), module)
    module.verify()
    return graph, module


def _joined(boundary: BoundaryAttr | None, parts) -> list[np.ndarray]:  # noqa: ANN001
    return list(parts) if boundary is None else boundary.assemble(list(parts), lambda xs, dim: np.concatenate(xs, axis=dim), np.transpose)


@pytest.mark.parametrize("name", GRAPHS)
@pytest.mark.parametrize("dist", ["normal", "uniform", "heavy"])
def test_the_folded_graph_computes_the_graph_as_written(name: str, dist: str) -> None:
    graph, module = _folded(GRAPHS[name])
    (folded,) = [g for g in module.walk() if isinstance(g, tgraph.GraphOp)]
    assert not any(isinstance(op, tgraph.StructuralOp) for op in folded.block.ops)
    boundary = boundary_of(module)
    xs = fp16_inputs(graph, dist)
    want = run_graph(graph, xs)
    got = _joined(boundary, run_graph(folded, boundary_views(boundary, xs)))
    assert len(got) == len(want)
    for w, g in zip(want, got, strict=True):
        assert w.shape == g.shape
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12 * max(1.0, float(np.abs(w).max())))


def test_a_transpose_into_a_matmul_needs_no_boundary() -> None:
    text = """
tgraph.graph @linear(%x: !tgraph.tensor<[8, 64], f16>, %w: !tgraph.tensor<[32, 64], f16>) -> !tgraph.tensor<[8, 32], f16> {
  %wt = tgraph.transpose %w perm [1, 0] : !tgraph.tensor<[32, 64], f16> -> !tgraph.tensor<[64, 32], f16>
  %y = tgraph.matmul %x, %wt : !tgraph.tensor<[8, 64], f16>, !tgraph.tensor<[64, 32], f16> -> !tgraph.tensor<[8, 32], f16>
  tgraph.output %y : !tgraph.tensor<[8, 32], f16>
}
"""
    _, module = _folded(text)
    (g,) = [g for g in module.walk() if isinstance(g, tgraph.GraphOp)]
    (mm,) = [op for op in g.block.ops if isinstance(op, tgraph.MatmulOp)]
    assert mm.transpose_b is not None and mm.rhs is g.inputs[1]
    assert "cleave.boundary" not in g.attributes


def test_a_graph_without_structural_ops_is_untouched() -> None:
    plain = """
tgraph.graph @plain(%x: !tgraph.tensor<[8, 64], f16>) -> !tgraph.tensor<[8, 1], f16> {
  %s = tgraph.reduce sum %x dim 1 : !tgraph.tensor<[8, 64], f16> -> !tgraph.tensor<[8, 1], f16>
  tgraph.output %s : !tgraph.tensor<[8, 1], f16>
}
"""
    graph, module = _folded(plain)
    assert str(module.body.block.first_op) == str(graph)


def test_a_grid_of_concats_is_named_by_the_pipeline() -> None:
    """Concats along two dims (a 2x2 grid of blocks) leave no one dim to cut the output along: the
    graph is left as written, and the pipeline names the first concat in one line."""
    text = """
tgraph.graph @grid(%a: !tgraph.tensor<[4, 8], f16>, %b: !tgraph.tensor<[4, 8], f16>, %c: !tgraph.tensor<[4, 8], f16>, %d: !tgraph.tensor<[4, 8], f16>) -> !tgraph.tensor<[8, 16], f16> {
  %ab = tgraph.concat %a, %b dim 1 : !tgraph.tensor<[4, 8], f16>, !tgraph.tensor<[4, 8], f16> -> !tgraph.tensor<[4, 16], f16>
  %cd = tgraph.concat %c, %d dim 1 : !tgraph.tensor<[4, 8], f16>, !tgraph.tensor<[4, 8], f16> -> !tgraph.tensor<[4, 16], f16>
  %x = tgraph.concat %ab, %cd dim 0 : !tgraph.tensor<[4, 16], f16>, !tgraph.tensor<[4, 16], f16> -> !tgraph.tensor<[8, 16], f16>
  %y = tgraph.exp %x : !tgraph.tensor<[8, 16], f16>
  tgraph.output %y : !tgraph.tensor<[8, 16], f16>
}
"""
    module = module_of(_graph(text).clone())
    with pytest.raises(CleaveError, match="tgraph.concat is not supported by the scheduler yet in @grid"):
        PipelinePass(search_budget=2_000, top_k=1).apply(Context(), module)


@functools.cache
def _pipelined(name: str):  # noqa: ANN202 - (graph as written, lowered module)
    graph = _graph(GRAPHS[name])
    module = module_of(graph.clone())
    PipelinePass(search_budget=20_000, split_counts=(2,), top_k=1).apply(Context(), module)
    lower_module(module)
    return graph, module


@pytest.mark.parametrize("name", ["rope", "packed_qk", "gate_up", "kv_append", "linear_attention", "norm_rope"])
@pytest.mark.parametrize("dist", ["normal", "uniform", "heavy"])
def test_kernels_on_views_compute_the_graph_as_written(name: str, dist: str) -> None:
    graph, module = _pipelined(name)
    boundary = boundary_of(module)
    xs = fp16_inputs(graph, dist)
    want = run_graph(graph, xs)
    candidates = candidate_kernels(module)
    assert candidates
    for cand, kernels in candidates:
        got = _joined(boundary, run_kernels(kernels, boundary_views(boundary, xs)))
        err = max(max_relative_error(w, g) for w, g in zip(want, got, strict=True))
        assert err < FP16_TOLERANCE, f"{cand}: {err:.3g} at {dist}"


@pytest.mark.parametrize("name", ["rope", "packed_qk"])
def test_the_emitted_module_views_and_joins_as_the_boundary_says(name: str, tmp_path) -> None:  # noqa: ANN001
    torch = pytest.importorskip("torch")
    from cleave_ir.runtime import load_module_file

    graph, module = _pipelined(name)
    boundary = boundary_of(module)
    assert boundary is not None
    path = tmp_path / "kernels.py"
    path.write_text(module_source(module))
    mod = load_module_file(path)
    xs = fp16_inputs(graph, "normal")
    tensors = [torch.from_numpy(x) for x in xs]
    views = mod.boundary_inputs(tensors)
    for got, want, view in zip(views, boundary.views(xs, np.transpose, np.concatenate), boundary.inputs.data, strict=True):
        assert got.untyped_storage().data_ptr() == tensors[view.source].untyped_storage().data_ptr()  # a view, not a copy
        np.testing.assert_array_equal(got.numpy(), want)
    folded = next(g for g in module.walk() if isinstance(g, tgraph.GraphOp) and "cleave.boundary" in g.attributes)
    parts = run_graph(folded, boundary_views(boundary, xs))
    joined = mod.boundary_outputs([torch.from_numpy(p) for p in parts])
    for got, want in zip(joined, run_graph(graph, xs), strict=True):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)


TRANSPOSED_OUTPUT = """
tgraph.graph @transposed_output(%x: !tgraph.tensor<[64, 32], f16>, %w: !tgraph.tensor<[48, 32], f16>) -> !tgraph.tensor<[48, 64], f16> {
  %y = tgraph.matmul %x, %w transpose_b : !tgraph.tensor<[64, 32], f16>, !tgraph.tensor<[48, 32], f16> -> !tgraph.tensor<[64, 48], f16>
  %t = tgraph.transpose %y perm [1, 0] : !tgraph.tensor<[64, 48], f16> -> !tgraph.tensor<[48, 64], f16>
  tgraph.output %t : !tgraph.tensor<[48, 64], f16>
}
"""


def test_the_emitted_run_writes_out_through_a_transposed_output_view(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """A transposed output is a view of what the kernel writes: `run(out=o)` hands the kernels `o`'s
    transposed view to write (no copy), and `run()` alone allocates the output row-major, in the kernel's
    dtype, and hands the kernel its transposed view too."""
    torch = pytest.importorskip("torch")
    from cleave_ir.runtime import load_module_file

    graph = _graph(TRANSPOSED_OUTPUT)
    module = module_of(graph.clone())
    PipelinePass(search_budget=2_000, top_k=1).apply(Context(), module)
    lower_module(module)
    path = tmp_path / "kernels.py"
    path.write_text(module_source(module))
    mod = load_module_file(path)
    given = []

    def kernels(tensors, candidate, outs):  # noqa: ANN001, ANN202 - the matmul the kernel computes
        x, w = tensors
        y = x @ w.T
        given.append(outs)
        return [y] if outs is None else [o.copy_(y) for o in outs]

    monkeypatch.setattr(mod, "_kernels", kernels)
    x, w = torch.randn(64, 32, dtype=torch.float64), torch.randn(48, 32, dtype=torch.float64)
    got = mod.run(x, w)
    assert got.is_contiguous() and got.dtype == torch.float16  # (the graph's dtype; the stand-in computes in float64)
    assert given[-1][0].data_ptr() == got.data_ptr() and given[-1][0].shape == (64, 48)
    torch.testing.assert_close(got, (x @ w.T).T.half())
    o = torch.empty(48, 64, dtype=torch.float64)
    assert mod.run(x, w, out=o) is o
    assert given[-1][0].data_ptr() == o.data_ptr() and given[-1][0].shape == (64, 48)
    torch.testing.assert_close(o, (x @ w.T).T)


def _emitted_rope(tmp_path):  # noqa: ANN001, ANN202 - (graph as written, folded graph, emitted module)
    from cleave_ir.runtime import load_module_file

    graph, module = _pipelined("rope")
    folded = next(g for g in module.walk() if isinstance(g, tgraph.GraphOp) and "cleave.boundary" in g.attributes)
    path = tmp_path / "kernels.py"
    path.write_text(module_source(module))
    return graph, folded, load_module_file(path)


def test_the_emitted_run_concatenates_parts_into_out(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """An output the kernels write in parts (the rotary embedding's halves): `run(out=o)` hands the last
    kernel each part's window of `o` (any layout) to write, no join; `run()` allocates the output (in the
    kernels' dtype) and hands the kernel its windows alike."""
    torch = pytest.importorskip("torch")
    graph, folded, mod = _emitted_rope(tmp_path)
    given = []

    def kernels(tensors, candidate, outs):  # noqa: ANN001, ANN202 - the folded graph's parts, written into `outs`
        parts = [torch.from_numpy(p) for p in run_graph(folded, [t.numpy() for t in tensors])]
        given.append(outs)
        return parts if outs is None else [o.copy_(p) for o, p in zip(outs, parts)]

    monkeypatch.setattr(mod, "_kernels", kernels)
    xs = fp16_inputs(graph, "uniform")
    (want,) = run_graph(graph, xs)
    tensors = [torch.from_numpy(x) for x in xs]
    got = mod.run(*tensors)
    assert got.dtype == torch.float16 and got.is_contiguous()  # (the stand-in computes in float64)
    assert len(given[-1]) == 2 and all(w.untyped_storage().data_ptr() == got.untyped_storage().data_ptr() for w in given[-1])
    torch.testing.assert_close(got, torch.from_numpy(want).half())
    o = torch.empty(64, 8, 4, dtype=torch.float64).permute(2, 1, 0)  # [4, 8, 64] in another layout
    assert mod.run(*tensors, out=o) is o
    torch.testing.assert_close(o, torch.from_numpy(want))
    assert len(given[-1]) == 2 and all(w.untyped_storage().data_ptr() == o.untyped_storage().data_ptr() for w in given[-1])


def test_the_last_kernel_writes_each_part_into_its_window_of_out(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """`run(out=o)` of an output in parts compiles the last kernel for the layouts of `o`'s windows and
    launches it on them (no join, no copy), then replays that plan. A stand-in `tilelang.compile` refuses
    tensors whose strides are not its buffers' (as TileLang's launcher does) and writes the folded
    graph's parts."""
    torch = pytest.importorskip("torch")
    graph, folded, mod = _emitted_rope(tmp_path)
    (name,) = mod.CANDIDATES[0][1]
    n_in = mod.KERNELS[name]["inputs"]
    launched = []

    def fake_compile(func, out_idx=None, target="cuda", pass_configs=None):  # noqa: ANN001, ANN202
        want = [[int(st) for st in func.buffer_map[q].strides] if func.buffer_map[q].strides else None for q in func.params]

        def kernel(*args):  # noqa: ANN002, ANN202
            for w, x in zip(want, args):
                if w is not None and any(a != b for a, b, n in zip(w, x.stride(), x.shape) if n > 1):
                    raise ValueError(f"stride mismatch: {list(x.stride())} for {w}")
            parts = [torch.from_numpy(q) for q in run_graph(folded, [x.numpy() for x in args[:n_in]])]
            launched.append(out_idx)
            if out_idx is None:
                for o, q in zip(args[n_in:], parts):
                    o.copy_(q)
                return None
            return parts

        return kernel

    monkeypatch.setattr(mod.tilelang, "compile", fake_compile)
    monkeypatch.setattr(mod, "_compiled", {})
    xs = fp16_inputs(graph, "heavy")
    (want,) = run_graph(graph, xs)
    tensors = [torch.from_numpy(x) for x in xs]
    for _ in range(2):  # decided, then replayed
        o = torch.full((8, 4, 64), float("nan"), dtype=torch.float64).transpose(0, 1)  # a head transpose
        assert mod.run(*tensors, out=o) is o
        torch.testing.assert_close(o, torch.from_numpy(want))
    assert launched == [None, None]  # the kernel wrote the windows itself both times
    (key,) = mod._compiled
    assert key[0] == name and key[2] == "into" and any(key[1])  # one kernel, for the windows' layouts
    o = torch.full((64, 8, 4), float("nan"), dtype=torch.float64).permute(2, 1, 0)  # no kernel writes this
    assert mod.run(*tensors, out=o) is o and launched[-1] == list(range(n_in, n_in + 2))  # written, then copied
    torch.testing.assert_close(o, torch.from_numpy(want))
    got = mod.run(*tensors)  # without `out`: allocated, its windows written by the kernel (the stand-in writes f64 into f16)
    assert launched[-1] is None and got.dtype == torch.float16
    torch.testing.assert_close(got, torch.from_numpy(want).half())


ROPE_QK = """
tgraph.graph @rope_qk(%q: !tgraph.tensor<[4, 8, 64], f16>, %k: !tgraph.tensor<[4, 2, 64], f16>, %cos: !tgraph.tensor<[4, 1, 64], f16>, %sin: !tgraph.tensor<[4, 1, 64], f16>) -> (!tgraph.tensor<[4, 8, 64], f16>, !tgraph.tensor<[4, 2, 64], f16>) {
  %q1 = tgraph.slice %q dim 2 start 0 : !tgraph.tensor<[4, 8, 64], f16> -> !tgraph.tensor<[4, 8, 32], f16>
  %q2 = tgraph.slice %q dim 2 start 32 : !tgraph.tensor<[4, 8, 64], f16> -> !tgraph.tensor<[4, 8, 32], f16>
  %n2 = tgraph.neg %q2 : !tgraph.tensor<[4, 8, 32], f16>
  %rh = tgraph.concat %n2, %q1 dim 2 : !tgraph.tensor<[4, 8, 32], f16>, !tgraph.tensor<[4, 8, 32], f16> -> !tgraph.tensor<[4, 8, 64], f16>
  %a = tgraph.mul %q, %cos : !tgraph.tensor<[4, 8, 64], f16>, !tgraph.tensor<[4, 1, 64], f16> -> !tgraph.tensor<[4, 8, 64], f16>
  %b = tgraph.mul %rh, %sin : !tgraph.tensor<[4, 8, 64], f16>, !tgraph.tensor<[4, 1, 64], f16> -> !tgraph.tensor<[4, 8, 64], f16>
  %oq = tgraph.add %a, %b : !tgraph.tensor<[4, 8, 64], f16>, !tgraph.tensor<[4, 8, 64], f16> -> !tgraph.tensor<[4, 8, 64], f16>
  %k1 = tgraph.slice %k dim 2 start 0 : !tgraph.tensor<[4, 2, 64], f16> -> !tgraph.tensor<[4, 2, 32], f16>
  %k2 = tgraph.slice %k dim 2 start 32 : !tgraph.tensor<[4, 2, 64], f16> -> !tgraph.tensor<[4, 2, 32], f16>
  %m2 = tgraph.neg %k2 : !tgraph.tensor<[4, 2, 32], f16>
  %kh = tgraph.concat %m2, %k1 dim 2 : !tgraph.tensor<[4, 2, 32], f16>, !tgraph.tensor<[4, 2, 32], f16> -> !tgraph.tensor<[4, 2, 64], f16>
  %c = tgraph.mul %k, %cos : !tgraph.tensor<[4, 2, 64], f16>, !tgraph.tensor<[4, 1, 64], f16> -> !tgraph.tensor<[4, 2, 64], f16>
  %d = tgraph.mul %kh, %sin : !tgraph.tensor<[4, 2, 64], f16>, !tgraph.tensor<[4, 1, 64], f16> -> !tgraph.tensor<[4, 2, 64], f16>
  %ok = tgraph.add %c, %d : !tgraph.tensor<[4, 2, 64], f16>, !tgraph.tensor<[4, 2, 64], f16> -> !tgraph.tensor<[4, 2, 64], f16>
  tgraph.output %oq, %ok : !tgraph.tensor<[4, 8, 64], f16>, !tgraph.tensor<[4, 2, 64], f16>
}
"""


def test_run_without_out_has_the_last_kernel_write_every_output_in_parts(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """Two outputs, each in two halves (rotary embeddings of q and k): `run()` allocates both outputs and
    the last kernel writes its four parts into their windows (no join after it), as the suite times it."""
    torch = pytest.importorskip("torch")
    from cleave_ir.runtime import load_module_file

    graph = _graph(ROPE_QK)
    module = module_of(graph.clone())
    PipelinePass(search_budget=2_000, top_k=1).apply(Context(), module)
    lower_module(module)
    folded = next(g for g in module.walk() if isinstance(g, tgraph.GraphOp) and "cleave.boundary" in g.attributes)
    assert len(folded.output_op.operands) == 4
    path = tmp_path / "kernels.py"
    path.write_text(module_source(module))
    mod = load_module_file(path)
    n_in = mod.KERNELS[mod.CANDIDATES[0][1][-1]]["inputs"]
    written = []

    def fake_compile(func, out_idx=None, target="cuda", pass_configs=None):  # noqa: ANN001, ANN202
        def kernel(*args):  # noqa: ANN002, ANN202
            assert out_idx is None  # (writes the windows it is given)
            parts = run_graph(folded, [x.numpy() for x in args[:n_in]])
            written.append([o.untyped_storage().data_ptr() for o in args[n_in:]])
            for o, p in zip(args[n_in:], parts):
                o.copy_(torch.from_numpy(p))

        return kernel

    monkeypatch.setattr(mod.tilelang, "compile", fake_compile)
    monkeypatch.setattr(mod, "_compiled", {})
    xs = fp16_inputs(graph, "heavy")
    want = run_graph(graph, xs)
    got = mod.run(*[torch.from_numpy(x) for x in xs])
    assert len(got) == 2 and [o.shape for o in got] == [w.shape for w in want]
    assert written[-1] == [got[0].untyped_storage().data_ptr()] * 2 + [got[1].untyped_storage().data_ptr()] * 2
    for o, w in zip(got, want, strict=True):
        torch.testing.assert_close(o, torch.from_numpy(w).half())


def test_a_boundary_whose_parts_disagree_does_not_verify() -> None:
    with pytest.raises(VerifyException, match="must share one dim"):
        BoundaryAttr([ViewAttr(0)], [PartAttr(0, 1), PartAttr(0, 2)]).verify()
    with pytest.raises(VerifyException, match="not a permutation"):
        ViewAttr(0, [0, 0]).verify()


def test_a_slice_of_a_graph_with_dynamic_dims_is_left_as_written() -> None:
    """A slice along a dynamic dim would fix its size at the declared one: left as written (the pipeline
    refuses it); along another dim it is a view that serves every size."""
    text = """
tgraph.graph @dyn(%x: !tgraph.tensor<[8, 64], f16> {dynamic = array<i64: 0>}) -> !tgraph.tensor<[4, 1], f16> {
  %h = tgraph.slice %x dim 0 start 4 : !tgraph.tensor<[8, 64], f16> -> !tgraph.tensor<[4, 64], f16>
  %s = tgraph.reduce sum %h dim 1 : !tgraph.tensor<[4, 64], f16> -> !tgraph.tensor<[4, 1], f16>
  tgraph.output %s : !tgraph.tensor<[4, 1], f16>
}
"""
    graph, module = _folded(text)
    assert str(module.body.block.first_op) == str(graph)
    graph, module = _folded(text.replace("dynamic = array<i64: 0>", "dynamic = array<i64: 1>"))
    (g,) = [g for g in module.walk() if isinstance(g, tgraph.GraphOp)]
    assert g.attributes["cleave.boundary"] == BoundaryAttr([ViewAttr(0, [], [[0, 4, 4]])], [PartAttr(0)])
    assert g.input_annotation(0, "dynamic") == (1,)


@pytest.mark.parametrize("n", [4, 3, 11])
def test_a_rotary_embedding_of_dynamic_length_folds_and_serves_every_length(n: int) -> None:
    """In a graph of dynamic sequence length, the rotary embedding's halves (the head dim, tied to no
    dynamic dim) still move to the boundary, and the one kernel serves lengths it was not built at."""
    module = _dynamic_rope()
    first = module.body.block.first_op
    boundary = first.attributes["cleave.boundary"]
    assert [first.input_annotation(i, "dynamic") for i in range(2)] == [(0,), (0,)]
    sized = ROPE.replace("[4, ", f"[{n}, ")
    graph = _graph(sized)
    xs = fp16_inputs(graph, "uniform", seed=n)
    (want,) = run_graph(graph, xs)
    candidates = candidate_kernels(module)
    assert candidates and all("cleave.dynamic" in k.attributes for _, ks in candidates for k in ks)
    for cand, kernels in candidates:
        (got,) = _joined(boundary, run_kernels(kernels, boundary_views(boundary, xs)))
        assert max_relative_error(want, got) < FP16_TOLERANCE, (cand, n)


DYNAMIC_ROPE = ROPE.replace("%q: !tgraph.tensor<[4, 8, 64], f16>", "%q: !tgraph.tensor<[4, 8, 64], f16> {dynamic = array<i64: 0>}")


@functools.cache
def _dynamic_rope():  # noqa: ANN202 - the lowered module
    from cleave_ir.passes.dynamic_shapes import DynamicShapesPass

    module = module_of(_graph(DYNAMIC_ROPE).clone())
    PipelinePass(search_budget=20_000, split_counts=(2,), top_k=1).apply(Context(), module)
    DynamicShapesPass().apply(Context(), module)
    lower_module(module)
    return module


def test_a_slice_of_a_dim_tied_to_a_dynamic_one_is_left_as_written() -> None:
    """`y` is not declared dynamic, but adding it to `x` ties its rows to x's dynamic rows: a slice of
    its rows would fix their count at the declared one, so nothing moves. Its columns are free."""
    text = """
tgraph.graph @tied(%x: !tgraph.tensor<[16, 8], f16> {dynamic = array<i64: 0>}, %y: !tgraph.tensor<[16, 8], f16>) -> (!tgraph.tensor<[16, 8], f16>, !tgraph.tensor<[8, 8], f16>) {
  %a = tgraph.add %x, %y : !tgraph.tensor<[16, 8], f16>, !tgraph.tensor<[16, 8], f16> -> !tgraph.tensor<[16, 8], f16>
  %e = tgraph.exp %y : !tgraph.tensor<[16, 8], f16>
  %s = tgraph.slice %e dim DIM start 0 : !tgraph.tensor<[16, 8], f16> -> !tgraph.tensor<SLICED, f16>
  tgraph.output %a, %s : !tgraph.tensor<[16, 8], f16>, !tgraph.tensor<SLICED, f16>
}
"""
    rows = text.replace("DIM", "0").replace("SLICED", "[8, 8]")
    graph, module = _folded(rows)
    assert str(module.body.block.first_op) == str(graph)
    cols = text.replace("DIM", "1").replace("SLICED", "[16, 4]").replace("!tgraph.tensor<[8, 8], f16>)", "!tgraph.tensor<[16, 4], f16>)")
    _, module = _folded(cols)
    assert "cleave.boundary" in module.body.block.first_op.attributes


def _kv_append(n: int) -> str:
    """KV_APPEND with a cache of n - 1 tokens."""
    return KV_APPEND.replace("63, 32]", f"{n - 1}, 32]").replace("64, 32]", f"{n}, 32]").replace(", 64]", f", {n}]")


# (at 512 tokens: at 64 the kernels' tiles span the whole length and cannot serve others)
DYNAMIC_KV_APPEND = _kv_append(512).replace("%kc: !tgraph.tensor<[4, 511, 32], f16>", "%kc: !tgraph.tensor<[4, 511, 32], f16> {dynamic = array<i64: 1>}").replace(
    "%vc: !tgraph.tensor<[4, 511, 32], f16>", "%vc: !tgraph.tensor<[4, 511, 32], f16> {dynamic = array<i64: 1>}"
)


@functools.cache
def _dynamic_kv_append():  # noqa: ANN202 - the lowered module
    from cleave_ir.passes.dynamic_shapes import DynamicShapesPass

    module = module_of(_graph(DYNAMIC_KV_APPEND).clone())
    PipelinePass(search_budget=20_000, split_counts=(2,), top_k=2).apply(Context(), module)
    DynamicShapesPass().apply(Context(), module)
    lower_module(module)
    return module


def test_a_kv_cache_appended_to_is_joined_before_the_kernels_not_split_through_them() -> None:
    """The concats of the cache and the new token feed the score matmul and P @ V, which contracts their
    joined dim: moved, they would split both matmuls and the softmax's reductions; kept, each is a join
    `run` makes (`#cleave.join`), and the attention is scheduled as written, two matmuls."""
    _, module = _folded(KV_APPEND)
    (g,) = [g for g in module.walk() if isinstance(g, tgraph.GraphOp)]
    boundary = g.attributes["cleave.boundary"]
    assert boundary.inputs.data == (ViewAttr(0), JoinAttr(1, [ViewAttr(1), ViewAttr(3)]), JoinAttr(1, [ViewAttr(2), ViewAttr(4)]))
    assert g.input_names() == ["q", "kc_kn_cat", "vc_vn_cat"]
    assert sum(isinstance(op, tgraph.MatmulOp) for op in g.block.ops) == 2


def test_an_input_read_whole_and_in_halves_is_read_in_halves_only() -> None:
    """The norm's sum of squares reads q whole and the rotary embedding its halves: folded, q is read
    as its two halves only (the sum of squares, the sum of the halves' sums), so a kernel loads each
    element once, not the whole tile and then its halves again."""
    _, module = _folded(NORM_ROPE)
    (g,) = [g for g in module.walk() if isinstance(g, tgraph.GraphOp)]
    views = g.attributes["cleave.boundary"].inputs.data
    assert [v for v in views if v.source == 0] == [ViewAttr(0, [], [[2, 0, 32]]), ViewAttr(0, [], [[2, 32, 32]])]
    sums = [op for op in g.block.ops if isinstance(op, tgraph.ReduceOp)]
    assert len(sums) == 2 and all(tgraph.tensor_type(op.input).shape[2] == 32 for op in sums)


def test_an_input_a_matmul_contracts_is_still_read_whole() -> None:
    """Read in halves, x's contraction would split the matmul in two: x is read whole (and in halves)."""
    text = """
tgraph.graph @halves(%x: !tgraph.tensor<[8, 64], f16>, %w: !tgraph.tensor<[64, 16], f16>) -> (!tgraph.tensor<[8, 16], f16>, !tgraph.tensor<[8, 32], f16>) {
  %y = tgraph.matmul %x, %w : !tgraph.tensor<[8, 64], f16>, !tgraph.tensor<[64, 16], f16> -> !tgraph.tensor<[8, 16], f16>
  %a = tgraph.slice %x dim 1 start 0 : !tgraph.tensor<[8, 64], f16> -> !tgraph.tensor<[8, 32], f16>
  %b = tgraph.slice %x dim 1 start 32 : !tgraph.tensor<[8, 64], f16> -> !tgraph.tensor<[8, 32], f16>
  %s = tgraph.mul %a, %b : !tgraph.tensor<[8, 32], f16>, !tgraph.tensor<[8, 32], f16> -> !tgraph.tensor<[8, 32], f16>
  tgraph.output %y, %s : !tgraph.tensor<[8, 16], f16>, !tgraph.tensor<[8, 32], f16>
}
"""
    _, module = _folded(text)
    (g,) = [g for g in module.walk() if isinstance(g, tgraph.GraphOp)]
    assert sum(isinstance(op, tgraph.MatmulOp) for op in g.block.ops) == 1
    assert ViewAttr(0) in g.attributes["cleave.boundary"].inputs.data


def test_a_concat_no_matmul_contracts_still_moves() -> None:
    """A sum over a concat of two inputs is two sums (no copy): only a contracted join is kept."""
    text = """
tgraph.graph @summed(%a: !tgraph.tensor<[4, 8], f16>, %b: !tgraph.tensor<[4, 8], f16>) -> !tgraph.tensor<[4, 1], f16> {
  %x = tgraph.concat %a, %b dim 1 : !tgraph.tensor<[4, 8], f16>, !tgraph.tensor<[4, 8], f16> -> !tgraph.tensor<[4, 16], f16>
  %s = tgraph.reduce sum %x dim 1 : !tgraph.tensor<[4, 16], f16> -> !tgraph.tensor<[4, 1], f16>
  tgraph.output %s : !tgraph.tensor<[4, 1], f16>
}
"""
    _, module = _folded(text)
    (g,) = [g for g in module.walk() if isinstance(g, tgraph.GraphOp)]
    assert len(g.inputs) == 2 and "cleave.boundary" not in g.attributes


@pytest.mark.parametrize("n", [512, 300, 700])
def test_a_kv_cache_of_dynamic_length_is_a_join_that_serves_every_length(n: int) -> None:
    """A cache appended along its dynamic length: the join is dynamic along it (`run` concatenates the
    lengths it is given), and the kernels serve cache lengths they were not built at."""
    module = _dynamic_kv_append()
    first = module.body.block.first_op
    boundary = first.attributes["cleave.boundary"]
    assert [first.input_annotation(i, "dynamic") for i in range(3)] == [(), (1,), (1,)]
    graph = _graph(_kv_append(n))
    for dist in ("normal", "heavy"):
        xs = fp16_inputs(graph, dist, seed=n)
        (want,) = run_graph(graph, xs)
        candidates = candidate_kernels(module)
        assert candidates
        for cand, kernels in candidates:
            (got,) = _joined(boundary, run_kernels(kernels, boundary_views(boundary, xs)))
            assert max_relative_error(want, got) < FP16_TOLERANCE, (cand, n, dist)


@st.composite
def structural_graphs(draw: st.DrawFn) -> tgraph.GraphOp:
    """A random graph over two [8, 12] inputs mixing slices, concats and transposes with elementwise
    ops, row/column sums and matmuls (each step takes values of matching shapes from those so far)."""
    b = GraphBuilder("random")
    values = [b.input("x", [8, 12]), b.input("y", [8, 12])]

    def shape(v: SSAValue) -> tuple[int, int]:
        return tuple(int(d) for d in tgraph.tensor_type(v).shape)  # type: ignore[return-value]

    for _ in range(draw(st.integers(3, 9))):
        v = draw(st.sampled_from(values))
        rows, cols = shape(v)
        kind = draw(st.sampled_from(["slice", "concat", "transpose", "unary", "binary", "reduce", "matmul"]))
        if kind == "slice":
            dim = draw(st.integers(0, 1))
            n = (rows, cols)[dim]
            start = draw(st.integers(0, n - 1))
            size = draw(st.integers(1, n - start))
            new = b._add(tgraph.SliceOp(v, dim, start, size))
        elif kind == "concat":
            dim = draw(st.integers(0, 1))
            partners = [w for w in values if shape(w)[1 - dim] == shape(v)[1 - dim]]
            new = b._add(tgraph.ConcatOp([v, draw(st.sampled_from(partners))], dim))
        elif kind == "transpose":
            new = b._add(tgraph.TransposeOp(v, [1, 0]))
        elif kind == "unary":
            new = b.unary(draw(st.sampled_from(["neg", "square", "sigmoid"])), v)
        elif kind == "binary":
            partners = [w for w in values if shape(w) == (rows, cols) or shape(w) in {(rows, 1), (1, cols)}]
            new = b.binary(draw(st.sampled_from(["add", "mul", "sub"])), v, draw(st.sampled_from(partners)))
        elif kind == "reduce":
            new = b.reduce("sum", v, draw(st.integers(0, 1)))
        else:
            partners = [w for w in values if shape(w)[0] == cols] + [w for w in values if shape(w)[1] == cols]
            w = draw(st.sampled_from(partners))
            new = b.matmul(v, w, transpose_b=shape(w)[0] != cols)
        values.append(new)
    outs = draw(st.lists(st.sampled_from(values[2:]), min_size=1, max_size=2, unique=True))
    return b.build(*outs)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(structural_graphs(), st.sampled_from(["normal", "uniform", "heavy"]))
def test_random_structural_graphs_fold_exactly_or_stay_as_written(graph: tgraph.GraphOp, dist: str) -> None:
    """Whatever mix of slices, concats and transposes: folded, the graph computes the same float64
    values on views of the inputs (its parts joined); not folded, it is left exactly as written."""
    before = str(graph)
    module = module_of(graph.clone())
    FoldStructuralPass().apply(Context(), module)
    module.verify()
    (folded,) = [g for g in module.walk() if isinstance(g, tgraph.GraphOp)]
    if any(isinstance(op, tgraph.StructuralOp) for op in folded.block.ops):
        assert str(folded) == before
        return
    boundary = boundary_of(module)
    xs = fp16_inputs(graph, dist)
    want = run_graph(graph, xs)
    got = _joined(boundary, run_graph(folded, boundary_views(boundary, xs)))
    for w, g in zip(want, got, strict=True):
        assert w.shape == g.shape
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-9)



@pytest.mark.parametrize("name", ["rope", "packed_qk", "gate_up", "kv_append", "linear_attention"])
def test_the_gpu_check_passes_every_candidate_on_the_views(name: str, tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """`cleave compile --gpu`'s check, emulated on the CPU: the graph as written gives the inputs and the
    float64 reference; `runtime.run_poisoned` launches every candidate's kernels on the boundary's views
    (compiled for their layouts, or copied) with TileLang replaced by the interpreter and its stride check.
    Every candidate is correct, and `run` agrees (on an H100 every such candidate had failed this check)."""
    torch = pytest.importorskip("torch")
    from cleave_ir import runtime

    mod, xs, refs = emulated_gpu_check(*_pipelined(name), tmp_path, monkeypatch)
    for i, (_, _, cand) in enumerate(mod.CANDIDATES):
        ran = mod.run(*xs, candidate=i)
        assert runtime.check(ran, refs[0]) < runtime.TOLERANCE, cand
        for out in (torch.empty_like(ran), torch.empty_like(ran.mT).mT):  # row-major, and its last two dims swapped
            out.fill_(float("nan"))
            assert mod.run(*xs, candidate=i, out=out) is out
            assert runtime.check(out, refs[0]) < runtime.TOLERANCE, cand
    if any(mod.layout(v) not in (None, "copy") for v in mod.boundary_inputs(xs)):  # views read in place
        assert any(any(key[1]) for key in mod._compiled)


def test_a_transposed_view_that_only_gemms_read_is_read_from_its_storage(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """Linear attention's `phi(k)^T @ v`, folded to `(v^T phi(k))^T`: the kernels' v^T is a transposed view
    of v, which no TMA copy reads and `run` used to copy (125 us for a 33.5 MB v on an H100). A kernel
    whose only reads of it are tensor-core gemms takes v itself (`transposed` in KERNELS, its buffer v's
    shape) and loads v's tiles into a `transpose_A` gemm operand; `run` passes v without a copy, and
    every candidate stays correct (the emulated GPU check above runs them)."""
    torch = pytest.importorskip("torch")
    from cleave_ir import runtime

    graph, module = _pipelined("linear_attention")
    src = module_source(module)
    assert "transpose_A=True" in src
    path = tmp_path / "kernels.py"
    path.write_text(src)
    mod = runtime.load_module_file(path)
    reading = [name for name, meta in mod.KERNELS.items() if meta.get("transposed")]
    assert reading
    pytest.importorskip("tilelang")
    from cleave_ir.tilelang_check import lower_all

    cuda = lower_all(path)  # TileLang lowers the transposed operands' gemms for sm_90a
    assert all(cuda[name] for name in reading)
    for name in reading:
        (i,) = mod.KERNELS[name]["transposed"]
        assert mod.KERNELS[name]["input_names"][i] == "v_v1" and tuple(mod.KERNELS[name]["shapes"][i]) == (64, 32)  # v's own shape
    monkeypatch.setattr(mod.tilelang, "compile", interpreting_compile(module, mod.KERNELS, torch))
    copied = []
    fresh = mod._fresh
    monkeypatch.setattr(mod, "_fresh", lambda x: copied.append(tuple(x.shape)) or fresh(x))
    xs = runtime.random_inputs(graph, device="cpu")
    (ref,) = runtime.torch_reference(graph, xs)
    for i, (_, kernels, cand) in enumerate(mod.CANDIDATES):
        copied.clear()
        assert runtime.check(mod.run(*xs, candidate=i), ref) < runtime.TOLERANCE, cand
        if all(mod.KERNELS[k].get("transposed") or "v_v1" not in mod.KERNELS[k]["input_names"] for k in kernels):
            assert copied == [], cand  # v read where it is


def test_a_transposed_view_of_fp32_is_still_copied() -> None:
    """Hopper's WGMMA reads an MN-major (transposed) tile only for 16-bit operands: in fp32 (TF32 gemms)
    no kernel takes v stored transposed, and `run` copies its view as before."""
    graph = _graph(LINEAR_ATTENTION.replace("f16", "f32"))
    module = module_of(graph.clone())
    PipelinePass(search_budget=2_000, split_counts=(2,), top_k=1).apply(Context(), module)
    lower_module(module)
    assert "transpose_A" not in module_source(module)


def test_a_cycle_of_rewrites_gives_up_instead_of_hanging(monkeypatch) -> None:  # noqa: ANN001
    """With too small a rewrite budget (as a cycle between the patterns would exhaust any), the graph is
    left as written: not folded, and the pass returns."""
    import cleave_ir.passes.fold_structural as fs

    monkeypatch.setattr(fs, "REWRITES_PER_OP", 0)
    graph, module = _folded(GRAPHS["rope"])
    assert str(module.body.block.first_op) == str(graph)
