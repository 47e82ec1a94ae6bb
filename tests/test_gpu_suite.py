"""bench/gpu_suite.py without a GPU: rows, `prepare` on a scaled-down row, `chart`, and `run`'s refusal."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
import time
from pathlib import Path

import pytest

from cleave_ir.tilelang_check import lower_all

SUITE = Path(__file__).resolve().parent.parent / "bench" / "gpu_suite.py"


@pytest.fixture(scope="module")
def suite():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("gpu_suite", SUITE)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["gpu_suite"] = mod
    spec.loader.exec_module(mod)
    return mod


def _row(suite, name: str):  # type: ignore[no-untyped-def]
    return next(r for r in suite.rows() if r.name == name)


def test_rows_cover_the_benchmark_table(suite) -> None:  # type: ignore[no-untyped-def]
    names = {r.name for r in suite.rows()}
    assert len(names) == 28 and set(suite.ABLATION_ROWS) <= names
    costs = {}
    for name in ("mha_b4_h32_s2048_d128", "mha_b1_h32_s8192_d64", "gqa_decode_b8_l8192", "swiglu_t4096", "matmul_4096"):
        graph = suite.parse_graph(suite.graph_text(_row(suite, name)))
        costs[name] = suite.graph_costs(graph)
        if name == "mha_b1_h32_s8192_d64":
            assert suite._scale_of(graph) == 0.125
    assert costs["mha_b4_h32_s2048_d128"][0][0] == [4, 32, 2048, 128]
    assert costs["mha_b1_h32_s8192_d64"][0][0] == [1, 32, 8192, 64]
    assert costs["gqa_decode_b8_l8192"][0] == [[8, 8, 4, 128], [8, 8, 8192, 128], [8, 8, 8192, 128]]
    assert costs["swiglu_t4096"][1] == [4096, 14336] and costs["swiglu_t4096"][2] == 2 * 2 * 4096 * 4096 * 14336
    assert costs["matmul_4096"][2] == 2 * 4096**3 and costs["matmul_4096"][3] == 3 * 4096 * 4096 * 2


@pytest.fixture(scope="module")
def prepared(suite, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:  # type: ignore[no-untyped-def]
    """`prepare` on matmul_rowsum S=1024 scaled down to 256, one candidate kept."""
    out = tmp_path_factory.mktemp("suite")
    return out, suite.prepare(out, only=[_row(suite, "matmul_rowsum_s1024")], scale=True, keep=1, top_k=1)


def test_bench_readme_lists_every_row(suite) -> None:  # type: ignore[no-untyped-def]
    """bench/README.md's table of cases names every row of the suite (a row's name, or its prefix
    followed by its `_t`/`_s`/`_b` suffix written alone)."""
    text = (SUITE.parent / "README.md").read_text()
    named = set(re.findall(r"`([a-z0-9_]+)`", text))
    for row in suite.rows():
        suffix = row.name.removeprefix(row.example)
        assert row.name in named or suffix in named, f"{row.name} missing from bench/README.md"


def test_prepare_writes_manifest_and_a_module_that_lowers(suite, prepared, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    out, manifest = prepared
    entry = manifest["entries"]["matmul_rowsum_s1024__full"]
    assert entry["status"] == "ok" and entry["inputs"] == [[256, 128], [128, 256]] and entry["candidates"]
    assert entry["flops"] == 2 * 256 * 128 * 256 and entry["metric"] in ("TFLOP/s", "TB/s")
    assert json.loads((out / "manifest.json").read_text())["entries"].keys() == manifest["entries"].keys()
    monkeypatch.chdir(tmp_path)  # TileLang runs outside the repository
    sources = lower_all(out / entry["module"])
    assert set(sources) == {k for c in entry["candidates"] for k in c["kernels"]}
    again = suite.prepare(out, only=[_row(suite, "matmul_rowsum_s1024")], scale=True, keep=1, top_k=1)  # resumes: nothing re-run
    assert again["entries"]["matmul_rowsum_s1024__full"]["pipeline_s"] == entry["pipeline_s"]


def test_prepare_records_a_kernel_over_the_shared_memory(suite, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """`prepare --lower` records a kernel that TileLang lowers but the GPU cannot launch (more shared
    memory than an sm_90 block has), as `cleave compile` drops it: vit_layernorm_qkv's one-kernel
    candidate (291 KiB) was recorded "ok" and then failed its launch in `run`."""
    pytest.importorskip("tilelang")
    from tests.test_tilelang import _SHARED_PROBE

    path = tmp_path / "probe.py"
    path.write_text(_SHARED_PROBE)
    got = suite.lower_kernels(path)
    assert got["fits"] == "ok"
    assert "too_big needs 256.0 KiB of shared memory" in got["too_big"]


def test_a_failing_pipeline_is_recorded(suite, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    text = """tgraph.graph @g(%a: !tgraph.tensor<[4, 8], f32>, %b: !tgraph.tensor<[4, 8], f32>, %c: !tgraph.tensor<[4, 8], f32>, %d: !tgraph.tensor<[4, 8], f32>) -> !tgraph.tensor<[8, 16], f32> {
  %ab = tgraph.concat %a, %b dim 1 : !tgraph.tensor<[4, 8], f32>, !tgraph.tensor<[4, 8], f32> -> !tgraph.tensor<[4, 16], f32>
  %cd = tgraph.concat %c, %d dim 1 : !tgraph.tensor<[4, 8], f32>, !tgraph.tensor<[4, 8], f32> -> !tgraph.tensor<[4, 16], f32>
  %x = tgraph.concat %ab, %cd dim 0 : !tgraph.tensor<[4, 16], f32>, !tgraph.tensor<[4, 16], f32> -> !tgraph.tensor<[8, 16], f32>
  %y = tgraph.exp %x : !tgraph.tensor<[8, 16], f32>
  tgraph.output %y : !tgraph.tensor<[8, 16], f32>
}"""  # concats along two dims: the scheduler cannot take them
    entry = suite.prepare_one("transposed", "no-search", text, str(tmp_path), 3, 2)
    assert entry["status"] == "failed" and "not supported by the scheduler" in entry["error"] and "\n" not in entry["error"]


def _synthetic_results() -> dict:
    def row(name: str, variant: str, us: float | None, base: float) -> dict:
        r = {"row": name, "variant": variant, "metric": "TB/s", "status": "ok" if us else "pipeline failed: x", "candidates": []}
        if us:
            r.update(best={"candidate": 0, "graph": name + "_c1", "us": us, "rel_error": 1e-3, "tflops": 1.0, "tbps": 2.0},
                     baselines={"eager": {"us": base}, "sdpa_cudnn": {"na": "refused"}}, best_baseline={"label": "eager", "us": base}, ratio=base / us)
        return r

    rows = {
        "gqa_decode_b1_l4096__full": row("gqa_decode_b1_l4096", "full", 10.0, 17.0),
        "swiglu_t1__full": row("swiglu_t1", "full", 100.0, 64.0),
        "gqa_decode_b1_l4096__no-split": row("gqa_decode_b1_l4096", "no-split", 40.0, 17.0),
        "gqa_decode_b1_l4096__no-search": row("gqa_decode_b1_l4096", "no-search", None, 17.0),
    }
    return {"meta": {"gpu": "test GPU", "date": "2026-01-01", "command": "python bench/gpu_suite.py run x"}, "rows": rows}


def test_markdown_table(suite) -> None:  # type: ignore[no-untyped-def]
    md = suite.markdown(_synthetic_results())
    assert "| gqa_decode_b1_l4096 | gqa_decode_b1_l4096_c1 | 10.0 | 2.00 TB/s | n/a | - | 17.0 | - | 1.70x (eager) | 1.0e-03 |" in md
    assert "| gqa_decode_b1_l4096 | 10.0 (1.00x) | 40.0 (0.25x) | pipeline failed: x |" in md


def test_chart_renders_a_png(suite, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("matplotlib")
    results = tmp_path / "results.json"
    results.write_text(json.dumps(_synthetic_results()))
    png = tmp_path / "chart.png"
    assert suite.main(["chart", str(results), "--out", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_run_without_a_gpu_is_one_line(suite, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    assert suite.main(["run", str(tmp_path), "--out", str(tmp_path / "r.json")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error:") and err.count("\n") == 1


def fake_gpu(suite, monkeypatch: pytest.MonkeyPatch, broken: bool = False) -> None:  # type: ignore[no-untyped-def]
    """`run`'s CUDA calls faked on the CPU: each kernel evaluated through its tgraph graph (with `broken`,
    every candidate's last kernel leaves its poisoned outputs), timings by the wall clock."""
    torch = pytest.importorskip("torch")
    from cleave_ir.runtime import Timing

    class Event:
        def __init__(self, **_: object) -> None:
            self.t = 0.0

        def record(self) -> None:
            self.t = time.perf_counter()

        def elapsed_time(self, other: "Event") -> float:
            return (other.t - self.t) * 1e3

    for name, value in {"is_available": lambda: True, "get_device_name": lambda *a: "CPU (faked)", "synchronize": lambda *a: None,
                        "empty_cache": lambda *a: None, "Event": Event}.items():
        monkeypatch.setattr(torch.cuda, name, value)
    monkeypatch.setattr(suite, "DEVICE", "cpu")
    monkeypatch.setattr(suite, "random_inputs", lambda g: [(torch.randn(s) * 0.5).half() for s in suite.graph_costs(g)[0]])
    monkeypatch.setattr(suite, "rotating_copies", lambda xs: [list(xs), [x.clone() for x in xs]])

    def timed(fn, *, rotate, batch, iters):  # type: ignore[no-untyped-def]
        t0 = time.perf_counter()
        for j in range(batch):
            fn(*rotate[j % len(rotate)])
        return Timing((time.perf_counter() - t0) / batch * 1e6, "faked", batch, len(rotate))

    def compile_candidates(mod, names, jobs=None, *, raw=False, seconds=None):  # type: ignore[no-untyped-def]
        def kernel(name, meta):  # type: ignore[no-untyped-def]
            graph = suite.parse_graph("builtin.module {\n" + mod.GRAPHS[meta["graph"]] + "\n}")

            def call(*args):  # type: ignore[no-untyped-def]
                if broken and name in {ks[-1] for _, ks, _ in mod.CANDIDATES}:  # every candidate's last kernel
                    return
                for o, r in zip(args[meta["inputs"]:], suite.torch_reference(graph, args[: meta["inputs"]])):
                    o.copy_(r.reshape(o.shape))
            return call
        return {n: kernel(n, mod.KERNELS[n]) for n in names}

    monkeypatch.setattr(suite, "timed", timed)
    monkeypatch.setattr(suite, "compile_candidates", compile_candidates)


