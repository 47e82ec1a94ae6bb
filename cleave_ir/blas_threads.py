"""One BLAS thread for the compiler's own numpy work (`one_blas_thread()`).

The search's equivalence trials and the interpreters multiply many small and mid-sized float64
matrices ([4, 128] x [128, 4096] per head). OpenBLAS spreads each product over every core, and
its threads' start-up and contention cost more than they save there: `cleave compile
examples/mha.mlir`'s search and schedule took 22.6 s with OpenBLAS's default threads on an idle
2-core machine and 19.7 s with one (37.7 against 21.9 s beside another process; `gpu_suite.py
prepare -j 15` runs 15 such processes on 16 cores). The limit holds only inside the block and
is then restored, so a program that embeds the compiler keeps its own setting.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_controller: Any = None


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """Run the block with one thread in every BLAS library numpy (or anything else) has loaded."""
    global _controller
    if _controller is None:
        import numpy  # noqa: F401 - load numpy's BLAS first, so that the controller sees it
        from threadpoolctl import ThreadpoolController

        _controller = ThreadpoolController()
    with _controller.limit(limits=1, user_api="blas"):
        yield
