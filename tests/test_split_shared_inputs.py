"""`cleave-split-shared-inputs` and the pipeline's use of it: graphs whose matmuls read one input on both
sides (a Gram matrix, cosine similarities, self-attention whose queries, keys and values are one tensor)
compile, their kernels compute the graph as written on fresh inputs of three distributions, and the
emitted module passes the caller's tensor as each copy (a view, not a copy)."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.parser import Parser

from cleave_ir.builder import module_of
from cleave_ir.dialects import tgraph
from cleave_ir.dialects.cleave import BoundaryAttr
from cleave_ir.interpreter import max_relative_error, run_graph
from cleave_ir.interpreter_tilelang import candidate_kernels, run_kernels
from cleave_ir.passes.lower_tilelang import lower_module
from cleave_ir.passes.pipeline import PipelinePass
from cleave_ir.passes.split_shared_inputs import split_shared_inputs
from cleave_ir.run import make_context
from cleave_ir.tilelang_emitter import module_source
from conftest import boundary_of, boundary_views, emulated_gpu_check, fp16_inputs

FP16_TOLERANCE = 2e-2

GRAM = """
tgraph.graph @gram(%x: !tgraph.tensor<[512, 96], f16>) -> !tgraph.tensor<[512, 512], f16> {
  %g = tgraph.matmul %x, %x transpose_b : !tgraph.tensor<[512, 96], f16>, !tgraph.tensor<[512, 96], f16> -> !tgraph.tensor<[512, 512], f16>
  tgraph.output %g : !tgraph.tensor<[512, 512], f16>
}
"""

T4 = "!tgraph.tensor<[1, 2, 256, 32], f16>"
S4 = "!tgraph.tensor<[1, 2, 256, 256], f16>"
R4 = "!tgraph.tensor<[1, 2, 256, 1], f16>"
SELF_ATTENTION = f"""
tgraph.graph @self_attention(%x: {T4}) -> {T4} {{
  %s = tgraph.matmul %x, %x transpose_b : {T4}, {T4} -> {S4}
  %t = tgraph.scale %s, 1.767767e-01 : {S4}
  %m = tgraph.reduce max %t dim 3 : {S4} -> {R4}
  %z = tgraph.sub %t, %m : {S4}, {R4} -> {S4}
  %e = tgraph.exp %z : {S4}
  %r = tgraph.reduce sum %e dim 3 : {S4} -> {R4}
  %p = tgraph.div %e, %r : {S4}, {R4} -> {S4}
  %o = tgraph.matmul %p, %x : {S4}, {T4} -> {T4}
  tgraph.output %o : {T4}
}}
"""

COS_SIM = """
tgraph.graph @cos_sim(%x: !tgraph.tensor<[512, 128], f16>) -> !tgraph.tensor<[512, 512], f16> {
  %sq = tgraph.square %x : !tgraph.tensor<[512, 128], f16>
  %ss = tgraph.reduce sum %sq dim 1 : !tgraph.tensor<[512, 128], f16> -> !tgraph.tensor<[512, 1], f16>
  %rn = tgraph.rsqrt %ss : !tgraph.tensor<[512, 1], f16>
  %xn = tgraph.mul %x, %rn : !tgraph.tensor<[512, 128], f16>, !tgraph.tensor<[512, 1], f16> -> !tgraph.tensor<[512, 128], f16>
  %g = tgraph.matmul %xn, %xn transpose_b : !tgraph.tensor<[512, 128], f16>, !tgraph.tensor<[512, 128], f16> -> !tgraph.tensor<[512, 512], f16>
  tgraph.output %g : !tgraph.tensor<[512, 512], f16>
}
"""

Q4 = "!tgraph.tensor<[1, 2, 64, 32], f16>"
P4 = "!tgraph.tensor<[1, 2, 64, 256], f16>"
M4 = "!tgraph.tensor<[1, 2, 64, 1], f16>"
ATTENTION_POOL = f"""
tgraph.graph @attention_pool(%q: {Q4}, %x: {T4}) -> {Q4} {{
  %s = tgraph.matmul %q, %x transpose_b : {Q4}, {T4} -> {P4}
  %m = tgraph.reduce max %s dim 3 : {P4} -> {M4}
  %z = tgraph.sub %s, %m : {P4}, {M4} -> {P4}
  %e = tgraph.exp %z : {P4}
  %r = tgraph.reduce sum %e dim 3 : {P4} -> {M4}
  %p = tgraph.div %e, %r : {P4}, {M4} -> {P4}
  %o = tgraph.matmul %p, %x : {P4}, {T4} -> {Q4}
  tgraph.output %o : {Q4}
}}
"""

RESIDUAL = """
tgraph.graph @residual(%x: !tgraph.tensor<[256, 512], f16>, %w: !tgraph.tensor<[512, 512], f16>) -> !tgraph.tensor<[256, 512], f16> {
  %y = tgraph.matmul %x, %w : !tgraph.tensor<[256, 512], f16>, !tgraph.tensor<[512, 512], f16> -> !tgraph.tensor<[256, 512], f16>
  %g = tgraph.silu %y : !tgraph.tensor<[256, 512], f16>
  %o = tgraph.add %g, %x : !tgraph.tensor<[256, 512], f16>, !tgraph.tensor<[256, 512], f16> -> !tgraph.tensor<[256, 512], f16>
  tgraph.output %o : !tgraph.tensor<[256, 512], f16>
}
"""

GATE = """
tgraph.graph @gate(%x: !tgraph.tensor<[64, 1024], f16>, %w: !tgraph.tensor<[1024, 1024], f16>) -> !tgraph.tensor<[64, 1024], f16> {
  %y = tgraph.matmul %x, %w : !tgraph.tensor<[64, 1024], f16>, !tgraph.tensor<[1024, 1024], f16> -> !tgraph.tensor<[64, 1024], f16>
  %s = tgraph.sigmoid %y : !tgraph.tensor<[64, 1024], f16>
  %o = tgraph.mul %x, %s : !tgraph.tensor<[64, 1024], f16>, !tgraph.tensor<[64, 1024], f16> -> !tgraph.tensor<[64, 1024], f16>
  tgraph.output %o : !tgraph.tensor<[64, 1024], f16>
}
"""

GRAPHS = {"gram": GRAM, "self_attention": SELF_ATTENTION, "cos_sim": COS_SIM, "residual": RESIDUAL, "gate": GATE}


def _graph(text: str) -> tgraph.GraphOp:
    return Parser(make_context(), text).parse_module().body.block.first_op  # type: ignore[return-value]


@functools.cache
def _pipelined(name: str):  # noqa: ANN202 - (graph as written, lowered module; shared: do not modify)
    graph = _graph(GRAPHS[name] if name in GRAPHS else ATTENTION_POOL)
    module = module_of(graph.clone())
    PipelinePass(search_budget=3_000, split_counts=(2,), top_k=1, keep=2).apply(Context(), module)
    lower_module(module)
    return graph, module


@pytest.mark.parametrize("name", GRAPHS)
@pytest.mark.parametrize("dist", ["normal", "uniform", "shifted"])
def test_the_split_graph_computes_the_graph_as_written(name: str, dist: str) -> None:
    graph = _graph(GRAPHS[name])
    split = graph.clone()
    assert split_shared_inputs(split)
    split.verify()
    boundary = split.attributes["cleave.boundary"]
    assert isinstance(boundary, BoundaryAttr) and {v.source for v in boundary.inputs.data[len(graph.inputs):]} == {0}
    for mm in [op for op in split.block.ops if isinstance(op, tgraph.MatmulOp)]:
        def reads(v):  # noqa: ANN001, ANN202 - the inputs upstream of v
            seen, stack = set(), [v]
            while stack:
                x = stack.pop()
                if x in split.block.args:
                    seen.add(x.index)
                elif x.owner is not None and hasattr(x.owner, "operands"):
                    stack.extend(x.owner.operands)
            return seen
        assert not reads(mm.operands[0]) & reads(mm.operands[1])
    xs = fp16_inputs(graph, dist)
    (want,) = run_graph(graph, xs)
    (got,) = run_graph(split, boundary_views(boundary, xs))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12 * max(1.0, float(np.abs(want).max())))


def test_a_graph_whose_sides_share_nothing_is_untouched() -> None:
    text = """
