"""The generality suite (issue 11, item 6): subgraphs of real models, `examples/models/*.mlir`.

Each graph goes through `cleave-pipeline` and `cleave-lower-tilelang`; every kept candidate's
kernels, interpreted by the tilelang interpreter, must compute what the graph computes in float64
on fresh inputs of two distributions (0/1 masks: causal, then a sliding-window band), and the
emitted kernels (`-t tilelang`) must lower for sm_90a with TileLang. The default run schedules the
graphs as written (`no-search=true`, about 1 s a graph); `-m slow` runs the whole pipeline with the
algebraic search (Split-K, rescale-after-matmul forms) at a work budget of 60,000 constructions
(5-50 s a graph on one core): `python -m pytest tests/test_models.py -m slow -n 0`.

Each file opens with comment lines naming its source (model, transformers file and class, what the
subgraph computes, test and real shapes) and a `// gpu-resize: SMALL=REAL ...` line that
`bench/models.py` applies to get the real shape.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr

from cleave_ir.builder import module_of
from cleave_ir.dialects import tgraph
from cleave_ir.interpreter import input_shapes, max_relative_error, run_graph
from cleave_ir.interpreter_tilelang import candidate_kernels, run_kernels
from cleave_ir.passes.lower_tilelang import lower_module
from cleave_ir.passes.pipeline import PipelinePass
from cleave_ir.run import load_module, resize_graph
from cleave_ir.tilelang_emitter import module_source

ROOT = Path(__file__).resolve().parent.parent
MODELS_DIR = ROOT / "examples" / "models"
MODEL_FILES = sorted(MODELS_DIR.glob("*.mlir"))
MODEL_IDS = [p.stem for p in MODEL_FILES]
FP16_TOL = 2e-2  # max error relative to the output's max |value| (kernels compute in fp16/fp32)
DISTRIBUTIONS = ("normal", "shifted")


def gpu_resize(path: Path) -> dict[int, int]:
    """The `// gpu-resize: 64=4096 32=128` line: test size -> real size."""
    m = re.search(r"^// gpu-resize:(.*)$", path.read_text(), re.M)
    assert m, f"{path.name}: no gpu-resize line"
    return {int(a): int(b) for a, b in (pair.split("=") for pair in m.group(1).split())}


def load_graph(name: str) -> tgraph.GraphOp:
    graph = load_module(str(MODELS_DIR / f"{name}.mlir")).body.block.first_op
    assert isinstance(graph, tgraph.GraphOp)
    return graph


def mask_of(shape: tuple[int, ...], distribution: str) -> np.ndarray:
    """A 0/1 attention mask over the last two dims (queries, keys): causal, or a band of width
    keys/4 (a sliding window); both keep the diagonal, so no row is masked whole."""
    q, k = shape[-2], shape[-1]
    i, j = np.arange(q)[:, None] + (k - q), np.arange(k)[None, :]  # queries are the last q positions
    keep = j <= i
    if distribution == "shifted":
        keep &= j > i - max(1, k // 4)
    return np.broadcast_to(keep.astype(np.float64), shape).copy()


def model_inputs(graph: tgraph.GraphOp, distribution: str, seed: int) -> list[np.ndarray]:
    """Inputs rounded to fp16: standard normal, or normal with mean 0.25 and deviation 1.5; weights
    (`w*`) are divided by the square root of their input dim, as trained weights roughly are (values
    then stay in fp16's range through two projections); inputs named `mask*` get 0/1 masks."""
    rng = np.random.default_rng(seed)
    out = []
    for name, shape in zip(graph.input_names(), input_shapes(graph)):
        if name.startswith("mask"):
            out.append(mask_of(tuple(shape), distribution))
            continue
        x = rng.standard_normal(shape)
        if distribution == "shifted":
            x = 0.25 + 1.5 * x
        if name.startswith("w") and len(shape) >= 2:
            x = x / np.sqrt(shape[-2])
        out.append(x.astype(np.float16).astype(np.float64))
    return out


SEARCH_BUDGET = 60_000  # the slow tests' search: enough for the Split-K and rescaled forms of these graphs (neox_rope_causal_attention: 51k, its 21-op FlashDecoding form included)


@cache
def compiled(name: str, search: bool, budget: int = SEARCH_BUDGET, keep: int = 3) -> ModuleOp:
    """The model after cleave-pipeline (keeping `keep` candidates) and cleave-lower-tilelang (shared: do not modify)."""
    module = module_of(load_graph(name).clone())
    PipelinePass(no_search=not search, search_budget=budget, keep=keep).apply(Context(), module)
    lower_module(module)
    module.verify()
    return module


def check_agrees(name: str, search: bool, budget: int = SEARCH_BUDGET, keep: int = 3) -> int:
    """Every kept candidate's kernels against the graph, two distributions; returns how many candidates."""
    graph = load_graph(name)
    candidates = candidate_kernels(compiled(name, search, budget, keep))
    assert candidates, "no candidate compiled"
    for seed, distribution in enumerate(DISTRIBUTIONS, start=1):
        xs = model_inputs(graph, distribution, seed)
        (ref,) = run_graph(graph, xs)
        assert np.isfinite(ref).all()
        for cand, kernels in candidates:
            (got,) = run_kernels(kernels, xs)
            err = max_relative_error(ref, got)
            where = f"@{cand} ({', '.join(k.sym_name.data for k in kernels)}), {distribution} inputs"
            assert err <= FP16_TOL, f"{where}: max relative error {err:.3g}"
    return len(candidates)


def check_lowers(name: str, search: bool, tmp_path: Path, budget: int = SEARCH_BUDGET, keep: int = 3) -> None:
    """Every emitted kernel lowers to CUDA for sm_90a with TileLang."""
    pytest.importorskip("tilelang")
    from cleave_ir.tilelang_check import lower_all

    path = tmp_path / f"{name}.py"
    path.write_text(module_source(compiled(name, search, budget, keep)))
    sources = lower_all(path)
    assert sources and all("__global__" in src for src in sources.values()), list(sources)


def test_suite_is_general() -> None:
    """At least 20 models, none of them one of the examples, each naming its source and shapes."""
    assert len(MODEL_FILES) >= 20
    examples = {p.read_text().split("tgraph.graph", 1)[1] for p in (ROOT / "examples").glob("*.mlir")}
    for path in MODEL_FILES:
        text = path.read_text()
        header = " ".join(line.removeprefix("//").strip() for line in text.split("tgraph.graph", 1)[0].splitlines())
        assert re.search(r"transformers models/\w+/modeling_\w+\.py", header), f"{path.name}: source not named"
        assert "Test shape" in header and "Real shape" in header, path.name
        assert text.split("tgraph.graph", 1)[1] not in examples, path.name
        graph = load_graph(path.stem)
        assert graph.sym_name.data == path.stem
        real = resize_graph(graph, gpu_resize(path))  # the benchmark's shape is a valid graph
        assert input_shapes(real) != input_shapes(graph)


def test_masks_matter() -> None:
    """The masked models read their mask: causal and banded masks give different outputs (the
    agreement checks below would not notice a kernel that ignored the mask otherwise)."""
    graph = load_graph("llama3_causal_attention")
    a, b = model_inputs(graph, "normal", 1), model_inputs(graph, "shifted", 1)
    b = [x if n.startswith("mask") else y for n, x, y in zip(graph.input_names(), b, a)]
    assert max_relative_error(run_graph(graph, a)[0], run_graph(graph, b)[0]) > 0.1


@pytest.mark.parametrize("name", MODEL_IDS)
def test_model_kernels_agree(name: str) -> None:
    check_agrees(name, search=False)


@pytest.mark.parametrize("name", MODEL_IDS)
def test_model_kernels_lower_for_sm90a(name: str, tmp_path: Path) -> None:
    check_lowers(name, False, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("name", MODEL_IDS)
def test_model_with_search(name: str, tmp_path: Path) -> None:
    """The whole pipeline with the search: every kept candidate agrees and lowers (deepseek_mla_prefill's
    too: its per-matmul cut once kept a [2, 48, 32] tile copy that TileLang cannot lay out over 128
    threads, marked as an expected failure until a slow run found the test passing)."""
    check_agrees(name, search=True)
    check_lowers(name, True, tmp_path)


def kept_notes(module: ModuleOp) -> set[str]:
    """The notes of the candidates the pipeline kept."""
    return {
        g.attributes["cleave.note"].data  # type: ignore[attr-defined]
        for g in module.body.block.ops
        if isinstance(g, tgraph.GraphOp) and "cleave.note" in g.attributes
    }


@pytest.mark.slow  # 20 s of search: under -m slow, with the lit pipeline searches (CI's 8 minutes)
def test_masked_attention_gets_its_flash_decoding_form(tmp_path: Path) -> None:
    """Causal attention (8 ops) has a FlashDecoding form of 15 (K, V and the mask split, q reshaped,
    two combines, the reshape back), past the search's old fixed limit of 12 ops: the limit grows
    with the graph, so the form is found at the test budget, kept, and its split and combine
    kernels, interpreted, agree with the graph on causal and banded masks, and lower for sm_90a."""
    name = "llama3_causal_attention"
    notes = kept_notes(compiled(name, True))
    assert any(n.startswith("split %mask dim 3 by s, split %k dim 2 by s, split %v dim 2 by s, 2 partial results combined")
               for n in notes), notes
    check_agrees(name, True)
    check_lowers(name, True, tmp_path)


@pytest.mark.slow  # 19 s: `./test.sh -m slow`
def test_qk_norm_scores_get_their_rescaled_form(tmp_path: Path) -> None:
    """Qwen3's QK-norm scores: the row scales of q and of k move past q k^T (k's, under
    transpose_b, as a column scale): the form is kept (among 4: the one-kernel forms estimate the
    same, and a slot goes to the per-matmul cut), its matmul reads neither rsqrt, and its kernels,
    interpreted, agree with the graph and lower for sm_90a."""
    name = "qwen3_qk_norm_scores"
    module = compiled(name, True, keep=4)
    forms = [g for g in module.body.block.ops if isinstance(g, tgraph.GraphOp)
             and g.attributes.get("cleave.note") == StringAttr("mul moved after matmul (rows, columns)")]
    assert forms, kept_notes(module)
    (matmul,) = [op for op in forms[0].block.ops if isinstance(op, tgraph.MatmulOp)]

    def reads_rsqrt(value) -> bool:
        owner = value.owner
        return isinstance(owner, tgraph.IRDLOperation) and (
            isinstance(owner, tgraph.RsqrtOp) or any(reads_rsqrt(o) for o in owner.operands))

    assert matmul.transpose_b is not None and not any(reads_rsqrt(o) for o in matmul.operands)
    assert [u.operation.name for u in matmul.result.uses] == ["tgraph.mul"]
    check_agrees(name, True, keep=4)
    check_lowers(name, True, tmp_path, keep=4)


# graphs the search found nothing for, even at the default budget (deepseek_mla_prefill: a class
# reached first through a dearer construction kept that cost, and the division over it exceeded
# the op budget), the work budget their search now completes within, and a form found there that
# the pipeline keeps (a note's start)
UNLOCKED = {
    "deepseek_mla_prefill": (300_000, "div moved after matmul"),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(UNLOCKED))
def test_searched_forms_of_graphs_that_had_none(name: str, tmp_path: Path) -> None:
    """The form is kept by the pipeline, its kernels agree under the tilelang interpreter and lower."""
    budget, note = UNLOCKED[name]
    notes = kept_notes(compiled(name, True, budget))
    assert any(n.startswith(note) for n in notes), notes
    check_agrees(name, True, budget)
    check_lowers(name, True, tmp_path, budget)


def test_bench_rows_and_eager_baselines() -> None:
    """bench/models.py's rows: each model at its real shape (gpu-resize applied), and its eager
    baseline (`graph_eager`: the graph op by op in torch, fp16) agrees with the float64 reference on
    the test shape with the benchmark's inputs (`model_inputs`: 0/1 masks, scaled weights)."""
    torch = pytest.importorskip("torch")
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("gpu_suite", ROOT / "bench" / "gpu_suite.py")
    assert spec is not None and spec.loader is not None
    suite = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("gpu_suite", suite)
    spec.loader.exec_module(suite)
    from cleave_ir.runtime import check, random_inputs, torch_reference

    rows = suite.model_rows()
    assert [r.name for r in rows] == MODEL_IDS
    for row in rows:
        small = suite.parse_graph(suite.graph_text(row, scale=True))
        real = suite.parse_graph(suite.graph_text(row))
        assert input_shapes(real) == input_shapes(resize_graph(load_graph(row.name), gpu_resize(MODELS_DIR / f"{row.name}.mlir")))
        xs = suite.model_inputs(small, random_inputs(small, device="cpu"))
        masks = [x for n, x in zip(small.input_names(), xs) if n.startswith("mask")]
        assert all(set(torch.unique(m).tolist()) == {0.0, 1.0} for m in masks)
        err = check(suite.graph_eager(small)(*xs), torch_reference(small, xs)[0])
        assert err < 1e-2, f"{row.name}: eager baseline error {err:.2e}"


ROPE_SLICED = """\
tgraph.graph @rope_sliced(%q: !tgraph.tensor<[64, 32], f16>, %cos: !tgraph.tensor<[64, 32], f16>, %sin: !tgraph.tensor<[64, 32], f16>) -> !tgraph.tensor<[64, 32], f16> {
  %hi = tgraph.slice %q dim 1 start 16 : !tgraph.tensor<[64, 32], f16> -> !tgraph.tensor<[64, 16], f16>
  %lo = tgraph.slice %q dim 1 start 0 : !tgraph.tensor<[64, 32], f16> -> !tgraph.tensor<[64, 16], f16>
  %nhi = tgraph.neg %hi : !tgraph.tensor<[64, 16], f16>
  %r = tgraph.concat %nhi, %lo dim 1 : !tgraph.tensor<[64, 16], f16>, !tgraph.tensor<[64, 16], f16> -> !tgraph.tensor<[64, 32], f16>
  %a = tgraph.mul %q, %cos : !tgraph.tensor<[64, 32], f16>, !tgraph.tensor<[64, 32], f16> -> !tgraph.tensor<[64, 32], f16>
  %b = tgraph.mul %r, %sin : !tgraph.tensor<[64, 32], f16>, !tgraph.tensor<[64, 32], f16> -> !tgraph.tensor<[64, 32], f16>
  %o = tgraph.add %a, %b : !tgraph.tensor<[64, 32], f16>, !tgraph.tensor<[64, 32], f16> -> !tgraph.tensor<[64, 32], f16>
  tgraph.output %o : !tgraph.tensor<[64, 32], f16>
}
"""


def test_rotary_with_slice_and_concat_compiles() -> None:
    """Rotary embedding with rotate_half written out (slice, neg, concat): `cleave-fold-structural`
    moves the slices onto q and the concat to the output, so the kernels read q's halves as views
    and write the output's halves (the emitted `BOUNDARY`)."""
    from conftest import run_tool

    r = run_tool("cleave-opt", "-", "-p", "cleave-pipeline", "-t", "tilelang", input=ROPE_SLICED)
    assert r.returncode == 0, r.stderr
    boundary = next(line for line in r.stdout.splitlines() if line.startswith("BOUNDARY = "))
    assert "(0, (), ((1, 0, 16),)), (0, (), ((1, 16, 16),))" in boundary and "'outputs': [(0, 1, ()), (0, 1, ())]" in boundary, boundary
