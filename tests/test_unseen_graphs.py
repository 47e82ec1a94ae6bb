"""Graphs a user could write that the examples do not cover, through the pipeline and the TileLang
interpreter (found by a sweep of `cleave compile` over op kinds, shapes and dtypes).

Each compile runs once per module (`compiled`), and every kept candidate is checked against the
graph on fresh inputs.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

from cleave_ir.builder import GraphBuilder, module_of
from cleave_ir.dialects import tgraph
from cleave_ir.interpreter import max_relative_error, random_inputs, run_graph
from cleave_ir.interpreter_tilelang import candidate_kernels, run_kernels
from cleave_ir.passes.lower_tilelang import lower_module
from cleave_ir.passes.pipeline import PipelinePass
from cleave_ir.run import make_context

TOL = 2e-2  # the kernels compute in fp16/fp32


def softmax(b: GraphBuilder, v, dim: int):  # type: ignore[no-untyped-def]
    e = b.exp(b.sub(v, b.reduce("max", v, dim)))
    return b.div(e, b.reduce("sum", e, dim))


def attention_one_key() -> tgraph.GraphOp:
    """softmax(q k^T / sqrt(d)) v over a single key (a decode step over a one-token cache)."""
    b = GraphBuilder("att1")
    q, k, v = b.input("q", [1, 2, 16, 32]), b.input("k", [1, 2, 1, 32]), b.input("v", [1, 2, 1, 32])
    return b.build(b.matmul(softmax(b, b.scale(b.matmul(q, k, transpose_b=True), 32**-0.5), 3), v))


def sum_over_unit_dim() -> tgraph.GraphOp:
    b = GraphBuilder("sum1", "f32")
    return b.build(b.reduce("sum", b.tanh(b.input("x", [7, 1, 33])), 1))


def two_outputs() -> tgraph.GraphOp:
    """silu(x @ w1) @ w2 and the hidden activation itself."""
    b = GraphBuilder("two")
    x, w1, w2 = b.input("x", [32, 64]), b.input("w1", [64, 48]), b.input("w2", [48, 16])
    h = b.silu(b.matmul(x, w1))
    return b.build(b.matmul(h, w2), h)


GRAPHS = {"attention_one_key": attention_one_key, "sum_over_unit_dim": sum_over_unit_dim, "two_outputs": two_outputs}


def lowered(graph: tgraph.GraphOp) -> ModuleOp:
    """`graph`'s pipeline module (a small search), lowered to TileLang."""
    module = module_of(graph.clone())
    PipelinePass(search_budget=20_000, top_k=1, keep=2, split_counts=(2,)).apply(make_context(), module)
    lower_module(module)
    return module


@functools.cache
def compiled(name: str) -> tuple[tgraph.GraphOp, ModuleOp]:
    """The graph and its lowered pipeline module."""
    graph = GRAPHS[name]()
    return graph, lowered(graph)


def check_candidates(graph: tgraph.GraphOp, module: ModuleOp, seed: int = 3) -> int:
    """Every candidate's kernels, interpreted, against the graph (every output); returns how many."""
    xs = random_inputs(graph, seed)
    refs = run_graph(graph, xs)
    candidates = candidate_kernels(module)
    assert candidates, "no candidate compiled"
    for name, kernels in candidates:
        got = run_kernels(kernels, xs)
        assert len(got) == len(refs), name
        for ref, out in zip(refs, got):
            err = max_relative_error(ref, np.asarray(out, dtype=np.float64).reshape(ref.shape))
            assert err <= TOL, f"@{name}: max relative error {err:.3g}"
    return len(candidates)


@pytest.mark.parametrize("name", ["attention_one_key", "sum_over_unit_dim"])
def test_reduction_over_a_size_one_dim(name: str) -> None:
    """A reduction over a dim of size 1 (softmax over one key, a sum over a unit dim) is its input:
    the scheduler makes it a view. Before, every kernel holding one failed cleave-lower-tilelang
    ('tgraph.reduce: nothing to reduce in a tile of [1, 1, 16, 1]') and so did `cleave compile`."""
    graph, module = compiled(name)
    check_candidates(graph, module)


def test_graph_with_two_outputs_is_scheduled_as_written() -> None:
    """A graph with two outputs (an MLP's result and its hidden activation): the search takes one
    output, so it is skipped and the graph is scheduled as written. Before, cleave-superoptimize
    refused the graph ('@two must have exactly one output') although one kernel computes both."""
    graph, module = compiled("two_outputs")
    assert check_candidates(graph, module) >= 1


