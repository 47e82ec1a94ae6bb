"""The tilelang dialect on its own: index expressions, a hand-written kernel with a symbolic dim
(printed with `T.dynamic`, interpreted with TileLang's safe memory access), and user-facing errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import sympy
from cleave_ir.dialects import tilelang as tl
from cleave_ir.dialects.cleave import expr_str, parse_expr_text
from conftest import parse_text

from cleave_ir.interpreter import InterpretationError
from cleave_ir.interpreter_tilelang import run_kernel, run_kernels
from cleave_ir.shapes import symbol
from cleave_ir.tilelang_emitter import kernel_source, module_source, py_expr

# y[L, 32] = exp(x @ w - rowmax(x @ w)) for x[L, 64]: rows in blocks of 64 (L need not be a multiple:
# the last block reads zeros past the end and its stores there are dropped), x and w in two
# pipelined halves of the contracted dim.
ROWS = """
tilelang.kernel @rows(%x: !tilelang.buffer<[L, 64], f16, global>, %w: !tilelang.buffer<[64, 32], f16, global>, %y: !tilelang.buffer<[L, 32], f16, global>) grid (bx) in (L ceildiv 64) threads 128 outputs 1 attributes {cleave.input_names = ["x", "w"], cleave.passthrough = []} {
  %xh = tilelang.alloc_shared : !tilelang.buffer<[64, 32], f16, shared>
  %ws = tilelang.alloc_shared : !tilelang.buffer<[32, 32], f16, shared>
  %acc = tilelang.alloc_fragment : !tilelang.buffer<[64, 32], f32, fragment>
  %mx = tilelang.alloc_fragment : !tilelang.buffer<[64], f32, fragment>
  tilelang.clear %acc : !tilelang.buffer<[64, 32], f32, fragment>
  tilelang.pipelined r0 in 2 stages 2 {
    tilelang.copy %w at <[32*r0, 0], [32, 32]> to %ws : !tilelang.buffer<[64, 32], f16, global>, !tilelang.buffer<[32, 32], f16, shared>
    tilelang.copy %x at <[64*bx, 32*r0], [64, 32]> to %xh : !tilelang.buffer<[L, 64], f16, global>, !tilelang.buffer<[64, 32], f16, shared>
    tilelang.gemm %xh, %ws, %acc policy FullRow : !tilelang.buffer<[64, 32], f16, shared>, !tilelang.buffer<[32, 32], f16, shared>, !tilelang.buffer<[64, 32], f32, fragment>
  }
  tilelang.reduce_max %acc, %mx dim 1 clear : !tilelang.buffer<[64, 32], f32, fragment>, !tilelang.buffer<[64], f32, fragment>
  tilelang.parallel (i0, i1) in (64, 32) {
    %p = tilelang.load %acc[i0, i1] : !tilelang.buffer<[64, 32], f32, fragment>
    %q = tilelang.load %mx[i0] : !tilelang.buffer<[64], f32, fragment>
    %r = arith.subf %p, %q : f32
    %s = math.exp %r : f32
    tilelang.store %s, %acc[i0, i1] : f32, !tilelang.buffer<[64, 32], f32, fragment>
  }
  tilelang.copy %acc to %y at <[64*bx, 0], [64, 32]> : !tilelang.buffer<[64, 32], f32, fragment>, !tilelang.buffer<[L, 32], f16, global>
}
"""


def rows_kernel() -> tl.KernelOp:
    return next(op for op in parse_text(ROWS).walk() if isinstance(op, tl.KernelOp))


def rows_reference(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    xw = x.astype(np.float16).astype(np.float64) @ w.astype(np.float16).astype(np.float64)
    return np.exp(xw - np.max(xw, axis=1, keepdims=True))


@pytest.mark.parametrize("length", [64, 100, 200])
def test_symbolic_kernel_runs_at_any_length(length: int) -> None:
    """One kernel, bound L: the tail block's out-of-range reads are zeros, its writes dropped."""
    rng = np.random.default_rng(length)
    x, w = rng.standard_normal((length, 64)), rng.standard_normal((64, 32))
    (y,) = run_kernel(rows_kernel(), [x, w])  # L comes from x's shape
    assert y.dtype == np.float16 and y.shape == (length, 32)
    ref = rows_reference(x, w)
    assert np.max(np.abs(y - ref)) / np.max(np.abs(ref)) < 2e-2
    (y2,) = run_kernel(rows_kernel(), [x, w], {"L": length})
    assert np.array_equal(y, y2)


