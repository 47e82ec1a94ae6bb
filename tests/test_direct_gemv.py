"""Which one-row matmuls read their weight rows straight from global memory (`place_memory.direct_gemv_*`)."""

from __future__ import annotations

import pytest
from cleave_ir.dialects import tgraph
from cleave_ir.passes.place_memory import direct_gemv_matmul, direct_gemv_split

from conftest import parse_text


@pytest.mark.parametrize(("k", "bits", "split"), [(4096, 16, 256), (14336, 16, 256), (2112, 16, 64), (4096, 32, 128), (1000, 16, 0)])
def test_a_step_is_the_most_lanes_up_to_a_warp_times_one_16_byte_vector(k: int, bits: int, split: int) -> None:
    assert direct_gemv_split(k, bits) == split


def _matmul(lhs: str, rhs: str, out: str, transpose: bool = True) -> tgraph.MatmulOp:
    t = " transpose_b" if transpose else ""
    text = f"""
tgraph.graph @g(%x: !tgraph.tensor<{lhs}, f16>, %w: !tgraph.tensor<{rhs}, f16>) -> !tgraph.tensor<{out}, f16> {{
  %y = tgraph.matmul %x, %w{t} : !tgraph.tensor<{lhs}, f16>, !tgraph.tensor<{rhs}, f16> -> !tgraph.tensor<{out}, f16>
  tgraph.output %y : !tgraph.tensor<{out}, f16>
}}
"""
    return next(op for op in parse_text(text).walk() if isinstance(op, tgraph.MatmulOp))


@pytest.mark.parametrize(
    ("lhs", "rhs", "out", "transpose", "direct"),
    [
        ("[1, 4096]", "[14336, 4096]", "[1, 14336]", True, True),  # a decode projection through nn.Linear
        ("[1, 1, 5120]", "[1, 1024, 5120]", "[1, 1, 1024]", True, True),  # batch dims of 1
        ("[1, 128]", "[256, 128]", "[1, 256]", True, False),  # a query row against keys: padded T.gemm
        ("[1, 1024]", "[4096, 1024]", "[1, 4096]", True, False),  # its A padded to 64 rows fits (128 KiB)
        ("[1, 4096]", "[4096, 14336]", "[1, 14336]", False, False),  # [K, N] weight: rows are N-contiguous
        ("[2, 4096]", "[4096, 4096]", "[2, 4096]", True, False),  # two rows
        ("[2, 1, 4096]", "[2, 4096, 4096]", "[2, 1, 4096]", True, False),  # a batch
        ("[1, 4100]", "[64, 4100]", "[1, 64]", True, False),  # K not a multiple of 64 halves
    ],
)
def test_direct_gemv_shape(lhs: str, rhs: str, out: str, transpose: bool, direct: bool) -> None:
    assert direct_gemv_matmul(_matmul(lhs, rhs, out, transpose)) is direct
