"""The compiler's numpy work runs on one BLAS thread, and the caller's setting comes back after."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

from cleave_ir import compile as compile_mod
from cleave_ir.blas_threads import one_blas_thread
from cleave_ir.diagnostics import CleaveError
from cleave_ir.passes.pipeline import PipelinePass

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def blas_threads() -> set[int]:
    np.ones(1)  # numpy's BLAS is loaded
    return {lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"}


def test_one_thread_inside_and_the_callers_setting_after() -> None:
    with threadpool_limits(limits=2, user_api="blas"):
        assert blas_threads() == {2}
        with one_blas_thread():
            assert blas_threads() == {1}
            with one_blas_thread():  # nested: still one, and the outer block's limit after
                assert blas_threads() == {1}
            assert blas_threads() == {1}
        assert blas_threads() == {2}


def test_cleave_compile_searches_on_one_thread(tmp_path: Path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    seen: list[set[int]] = []

    def recording(self, ctx, op):  # type: ignore[no-untyped-def]
        seen.append(blas_threads())
        raise CleaveError("error: stopped here by the test")

    monkeypatch.setattr(PipelinePass, "apply", recording)
    with threadpool_limits(limits=2, user_api="blas"):
        rc = compile_mod.main(["compile", str(EXAMPLES / "matmul.mlir"), "-o", str(tmp_path / "k.py"), "--no-cache"])
        assert blas_threads() == {2}  # restored, after a failure too
    assert rc == 1 and "stopped here by the test" in capsys.readouterr().err
    assert seen == [{1}]
