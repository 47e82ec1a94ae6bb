"""bench/racecheck.py without a GPU: the families, the kernels it launches, the sanitizer logs it parses."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"


@pytest.fixture(scope="module")
def rc():  # type: ignore[no-untyped-def]
    sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location("racecheck", BENCH / "racecheck.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_one_family_per_example(rc) -> None:  # type: ignore[no-untyped-def]
    fams = rc.families()
    assert [r.example for r in fams] == list(dict.fromkeys(r.example for r in rc.gpu_suite.rows()))
    assert {r.name for r in fams} >= {"mha_b1_h32_s4096_d128", "gqa_decode_b1_l4096", "mla_decode_b1_l4096", "swiglu_t1"}
    assert len(rc.families(models=True)) == len(fams) + len(rc.gpu_suite.model_rows())
    assert [r.name for r in rc.families(pattern="decode")] == ["gqa_decode_b1_l4096", "mha_decode_b1_l8192", "mla_decode_b1_l4096"]


def test_graph_files_are_families_at_their_written_shapes(rc) -> None:  # type: ignore[no-untyped-def]
    """`--graphs FILE...` adds one family per tgraph file (the decode projection probes), whatever `--rows`
    selects of the suite; the file's graph is prepared as written (a model row read from its path)."""
    probe = BENCH / "probes" / "llama3_decode_k_proj.mlir"
    fams = rc.families(pattern="^$", graphs=[str(probe)])
    assert [(r.name, Path(r.example)) for r in fams] == [("llama3_decode_k_proj", probe)]
    assert rc.gpu_suite.is_model(fams[0].example)
    text = rc.gpu_suite.graph_text(fams[0], scale=True)
    assert "tgraph.tensor<[1024, 4096], f16>" in text and "transpose_b" in text


def test_kernels_of_the_first_candidate(rc) -> None:  # type: ignore[no-untyped-def]
    manifest = {"entries": {
        "a__full": {"status": "ok", "candidates": [{"kernels": ["a_split", "a_combine"]}, {"kernels": ["a_k0"]}]},
        "b__full": {"status": "failed", "error": "x"},
        "c__full": {"status": "ok", "candidates": [{"kernels": ["c_k0", "c_k0"]}]},
    }}
    assert rc.kernels_to_check(manifest) == [("a__full", "a_split"), ("a__full", "a_combine"), ("c__full", "c_k0")]
    assert rc.kernels_to_check(manifest, every_candidate=True) == [
        ("a__full", "a_split"), ("a__full", "a_combine"), ("a__full", "a_k0"), ("c__full", "c_k0")
    ]


RACY = """========= COMPUTE-SANITIZER
========= Error: Race reported between Write access at k_kernel+0x1a0
=========     and Read access at k_kernel+0x2c0 [512 hazards]
racecheck-launch: ok
========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)
"""


def test_parse_reports(rc) -> None:  # type: ignore[no-untyped-def]
    assert rc.parse_report("racecheck", RACY) == {"launched": True, "count": 1, "errors": 1, "warnings": 0}
    clean = "racecheck-launch: ok\n========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n"
    assert rc.parse_report("racecheck", clean)["count"] == 0
    assert rc.parse_report("memcheck", "racecheck-launch: ok\n========= ERROR SUMMARY: 0 errors\n") == {"launched": True, "count": 0}
    crashed = rc.parse_report("memcheck", "========= Invalid __global__ read of size 4\n========= ERROR SUMMARY: 3 errors\n")
    assert crashed == {"launched": False, "count": 3}
    assert rc.parse_report("racecheck", "Traceback ...")["count"] is None


def test_markdown_table(rc) -> None:  # type: ignore[no-untyped-def]
    results = [
        {"entry": "a__full", "kernel": "a_k0", "racecheck": rc.parse_report("racecheck", RACY), "memcheck": {"launched": True, "count": 0}},
        {"entry": "b__full", "kernel": "b_k0", "racecheck": {"launched": True, "count": 0}, "memcheck": {"launched": True, "count": 0}},
        {"entry": "c__full", "kernel": "c_k0", "compile_error": "nvcc failed"},
        {"entry": "d__full", "kernel": "d_k0", "racecheck": {"launched": False, "count": None, "timeout": True}, "memcheck": {"launched": False, "count": None, "rc": 1}},
    ]
    md = rc.markdown(results, {"gpu": "H200"})
    assert "| a__full | a_k0 | 1 (1 errors, 0 warnings) | 0 |" in md
    assert "| b__full | b_k0 | 0 | 0 |" in md
    assert "| c__full | c_k0 | not run | not run |" in md
    assert "| d__full | d_k0 | timed out | no summary (rc 1) |" in md
    assert "1 of 4 kernels clean under both tools." in md


def test_refuses_without_the_sanitizer(rc, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(rc, "sanitizer_path", lambda: None)
    assert rc.main(["--out", str(tmp_path / "rc")]) == 1