def test_wrong_binding_or_shape_is_reported() -> None:
    x, w = np.zeros((100, 64)), np.zeros((64, 32))
    with pytest.raises(InterpretationError, match=r"input 0 has shape \(100, 64\), expected \(128, 64\)"):
        run_kernel(rows_kernel(), [x, w], {"L": 128})
    with pytest.raises(InterpretationError, match="takes 2 inputs, got 1"):
        run_kernel(rows_kernel(), [x])


def test_unwritten_output_stays_nan() -> None:
    """A kernel that forgets a block is caught: outputs start as NaN."""
    module = parse_text(ROWS.replace("grid (bx) in (L ceildiv 64)", "grid (bx) in (1)"))
    kernel = next(op for op in module.walk() if isinstance(op, tl.KernelOp))
    (y,) = run_kernels([kernel], [np.ones((128, 64)), np.ones((64, 32))])
    assert not np.isnan(y[:64]).any() and np.isnan(y[64:]).all()


def test_symbolic_kernel_prints_and_lowers(tmp_path: Path) -> None:
    """The printer writes the symbol as a T.dynamic and the grid as a ceildiv; TileLang lowers it."""
    text = kernel_source(rows_kernel())
    assert text.startswith('L = T.dynamic("L")\nx_stride0 = T.dynamic("x_stride0")\nw_stride0 = T.dynamic("w_stride0")\ny_stride0 = T.dynamic("y_stride0")\n@T.prim_func\ndef rows(x: T.StridedTensor((L, 64), (x_stride0, 1), "float16"), ')
    assert 'y: T.StridedTensor((L, 32), (y_stride0, 1), "float16")):' in text
    assert "with T.Kernel(T.ceildiv(L, 64), threads=128) as (bx,):" in text
    assert "T.copy(x[64*bx:64*bx + 64, 32*r0:32*r0 + 32], xh)" in text
    assert "acc[i0, i1] = T.exp(acc[i0, i1] - mx[i0])" in text
    from cleave_ir.tilelang_check import lower_all

    path = tmp_path / "rows.py"
    path.write_text(module_source(parse_text(ROWS)))
    assert "__global__" in lower_all(path)["rows"]


@pytest.mark.parametrize(
    "text",
    ["64*bx + 16", "(bx floordiv 4) mod 8", "L ceildiv 64", "K/s", "2*(bx mod 3) - 1", "128*r0 + 64*bz"],
)
def test_index_expressions_round_trip(text: str) -> None:
    e = parse_expr_text(text)
    assert parse_expr_text(expr_str(e)) == e


def test_python_index_text() -> None:
    bx, r0, L = symbol("bx"), symbol("r0"), symbol("L")
    assert py_expr(128 * bx + 64 * r0) == "128*bx + 64*r0"
    assert py_expr(128 * sympy.Mod(sympy.floor(bx / 4), 8) + 64 * r0) == "128*((bx // 4 % 8)) + 64*r0"
    assert py_expr(sympy.ceiling(L / 64)) == "T.ceildiv(L, 64)"


@pytest.mark.parametrize("divisor", ["bx + 1", "2*bx + 2", "8", "L"])
def test_python_index_text_of_a_remainder_evaluates_as_the_expression(divisor: str) -> None:
    """A remainder by a sum is printed with the sum in parentheses: `(r0 + bx) % (bx + 1)`, not
    `% bx + 1` (the overlap's wrapped tile index in a causal loop of `bx + 1` iterations)."""
    bx, r0, L = symbol("bx"), symbol("r0"), symbol("L")
    n = sympy.sympify(divisor, locals={"bx": bx, "L": L})
    e = 128 * sympy.Mod(r0 + n - 1, n) + 64 * sympy.Mod(sympy.floor(bx / 4) + r0, n)
    text = py_expr(e)
    for point in [(b, r, l) for b in range(4) for r in range(5) for l in (3, 64)]:
        env = dict(zip(("bx", "r0", "L"), point))
        assert eval(text, {}, env) == int(e.xreplace({bx: point[0], r0: point[1], L: point[2]}))


