"""`cleave_ir.hang_guard`: a GPU candidate that never finishes ends the process with one `error:` line and
exit 1 (not a hang), and the next run over the same module skips it. No GPU needed: the body is a sleep."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from cleave_ir.hang_guard import HangGuard


def test_a_candidate_that_finishes_or_raises_leaves_no_trace(tmp_path: Path) -> None:
    guard = HangGuard(tmp_path / "kernel.py", seconds=5.0, exit=lambda code: pytest.fail("the guard fired"))
    with guard.running(0, "fast", ["fast_k0"]):
        assert guard.journal.exists()
    with pytest.raises(RuntimeError), guard.running(1, "broken", ["broken_k0"]):
        raise RuntimeError("a run failed: reported as such, not as a hang")
    assert not guard.journal.exists() and guard.earlier_hangs() == []


def test_a_candidate_that_does_not_finish_is_recorded_and_skipped_next_time(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    exits: list[int] = []
    guard = HangGuard(tmp_path / "kernel.py", seconds=0.2, exit=exits.append)
    with guard.running(2, "kl_rows_s4_split", ["kl_rows_s4_split_k0", "kl_rows_s4_combine_k0"]):
        deadline = time.monotonic() + 5
        while not exits and time.monotonic() < deadline:  # (a real hang never returns; the process ends)
            time.sleep(0.05)
        journal_left = guard.journal.exists()
    assert exits == [1] and journal_left
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("error: candidate #2 (@kl_rows_s4_split) did not finish on the GPU in 0 s (a hang)")
    # a real exit never reaches `running`'s cleanup: the journal stays, as a dead process leaves it
    guard.journal.write_text('{"name": "kl_rows_s4_split", "kernels": ["kl_rows_s4_split_k0", "kl_rows_s4_combine_k0"]}')
    again = HangGuard(tmp_path / "kernel.py")
    assert again.hung("kl_rows_s4_split", ["kl_rows_s4_split_k0", "kl_rows_s4_combine_k0"])
    assert not again.hung("kl_lv", ["kl_lv_k0", "kl_lv_p1_k0"])
    assert not again.journal.exists() and again.hangs_file.exists()
    assert again.hung("kl_rows_s4_split", ["kl_rows_s4_split_k0", "kl_rows_s4_combine_k0"])  # every later run too


def test_a_hung_process_exits_with_one_line(tmp_path: Path) -> None:
    """The real exit: a body that never returns ends the process with exit 1 and one line on stderr."""
    script = (
        "import sys, time\n"
        "from pathlib import Path\n"
        "from cleave_ir.hang_guard import HangGuard\n"
        f"g = HangGuard(Path({str(tmp_path / 'kernel.py')!r}), seconds=0.5)\n"
        "with g.running(0, 'stuck', ['stuck_k0']):\n"
        "    time.sleep(600)\n"
    )
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and r.stderr.count("\n") == 1 and r.stderr.startswith("error: candidate #0 (@stuck)"), r.stderr
    assert HangGuard(tmp_path / "kernel.py").hung("stuck", ["stuck_k0"])


def test_the_hang_time_can_be_set_in_the_environment(tmp_path: Path) -> None:
    """`CLEAVE_HANG_S` sets how long a candidate may run before it is called a hang (a probe with little time)."""
    import os

    script = (
        "import time\n"
        "from pathlib import Path\n"
        "from cleave_ir.hang_guard import HangGuard\n"
        f"g = HangGuard(Path({str(tmp_path / 'kernel.py')!r}))\n"
        "with g.running(0, 'stuck', ['stuck_k0']):\n"
        "    time.sleep(600)\n"
    )
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, env={**os.environ, "CLEAVE_HANG_S": "1"})
    assert r.returncode == 1 and "did not finish on the GPU in 1 s" in r.stderr, r.stderr
