"""cleave-pipeline's ablation options (the Cleave paper's Figure 12) on scaled-down examples."""

from __future__ import annotations

from pathlib import Path

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from cleave_ir.builder import module_of
from cleave_ir.dialects import cleave, itgraph, tgraph
from cleave_ir.driver import main as cleave_opt
from cleave_ir.passes.pipeline import PipelinePass
from cleave_ir.passes.superoptimize import SuperoptimizePass
from cleave_ir.run import load_module, resize_graph

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _small(name: str, resize: dict[int, int]) -> ModuleOp:
    graph = load_module(str(EXAMPLES / f"{name}.mlir")).body.block.first_op
    small = resize_graph(graph, resize)
    small.attributes.pop("constraints", None)
    small.bindings = None
    return module_of(small.clone())


def _run(module: ModuleOp, **options: object) -> ModuleOp:
    PipelinePass(top_k=1, split_counts=(4, 8), **options).apply(Context(), module)  # type: ignore[arg-type]
    module.verify()
    return module


def _graphs(module: ModuleOp) -> list[tgraph.GraphOp]:
    return [g for g in module.body.block.ops if isinstance(g, tgraph.GraphOp)]


def _kernels(module: ModuleOp) -> list[itgraph.KernelOp]:
    return [k for k in module.body.block.ops if isinstance(k, itgraph.KernelOp)]


def _sequentials(module: ModuleOp) -> list[itgraph.SequentialOp]:
    return [op for op in module.walk() if isinstance(op, itgraph.SequentialOp)]


def test_defaults_and_passes() -> None:
    p = PipelinePass()
    assert (p.no_split, p.no_search, p.iterative_tiling, p.horizontal_fusion) == (False, False, True, True)
    assert [type(x).__name__ for x in PipelinePass(no_search=True).passes()].count("SuperoptimizePass") == 0
    (search,) = [x for x in PipelinePass(no_split=True).passes() if isinstance(x, SuperoptimizePass)]
    assert search.max_splits == 0
    placements = [x for x in PipelinePass(hoist_elementwise=True).passes() if type(x).__name__ == "PlaceMemoryPass"]
    assert [x.hoist_elementwise for x in placements] == [True]
    assert not PipelinePass().hoist_elementwise


def test_no_split_leaves_no_split_candidates() -> None:
    full = _run(_small("gqa_decode", {4096: 512}))
    assert any(cleave.stage(g) == cleave.Stage.SPLIT for g in _graphs(full))
    module = _run(_small("gqa_decode", {4096: 512}), no_split=True)
    assert _kernels(module)
    for g in _graphs(module):
        # (the per-matmul cut's pieces have stages first/part: not Split-K)
        assert cleave.stage(g) not in (cleave.Stage.SPLIT, cleave.Stage.COMBINE) and "cleave.split_count" not in g.attributes, g.sym_name.data
        assert not any(isinstance(op, tgraph.SplitOp) for op in g.block.ops)


def test_no_search_schedules_only_the_input_graph() -> None:
    module = _run(_small("gqa_decode", {4096: 512}), no_search=True)
    assert [g.sym_name.data for g in _graphs(module)] == ["gqa_decode"]
    kernels = _kernels(module)
    assert kernels and all(tgraph.referenced_symbol(k, "cleave.schedule_of") == "gqa_decode" for k in kernels)


def test_no_horizontal_fusion_gives_swiglu_two_loops() -> None:
    fused = _run(_small("swiglu", {14336: 1024}), no_search=True)
    assert [len(s.results) for s in _sequentials(fused)] == [2]
    separate = _run(_small("swiglu", {14336: 1024}), no_search=True, horizontal_fusion=False)
    assert [len(s.results) for s in _sequentials(separate)] == [1, 1]


def test_no_iterative_tiling() -> None:
    """Without iterative tiling no kernel has a sequential loop; swiglu's K=4096 rows then no longer fit
    one kernel, and the graph is cut into several (each still without a loop)."""
    module = _run(_small("gqa_decode", {4096: 512}), iterative_tiling=False)
    assert _kernels(module) and not _sequentials(module)
    module = _run(_small("swiglu", {14336: 1024}), no_search=True, iterative_tiling=False)
    assert len(_kernels(module)) > 1 and not _sequentials(module)


@pytest.mark.parametrize("spec", ["cleave-pipeline{no-split=true}", "cleave-pipeline{no-search=true iterative-tiling=false horizontal-fusion=false}"])
def test_options_from_the_command_line(spec: str, tmp_path: Path) -> None:
    src = tmp_path / "g.mlir"
    src.write_text(str(_small("gqa_decode", {4096: 256})))
    out = tmp_path / "out.mlir"
    assert cleave_opt([str(src), "-p", spec, "-o", str(out)]) == 0
    assert "itgraph.kernel" in out.read_text() and "_split" not in out.read_text()
