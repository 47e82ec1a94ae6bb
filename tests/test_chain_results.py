"""A graph cut into kernels whose earlier kernels compute some of its outputs: the last kernel returns
only the outputs it computes, and its `cleave.results` names the graph's outputs in order, gathered from
the whole chain (`passes/partition_kernels.py`). Checked at every level that runs a chain: the tgraph
pieces, the itgraph kernels, the TileLang kernels, and the emitted module's `run` and GPU check
(TileLang replaced by its interpreter)."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.ir import BlockArgument
from xdsl.parser import Parser

from cleave_ir.builder import module_of
from cleave_ir.dialects import tgraph
from cleave_ir.dialects import tilelang as tl
from cleave_ir.interpreter import max_relative_error, run_chain, run_graph
from cleave_ir.interpreter_tilelang import candidate_kernels, run_kernels
from cleave_ir.passes import partition_kernels
from cleave_ir.passes.lower_tilelang import lower_module
from cleave_ir.passes.pipeline import PipelinePass
from cleave_ir.run import make_context
from conftest import emulated_gpu_check

GRAPHS = {
    # q, k and v projections of one x at grouped-query widths: one kernel per matmul
    "qkv": """
tgraph.graph @qkv(%x: !tgraph.tensor<[32, 64], f16>, %wq: !tgraph.tensor<[64, 128], f16>, %wk: !tgraph.tensor<[64, 32], f16>, %wv: !tgraph.tensor<[64, 32], f16>) -> (!tgraph.tensor<[32, 128], f16>, !tgraph.tensor<[32, 32], f16>, !tgraph.tensor<[32, 32], f16>) {
  %q = tgraph.matmul %x, %wq : !tgraph.tensor<[32, 64], f16>, !tgraph.tensor<[64, 128], f16> -> !tgraph.tensor<[32, 128], f16>
  %k = tgraph.matmul %x, %wk : !tgraph.tensor<[32, 64], f16>, !tgraph.tensor<[64, 32], f16> -> !tgraph.tensor<[32, 32], f16>
  %v = tgraph.matmul %x, %wv : !tgraph.tensor<[32, 64], f16>, !tgraph.tensor<[64, 32], f16> -> !tgraph.tensor<[32, 32], f16>
  tgraph.output %q, %k, %v : !tgraph.tensor<[32, 128], f16>, !tgraph.tensor<[32, 32], f16>, !tgraph.tensor<[32, 32], f16>
}""",
    # an MLP that also returns its hidden activation, last: the later kernel reads it and the chain returns it
    "mlp_and_hidden": """
tgraph.graph @mlp(%x: !tgraph.tensor<[32, 64], f16>, %w1: !tgraph.tensor<[64, 128], f16>, %w2: !tgraph.tensor<[128, 64], f16>) -> (!tgraph.tensor<[32, 64], f16>, !tgraph.tensor<[32, 128], f16>) {
  %h = tgraph.matmul %x, %w1 : !tgraph.tensor<[32, 64], f16>, !tgraph.tensor<[64, 128], f16> -> !tgraph.tensor<[32, 128], f16>
  %a = tgraph.silu %h : !tgraph.tensor<[32, 128], f16>
  %y = tgraph.matmul %a, %w2 : !tgraph.tensor<[32, 128], f16>, !tgraph.tensor<[128, 64], f16> -> !tgraph.tensor<[32, 64], f16>
  tgraph.output %y, %h : !tgraph.tensor<[32, 64], f16>, !tgraph.tensor<[32, 128], f16>
}""",
    # one output returned twice, computed by the first kernel
    "output_twice": """
