"""The interpreters' fast paths against their reference paths: same answers, bit for bit.

itgraph: tmap offsets evaluated by compiled exact-integer functions (offset_value) instead of
sympy's `subs`, on every example's scheduled kernels and on a dynamic (masked) kernel.
tilelang: regions run by a cached plan of impl calls and stores without needless broadcasts,
against `run_kernel(reference=True)` (xDSL's region runner, every store broadcast).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Mapping

import numpy as np
import pytest
import sympy
from xdsl.context import Context
from xdsl.parser import Parser

from cleave_ir import interpreter_itgraph
from cleave_ir.dialects import itgraph
from cleave_ir.interpreter import random_inputs
from cleave_ir.dialects import tilelang as tl
from cleave_ir.interpreter_itgraph import offset_value, run_kernel
from cleave_ir.interpreter_tilelang import run_kernel as run_tilelang_kernel
from cleave_ir.passes.lower_tilelang import LowerTileLangPass
from cleave_ir.passes.dynamic_shapes import DynamicShapesPass
from cleave_ir.passes.place_memory import PlaceMemoryPass
from cleave_ir.passes.schedule import SchedulePass, schedule_graph
from cleave_ir.run import make_context, resize_graph
from cleave_ir.shapes import Dim, evaluate, symbol
from conftest import EXAMPLE_IDS, ROOT, load_example

SMALL = {4096: 256, 8192: 256, 14336: 128, 6144: 64, 576: 48, 512: 32, 128: 32, 32: 2}

DECODE = """
tgraph.graph @decode(%q: !tgraph.tensor<[1, 4, 128], f16>, %k: !tgraph.tensor<[1, 1024, 128], f16> {dynamic = array<i64: 1>}, %v: !tgraph.tensor<[1, 1024, 128], f16> {dynamic = array<i64: 1>}) -> !tgraph.tensor<[1, 4, 128], f16> {
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[1, 4, 128], f16>, !tgraph.tensor<[1, 1024, 128], f16> -> !tgraph.tensor<[1, 4, 1024], f16>
  %e = tgraph.exp %s : !tgraph.tensor<[1, 4, 1024], f16>
  %o = tgraph.matmul %e, %v : !tgraph.tensor<[1, 4, 1024], f16>, !tgraph.tensor<[1, 1024, 128], f16> -> !tgraph.tensor<[1, 4, 128], f16>
  %l = tgraph.reduce sum %e dim 2 : !tgraph.tensor<[1, 4, 1024], f16> -> !tgraph.tensor<[1, 4, 1], f16>
  %r = tgraph.div %o, %l : !tgraph.tensor<[1, 4, 128], f16>, !tgraph.tensor<[1, 4, 1], f16> -> !tgraph.tensor<[1, 4, 128], f16>
  tgraph.output %r : !tgraph.tensor<[1, 4, 128], f16>
}
"""


def reference_offset(e: Dim, values: Mapping[str, int]) -> int:
    """The old implementation: sympy substitution, then int()."""
    return int(e.subs({symbol(k): v for k, v in values.items()})) if e.free_symbols else int(e)


def example_kernels(name: str) -> list[itgraph.KernelOp]:
    best, _ = schedule_graph(resize_graph(load_example(name), SMALL), top_k=2)
    assert best
    return [s.kernel for s in best]


def dynamic_kernel() -> itgraph.KernelOp:
    module = Parser(make_context(), DECODE).parse_module()
    for p in (SchedulePass(top_k=1), PlaceMemoryPass(), DynamicShapesPass()):
        p.apply(Context(), module)
    (kernel,) = [k for k in module.walk() if isinstance(k, itgraph.KernelOp)]
    assert any(isinstance(op, itgraph.MaskOp) for op in kernel.walk())
    return kernel


def loop_points(op: itgraph.LoadOp | itgraph.StoreOp | itgraph.MaskOp, bindings: Mapping[str, int]) -> list[dict[str, int]]:
    """Every combination of the enclosing loops' values (first, second and last of each loop)."""
    loops = itgraph.enclosing_loops(op)
    ranges = []
    for _, extent in loops:
        n = evaluate(extent, bindings)
        ranges.append(sorted({0, min(1, n - 1), n - 1}))
    return [{**bindings, **dict(zip([v for v, _ in loops], p))} for p in itertools.product(*ranges)]


@pytest.mark.parametrize("name", EXAMPLE_IDS)
def test_offsets_equal_sympy_on_example_kernels(name: str) -> None:
    n = 0
    for kernel in example_kernels(name):
        for op in kernel.walk():
            if isinstance(op, (itgraph.LoadOp, itgraph.StoreOp)):
                for values in loop_points(op, {}):
                    for off in op.tmap.offset_exprs:
                        assert offset_value(off, values) == reference_offset(off, values), (str(op), values)
                        n += 1
    assert n > 0


def test_offsets_equal_sympy_on_a_dynamic_kernel() -> None:
    kernel = dynamic_kernel()
    bindings = {"k_d1": 1024}
    for op in kernel.walk():
        exprs = op.tmap.offset_exprs if isinstance(op, (itgraph.LoadOp, itgraph.StoreOp)) else ()
        if isinstance(op, itgraph.MaskOp):
            exprs = (op.offset_expr,)
        for values in loop_points(op, bindings) if exprs else ():
            for off in exprs:
                assert offset_value(off, values) == reference_offset(off, values)


