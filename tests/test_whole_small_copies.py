"""`cleave-whole-small-copies`: per-step copies too small for cp.async are done once before their loop."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from cleave_ir.builder import GraphBuilder
from cleave_ir.dialects import tgraph
from cleave_ir.dialects import tilelang as tl
from cleave_ir.passes.lower_tilelang import lower_module
from cleave_ir.passes.pipeline import PipelinePass
from cleave_ir.run import make_context
from cleave_ir.tilelang_emitter import module_source
from tests.test_compile_any_graph import check_interpreted, module_of


def scaled_projection() -> tgraph.GraphOp:
    """(x * g) @ W at 8 rows: a norm's weight applied in the K loop of its projection."""
    b = GraphBuilder("scaled_proj")
    x, g, w = b.input("x", [8, 4096]), b.input("g", [1, 4096]), b.input("w", [4096, 2048])
    return b.build(b.matmul(b.mul(x, g), w))


def lowered(graph: tgraph.GraphOp, whole: bool = True):
    module = module_of(graph.clone())
    PipelinePass(no_search=True, top_k=1).apply(make_context(), module)
    lower_module(module, whole_small_copies=whole)
    return module


def copies_of(module, name: str) -> tuple[list[tl.CopyOp], list[tl.CopyOp]]:
    """Copies from global buffer `name`: (inside pipelined loops, outside them)."""
    inside, outside = [], []
    for op in module.walk():
        if isinstance(op, tl.CopyOp) and op.src.name_hint == name:
            in_loop = any(isinstance(p, tl.PipelinedOp) for p in _ancestors(op))
            (inside if in_loop else outside).append(op)
    return inside, outside


def _ancestors(op):
    p = op.parent_op()
    while p is not None:
        yield p
        p = p.parent_op()


@pytest.fixture(scope="module")
def scaled() -> tuple[tgraph.GraphOp, object]:
    graph = scaled_projection()
    return graph, lowered(graph)


def test_norm_weight_is_copied_whole_before_the_k_loop(scaled) -> None:
    """g's [128] halves a K step (2 bytes on each of 128 threads) become one [4096] copy before the
    loop; without the rewrite (`whole_small_copies=False`) the copy stays in the loop."""
    _, module = scaled
    inside, outside = copies_of(module, "g")
    assert not inside and len(outside) == 1
    assert tl.buffer_type(outside[0].dst).shape == (4096,)
    inside, outside = copies_of(lowered(scaled[0], whole=False), "g")
    assert len(inside) == 1 and not outside


@pytest.mark.parametrize("draw", ["normal", "uniform", "shifted"])
def test_rewritten_kernel_computes_the_graph(scaled, draw: str) -> None:
    graph, module = scaled
    rng = np.random.default_rng(11)
    sample = {"normal": rng.standard_normal, "uniform": lambda s: rng.uniform(-2, 2, s), "shifted": lambda s: rng.standard_normal(s) + 3}[draw]
    xs = [sample((8, 4096)), sample((1, 4096)), rng.standard_normal((4096, 2048)) / 64]
    check_interpreted(graph, module, inputs=xs)


def test_cuda_loop_body_reads_no_global_weight(scaled, tmp_path: Path) -> None:
    """Lowered for sm_90a, g is read from global memory before the loop only (vectorized), and the
    loop's copies are all cp.async."""
    pytest.importorskip("tilelang")
    from cleave_ir.tilelang_check import lower_all

    path = tmp_path / "k.py"
    path.write_text(module_source(scaled[1]))
    (src,) = lower_all(path).values()
    loop = src[src.index("for (int r0 = 0;") :]
    assert not re.search(r"\bg\[", loop), "g is still loaded inside the K loop"
    assert re.search(r"\*\(uint4\*\)\(g \+", src[: src.index("for (int r0 = 0;")])


def test_registers_of_the_lowered_kernel_without_a_gpu(scaled, tmp_path: Path, capsys) -> None:
    """`python -m cleave_ir.tilelang_check FILE --registers` compiles each kernel with nvcc (ptxas's
    report, no GPU needed): registers a thread, and exit 1 on spills (it found a LayerNorm's [4, 3000]
    tiles on 32 threads spilling 7 KB a thread)."""
    import shutil

    pytest.importorskip("tilelang")
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not on PATH")
    from cleave_ir.tilelang_check import main

    path = tmp_path / "k.py"
    path.write_text(module_source(scaled[1]))
    assert main([str(path), "--registers"]) == 0
    (line,) = [l for l in capsys.readouterr().out.splitlines() if l.startswith("scaled_proj_k0")]
    registers = int(re.search(r"(\d+) registers", line).group(1))  # type: ignore[union-attr]
    assert 0 < registers <= 255 and "spills" not in line
