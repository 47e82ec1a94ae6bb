"""cleave-emulate-exp2: the FMA form of 2^x is within f16's precision over the softmax's range; the
rewritten FlashAttention kernel computes its graph on inputs of several distributions (the interpreter
runs the FMA form bit for bit in float32); the check is not vacuous (a wrong cubic fails it); only the
score tile's exp2 is rewritten, and the emitted TileLang lowers for sm_90a with the choice made per
unrolled register (no divergent branch)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.context import Context
from xdsl.dialects import math
from xdsl.dialects.builtin import ModuleOp

from cleave_ir.dialects import tgraph
from cleave_ir.dialects import tilelang as tl
from cleave_ir.interpreter import input_shapes, max_relative_error, run_graph
from cleave_ir.interpreter_tilelang import run_kernels
from cleave_ir.passes.emulate_exp2 import EmulateExp2Pass
from cleave_ir.passes.overlap_gemms import OverlapGemmsPass
from cleave_ir.run import load_module

INPUT = Path(__file__).parents[1] / "lit_tests" / "passes" / "Inputs" / "attention_kv_loop_128.mlir"
FP16_TOLERANCE = 2e-2
DISTRIBUTIONS = {
    "normal": lambda rng, s: rng.standard_normal(s),
    "uniform": lambda rng, s: rng.uniform(-2.0, 2.0, s),
    "peaked": lambda rng, s: rng.standard_normal(s) * 3.0,  # logits in the tens: the max matters
    "sparse": lambda rng, s: rng.standard_normal(s) * (rng.uniform(size=s) < 0.1),
}


def test_fma_form_is_within_half_an_f16_ulp_of_2_to_the_x() -> None:
    x = np.linspace(-126.0, 0.0, 2_000_001, dtype=np.float32)
    got = tl.Exp2SplitOp.exp2_fma(x).astype(np.float64)
    want = np.exp2(x.astype(np.float64))
    assert np.max(np.abs(got / want - 1)) < 2e-4
    # below 2^-126 the exponent bits would wrap: clamped (a masked -inf score included)
    low = tl.Exp2SplitOp.exp2_fma(np.array([-126.5, -1000.0, -np.inf], dtype=np.float32))
    assert np.allclose(low, 2.0**-126, rtol=2e-4, atol=0)


@settings(max_examples=200, deadline=None)
@given(st.floats(min_value=-126.0, max_value=60.0, width=32))
def test_fma_form_of_any_float_in_range(x: float) -> None:
    got = float(tl.Exp2SplitOp.exp2_fma(np.float32(x)))
    assert abs(got / 2.0**x - 1) < 2e-4


def rewritten(every: int, overlap: bool = True) -> ModuleOp:
    module = load_module(str(INPUT))
    if overlap:
        OverlapGemmsPass().apply(Context(), module)
    EmulateExp2Pass(every=every).apply(Context(), module)
    module.verify()
    return module


def error(module: ModuleOp, distribution: str, seed: int = 0) -> float:
    graph = next(g for g in module.walk() if isinstance(g, tgraph.GraphOp))
    kernels = [k for k in module.walk() if isinstance(k, tl.KernelOp)]
    rng = np.random.default_rng(seed)
    xs = [DISTRIBUTIONS[distribution](rng, s).astype(np.float16).astype(np.float64) for s in input_shapes(graph)]
    return max(max_relative_error(r, o) for r, o in zip(run_graph(graph, xs), run_kernels(kernels, xs)))


@pytest.mark.parametrize("every", [1, 8])
@pytest.mark.parametrize("distribution", sorted(DISTRIBUTIONS))
def test_rewritten_attention_computes_its_graph(distribution: str, every: int) -> None:
    module = rewritten(every)
    (split,) = [op for op in module.walk() if isinstance(op, tl.Exp2SplitOp)]
    assert split.every_count == every and split.column_var == "i1"
    # the row exp2 (alpha = 2^(m_old - m_new), over 128 rows) stays on the MUFU
    assert sum(isinstance(op, math.Exp2Op) for op in module.walk()) == 1
    assert error(module, distribution, seed=len(distribution) + every) < FP16_TOLERANCE


def test_a_wrong_cubic_fails_the_check(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tl, "EXP2_CUBIC", (1.0, 1.0, 0.0, 0.0))  # 1 + f: 2^(-1/2) off by 29%
    assert error(rewritten(1), "normal") > FP16_TOLERANCE


def test_loops_outside_the_measured_form_keep_exp2(monkeypatch: pytest.MonkeyPatch) -> None:
    """Synchronous gemms (no overlap), a single gemm, and a head dim over `MAX_HEAD_DIM` keep the MUFU."""
    from cleave_ir.passes import emulate_exp2

    assert not any(isinstance(op, tl.Exp2SplitOp) for op in rewritten(8, overlap=False).walk())
    module = load_module(str(INPUT))
    OverlapGemmsPass().apply(Context(), module)
    loop = next(op for op in module.walk() if isinstance(op, tl.PipelinedOp))
    for gemm in [op for op in loop.walk() if isinstance(op, tl.GemmOp)][1:]:
        gemm.detach()  # one gemm left: not a FlashAttention loop
    EmulateExp2Pass().apply(Context(), module)
    assert not any(isinstance(op, tl.Exp2SplitOp) for op in module.walk())
    assert any(isinstance(op, tl.Exp2SplitOp) for op in rewritten(8).walk())
    monkeypatch.setattr(emulate_exp2, "MAX_HEAD_DIM", 63)  # the input's head dim is 64
    assert not any(isinstance(op, tl.Exp2SplitOp) for op in rewritten(8).walk())


def test_emitted_split_lowers_for_sm90a_without_divergence(tmp_path: Path) -> None:
    """TileLang binds the FMA form's values and picks per unrolled register: the CUDA source tests a
    constant of the unrolled index, never the thread index, around the exp2."""
    from cleave_ir.tilelang_check import lower_all
    from cleave_ir.tilelang_emitter import module_source

    path = tmp_path / "k.py"
    path.write_text(module_source(rewritten(4)))
    (cuda,) = lower_all(path).values()
    lines = cuda.splitlines()
    shift = next(i for i, line in enumerate(lines) if " << " in line)  # the FMA form's exponent bits
    branch = next(line for line in reversed(lines[:shift]) if "if (" in line)
    assert "exp2f(" in cuda and "threadIdx" not in branch and "i_" in branch, branch