def test_cli_errors_are_one_line(tmp_path: Path) -> None:
    from conftest import run_tool

    bad = tmp_path / "bad.mlir"
    bad.write_text(ROWS.replace("%ws = tilelang.alloc_shared", "%ws = tilelang.alloc_fragment").replace("[32, 32], f16, shared>", "[32, 32], f16, fragment>"))
    r = run_tool("cleave-opt", str(bad), "-t", "tilelang")
    assert r.returncode == 1
    assert r.stderr.strip().splitlines() == [
        f"{bad}:11:5: error: tilelang.gemm: B operand must be in shared memory, got a fragment buffer"
    ]


def test_explicit_casts_print_as_t_cast() -> None:
    """A widening cast TileLang would not apply by itself (fp16 * fp16 stays fp16) prints as T.Cast;
    one it applies (an fp16 operand of an fp32 op is promoted) prints as nothing."""
    text = """
tilelang.kernel @sq(%x: !tilelang.buffer<[64], f16, global>, %y: !tilelang.buffer<[64], f32, global>) grid (bx) in (1) threads 128 outputs 1 {
  %xs = tilelang.alloc_shared : !tilelang.buffer<[64], f16, shared>
  %f = tilelang.alloc_fragment : !tilelang.buffer<[64], f32, fragment>
  tilelang.copy %x at <[0], [64]> to %xs : !tilelang.buffer<[64], f16, global>, !tilelang.buffer<[64], f16, shared>
  tilelang.parallel (i0) in (64) {
    %a = tilelang.load %xs[i0] : !tilelang.buffer<[64], f16, shared>
    %b = arith.extf %a : f16 to f32
    %c = arith.mulf %b, %b : f32
    %d = arith.mulf %a, %a : f16
    %e = arith.extf %d : f16 to f32
    %g = arith.addf %c, %e : f32
    tilelang.store %g, %f[i0] : f32, !tilelang.buffer<[64], f32, fragment>
  }
  tilelang.copy %f to %y at <[0], [64]> : !tilelang.buffer<[64], f32, fragment>, !tilelang.buffer<[64], f32, global>
}
"""
    kernel = next(op for op in parse_text(text).walk() if isinstance(op, tl.KernelOp))
    assert 'f[i0] = T.Cast("float32", xs[i0]) * T.Cast("float32", xs[i0]) + xs[i0] * xs[i0]' in kernel_source(kernel)
    x = np.array([300.0] * 64)  # 300*300 overflows in the fp16 product, not in the fp32 one
    (y,) = run_kernel(kernel, [x])
    assert np.all(y == np.float32(np.inf))


def test_buffer_effects_are_each_ops_accesses() -> None:
    """What passes reorder by: a clearing gemm does not read its accumulator, an accumulating one
    does; a parallel body's loads read and its stores write; a wait touches no buffer."""
    module = parse_text(Path(__file__).parents[1].joinpath("lit_tests", "dialects", "tilelang", "async_gemm.mlir").read_text())
    kernel = next(op for op in module.walk() if isinstance(op, tl.KernelOp))
    first, second, transposed = [op for op in kernel.walk() if isinstance(op, tl.GemmOp)]
    assert tl.buffer_effects(first) == ({first.a, first.b}, {first.c})  # `clear`
    assert tl.buffer_effects(second) == ({second.a, second.b, second.c}, {second.c})
    assert all(tl.buffer_effects(w) == (set(), set()) for w in kernel.walk() if isinstance(w, tl.WaitGemmOp))
    reads, writes = tl.buffer_effects(kernel)
    assert tl.buffer_effects(transposed) == ({transposed.a, transposed.b, transposed.c}, {transposed.c})  # (A held [K, M])
    assert writes == {first.c, second.c, transposed.c} and reads >= {first.a, first.b, second.a, second.b}
