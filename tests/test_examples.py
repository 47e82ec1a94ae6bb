"""The 12 examples: cleave-opt round-trips, interpreter vs the hand-written numpy references,
`declared` (fp16) mode vs float64, and symbolize/instantiate preserving the interpreter's output."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import Float16Type, FunctionType

from conftest import (
    EXAMPLE_FILES,
    EXAMPLE_IDS,
    SMALL,
    load_example,
    only_graph,
    parse_text,
    run_tool,
    value_types,
)
from reference_numpy import REFERENCES
from cleave_ir import driver
from cleave_ir.dialects import tgraph
from cleave_ir.interpreter import InterpretationError, max_relative_error, random_inputs, run_graph
from cleave_ir.passes.symbolize import instantiate, symbolize
from cleave_ir.run import resize_graph

FP16_MAX = float(np.finfo(np.float16).max)  # 65504


def test_there_are_twelve_examples_with_references():
    assert len(EXAMPLE_FILES) == 12
    assert sorted(EXAMPLE_IDS) == sorted(REFERENCES)


def resize_map(name: str) -> dict[int, int]:
    """The resize used to interpret example `name` quickly.

    rmsnorm_matmul hard-codes its mean as `scale 1/4096` (0.000244140625), so shrinking its 4096
    would change what it computes (the reference uses np.mean over the actual dim); only its
    N = 6144 is shrunk ([1, 4096] x [4096, 64] is still small).
    """
    if name == "rmsnorm_matmul":
        return {6144: 64}
    return SMALL


def small_example(name: str) -> tgraph.GraphOp:
    return resize_graph(load_example(name), resize_map(name))


def opt(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """Run cleave-opt in-process; assert it succeeds; return its stdout."""
    rc = driver.main(list(args))
    out, err = capsys.readouterr()
    assert rc == 0, err
    assert err == ""
    return out


# --------------------------------------------------------------------------- (a) round-trips


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=EXAMPLE_IDS)
def test_roundtrip_custom_and_generic(path: Path, tmp_path: Path, capsys):
    printed = opt(capsys, str(path))
    assert f"tgraph.graph @{path.stem}(" in printed

    again_file = tmp_path / "again.mlir"
    again_file.write_text(printed)
    assert opt(capsys, str(again_file)) == printed

    generic = opt(capsys, str(path), "--print-op-generic")
    assert '"tgraph.graph"()' in generic and "tgraph.matmul" in generic
    generic_file = tmp_path / "generic.mlir"
    generic_file.write_text(generic)
    assert opt(capsys, str(generic_file)) == printed
    # and generic -> generic is a fixpoint as well
    assert opt(capsys, str(generic_file), "--print-op-generic") == generic


def test_roundtrip_through_installed_cleave_opt():
    name = "mha"
    first = run_tool("cleave-opt", f"examples/{name}.mlir")
    assert first.returncode == 0, first.stderr
    # like xdsl-opt, cleave-opt reads stdin when no file is given ('-' is not special to it)
    second = run_tool("cleave-opt", input=first.stdout)
    assert second.returncode == 0, second.stderr
    assert second.stdout == first.stdout


# --------------------------------------------------------------------------- (b) interpreter


@pytest.mark.parametrize("name", EXAMPLE_IDS)
def test_resize_keeps_graph_valid_and_maps_sizes(name: str):
    original = load_example(name)
    resize = resize_map(name)
    small = small_example(name)
    small.verify()
    assert small.bindings is None and "constraints" not in small.attributes
    # position by position, every dim is the original one mapped through the resize
    before, after = value_types(original), value_types(small)
    assert len(before) == len(after)
    for t0, t1 in zip(before, after):
        assert isinstance(t0, tgraph.TensorType) and isinstance(t1, tgraph.TensorType)
        assert t1.element_type == t0.element_type
        assert [int(d) for d in t1.shape] == [resize.get(int(d), int(d)) for d in t0.shape]
    # the text survives a re-parse (inside a module, as cleave-opt prints it)
    text = str(small)
    assert str(only_graph(parse_text(text))) == text
    # the original is left alone
    assert str(original) == str(load_example(name))


@pytest.mark.parametrize("name", EXAMPLE_IDS)
def test_interpreter_matches_numpy_reference(name: str):
    graph = small_example(name)
    for seed in (0, 1):
        inputs = random_inputs(graph, seed)
        (out,) = run_graph(graph, inputs)
        ref = REFERENCES[name](*inputs)
        assert out.dtype == np.float64
        assert out.shape == ref.shape
        np.testing.assert_allclose(out, ref, rtol=1e-10, atol=1e-12)


def test_random_inputs_are_reproducible_and_positional():
    g = small_example("mha")
    a, b = random_inputs(g, 3), random_inputs(g, 3)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    assert not np.array_equal(random_inputs(g, 4)[0], a[0])
    assert [x.shape for x in a] == [(1, 4, 64, 16)] * 3


def test_run_graph_checks_its_inputs():
    graph = small_example("matmul")
    a, b = random_inputs(graph, 0)
    with pytest.raises(InterpretationError, match=r"@matmul takes 2 inputs, got 1"):
        run_graph(graph, [a])
    with pytest.raises(InterpretationError, match=r"@matmul: input %b has shape \(64, 63\), expected \(64, 64\)"):
        run_graph(graph, [a, b[:, :63]])
    sym = graph.clone()
    symbolize(sym)
    sym.bindings = None
    with pytest.raises(InterpretationError, match=r"unbound symbol"):
        random_inputs(sym, 0)


# --------------------------------------------------------------------------- (c) declared mode


def _with_all_values_as_outputs(graph: tgraph.GraphOp) -> tgraph.GraphOp:
    """A copy of `graph` that returns every op result (to inspect the float64 intermediates)."""
    g = graph.clone()
    values = [r for op in g.block.ops if not isinstance(op, tgraph.OutputOp) for r in op.results]
    old = g.output_op
    new = tgraph.OutputOp(values)
    g.block.insert_op_before(new, old)
    g.block.erase_op(old)
    g.function_type = FunctionType.from_lists(
        list(g.function_type.inputs.data), [v.type for v in values]
    )
    g.verify()
    return g


def fp16_overflows(graph: tgraph.GraphOp, inputs) -> bool:
    """True when some f16-typed value exceeds the f16 range in exact (float64) arithmetic."""
    everything = _with_all_values_as_outputs(graph)
    values = run_graph(everything, inputs)
    for v, t in zip(values, everything.function_type.outputs.data):
        if isinstance(tgraph.tensor_type(t).element_type, Float16Type):
            if not np.all(np.isfinite(v)) or np.max(np.abs(v)) > FP16_MAX:
                return True
    return False


@pytest.mark.parametrize("name", EXAMPLE_IDS)
def test_declared_mode_close_to_float64(name: str):
    """Rounding every op to f16 (computing in f32) stays within 2e-2 of float64.

    Where an f16 intermediate legitimately exceeds the f16 range (65504: e.g. exp of large logits
    or a long row sum), `declared` mode is *supposed* to produce inf/nan, as a real fp16 kernel
    would; such inputs are not a meaningful accuracy check, so the test is skipped for them. With
    the small shapes and standard-normal inputs used here no example overflows (asserted by the
    skip never triggering in practice), but the guard keeps the test honest if the shapes change.
    """
    graph = small_example(name)
    inputs = random_inputs(graph, 0)
    (exact,) = run_graph(graph, inputs)
    (declared,) = run_graph(graph, inputs, mode="declared")
    assert declared.shape == exact.shape
    if fp16_overflows(graph, inputs):
        pytest.skip("an f16 intermediate exceeds 65504: fp16 overflow is the expected result")
    assert np.all(np.isfinite(declared))
    err = max_relative_error(exact, declared)
    assert err < 2e-2, err
    # ... but it is not float64: the f16 roundings are visible
    assert err > 0
    # the declared output is representable in f16 (its element type)
    np.testing.assert_array_equal(declared.astype(np.float16).astype(declared.dtype), declared)


def test_declared_mode_overflows_like_fp16():
    """The guard above is about a real effect: exp(12) = 162755 is inf in f16."""
    text = """
    tgraph.graph @e(%x: !tgraph.tensor<[2], f16>) -> !tgraph.tensor<[2], f16> {
      %y = tgraph.exp %x : !tgraph.tensor<[2], f16>
      tgraph.output %y : !tgraph.tensor<[2], f16>
    }"""
    g = only_graph(parse_text(text))
    x = [np.array([1.0, 12.0])]
    (d,) = run_graph(g, x, mode="declared")
    assert np.isfinite(d[0]) and np.isinf(d[1])
    assert fp16_overflows(g, x)
    (f,) = run_graph(g, x)
    np.testing.assert_allclose(f, np.exp(x[0]), rtol=1e-15)


# --------------------------------------------------------------------------- (d) symbolize


@pytest.mark.parametrize("name", EXAMPLE_IDS)
def test_symbolize_then_instantiate_preserves_output(name: str):
    graph = small_example(name)
    inputs = random_inputs(graph, 1)
    (expected,) = run_graph(graph, inputs)

    symbolic = graph.clone()
    symbolize(symbolic)
    symbolic.verify()
    # run on the symbolic graph directly: its own bindings give the shapes
    (direct,) = run_graph(symbolic, inputs)
    np.testing.assert_array_equal(direct, expected)

    concrete = instantiate(symbolic, symbolic.binding_values())
    concrete.verify()
    assert value_types(concrete) == value_types(graph)
    (back,) = run_graph(concrete, inputs)
    np.testing.assert_array_equal(back, expected)


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=EXAMPLE_IDS)
def test_symbolize_pass_then_bind_pass_restores_full_size_text(path: Path, tmp_path: Path, capsys):
    """cleave-opt -p cleave-symbolize, then -p cleave-bind (the graph's own bindings) gives back
    exactly the text of the original (full-size) example."""
    original = opt(capsys, str(path))
    symbolic = opt(capsys, str(path), "-p", "cleave-symbolize")
    assert "bindings = {" in symbolic
    f = tmp_path / "sym.mlir"
    f.write_text(symbolic)
    assert opt(capsys, str(f), "-p", "cleave-bind") == original
