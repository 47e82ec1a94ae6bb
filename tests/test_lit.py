"""The lit (filecheck) tests of lit_tests/, run from pytest in a few chunks so that ./test.sh's
pytest-xdist workers share them with the rest of the suite (no idle core while the last pytest test
or the last lit test runs alone). `lit -v lit_tests` runs them by themselves, as before.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LIT_DIR = ROOT / "lit_tests"
LIT_FILES = sorted(
    p for p in LIT_DIR.rglob("*.mlir") if not {"Inputs", "Output"} & set(p.relative_to(LIT_DIR).parts)
)
CHUNKS = 10  # about 5 files (15-20 s of CPU) each


def test_every_lit_file_is_in_a_chunk() -> None:
    chunks = [LIT_FILES[i::CHUNKS] for i in range(CHUNKS)]
    assert sorted(p for c in chunks for p in c) == LIT_FILES and len(LIT_FILES) >= 40


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_lit(chunk: int) -> None:
    """Every file of the chunk passes `lit` (cleave-opt, xdsl-opt, filecheck: from this interpreter's venv)."""
    files = [str(p) for p in LIT_FILES[chunk::CHUNKS]]
    bindir = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": bindir + os.pathsep + os.environ.get("PATH", "")}
    env.pop("PYTHONWARNINGS", None)
    # one lit worker (pytest-xdist runs the chunks in parallel); no timing file, which concurrent
    # lit processes would write at once
    r = subprocess.run(
        [str(Path(bindir) / "lit"), "-v", "-j", "1", "--skip-test-time-recording", *files],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=600,
    )
    assert r.returncode == 0, r.stdout + r.stderr
