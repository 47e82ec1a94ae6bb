"""Random transformer-like modules through `cleave_ir.torch.optimize` (`bench/fuzz_torch.py`): it must not
raise, and the stitched module must be as close to the float64 model as eager is on inputs the gate did
not see. The fast tests replay seeds in the tgraph interpreter, one through the real pipeline; `-m slow`
draws 300 modules in the interpreter and 12 through the pipeline (4 minutes on one core)."""

from __future__ import annotations

import sys

import pytest

from conftest import ROOT

torch = pytest.importorskip("torch")
import torch.nn as nn  # noqa: E402

import cleave_ir.torch as ct  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
import fuzz_torch  # noqa: E402

pytestmark = pytest.mark.usefixtures("tf32_allowed")  # fp32 models: TF32 as PyTorch at "high"


def lowered() -> ct.PipelineCompiler:
    return ct.PipelineCompiler(options=("--no-search", "--no-cache", "-j", "1"), gpu=False)


def _assert_ok(out: fuzz_torch.Outcome) -> None:
    assert out.ok, f"seed {out.seed}: {out.message}"
    assert out.replaced > 0, f"seed {out.seed}: no region replaced"


# 0: a region the interpreted graph overflows in f16 (the gate keeps PyTorch's); 11: a dynamic sequence;
# 12 and 45: a dynamic batch of the size of a head count (the test compiler resized the heads too); 24 and
# 45: decode steps against a KV cache; 11 and 120: a rotary `chunk` of a normed q (stitching raised)
@pytest.mark.parametrize("seed", [0, 2, 11, 12, 24, 45, 120])
def test_random_module_equals_the_float64_model(seed: int) -> None:
    _assert_ok(fuzz_torch.check(seed, ct.interpreted_graph))


def test_random_module_through_the_pipeline() -> None:
    _assert_ok(fuzz_torch.check(6, lowered()))  # bf16 attention with q/k norms, float32 softmax: 8 regions


class NormThenRotary(nn.Module):
    """q's per-head RMSNorm, then a rotary embedding whose `chunk` reads the normed q: the region holds
    the norm and the chunk's pieces, not the chunk (a list of views), which kept the norm alive after
    the region replaced it ("Tried to erase Node rms_norm but it still had 1 users")."""

    def __init__(self) -> None:
        super().__init__()
        self.q, self.norm = nn.Linear(32, 32), nn.RMSNorm(16, eps=1e-6)
        self.register_buffer("cos", torch.randn(1, 1, 5, 16))
        self.register_buffer("sin", torch.randn(1, 1, 5, 16))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q = self.norm(self.q(x).view(1, 5, 2, 16).transpose(1, 2))
        a, b = q.chunk(2, dim=-1)
        return (q * self.cos + torch.cat((-b, a), -1) * self.sin).sum(-1)


def test_a_split_of_a_value_computed_in_the_region_is_erased_with_it() -> None:
    torch.manual_seed(0)
    m, x = NormThenRotary(), torch.randn(1, 5, 32)
    m2 = ct.optimize(m, (x,), compiler=ct.interpreted_graph, timer=fuzz_torch.faster, timings=None)
    assert len(m2.cleave_report.replaced()) == 2
    assert not [n for n in m2.graph.nodes if "chunk" in n.name]  # no dead split left behind
    y = torch.rand(1, 5, 32) * 3 - 1
    with torch.no_grad():
        torch.testing.assert_close(m2(y), m(y), rtol=1e-5, atol=1e-5)


@pytest.mark.slow
@pytest.mark.parametrize("start", range(0, 300, 50))
def test_many_random_modules(start: int) -> None:
    failed = [out for seed in range(start, start + 50) if not (out := fuzz_torch.check(seed, ct.interpreted_graph)).ok]
    assert not failed, "\n".join(f"seed {f.seed}: {f.message}" for f in failed)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(1000, 1012))
def test_many_random_modules_through_the_pipeline(seed: int) -> None:
    out = fuzz_torch.check(seed, lowered())
    assert out.ok, f"seed {seed}: {out.message}"
