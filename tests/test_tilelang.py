"""TileLang emission: every example's emitted kernels lower to CUDA for sm_90a; golden sources.

Shapes are scaled down (4096 -> 512 ...) to keep the search and the checks fast; the structure of the
kernels is the same. Set CLEAVE_UPDATE_GOLDEN=1 to rewrite the golden files after a deliberate change.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from xdsl.context import Context

from cleave_ir.builder import module_of
from cleave_ir.dialects import itgraph
from cleave_ir.passes.pipeline import PipelinePass
from cleave_ir.run import load_module, resize_graph
from cleave_ir.tilelang_check import load_module_file, lower_all
from cleave_ir.tilelang_emitter import module_source

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
GOLDEN = Path(__file__).resolve().parent / "golden"
SCALED = {4096: 512, 8192: 512, 14336: 1024, 6144: 512, 32: 4}


def emitted(name: str, tmp_path: Path, keep: int = 2) -> Path:
    graph = load_module(str(EXAMPLES / f"{name}.mlir")).body.block.first_op
    small = resize_graph(graph, SCALED)
    small.attributes.pop("constraints", None)
    small.bindings = None
    module = module_of(small.clone())
    PipelinePass(top_k=1, keep=keep, split_counts=(4,)).apply(Context(), module)
    module.verify()
    assert any(isinstance(op, itgraph.KernelOp) for op in module.body.block.ops)
    path = tmp_path / f"{name}_kernels.py"
    path.write_text(module_source(module))
    return path


@pytest.mark.parametrize(
    "name", ["mha", "gqa", "mqa", "mla", "gqa_decode", "mha_decode", "mla_decode", "rmsnorm_matmul", "swiglu", "matmul", "matmul_matmul", "matmul_rowsum"]
)
def test_emitted_kernels_lower_for_sm90a(name: str, tmp_path: Path) -> None:
    path = emitted(name, tmp_path)
    sources = lower_all(path)
    assert sources
    for kernel, cuda in sources.items():
        assert "__global__" in cuda, kernel
    mod = load_module_file(path)
    assert mod.CANDIDATES and all(k in mod.KERNELS for _, ks, _ in mod.CANDIDATES for k in ks)
    assert callable(mod.run) and callable(mod.compile_kernel)


@pytest.mark.parametrize("name", ["mha", "gqa_decode", "rmsnorm_matmul"])
def test_golden_sources(name: str, tmp_path: Path) -> None:
    text = emitted(name, tmp_path, keep=1).read_text()
    golden = GOLDEN / f"{name}.py"
    if os.environ.get("CLEAVE_UPDATE_GOLDEN"):
        golden.write_text(text)
    assert golden.exists(), f"no golden file {golden}; run with CLEAVE_UPDATE_GOLDEN=1"
    assert text == golden.read_text()


def test_flash_attention_kernel_code(tmp_path: Path) -> None:
    """The FlashAttention schedule of lit_tests/passes/schedule.mlir as TileLang: online softmax."""
    from cleave_ir.driver import main

    out = tmp_path / "fa.py"
    src = Path(__file__).resolve().parent.parent / "lit_tests" / "passes" / "schedule.mlir"
    assert main([str(src), "-p", "cleave-schedule{top-k=1},cleave-place-memory", "-t", "tilelang", "-o", str(out)]) == 0
    text = out.read_text()
    assert "T.Pipelined(64, num_stages=2)" in text and text.count("T.gemm(") == 2 and "transpose_B=True" in text
    assert "T.reduce_max(" in text and "alpha" in text and "beta" in text  # the online-softmax rescale
    assert "__global__" in lower_all(out)["fa_k0"]