def test_offsets_equal_sympy_on_floor_ceiling_mod_and_quotients() -> None:
    m, n, k, s = (symbol(x) for x in ("m", "n", "K", "s"))
    exprs = [
        m * 128 + n,
        sympy.expand(m * k / s),
        sympy.floor(m * k / (3 * s)),
        sympy.ceiling((m + 1) * 7 / s),
        sympy.Mod(5 * m + n, s),
        sympy.floor(m / 4) * 64 + sympy.Mod(n, 4) * 16,
        sympy.Rational(7, 2) * m - n,  # truncated toward zero, as int() of a sympy Rational
        -sympy.Rational(5, 3) * m + n,
        sympy.expand((m + 1) * (k / s) + k / (s * s)),
    ]
    rng = random.Random(0)
    for e in exprs:
        for _ in range(60):
            values = {"m": rng.randint(0, 40), "n": rng.randint(0, 40), "K": rng.randint(1, 512), "s": rng.randint(1, 9)}
            assert offset_value(e, values) == reference_offset(e, values), (e, values)


def test_an_unbound_offset_symbol_is_an_interpretation_error() -> None:
    with pytest.raises(interpreter_itgraph.InterpretationError, match="unbound symbol m"):
        offset_value(symbol("m") * 64, {})


def _inputs(xs: list[np.ndarray], dist: str, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    if dist == "normal":
        return xs
    if dist == "large":
        return [rng.uniform(-300.0, 300.0, x.shape) for x in xs]
    return [rng.integers(-3, 4, x.shape).astype(np.float64) for x in xs]  # ties and exact zeros


@pytest.mark.parametrize("name", ["mha", "gqa_decode", "matmul_rowsum", "swiglu"])
def test_run_kernel_is_bit_identical_to_the_sympy_path(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    graph = resize_graph(load_example(name), SMALL)
    for kernel in example_kernels(name):
        for seed, dist in enumerate(["normal", "large", "small_ints"]):
            xs = _inputs(random_inputs(graph, seed), dist, seed)
            fast = run_kernel(kernel, xs)
            with monkeypatch.context() as m:
                m.setattr(interpreter_itgraph, "offset_value", reference_offset)
                slow = run_kernel(kernel, xs)
            for f, r in zip(fast, slow):
                np.testing.assert_array_equal(f, r)


def test_dynamic_run_kernel_is_bit_identical_to_the_sympy_path(monkeypatch: pytest.MonkeyPatch) -> None:
    kernel = dynamic_kernel()
    rng = np.random.default_rng(1)
    for length in (1024, 333, 1):
        xs = [rng.standard_normal((1, 4, 128)), rng.standard_normal((1, length, 128)), rng.standard_normal((1, length, 128))]
        fast = run_kernel(kernel, xs)
        with monkeypatch.context() as m:
            m.setattr(interpreter_itgraph, "offset_value", reference_offset)
            slow = run_kernel(kernel, xs)
        np.testing.assert_array_equal(fast[0], slow[0])
        assert not np.isnan(fast[0]).any()


# lit inputs: (file, passes before cleave-lower-tilelang, kernels to run, sizes of their dynamic dims)
TILELANG_CASES = {
    "lower_tilelang_run": (lambda: [SchedulePass(top_k=1), PlaceMemoryPass()], [0], [0]),
    "lower_tilelang_dynamic": (lambda: [SchedulePass(top_k=1), PlaceMemoryPass(), DynamicShapesPass()], [0], [1, 33]),
    "lower_tilelang_one_row": (lambda: [], [0, 2], [0]),
}


@pytest.mark.parametrize("name", list(TILELANG_CASES))
def test_tilelang_run_kernel_is_bit_identical_to_the_reference_path(name: str) -> None:
    passes, which, sizes = TILELANG_CASES[name]
    module = Parser(make_context(), (ROOT / "lit_tests" / "passes" / f"{name}.mlir").read_text()).parse_module()
    for p in [*passes(), LowerTileLangPass()]:
        p.apply(Context(), module)
    kernels = [k for k in module.walk() if isinstance(k, tl.KernelOp)]
    for kernel in (kernels[i] for i in which):
        for size in sizes:
            b = {s.name: size for a in kernel.inputs for d in tl.buffer_type(a).shape for s in d.free_symbols}
            shapes = [[evaluate(d, b) for d in tl.buffer_type(a).shape] for a in kernel.inputs]
            rng = np.random.default_rng(size)
            for xs in (
                [rng.standard_normal(sh) for sh in shapes],
                [rng.uniform(-60.0, 60.0, sh) for sh in shapes],  # fp16 overflows in products
                [rng.integers(-2, 3, sh).astype(np.float64) for sh in shapes],
            ):
                fast = run_tilelang_kernel(kernel, xs)
                slow = run_tilelang_kernel(kernel, xs, reference=True)
                for f, r in zip(fast, slow):
                    np.testing.assert_array_equal(f, r)