def test_unit_reduction_kernel_lowers(tmp_path: Path) -> None:
    """The one-key attention's kernels lower for sm_90a with TileLang."""
    tilelang = pytest.importorskip("tilelang")
    from tilelang import tvm

    from cleave_ir.tilelang_check import load_module_file
    from cleave_ir.tilelang_emitter import module_source

    _, module = compiled("attention_one_key")
    path = tmp_path / "k.py"
    path.write_text(module_source(module))
    mod = load_module_file(path)
    with tvm.target.Target({"kind": "cuda", "arch": "sm_90a"}):
        for name in candidate_kernels(module)[0][1]:
            assert tilelang.lower(mod.prim_func(name.sym_name.data)).kernel_source


DYNAMIC_MEAN = """tgraph.graph @dm(%x: !tgraph.tensor<[1, 64], f32> {dynamic = array<i64: 1>}) -> !tgraph.tensor<[1, 1], f32> {
  %0 = tgraph.reduce mean %x dim 1 : !tgraph.tensor<[1, 64], f32> -> !tgraph.tensor<[1, 1], f32>
  tgraph.output %0 : !tgraph.tensor<[1, 1], f32>
}
"""


def test_mean_over_a_dynamic_dim_is_refused(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """A mean over a dim declared dynamic: cleave-decompose divides the sum by the size the dim has in
    the graph, so the kernels, which serve every size, divided by 64 at every width (at 17 columns:
    max relative error 0.73 against the graph). Now a located one-line error, as for a symbolic dim."""
    from cleave_ir.compile import compile_graph, main
    from cleave_ir.diagnostics import CleaveError
    from cleave_ir.run import load_module

    src = tmp_path / "dm.mlir"
    src.write_text(DYNAMIC_MEAN)
    assert main(["compile", str(src), "-o", str(tmp_path / "dm.py"), "--no-cache"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"{src}:2:3: error: @dm: tgraph.reduce mean over dim 1") and "\n" not in err, err
    assert not (tmp_path / "dm.py").exists()
    graph = load_module(str(src)).body.block.first_op
    with pytest.raises(CleaveError, match=r"^error: @dm: tgraph.reduce mean over dim 1"):
        compile_graph(graph, tmp_path / "dm2.py", ["--no-cache"])



TRANSPOSED = """\
tgraph.graph @tr(%x: !tgraph.tensor<[64, 32], f16>, %w: !tgraph.tensor<[64, 32], f16>) -> !tgraph.tensor<[64, 64], f16> {
  %t = tgraph.transpose %x perm [1, 0] : !tgraph.tensor<[64, 32], f16> -> !tgraph.tensor<[32, 64], f16>
  %y = tgraph.matmul %w, %t : !tgraph.tensor<[64, 32], f16>, !tgraph.tensor<[32, 64], f16> -> !tgraph.tensor<[64, 64], f16>
  tgraph.output %y : !tgraph.tensor<[64, 64], f16>
}
"""

# cleave-pipeline folds TRANSPOSED's transpose into its matmul (cleave-fold-structural); concats along two
# dims (a grid of blocks) it cannot move out of the graph
CONCAT_GRID = """\
tgraph.graph @grid(%a: !tgraph.tensor<[4, 8], f16>, %b: !tgraph.tensor<[4, 8], f16>, %c: !tgraph.tensor<[4, 8], f16>, %d: !tgraph.tensor<[4, 8], f16>) -> !tgraph.tensor<[8, 16], f16> {
  %ab = tgraph.concat %a, %b dim 1 : !tgraph.tensor<[4, 8], f16>, !tgraph.tensor<[4, 8], f16> -> !tgraph.tensor<[4, 16], f16>
  %cd = tgraph.concat %c, %d dim 1 : !tgraph.tensor<[4, 8], f16>, !tgraph.tensor<[4, 8], f16> -> !tgraph.tensor<[4, 16], f16>
  %x = tgraph.concat %ab, %cd dim 0 : !tgraph.tensor<[4, 16], f16>, !tgraph.tensor<[4, 16], f16> -> !tgraph.tensor<[8, 16], f16>
  %y = tgraph.exp %x : !tgraph.tensor<[8, 16], f16>
  tgraph.output %y : !tgraph.tensor<[8, 16], f16>
}
"""


@pytest.mark.parametrize(
    ("text", "passes", "expected"),
    [
        (DYNAMIC_MEAN, "cleave-decompose", "2:3: error: @dm: tgraph.reduce mean over dim 1, which varies"),
        (DYNAMIC_MEAN, "cleave-pipeline", "2:3: error: @dm: tgraph.reduce mean over dim 1, which varies"),
        (TRANSPOSED, "cleave-schedule", "1:1: error: cleave-schedule: @tr cannot be compiled: tgraph.transpose"),
        (CONCAT_GRID, "cleave-pipeline", "2:3: error: cleave-schedule: tgraph.concat is not supported"),
    ],
)
def test_pass_errors_are_located(tmp_path: Path, text: str, passes: str, expected: str) -> None:
    """A pass that refuses the input names where in the file the op it refuses starts. Before,
    cleave-decompose and cleave-schedule errors carried no location (`error: cleave-schedule: ...`),
    and `cleave-opt -p cleave-decompose` divided a mean over a dynamic dim by one size, silently."""
    from conftest import run_tool

    src = tmp_path / "in.mlir"
    src.write_text(text)
    r = run_tool("cleave-opt", str(src), "-p", passes)
    assert r.returncode == 1 and r.stdout == ""
    errors = [line for line in r.stderr.splitlines() if "error:" in line]  # cleave-schedule warns first
    assert len(errors) == 1 and errors[0].startswith(f"{src}:{expected}"), r.stderr

def test_dynamic_leading_dim_over_four_grid_dims(tmp_path: Path) -> None:
    """A batched matmul [b, 3, 33, 40] @ [1, 1, 40, 24] with b dynamic: its four grid dims share T.Kernel's
    three, the leading two merged into bx with a symbolic stride. Before, the lowering compared that
    stride with 1 ('internal error (TypeError): cannot determine truth value of Relational: a_d0 > 1');
    now the kernel indexes b as bx % a_d0, agrees with the graph in the interpreter and lowers."""
    import io

    from cleave_ir.compile import compile_graph
    from cleave_ir.dialects import tilelang as tl

    b = GraphBuilder("bmm")
    x, w = b.input("a", [2, 3, 33, 40], dynamic=[0]), b.input("b", [1, 1, 40, 24])
    graph = b.build(b.matmul(x, w))
    job = compile_graph(graph, tmp_path / "bmm.py", ["--no-cache", "--keep", "1"], out=io.StringIO())
    module = job.pipeline
    lower_module(module)
    assert any(isinstance(k, tl.KernelOp) for k in module.walk())
    check_candidates(graph, module)


@pytest.mark.parametrize("dtype, low", [("f32", -3.4028234663852886e38), ("bf16", -3.3895313892515355e38)])
def test_a_row_of_the_lowest_float_is_uniform_in_the_kernels(tmp_path: Path, dtype: str, low: float) -> None:
    """softmax(Q K^T / sqrt(d) + mask) V with a float mask input holding finfo.min (Hugging Face's
    padding fill in f32 and bf16 models): a row masked whole is uniform in the graph, as in PyTorch. The
    kernels computed exp2(x * log2 e - m * log2 e), where finfo.min * log2 e overflows to -inf, and
    rescaled against max(m, -3e38): such rows were NaN in every candidate. Now a term that may be that
    large is not multiplied by log2 e alone (`_unbounded`) and the reference is m (0 where -inf)."""
    import io

    from cleave_ir.compile import compile_graph

    b = GraphBuilder("mattn")
    q, k, v = (b.input(n, [2, 16, 32], dtype) for n in "qkv")
    mask = b.input("mask", [2, 16, 16], dtype)
    e = b.exp(b.add(b.scale(b.matmul(q, k, transpose_b=True), 32**-0.5), mask))
    graph = b.build(b.matmul(b.div(e, b.reduce("sum", e, 2)), v))
    job = compile_graph(graph, tmp_path / "m.py", ["--no-cache", "--keep", "3", "--top-k", "1"], out=io.StringIO())
    module = job.pipeline
    lower_module(module)
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal((2, 16, 32)) for _ in range(3)]
    m = np.zeros((2, 16, 16))
    m[1, 3, :] = low  # a row masked whole
    m[0, 2, 5:] = low  # and one in part
    s = np.einsum("bik,bjk->bij", xs[0], xs[1]) * 32**-0.5 + m
    p = np.exp(s - s.max(-1, keepdims=True))
    ref = (p / p.sum(-1, keepdims=True)) @ xs[2]
    candidates = candidate_kernels(module)
    assert len(candidates) >= 2
    for name, kernels in candidates:
        got = np.asarray(run_kernels(kernels, [*xs, m])[0], dtype=np.float64).reshape(ref.shape)
        assert not np.isnan(got).any(), name
        assert np.abs(got - ref).max() < (1e-2 if dtype == "bf16" else 1e-3), name


def test_a_split_k_part_with_every_key_masked_adds_nothing(tmp_path: Path) -> None:
    """Attention over 512 keys with a float -inf padding mask on the first 300 keys of one batch (a
    left-padded batch): a Split-K part whose keys are all masked has a chunk max of -inf, and its
    exp(x - max) was exp(-inf + inf) = NaN, which the combine's weight 0 does not clear: that batch's
    rows were NaN in the Split-K candidate (the one-kernel forms were right). Now the kernels subtract
    0 where a row max is -inf (`_shift_reader`), so the part adds nothing."""
    import io

    from cleave_ir.compile import compile_graph

    b = GraphBuilder("lp")
    q, k, v = b.input("q", [2, 64, 64]), b.input("k", [2, 512, 64]), b.input("v", [2, 512, 64])
    mask = b.input("mask", [2, 1, 512])
    e = b.exp(b.add(b.scale(b.matmul(q, k, transpose_b=True), 0.125), mask))
    graph = b.build(b.matmul(b.div(e, b.reduce("sum", e, 2)), v))
    job = compile_graph(graph, tmp_path / "lp.py", ["--no-cache", "--keep", "3", "--top-k", "1"], out=io.StringIO())
    module = job.pipeline
    lower_module(module)
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal((2, 64, 64)), rng.standard_normal((2, 512, 64)), rng.standard_normal((2, 512, 64))]
    m = np.zeros((2, 1, 512))
    m[1, 0, :300] = -np.inf
    (ref,) = run_graph(graph, [*xs, m])
    candidates = candidate_kernels(module)
    assert any("split" in name for name, _ in candidates)
    for name, kernels in candidates:
        got = np.asarray(run_kernels(kernels, [*xs, m])[0], dtype=np.float64).reshape(ref.shape)
        assert not np.isnan(got).any() and max_relative_error(ref, got) < 1e-2, name


