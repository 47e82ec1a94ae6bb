"""`cleave compile` and `cleave_ir.runtime` without a GPU: parallel lowering and compilation machinery,
timing helpers on CPU tensors, the GPU phase's use of the cache (with the GPU parts replaced)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from cleave_ir import runtime
from cleave_ir.compile import main as cleave_main
from cleave_ir.tilelang_check import lower_all

ROWSUM = """tgraph.graph @rowsum(%a: !tgraph.tensor<[64, 32], f16>, %b: !tgraph.tensor<[32, 48], f16>) -> !tgraph.tensor<[64, 1], f16> {
  %y = tgraph.matmul %a, %b : !tgraph.tensor<[64, 32], f16>, !tgraph.tensor<[32, 48], f16> -> !tgraph.tensor<[64, 48], f16>
  %r = tgraph.reduce sum %y dim 1 : !tgraph.tensor<[64, 48], f16> -> !tgraph.tensor<[64, 1], f16>
  tgraph.output %r : !tgraph.tensor<[64, 1], f16>
}
"""


@pytest.fixture(scope="module")
def emitted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """rowsum.mlir, its kernel module k.py and a cache holding its entry."""
    import os

    tmp = tmp_path_factory.mktemp("emitted")
    (tmp / "rowsum.mlir").write_text(ROWSUM)
    cwd = os.getcwd()
    os.chdir(tmp)  # TileLang lowering runs outside the repository
    try:
        args = ["compile", str(tmp / "rowsum.mlir"), "-o", str(tmp / "k.py"), "--cache-dir", str(tmp / "cache"), "--keep", "2", "--split-counts", "2,4"]
        assert cleave_main(args) == 0
    finally:
        os.chdir(cwd)
    return tmp


def test_parallel_lowering_equals_serial(emitted: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(emitted)
    serial = lower_all(emitted / "k.py", jobs=1)
    parallel = lower_all(emitted / "k.py", jobs=3)
    kernels = (emitted / "k.py").read_text().count("@T.prim_func")  # which candidates are kept is the cost model's call
    assert len(serial) == kernels >= 2 and list(parallel) == list(serial) and parallel == serial
    assert all("__global__" in src for src in serial.values())


def test_compile_candidates_is_parallel_deterministic_and_reports_failures(monkeypatch: pytest.MonkeyPatch) -> None:
    names = ["k3", "k1", "bad", "k2", "k1"]
    delays = {"k3": 0.6, "k1": 0.0, "bad": 0.2, "k2": 0.4}
    threads: set[str] = set()

    def fake_compile(module, name, *, raw=False, target="cuda"):  # type: ignore[no-untyped-def]
        threads.add(threading.current_thread().name)
        time.sleep(delays[name])
        if name == "bad":
            raise RuntimeError("nvcc failed\n  details\nptxas error: too many resources requested")
        return ("compiled", name, raw)

    monkeypatch.setattr(runtime, "compile_kernel", fake_compile)
    module = SimpleNamespace(_compiled={})
    seconds: dict[str, float] = {}
    t0 = time.perf_counter()
    out = runtime.compile_candidates(module, names, jobs=4, seconds=seconds)
    assert time.perf_counter() - t0 < 1.0  # overlapped: 0.6 s in parallel, 1.2 s serially
    assert list(out) == ["k3", "k1", "bad", "k2"]
    assert out["k3"] == ("compiled", "k3", False) and out["k2"] == ("compiled", "k2", False)
    assert isinstance(out["bad"], RuntimeError) and runtime.one_line(out["bad"]) == "ptxas error: too many resources requested"
    assert set(module._compiled) == {("k3", ()), ("k1", ()), ("k2", ())} and len(threads) > 1
    assert seconds["k3"] >= 0.6 and set(seconds) == {"k3", "k1", "bad", "k2"}
    raw = runtime.compile_candidates(module, ["k2"], jobs=1, raw=True)
    assert raw == {"k2": ("compiled", "k2", True)} and module._compiled[("k2", ())] == ("compiled", "k2", False)
    assert runtime.compile_candidates(module, names, jobs=1).keys() == out.keys()


def test_runtime_imports_without_torch_and_tilelang() -> None:
    code = "import sys; sys.modules['torch'] = None; sys.modules['tilelang'] = None; import cleave_ir.runtime, cleave_ir.cache, cleave_ir.compile; print('ok')"
    p = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, cwd="/")
    assert p.returncode == 0 and p.stdout.strip() == "ok", p.stderr


def test_rotating_copies() -> None:
    import torch

    small = [torch.ones(1024, dtype=torch.float16), torch.ones(1024, dtype=torch.float16)]  # 4 KiB
    sets = runtime.rotating_copies(small, l2_bytes=16 << 10)
    assert len(sets) == 12 and sets[0][0] is small[0]  # 12 x 4 KiB >= 3 x 16 KiB
    assert all(s[0] is not sets[0][0] and torch.equal(s[0], small[0]) for s in sets[1:])
    assert len({s[1].data_ptr() for s in sets}) == 12
    assert len(runtime.rotating_copies(small, l2_bytes=1 << 10)) == 1  # already > 3x L2
    assert len(runtime.rotating_copies(small, l2_bytes=16 << 10, budget_bytes=20 << 10)) == 5
    assert len(runtime.rotating_copies(small, l2_bytes=1 << 30, max_copies=7)) == 7


def test_check() -> None:
    import torch

    ref = torch.tensor([[1.0, -4.0], [2.0, 0.5]], dtype=torch.float64)
    assert runtime.check(ref.half(), ref) == 0.0
    assert runtime.check((ref + 0.04).float(), ref) == pytest.approx(0.01)
    assert runtime.check(ref.reshape(4, 1).float(), ref) == 0.0
    poisoned = ref.clone()
    poisoned[1, 1] = float("nan")
    assert runtime.check(poisoned, ref) == float("inf")
    meta = {"inputs": 1, "shapes": [[2, 2], [3, 1]], "dtypes": ["float16", "float32"]}
    (out,) = runtime.poisoned_outputs(meta, device="cpu")
    assert out.shape == (3, 1) and out.dtype == torch.float32 and bool(out.isnan().all())
    assert runtime.check(out, torch.ones(3, 1, dtype=torch.float64)) == float("inf")


def test_run_chain_reads_intermediates_and_carries_dynamic_sizes(tmp_path: Path) -> None:
    """A candidate cut into five kernels whose later kernels read earlier results by name (`t_c`,
    not inputs of the first kernel), run by `run_chain` at T=17 (emitted at T=64): the buffers take
    T from the inputs; a kernel left static is reported by name instead of reading out of bounds."""
    import copy

    import torch

    from cleave_ir.diagnostics import CleaveError
    from cleave_ir.passes.dynamic_shapes import at_sizes
    from tests.test_dynamic import emitted_cut_chain

    mod, graph, launch = emitted_cut_chain(tmp_path / "k.py")
    (_, names, _), = mod.CANDIDATES
    assert any(n not in mod.KERNELS[names[0]]["input_names"] for k in names for n in mod.KERNELS[k]["passthrough"])
    g = at_sizes(graph, {"x_d0": 17})
    xs = [(torch.randn(s, generator=torch.Generator().manual_seed(0)) * 0.5).half() for s in ([17, 256], [256, 512])]
    (got,) = runtime.run_chain(mod.KERNELS, names, xs, launch)
    assert got.shape == (17, 512) and runtime.check(got, runtime.torch_reference(g, xs)[0]) < runtime.TOLERANCE
    static = copy.deepcopy(mod.KERNELS)
    static[names[2]]["shapes"] = [tuple(64 if d == "x_d0" else d for d in s) for s in static[names[2]]["shapes"]]
    with pytest.raises(CleaveError, match=rf"kernel {names[2]}: %\w+ has shape \[17, \d+\], the kernel takes \[64, \d+\]"):
        runtime.run_chain(static, names, xs, launch)
    unknown = copy.deepcopy(mod.KERNELS)
    unknown[names[3]]["passthrough"] = ["t_later"]
    with pytest.raises(CleaveError, match=f"kernel {names[3]} reads t_later, which no earlier kernel of its chain computes"):
        runtime.run_chain(unknown, names, xs, launch)


def test_torch_reference_matches_numpy_interpreter() -> None:
    import numpy as np
    import torch

    from cleave_ir.diagnostics import parse_module_text
    from cleave_ir.interpreter import run_graph
    from cleave_ir.run import make_context

    graph = parse_module_text(make_context(), ROWSUM, "rowsum").body.block.first_op
    a, b = np.random.default_rng(0).standard_normal((64, 32)), np.random.default_rng(1).standard_normal((32, 48))
    (got,) = runtime.torch_reference(graph, [torch.tensor(a), torch.tensor(b)])
    assert got.dtype == torch.float64 and np.allclose(got.numpy(), (a @ b).sum(1, keepdims=True))
    (ref,) = run_graph(graph, [a, b])
    assert np.allclose(got.numpy(), ref)


def test_gpu_phase_records_and_reuses_measurements(emitted: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """With the GPU parts replaced: --gpu measures once, records the winner, reuses it; --retune measures again."""
    import torch

    monkeypatch.chdir(emitted)
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(emitted / "unused"))
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda *a: "Test GPU")
    calls: list[str] = []

    def fake_measure(path, graph, out, *, jobs=None):  # type: ignore[no-untyped-def]
        calls.append("measure")
        m = runtime.Measurement("Test GPU", compile_s=1.0)
        m.rows = [runtime.CandidateResult(0, "a", ["a_k0"], 0.05, 0.5, 3e-4, 2.5, "graph", 12), runtime.CandidateResult(1, "b", ["b_k0"], 0.06, 0.5, 1e-4, 1.5, "graph", 12)]
        m.winner = 1
        runtime.print_table(m, out)
        return m

    def fake_verify(path, graph, candidate, *, jobs=None):  # type: ignore[no-untyped-def]
        calls.append(f"verify {candidate}")
        return 2e-4

    monkeypatch.setattr(runtime, "measure", fake_measure)
    monkeypatch.setattr(runtime, "verify", fake_verify)
    args = ["compile", "rowsum.mlir", "-o", "k2.py", "--cache-dir", "cache", "--keep", "2", "--split-counts", "2,4", "--gpu", "--tune-budget", "0"]
    capsys.readouterr()
    assert cleave_main(args) == 0
    out = capsys.readouterr().out
    assert calls == ["measure"] and "winner: candidate #1, 1.50 us" in out and "recorded the measurements" in out
    assert f"tilelang kernel cache: {emitted / 'cache' / 'tilelang'}" in out
    (entry,) = (emitted / "cache" / "entries").iterdir()
    assert json.loads((entry / "gpu.json").read_text())["winner"] == 1
    assert cleave_main(args) == 0
    out = capsys.readouterr().out
    assert calls == ["measure", "verify 1"] and "compile+check+time: cache hit" in out and "winner: candidate #1" in out
    assert cleave_main([*args, "--retune"]) == 0
    assert calls == ["measure", "verify 1", "measure"]
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda *a: "Other GPU")
    assert cleave_main(args) == 0
    assert calls[-1] == "measure" and "recorded on Test GPU, not Other GPU" in capsys.readouterr().out


def test_registers_rank_spilling_candidates_last(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """`cleave compile --registers` compiles each kept kernel with nvcc (ptxas's report; faked here)
    and ranks a candidate with a spilling kernel after the others: the emitted module's first
    candidate, what `run()` uses without a GPU, does not spill."""
    import cleave_ir.tilelang_check as tc

    (tmp_path / "rowsum.mlir").write_text(ROWSUM)
    monkeypatch.chdir(tmp_path)
    args = ["compile", "rowsum.mlir", "-o", "k.py", "--no-cache", "--keep", "2", "--split-counts", "2,4"]
    assert cleave_main(args) == 0
    first = (tmp_path / "k.py").read_text().split("CANDIDATES = ")[1].splitlines()[0]
    ranked = eval(first)  # noqa: S307 - [(us, kernels, graph), ...] as the emitter writes it
    assert len(ranked) == 2
    spilling = set(ranked[0][1])

    def fake_usage(source: str, arch: str = "sm_90a", fast_math: bool = True) -> tc.RegisterUsage:
        name = source.split("__global__ void ")[1].split("(")[0].split()[-1].removesuffix("_kernel")
        return tc.RegisterUsage(255, 96, 96, 96) if name in spilling else tc.RegisterUsage(64, 0, 0, 0)

    monkeypatch.setattr(tc, "register_usage", fake_usage)
    capsys.readouterr()
    assert cleave_main([*args, "--registers"]) == 0
    out = capsys.readouterr()
    report = out.out + out.err
    assert "spills 96 B stored / 96 B loaded a thread" in report, report
    again = eval((tmp_path / "k.py").read_text().split("CANDIDATES = ")[1].splitlines()[0])  # noqa: S307
    assert [r[2] for r in again] == [ranked[1][2], ranked[0][2]]