tgraph.graph @twice(%x: !tgraph.tensor<[32, 64], f16>, %wq: !tgraph.tensor<[64, 128], f16>, %wk: !tgraph.tensor<[64, 32], f16>) -> (!tgraph.tensor<[32, 128], f16>, !tgraph.tensor<[32, 32], f16>, !tgraph.tensor<[32, 128], f16>) {
  %q = tgraph.matmul %x, %wq : !tgraph.tensor<[32, 64], f16>, !tgraph.tensor<[64, 128], f16> -> !tgraph.tensor<[32, 128], f16>
  %k = tgraph.matmul %x, %wk : !tgraph.tensor<[32, 64], f16>, !tgraph.tensor<[64, 32], f16> -> !tgraph.tensor<[32, 32], f16>
  tgraph.output %q, %k, %q : !tgraph.tensor<[32, 128], f16>, !tgraph.tensor<[32, 32], f16>, !tgraph.tensor<[32, 128], f16>
}""",
}
DISTRIBUTIONS = {"normal": lambda r, s: r.standard_normal(s), "uniform": lambda r, s: r.uniform(0.0, 2.0, s), "wide": lambda r, s: r.uniform(-4.0, 4.0, s)}


def _graph(name: str) -> tgraph.GraphOp:
    return Parser(make_context(), GRAPHS[name]).parse_module().body.block.first_op  # type: ignore[return-value]


_CACHE: dict[str, tuple[tgraph.GraphOp, object]] = {}


def _pipelined(name: str):  # noqa: ANN202 - (graph as written, lowered module; shared: do not modify)
    if name not in _CACHE:
        graph = _graph(name)
        module = module_of(graph.clone())
        PipelinePass(search_budget=2_000, top_k=1, keep=3).apply(Context(), module)
        lower_module(module)
        _CACHE[name] = (graph, module)
    return _CACHE[name]


def _gathering_chains(module) -> list[list[tgraph.GraphOp]]:  # noqa: ANN001
    graphs = {g.sym_name.data: g for g in module.body.block.ops if isinstance(g, tgraph.GraphOp)}
    chains = [partition_kernels.chain(g, graphs) for g in graphs.values() if partition_kernels.chain_head(g) and "cleave.candidate_of" in g.attributes]
    return [c for c in chains if c and "cleave.results" in c[-1].attributes]


@pytest.mark.parametrize("name", GRAPHS)
def test_the_last_piece_returns_only_what_it_computes(name: str) -> None:
    graph, module = _pipelined(name)
    chains = _gathering_chains(module)
    assert chains, "no candidate gathers its outputs"
    for chain in chains:
        last = chain[-1]
        results = [a.data for a in last.attributes["cleave.results"].data]
        own = [a.data for a in last.attributes["cleave.output_names"].data]
        assert len(results) == len(graph.output_op.outputs) and len(own) < len(results) and set(own) <= set(results)
        # the last piece copies no earlier output (one of its arguments) through
        assert not any(isinstance(o, BlockArgument) for o in last.output_op.outputs)
    assert any("cleave.results" in k.attributes for k in module.walk() if isinstance(k, tl.KernelOp))


@pytest.mark.parametrize("dist", DISTRIBUTIONS)
@pytest.mark.parametrize("name", GRAPHS)
def test_every_level_returns_the_graphs_outputs_in_order(name: str, dist: str) -> None:
    graph, module = _pipelined(name)
    rng = np.random.default_rng(len(name) + len(dist))
    xs = [DISTRIBUTIONS[dist](rng, [int(d) for d in tgraph.tensor_type(a).shape]) for a in graph.inputs]
    want = run_graph(graph, xs)
    for chain in _gathering_chains(module):
        got = run_chain(chain, xs)
        assert len(got) == len(want) and max(max_relative_error(w, g) for w, g in zip(want, got)) < 1e-9
    gathered = 0
    for cand, kernels in candidate_kernels(module):
        got = run_kernels(kernels, xs)
        assert [g.shape for g in got] == [w.shape for w in want], cand
        assert max(max_relative_error(w, g) for w, g in zip(want, got)) < 2e-2, cand
        gathered += "cleave.results" in kernels[-1].attributes
    assert gathered


@pytest.mark.parametrize("name", GRAPHS)
def test_the_emitted_module_gathers_them_and_the_gpu_check_passes(name: str, tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """`run` (twice: the second call replays the first one's plan) and `cleave compile --gpu`'s poisoned
    check of every candidate, TileLang replaced by the interpreter (as in test_fold_structural)."""
    from cleave_ir import runtime

    graph, module = _pipelined(name)
    mod, xs, refs = emulated_gpu_check(graph, module, tmp_path, monkeypatch)
    gathering = [m for m in mod.KERNELS.values() if m.get("results")]
    assert gathering and all(m["outputs"] < len(graph.output_op.outputs) for m in gathering)
    for i, (_, _, cand) in enumerate(mod.CANDIDATES):
        for _ in range(2):
            outs = mod.run(*xs, candidate=i)
            assert max(runtime.check(o, r) for o, r in zip(outs, refs)) < runtime.TOLERANCE, cand
