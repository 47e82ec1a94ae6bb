"""`bench/range_sweep.py`: every candidate's kernels (tilelang interpreter) at inputs scaled by 1e-3 and
1e3 against float64. rmsnorm_matmul's kernels squared x in fp16 (overflow past |x| = 256, 0 under 8e-3
relative to fp16's normal range) before f16 operands were widened; the slow cases are the two graphs
whose kernels were wrong before the Split-K normalization and the stabilize fix:
`python -m pytest tests/test_range_sweep.py -m slow -n 0`."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import range_sweep  # noqa: E402


def wrong(path: str) -> list[str]:
    lines, candidates, checked = range_sweep.sweep(str(ROOT / path), 256, [1e-3, 1.0, 1e3], 200_000)
    assert candidates and checked
    return [line for line in lines if "WRONG" in line or "failed" in line]


def test_norm_kernels_keep_their_range() -> None:
    assert wrong("examples/rmsnorm_matmul.mlir") == []


@pytest.mark.slow
@pytest.mark.parametrize("path", ["examples/gqa_decode.mlir", "bench/probes/unseen/attention_d112_s512.mlir"])
def test_attention_kernels_keep_their_range(path: str) -> None:
    assert wrong(path) == []
