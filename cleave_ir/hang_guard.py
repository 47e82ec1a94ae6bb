"""A GPU candidate that never finishes ends the process with one line, and is skipped when the work runs again.

A kernel that deadlocks keeps its CUDA context busy: nothing later in the process runs and no Python
exception reaches the caller, so `cleave compile --gpu` would wait forever. `HangGuard.running` writes
which candidate runs to a journal beside the module, and a timer thread ends the process (exit 1, one
`error:` line naming the candidate) when it has not finished after `seconds`. The next run over the same
module finds the journal (`earlier_hangs`), moves the candidate into the module's list of hangs and reports
it as failed instead of running it: every other candidate is still compiled, checked and timed.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

HANG_S = float(os.environ.get("CLEAVE_HANG_S", "120"))
"""How long one candidate's check and timing may take: far more than any kernel needs (milliseconds) and
than a layout variant's compile at run time (seconds to tens of seconds on a cold cache). The environment
variable `CLEAVE_HANG_S` sets another (a probe that expects hangs and has little time)."""


def _key(name: str, kernels: Sequence[str]) -> dict[str, object]:
    return {"name": name, "kernels": list(kernels)}


@dataclass
class HangGuard:
    """The journal and the list of hangs of the emitted module at `module_path`."""

    module_path: Path
    seconds: float = HANG_S
    exit: Callable[[int], None] = field(default=os._exit)  # the process ends: a hung kernel blocks everything after it

    @property
    def journal(self) -> Path:
        return self.module_path.with_name(self.module_path.name + ".running")

    @property
    def hangs_file(self) -> Path:
        return self.module_path.with_name(self.module_path.name + ".hangs.json")

    def earlier_hangs(self) -> list[dict[str, object]]:
        """The candidates that did not finish in earlier runs (a journal left behind joins the list)."""
        hangs: list[dict[str, object]] = json.loads(self.hangs_file.read_text()) if self.hangs_file.exists() else []
        if self.journal.exists():
            record = json.loads(self.journal.read_text())
            if record not in hangs:
                hangs.append(record)
                self.hangs_file.write_text(json.dumps(hangs, indent=1))
            self.journal.unlink()
        return hangs

    def hung(self, name: str, kernels: Sequence[str]) -> bool:
        """Whether candidate `name` with these kernels did not finish in an earlier run."""
        return _key(name, kernels) in self.earlier_hangs()

    @property
    def skipped(self) -> str:
        """Why a candidate that `hung` is not run again (its failure in a report)."""
        return f"did not finish on the GPU in an earlier run (a hang; {self.hangs_file.name})"

    @contextmanager
    def running(self, index: int, name: str, kernels: Sequence[str]) -> Iterator[None]:
        """Run the body as candidate `index`: journaled, and the process ended if it takes `seconds`."""
        self.journal.write_text(json.dumps(_key(name, kernels)))
        timer = threading.Timer(self.seconds, self._fire, args=(index, name))
        timer.daemon = True
        timer.start()
        try:
            yield
        finally:  # finished, or raised: either way it did not hang
            timer.cancel()
            self.journal.unlink(missing_ok=True)

    def _fire(self, index: int, name: str) -> None:
        print(
            f"error: candidate #{index} (@{name}) did not finish on the GPU in {self.seconds:.0f} s (a hang); "
            f"recorded in {self.hangs_file.name}: the next run skips it",
            file=sys.stderr,
            flush=True,
        )
        self.exit(1)