tgraph.graph @linear(%x: !tgraph.tensor<[64, 96], f16>, %w: !tgraph.tensor<[32, 96], f16>) -> !tgraph.tensor<[64, 32], f16> {
  %y = tgraph.matmul %x, %w transpose_b : !tgraph.tensor<[64, 96], f16>, !tgraph.tensor<[32, 96], f16> -> !tgraph.tensor<[64, 32], f16>
  tgraph.output %y : !tgraph.tensor<[64, 32], f16>
}
"""
    graph = _graph(text)
    before = str(graph)
    assert not split_shared_inputs(graph) and str(graph) == before


@pytest.mark.parametrize("name", GRAPHS)
@pytest.mark.parametrize("dist", ["normal", "uniform", "shifted"])
def test_kernels_compute_the_graph_as_written(name: str, dist: str) -> None:
    """The Gram matrix did not compile before ("two paths need different tiles of %x"); self-attention
    and cosine similarities compiled only cut into a kernel per matmul, the residual and the gate
    only as a Split-K pair whose combine read x. Each now has a one-kernel candidate, kept first, and
    every kept candidate agrees with the graph."""
    graph, module = _pipelined(name)
    boundary = boundary_of(module)
    assert boundary is not None and len(boundary.inputs.data) >= 2
    candidates = candidate_kernels(module)
    assert candidates and len(candidates[0][1]) == 1, [c for c, _ in candidates]
    xs = fp16_inputs(graph, dist)
    (want,) = run_graph(graph, xs)
    for cand, kernels in candidates:
        (got,) = run_kernels(kernels, boundary_views(boundary, xs))
        err = max_relative_error(want, got)
        assert err < FP16_TOLERANCE, f"{cand}: {err:.3g} at {dist}"


def test_a_shared_input_whose_tiles_agree_is_loaded_once() -> None:
    """Attention pooling over x (keys and values both x): the key and value tiles of x are the same
    rows, so the unsplit graph schedules into one kernel that loads x once; the split would not fuse
    more, so the pipeline keeps it (no boundary, no copy)."""
    graph, module = _pipelined("attention_pool")
    assert boundary_of(module) is None
    candidates = candidate_kernels(module)
    assert len(candidates[0][1]) == 1
    xs = fp16_inputs(graph, "normal")
    (want,) = run_graph(graph, xs)
    (got,) = run_kernels(candidates[0][1], xs)
    assert max_relative_error(want, got) < FP16_TOLERANCE


def test_the_emitted_module_passes_the_callers_tensor_as_each_copy(tmp_path) -> None:  # noqa: ANN001
    torch = pytest.importorskip("torch")
    from cleave_ir.runtime import load_module_file

    graph, module = _pipelined("gram")
    path = tmp_path / "kernels.py"
    path.write_text(module_source(module))
    mod = load_module_file(path)
    (x,) = [torch.from_numpy(v) for v in fp16_inputs(graph, "normal")]
    views = mod.boundary_inputs([x])
    assert len(views) == 2 and all(v.untyped_storage().data_ptr() == x.untyped_storage().data_ptr() for v in views)


@pytest.mark.parametrize("name", ["gram", "self_attention"])
def test_the_gpu_check_passes_every_candidate_given_one_tensor(name: str, tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """`cleave compile --gpu`'s check, emulated on the CPU (TileLang replaced by the interpreter, as in
    test_fold_structural): the caller passes x once, `run` gives each kernel x for each of its copies,
    and every candidate agrees with the float64 reference."""
    from cleave_ir import runtime

    mod, xs, refs = emulated_gpu_check(*_pipelined(name), tmp_path, monkeypatch)
    assert len(xs) == 1
    for i, (_, _, cand) in enumerate(mod.CANDIDATES):
        assert runtime.check(mod.run(*xs, candidate=i), refs[0]) < runtime.TOLERANCE, cand


def test_a_split_that_fuses_but_is_estimated_slower_is_not_kept() -> None:
    """Llama's rotary scores at their real size: q and k both read the cos and sin tables. Split, the
    graph fuses into one kernel, estimated 3x slower than the unsplit graph's pair of cut kernels (the
    scores tile recomputes the rotary embedding of both sides); the pipeline keeps the pair."""
    import re
    from pathlib import Path

    from cleave_ir.run import load_module, resize_graph

    path = Path(__file__).resolve().parents[1] / "examples" / "models" / "llama_rope_scores.mlir"
    resize = {int(a): int(b) for a, b in (pair.split("=") for pair in re.search(r"^// gpu-resize:(.*)$", path.read_text(), re.M).group(1).split())}
    module = module_of(resize_graph(load_module(str(path)).body.block.first_op, resize).clone())
    PipelinePass(search_budget=3_000, top_k=1, keep=2).apply(Context(), module)
    assert boundary_of(module) is None
    assert len(candidate_kernels_of(module)[0]) == 2


def candidate_kernels_of(module) -> list[list[str]]:  # noqa: ANN001
    from cleave_ir.passes.pipeline import rank_candidates

    return [names for _, names, _ in rank_candidates(module)]


def test_an_output_read_beside_the_product_gets_its_own_copy() -> None:
    """Outputs `x @ w` and `2 x`: one kernel either way, but unsplit its tiles of x must serve the product
    ([rows, K]) and the scaled output ([rows, columns]) at once, so they span whole rows (estimated 23 us);
    split, estimated 4x faster, it is kept (`pipeline._split_wins`'s margin), and both outputs agree."""
    text = """
tgraph.graph @out_and_scaled(%x: !tgraph.tensor<[256, 512], f16>, %w: !tgraph.tensor<[512, 512], f16>) -> (!tgraph.tensor<[256, 512], f16>, !tgraph.tensor<[256, 512], f16>) {
  %y = tgraph.matmul %x, %w : !tgraph.tensor<[256, 512], f16>, !tgraph.tensor<[512, 512], f16> -> !tgraph.tensor<[256, 512], f16>
  %z = tgraph.scale %x, 2.000000e+00 : !tgraph.tensor<[256, 512], f16>
  tgraph.output %y, %z : !tgraph.tensor<[256, 512], f16>, !tgraph.tensor<[256, 512], f16>
}
"""
    graph = _graph(text)
    module = module_of(graph.clone())
    PipelinePass(search_budget=2_000, top_k=1, keep=2).apply(Context(), module)
    boundary = boundary_of(module)
    assert boundary is not None and [v.source for v in boundary.inputs.data] == [0, 1, 0]
    lower_module(module)
    candidates = candidate_kernels(module)
    assert len(candidates[0][1]) == 1
    for dist in ("normal", "shifted"):
        xs = fp16_inputs(graph, dist)
        want = run_graph(graph, xs)
        for cand, kernels in candidates:
            got = run_kernels(kernels, boundary_views(boundary, xs))
            assert max(max_relative_error(w, g) for w, g in zip(want, got, strict=True)) < FP16_TOLERANCE, cand