@pytest.mark.parametrize("broken", [False, True])
def test_run_logic_on_the_cpu(suite, prepared, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, broken: bool) -> None:  # type: ignore[no-untyped-def]
    """`run` end to end without a GPU (a broken last kernel, a combine or a single kernel, leaves its poisoned
    outputs: the candidate is then WRONG)."""
    out, _ = prepared
    fake_gpu(suite, monkeypatch, broken)
    results = tmp_path / "results.json"
    assert suite.main(["run", str(out), "--out", str(results), "--torch-compile", "off", "--rounds", "1", "--iters", "1", "--deadline", "100"]) == 0
    row = json.loads(results.read_text())["rows"]["matmul_rowsum_s1024__full"]
    assert row["baselines"]["eager"]["us"] > 0
    if broken:
        assert row["status"] == "no correct candidate" and row["candidates"][0]["rel_error"] == float("inf")
    else:
        assert row["status"] == "ok" and row["best"]["rel_error"] < 1e-2 and row["ratio"] > 0
    assert "| matmul_rowsum_s1024 |" in results.with_suffix(".md").read_text()


def test_candidate_runs_a_cut_chain_at_another_size(suite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """`Candidate` on a chain of five kernels reading intermediates by name (the H200 run of
    rmsnorm_matmul's cut chains failed with "'t_c' is not in list"), at T=17 (emitted at T=64):
    buffers take T from the inputs, later calls reuse them, a poisoned buffer is overwritten."""
    torch = pytest.importorskip("torch")
    from cleave_ir.passes.dynamic_shapes import at_sizes
    from cleave_ir.runtime import check, torch_reference
    from tests.test_dynamic import emitted_cut_chain

    mod, graph, launch = emitted_cut_chain(tmp_path / "k.py")
    monkeypatch.setattr(suite, "DEVICE", "cpu")

    def kernel(name):  # type: ignore[no-untyped-def]
        def call(*args):  # type: ignore[no-untyped-def]
            n = mod.KERNELS[name]["inputs"]
            for o, r in zip(args[n:], launch(name, list(args[:n]), [list(o.shape) for o in args[n:]])):
                o.copy_(r)
        return call

    (_, names, _), = mod.CANDIDATES
    cand = suite.Candidate(mod, names, {k: kernel(k) for k in names})
    g = at_sizes(graph, {"x_d0": 17})
    buffers = None
    for seed in (0, 1):  # the first call allocates the buffers, the second one only launches
        gen = torch.Generator().manual_seed(seed)
        xs = [(torch.randn(s, generator=gen) * 0.5).half() for s in ([17, 256], [256, 512])]
        cand.poison()
        got = cand(*xs)
        assert got.shape == (17, 512) and check(got, torch_reference(g, xs)[0]) < 1e-2
        buffers = buffers or [b for outs in cand.buffers for b in outs]
    assert [id(b) for outs in cand.buffers for b in outs] == [id(b) for b in buffers] and all(b.shape[0] == 17 for b in buffers)


def test_markdown_summary_counts_unrounded_ratios_and_short_rounds(suite) -> None:  # type: ignore[no-untyped-def]
    """The summary line under the table is computed, not written by hand: a 0.896x row is under 0.9x
    though the table shows 0.90x, and a row timed in fewer rounds than the run asked for is named."""
    results = _synthetic_results()
    results["meta"]["rounds"] = 3
    near = results["rows"]["gqa_decode_b1_l4096__full"]
    near.update(ratio=0.896, candidates=[{"graph": "g", "kernels": [], "estimated_us": 1.0, "compile_s": 0.0, "us": 10.0, "rounds": 1}])
    md = suite.markdown(results)
    assert "| 0.90x (eager) |" in md
    geo = (0.896 * 0.64) ** 0.5
    assert f"Geometric mean over the 2 rows with a ratio: {geo:.3f}x; 0 rows >= 1.0x, 0 >= 0.9x" in md
    assert "under 0.9x: swiglu_t1 0.640x, gqa_decode_b1_l4096 0.896x." in md
    assert "Timed in fewer than 3 rounds: gqa_decode_b1_l4096." in md
    assert "torch.compile not timed" not in md
    near["baselines"]["torch.compile"] = {"na": "skipped: row time budget"}
    assert "**torch.compile not timed on 1 of 2 rows** (gqa_decode_b1_l4096): their ratios leave it out." in suite.markdown(results)


def test_rows_from_graph_files_are_padded_and_run_op_by_op(suite, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """`prepare --graphs FILE`: a graph the suite has never seen, at its written shape; its awkward
    sizes are padded as `cleave compile` pads them, and its eager baseline is the graph op by op."""
    torch = pytest.importorskip("torch")
    from cleave_ir.runtime import check, random_inputs, torch_reference

    path = tmp_path / "odd.mlir"
    path.write_text("""tgraph.graph @odd(%a: !tgraph.tensor<[40, 64], f16>, %b: !tgraph.tensor<[64, 200], f16>) -> !tgraph.tensor<[40, 1], f16> {
  %c = tgraph.matmul %a, %b : !tgraph.tensor<[40, 64], f16>, !tgraph.tensor<[64, 200], f16> -> !tgraph.tensor<[40, 200], f16>
  %e = tgraph.exp %c : !tgraph.tensor<[40, 200], f16>
  %s = tgraph.reduce sum %e dim 1 : !tgraph.tensor<[40, 200], f16> -> !tgraph.tensor<[40, 1], f16>
  tgraph.output %s : !tgraph.tensor<[40, 1], f16>
}""")
    (row,) = suite.file_rows([str(path)])
    assert row.name == "odd" and row.resize == {}
    manifest = suite.prepare(tmp_path / "out", only=[row])
    entry = manifest["entries"]["odd__full"]
    assert entry["status"] == "ok" and entry["padded"].startswith("40 -> 64, 200 -> 256: ") and entry["inputs"] == [[40, 64], [64, 200]]
    graph = suite.parse_graph(entry["graph"])
    xs = [x * 0.1 for x in random_inputs(graph, device="cpu")]
    assert check(suite.eager_fn("odd", None, graph)(*xs).float(), torch_reference(graph, xs)[0]) < 1e-2
    assert "odd" not in suite.HAND_WRITTEN and torch is not None


def test_launch_into_takes_the_thread_copy_variant_where_run_would(suite, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """Inputs whose rows TMA cannot map, or a launch failing on a tensor map: the module's
    `compile_kernel(..., tma=False)` variant, as the emitted `run` does; other errors propagate."""
    pytest.importorskip("tilelang")
    from cleave_ir.tilelang_check import load_module_file

    mod = load_module_file(Path(__file__).resolve().parent / "golden" / "mha.py")
    calls: list[str] = []

    def fake_compile(func, out_idx=None, target="cuda", pass_configs=None):  # type: ignore[no-untyped-def]
        assert out_idx is None and (pass_configs or {}).get("tl.disable_tma_lower")
        return lambda *a: calls.append("variant k")

    monkeypatch.setattr(mod.tilelang, "compile", fake_compile)
    monkeypatch.setattr(mod, "_compiled", {})
    monkeypatch.setattr(mod, "tma_maps", lambda tensors: "odd" not in tensors)
    monkeypatch.setattr(mod, "layout", lambda x: None)  # (strings for tensors: all dense)
    k = next(iter(mod.KERNELS))

    def with_tma(*args):  # type: ignore[no-untyped-def]
        if "bad map" in args:
            raise RuntimeError("Failed to initialize the TMA descriptor out0_desc")
        if "crash" in args:
            raise RuntimeError("CUDA error: an illegal memory access was encountered")
        calls.append("tma")

    assert suite.launch_into(mod, k, with_tma, ["ok"], ["out"]) is with_tma and calls == ["tma"]
    suite.launch_into(mod, k, with_tma, ["odd"], ["out"])
    monkeypatch.setattr(mod, "_compiled", {})
    suite.launch_into(mod, k, with_tma, ["bad map"], ["out"])
    assert calls == ["tma", "variant k", "variant k"]
    monkeypatch.setattr(mod, "_compiled", {})
    with pytest.raises(RuntimeError, match="illegal memory access"):
        suite.launch_into(mod, k, with_tma, ["crash"], ["out"])


def test_the_eager_baseline_runs_transposes_slices_and_concats(suite) -> None:  # type: ignore[no-untyped-def]
    """A graph written with them (`bench/probes/unseen/rope_q_t8.mlir`, a rotary embedding) has an
    eager baseline: its ops one by one in torch, views and torch.cat included, against float64."""
    torch = pytest.importorskip("torch")
    from cleave_ir.runtime import check, random_inputs, torch_reference

    graph = suite.parse_graph((SUITE.parent / "probes" / "unseen" / "rope_q_t8.mlir").read_text())
    xs = random_inputs(graph, device="cpu")
    got = suite.graph_eager(graph)(*xs)
    assert got.dtype == torch.float16 and check(got, torch_reference(graph, xs)[0]) < 1e-2


def test_candidate_writes_an_output_in_parts_into_its_windows(suite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """A graph whose output the last kernel writes in parts (a rotary embedding's halves): `Candidate`
    times what the module's `run` does, the kernel writing each half into its window of one allocated
    output (no `torch.cat` after it), poisoned and rewritten on later calls."""
    torch = pytest.importorskip("torch")
    from cleave_ir.interpreter import run_graph
    from conftest import fp16_inputs as _inputs
    from tests.test_fold_structural import _emitted_rope

    graph, folded, mod = _emitted_rope(tmp_path)
    monkeypatch.setattr(suite, "DEVICE", "cpu")
    (name,) = mod.CANDIDATES[0][1]
    n_in = mod.KERNELS[name]["inputs"]
    written = []

    def fake_compile(func, out_idx=None, target="cuda", pass_configs=None):  # type: ignore[no-untyped-def]
        def kernel(*args):  # type: ignore[no-untyped-def]
            parts = run_graph(folded, [x.numpy() for x in args[:n_in]])
            written.append([o.untyped_storage().data_ptr() for o in args[n_in:]])
            for o, p in zip(args[n_in:], parts):
                o.copy_(torch.from_numpy(p))
        return kernel

    monkeypatch.setattr(mod.tilelang, "compile", fake_compile)
    monkeypatch.setattr(mod, "_compiled", {})
    cand = suite.Candidate(mod, [name], {name: fake_compile(None)})
    for dist in ("uniform", "heavy"):
        xs = _inputs(graph, dist)
        (want,) = run_graph(graph, xs)
        cand.poison()
        got = cand(*[torch.from_numpy(x) for x in xs])
        assert got is cand.out and got.dtype == torch.float16 and got.shape == want.shape
        assert written[-1] == [got.untyped_storage().data_ptr()] * 2  # both halves written into the output itself
        torch.testing.assert_close(got, torch.from_numpy(want).half())


def test_candidate_gives_a_kernel_reading_stored_transposed_inputs_their_transposes(suite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """Linear attention's kernels read v from its storage (`KERNELS[k]["transposed"]`): `Candidate` calls
    them, after the first call straight from `launch_into`'s function, with the transpose of the tensor
    the chain has (no copy), and every call is correct (TileLang replaced by the interpreter with its
    stride check)."""
    torch = pytest.importorskip("torch")
    from cleave_ir import runtime
    from cleave_ir.tilelang_emitter import module_source
    from conftest import interpreting_compile
    from tests.test_fold_structural import _pipelined

    graph, module = _pipelined("linear_attention")
    path = tmp_path / "k.py"
    path.write_text(module_source(module))
    mod = runtime.load_module_file(path)
    monkeypatch.setattr(suite, "DEVICE", "cpu")
    compile_ = interpreting_compile(module, mod.KERNELS, torch)
    monkeypatch.setattr(mod.tilelang, "compile", compile_)
    (_, names, _) = next(c for c in mod.CANDIDATES if all(mod.KERNELS[k].get("transposed") for k in c[1] if "v_v1" in mod.KERNELS[k]["input_names"]))
    assert any(mod.KERNELS[k].get("transposed") for k in names)
    fns = {k: compile_(mod.prim_func(k), out_idx=None) for k in names}
    cand = suite.Candidate(mod, names, fns)
    for seed in (0, 1):
        xs = runtime.random_inputs(graph, device="cpu", seed=seed)
        (ref,) = runtime.torch_reference(graph, xs)
        cand.poison()
        assert runtime.check(cand(*xs), ref) < runtime.TOLERANCE


def test_tune_records_a_winner_that_run_times_beside_the_pipelines_candidates(suite, prepared, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """`tune` varies the pipeline module `prepare` kept (real neighbourhood and emission; the GPU worker faked:
    variant 1 fastest), records the winner's module in the manifest, and `run` times it as one more candidate."""
    import shutil

    from cleave_ir import tune

    from tests.test_tune import FAKE_WORKER

    out = tmp_path / "suite"
    shutil.copytree(prepared[0], out)
    script = tmp_path / "fake_worker.py"
    script.write_text(FAKE_WORKER)
    monkeypatch.setenv("FAKE_TUNE_LOG", str(tmp_path / "spawns.log"))
    monkeypatch.setenv("FAKE_TUNE", json.dumps({"1": 50.0}))
    monkeypatch.setattr(tune, "worker_command", lambda spec, results: [sys.executable, str(script), str(spec), str(results)])
    fake_gpu(suite, monkeypatch)
    assert suite.main(["tune", str(out), "--budget", "20", "-j", "1"]) == 0
    entry = json.loads((out / "manifest.json").read_text())["entries"]["matmul_rowsum_s1024__full"]
    t = entry["tuned"]
    assert t["module"] and (out / t["module"]).exists() and t["winner_us"] == 50.0 and t["pipeline_us"] == 100.0
    assert t["variants"] >= 2 and t["config"] and t["graph"] == entry["candidates"][0]["graph"]
    results = tmp_path / "results.json"
    assert suite.main(["run", str(out), "--out", str(results), "--torch-compile", "off", "--rounds", "1", "--iters", "1", "--deadline", "100"]) == 0
    row = json.loads(results.read_text())["rows"]["matmul_rowsum_s1024__full"]
    tuned = row["candidates"][-1]
    assert len(row["candidates"]) == 2 and tuned["graph"] == f"{t['graph']} tuned" and tuned["ok"] and tuned["us"] > 0
    assert f"{t['graph']} tuned" in results.with_suffix(".md").read_text()


def test_tune_says_when_the_pipeline_module_is_missing(suite, prepared, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    """A manifest prepared before `prepare` kept the pipeline module: the row is named, nothing is tuned."""
    import shutil

    out = tmp_path / "suite"
    shutil.copytree(prepared[0], out)
    m = json.loads((out / "manifest.json").read_text())
    for e in m["entries"].values():
        e.pop("pipeline")
    (out / "manifest.json").write_text(json.dumps(m))
    fake_gpu(suite, monkeypatch)
    assert suite.main(["tune", str(out)]) == 0
    assert "matmul_rowsum_s1024__full: not tuned (prepared before" in capsys.readouterr().out
    assert "tuned" not in json.loads((out / "manifest.json").read_text())["entries"]["matmul_rowsum_s1024__full"]


def test_run_takes_a_cut_graphs_outputs_from_the_kernels_that_compute_them(suite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """q, k and v projections of one x at different widths, one kernel each (`cleave.results`): the suite's
    candidate returns q, which the first kernel writes, and every candidate agrees (CUDA faked)."""
    from tests.test_chain_results import GRAPHS

    graph = tmp_path / "qkv.mlir"
    graph.write_text(GRAPHS["qkv"])
    out = tmp_path / "suite"
    assert suite.main(["prepare", "--graphs", str(graph), "--out", str(out), "--keep", "3"]) == 0
    entry = json.loads((out / "manifest.json").read_text())["entries"]["qkv__full"]
    assert any(len(c["kernels"]) == 3 for c in entry["candidates"])
    fake_gpu(suite, monkeypatch)
    results = tmp_path / "results.json"
    assert suite.main(["run", str(out), "--out", str(results), "--torch-compile", "off", "--rounds", "1", "--iters", "1", "--deadline", "100"]) == 0
    row = json.loads(results.read_text())["rows"]["qkv__full"]
    assert row["status"] == "ok" and all(c.get("ok") for c in row["candidates"]), row["candidates"]
    assert any(len(c["kernels"]) == 3 for c in row["candidates"])


def test_merged_prepares_carry_pipelines_and_tuned_winners(tmp_path: Path) -> None:
    """`bench/probes/merge_prepared.py` puts two prepares' rows side by side (`NAME~TAG` for the old one) with
    every file a row names: its kernel module, its pipeline module (`gpu_suite.py tune` reads the candidates
    from it) and a tuned winner's module."""
    import subprocess

    def prepared(root: Path, text: str) -> Path:
        (root / "kernels").mkdir(parents=True)
        for suffix in (".py", ".mlir", ".tuned.py"):
            (root / "kernels" / f"r__full{suffix}").write_text(f"{text}{suffix}")
        entry = {"row": "r", "variant": "full", "module": "kernels/r__full.py", "pipeline": "kernels/r__full.mlir",
                 "tuned": {"module": "kernels/r__full.tuned.py", "winner_us": 1.0}}
        (root / "manifest.json").write_text(json.dumps({"command": text, "entries": {"r__full": entry}}))
        return root

    new, old, out = prepared(tmp_path / "new", "new"), prepared(tmp_path / "old", "old"), tmp_path / "out"
    script = Path(__file__).resolve().parents[1] / "bench" / "probes" / "merge_prepared.py"
    subprocess.run([sys.executable, str(script), str(new), str(old), "old", str(out)], check=True, capture_output=True)
    entries = json.loads((out / "manifest.json").read_text())["entries"]
    assert set(entries) == {"r__full", "r~old__full"}
    for key, text in (("r__full", "new"), ("r~old__full", "old")):
        e = entries[key]
        for path, suffix in ((e["module"], ".py"), (e["pipeline"], ".mlir"), (e["tuned"]["module"], ".tuned.py")):
            assert (out / path).read_text() == f"{text}{suffix}"


TWO_OUTPUTS = """
tgraph.graph @two_heads(%x: !tgraph.tensor<[8, 64], f16>, %wa: !tgraph.tensor<[64, 32], f16>, %wb: !tgraph.tensor<[64, 16], f16>) -> (!tgraph.tensor<[8, 32], f16>, !tgraph.tensor<[8, 16], f16>) {
  %a = tgraph.matmul %x, %wa : !tgraph.tensor<[8, 64], f16>, !tgraph.tensor<[64, 32], f16> -> !tgraph.tensor<[8, 32], f16>
  %s = tgraph.tanh %a : !tgraph.tensor<[8, 32], f16>
  %b = tgraph.matmul %x, %wb : !tgraph.tensor<[8, 64], f16>, !tgraph.tensor<[64, 16], f16> -> !tgraph.tensor<[8, 16], f16>
  tgraph.output %s, %b : !tgraph.tensor<[8, 32], f16>, !tgraph.tensor<[8, 16], f16>
}
"""


def test_a_graph_of_several_outputs_is_run_and_checked_on_every_output(suite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """Ours and the baselines return every output of a graph of several, and every one is checked: before,
    both returned the first only, so torch.compile dropped the other projections' work (the s51 projection
    rows timed it doing a third of the bytes) and a wrong second output went unseen."""
    torch = pytest.importorskip("torch")
    from xdsl.context import Context

    from cleave_ir import runtime
    from cleave_ir.passes.pipeline import PipelinePass
    from cleave_ir.tilelang_emitter import module_source
    from conftest import interpreting_compile
    from tests.test_fold_structural import _graph, lower_module, module_of

    graph = _graph(TWO_OUTPUTS)
    module = module_of(graph.clone())
    PipelinePass(search_budget=20_000, split_counts=(2,), top_k=1).apply(Context(), module)
    lower_module(module)
    path = tmp_path / "k.py"
    path.write_text(module_source(module))
    mod = runtime.load_module_file(path)
    monkeypatch.setattr(suite, "DEVICE", "cpu")
    compile_ = interpreting_compile(module, mod.KERNELS, torch)
    monkeypatch.setattr(mod.tilelang, "compile", compile_)
    (_, names, _) = mod.CANDIDATES[0]
    cand = suite.Candidate(mod, names, {k: compile_(mod.prim_func(k), out_idx=None) for k in names})
    eager = suite.graph_eager(graph)
    for seed in (0, 1):
        xs = runtime.random_inputs(graph, device="cpu", seed=seed)
        refs = runtime.torch_reference(graph, xs)
        cand.poison()
        got = cand(*xs)
        assert isinstance(got, tuple) and [tuple(g.shape) for g in got] == [(8, 32), (8, 16)]
        assert suite.check_outputs(got, refs) < runtime.TOLERANCE
        base = eager(*xs)
        assert isinstance(base, tuple) and suite.check_outputs(base, refs) < runtime.TOLERANCE
    wrong = (got[0], torch.zeros_like(got[1]))
    assert suite.check_outputs(wrong, refs) > 0.5  # a wrong second output is caught
    with pytest.raises(ValueError, match="1 outputs where the graph has 2"):
        suite.check_outputs(got[0], refs)