def test_fp32_matmuls_keep_fp32_range_on_the_tensor_cores(tmp_path: Path) -> None:
    """Two chained fp32 batched matmuls ([16, 64, 64] @ [16, 64, 128] @ [16, 128, 32]) with inputs of
    magnitude 1 to 1e5: the operands went to the tensor cores as fp16, and the intermediate product
    (about 1e4 for inputs around 100) overflowed to inf in every candidate. They go as fp32 now (TF32:
    `lower_tilelang.tensor_core_type`, modelled by the interpreter), finite and within fp16-level error
    at every scale; the kernels lower for sm_90a."""
    import io

    from xdsl.dialects.builtin import f32

    from cleave_ir.compile import compile_graph
    from cleave_ir.dialects import tilelang as tl

    b = GraphBuilder("chain32")
    a, w1, w2 = b.input("a", [16, 64, 64], "f32"), b.input("w1", [16, 64, 128], "f32"), b.input("w2", [16, 128, 32], "f32")
    graph = b.build(b.matmul(b.matmul(a, w1), w2))
    out = io.StringIO()
    job = compile_graph(graph, tmp_path / "c.py", ["--no-cache", "--keep", "3"], out=out)
    assert "lower (sm_90a" in out.getvalue() and "dropped" not in out.getvalue()  # every kernel lowered
    module = job.pipeline
    lower_module(module)
    gemms = [op for op in module.walk() if isinstance(op, tl.GemmOp)]
    assert gemms and all(tl.buffer_type(v).element_type == f32 for op in gemms for v in (op.a, op.b))
    rng = np.random.default_rng(4)
    for scale in (1.0, 1e2, 1e5):
        xs = [rng.standard_normal(s) * scale for s in ((16, 64, 64), (16, 64, 128), (16, 128, 32))]
        (ref,) = run_graph(graph, xs)
        for name, kernels in candidate_kernels(module):
            got = np.asarray(run_kernels(kernels, xs)[0], dtype=np.float64).reshape(ref.shape)
            assert np.isfinite(got).all() and max_relative_error(ref, got) < 2e-3, (name, scale)
