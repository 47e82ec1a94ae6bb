"""Gate timings remembered across `optimize` runs (`cleave_ir.torch.timings`): a warm run re-checks, does not re-time."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

import cleave_ir.torch as ct  # noqa: E402
from cleave_ir.torch.timings import FILE, TimingStore  # noqa: E402
from cleave_ir.torch.timings import store_for as _timing_store  # noqa: E402

import torch.nn as nn  # noqa: E402

pytestmark = pytest.mark.usefixtures("tf32_allowed")  # fp32 models: TF32 as PyTorch at "high"


class Counting:
    """A fake timer: ours `ours` us, PyTorch 1 us; counts its calls."""

    def __init__(self, ours: float = 0.5) -> None:
        self.ours, self.calls = ours, 0

    def __call__(self, fn, inputs, which, region):  # type: ignore[no-untyped-def]
        self.calls += 1
        return self.ours if which == "cleave" else 1.0


class NormQKV(nn.Module):
    """An RMSNorm and the q, k, v projections of its output: four regions and their projection group."""

    def __init__(self) -> None:
        super().__init__()
        self.q, self.k, self.v = nn.Linear(32, 32, bias=False), nn.Linear(32, 16, bias=False), nn.Linear(32, 16, bias=False)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        h = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)
        return self.q(h), self.k(h), self.v(h)


@pytest.fixture(scope="module")
def layer():  # type: ignore[no-untyped-def]
    torch.manual_seed(0)
    return NormQKV().eval(), (torch.randn(1, 8, 32),)


def test_a_second_run_reuses_the_timings_and_still_checks(layer, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    m, xs = layer
    store = TimingStore(tmp_path)
    first = Counting()
    m1 = ct.optimize(m, xs, compiler=ct.interpreted_graph, timer=first, timings=store)
    timed = [r for r in m1.cleave_report.rows if r.pytorch_us is not None]
    assert timed and first.calls == 2 * len(timed)
    assert len(list((tmp_path / "entries").glob(f"*/{FILE}"))) == len(timed)
    again = Counting(ours=5.0)  # would refuse every region if it were asked
    m2 = ct.optimize(m, xs, compiler=ct.interpreted_graph, timer=again, timings=store)
    assert again.calls == 0
    rows = {r.region: r for r in m2.cleave_report.rows}
    for r in timed:
        got = rows[r.region]
        assert (got.decision, got.pytorch_us, got.cleave_us) == (r.decision, r.pytorch_us, r.cleave_us)
        assert got.error is not None and got.reason.endswith("(timings of an earlier run on this device: `timings=None` times again)")
    with torch.no_grad():
        for got, want in zip(m2(*xs), m(*xs), strict=True):
            torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)
    # without the store every region is timed again
    fresh = Counting()
    ct.optimize(m, xs, compiler=ct.interpreted_graph, timer=fresh, timings=None)
    assert fresh.calls == first.calls


def test_stored_timings_are_judged_with_the_runs_own_margin(layer, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    m, xs = layer
    store = TimingStore(tmp_path)
    ct.optimize(m, xs, compiler=ct.interpreted_graph, timer=Counting(ours=0.98), timings=store)  # 1.02x: under 3%
    strict = ct.optimize(m, xs, compiler=ct.interpreted_graph, timer=Counting(), timings=store)
    assert not strict.cleave_report.replaced()
    lenient = ct.optimize(m, xs, compiler=ct.interpreted_graph, timer=Counting(), timings=store, margin=0.0)
    assert lenient.cleave_report.replaced()


def test_a_wrong_kernel_is_refused_whatever_was_stored(layer, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    m, xs = layer
    store = TimingStore(tmp_path)
    ct.optimize(m, xs, compiler=ct.interpreted_graph, timer=Counting(), timings=store)

    def wrong(graph):  # type: ignore[no-untyped-def]
        kernel = ct.interpreted_graph(graph)

        def run(*a):  # type: ignore[no-untyped-def]
            out = kernel(*a)
            return [o * 1.5 for o in out] if isinstance(out, list) else out * 1.5

        return run

    m2 = ct.optimize(m, xs, compiler=wrong, timer=Counting(), timings=store)
    assert not m2.cleave_report.replaced() and all(r.reason.startswith("wrong") for r in m2.cleave_report.rows if r.error is not None)


def test_other_inputs_or_a_corrupt_entry_are_timed_again(layer, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    m, xs = layer
    store = TimingStore(tmp_path)
    first = Counting()
    ct.optimize(m, xs, compiler=ct.interpreted_graph, timer=first, timings=store)
    longer = Counting()
    ct.optimize(m, (torch.randn(1, 16, 32),), compiler=ct.interpreted_graph, timer=longer, timings=store)
    assert longer.calls == first.calls  # other shapes: other keys
    for f in (tmp_path / "entries").glob(f"*/{FILE}"):
        f.write_text('{"pytorch": 1.0, "cleave": 0.1}')  # edited behind the manifest's hash
    again = Counting()
    ct.optimize(m, xs, compiler=ct.interpreted_graph, timer=again, timings=store)
    assert again.calls == first.calls


def test_auto_remembers_only_the_default_compiler_and_timer(tmp_path: Path) -> None:
    compiler = ct.PipelineCompiler(options=("--cache-dir", str(tmp_path)))
    store = _timing_store("auto", compiler, ct.default_timer)
    assert isinstance(store, TimingStore) and store.root == tmp_path
    assert _timing_store("auto", compiler, Counting()) is None
    assert _timing_store("auto", ct.interpreted_graph, ct.default_timer) is None
    assert _timing_store("auto", ct.PipelineCompiler(options=("--no-cache",)), ct.default_timer) is None
    assert _timing_store(None, compiler, ct.default_timer) is None
    with pytest.raises(ValueError, match="timings: a TimingStore"):
        _timing_store("yes", compiler, ct.default_timer)
