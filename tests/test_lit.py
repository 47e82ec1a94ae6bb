"""The lit (filecheck) tests of lit_tests/, run from pytest in a few chunks so that ./test.sh's
pytest-xdist workers share them with the rest of the suite (no idle core while the last pytest test
or the last lit test runs alone), their `cleave-opt`, `cleave-run` and `filecheck` lines served by a
warm server (`warm_server`).
`lit -v lit_tests` runs them by themselves, as before.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LIT_DIR = ROOT / "lit_tests"
ALL_LIT_FILES = sorted(
    p for p in LIT_DIR.rglob("*.mlir") if not {"Inputs", "Output"} & set(p.relative_to(LIT_DIR).parts)
)
# whole-pipeline searches of a minute or more (`// REQUIRES: slow`): only under `-m slow`
SLOW_LIT_FILES = [p for p in ALL_LIT_FILES if "// REQUIRES: slow" in p.read_text()]
LIT_FILES = [p for p in ALL_LIT_FILES if p not in SLOW_LIT_FILES]
CHUNKS = 10  # about 5 files (15-20 s of CPU) each


def _lit(*args: str, slow: bool = False, server: str | None = None) -> subprocess.CompletedProcess[str]:
    """`lit` from this interpreter's venv, with its tools (cleave-opt, xdsl-opt, filecheck) on PATH;
    with `server`, `cleave-opt` runs as a fork of that warm server (lit_tests/warm_opt.py)."""
    bindir = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": bindir + os.pathsep + os.environ.get("PATH", "")}
    if slow:
        env["CLEAVE_LIT_SLOW"] = "1"
    if server:
        env["CLEAVE_OPT_SERVER"] = server
    env.pop("PYTHONWARNINGS", None)
    return subprocess.run([str(Path(bindir) / "lit"), *args], capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)


def test_the_chunks_hold_every_test_lit_discovers() -> None:
    shown = _lit("--show-tests", str(LIT_DIR))
    assert shown.returncode == 0, shown.stderr
    discovered = sorted(line.split(" :: ", 1)[1] for line in shown.stdout.splitlines() if " :: " in line)
    chunked = sorted(p.relative_to(LIT_DIR).as_posix() for i in range(CHUNKS) for p in LIT_FILES[i::CHUNKS])
    slow = sorted(p.relative_to(LIT_DIR).as_posix() for p in SLOW_LIT_FILES)
    assert sorted(chunked + slow) == discovered and len(discovered) >= 40 and len(slow) <= 3


@pytest.fixture(scope="module")
def warm_server() -> Iterator[str]:
    """A warm `cleave-opt` server for this worker's chunks (lit_tests/warm_opt.py): a RUN line's
    cleave-opt then costs a fork, not 0.4 s of imports (lit_tests alone: 85 -> 37 s on 2 cores), and so
    do its cleave-run (0.8 s) and filecheck (0.1 s): lit_tests on one core 122-144 -> 89-99 s."""
    with tempfile.TemporaryDirectory(prefix="cw") as d:
        sock = os.path.join(d, "opt.sock")
        proc = subprocess.Popen([sys.executable, str(LIT_DIR / "warm_opt.py"), "serve", sock], stdout=subprocess.PIPE, text=True, cwd=ROOT)
        try:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
            yield sock
        finally:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_lit(chunk: int, warm_server: str) -> None:
    """Every file of the chunk passes `lit`."""
    # one lit worker (pytest-xdist runs the chunks in parallel); no timing file, which concurrent
    # lit processes would write at once
    r = _lit("-v", "-j", "1", "--skip-test-time-recording", *(str(p) for p in LIT_FILES[chunk::CHUNKS]), server=warm_server)
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.slow
def test_slow_lit() -> None:
    """The `// REQUIRES: slow` files pass `lit` with the feature on (`./test.sh -m slow`)."""
    r = _lit("-v", *(str(p) for p in SLOW_LIT_FILES), slow=True)
    assert r.returncode == 0 and "UNSUPPORTED" not in r.stdout, r.stdout + r.stderr


@pytest.mark.parametrize(
    "case",
    [
        ("lit_tests/passes/fold_structural.mlir", "-p", "cleave-fold-structural", "--split-input-file"),
        ("-", "-p", "cleave-decompose"),  # stdin
        ("lit_tests/passes/fold_structural.mlir", "-p", "cleave-nonsense"),  # an error: one line, exit 1
    ],
)
def test_a_warm_cleave_opt_is_cleave_opt(case: tuple[str, ...], warm_server: str) -> None:
    """Output, errors and exit status of a warm run are those of a cold `cleave-opt` process."""
    stdin = (LIT_DIR / "passes" / "fold_structural.mlir").read_text().split("// -----")[1]
    bindir = Path(sys.executable).parent
    cold = subprocess.run([str(bindir / "cleave-opt"), *case], input=stdin, capture_output=True, text=True, cwd=ROOT)
    warm = subprocess.run([sys.executable, "-I", "-S", str(LIT_DIR / "warm_opt.py"), warm_server, *case], input=stdin, capture_output=True, text=True, cwd=ROOT)
    assert (warm.returncode, warm.stdout, warm.stderr) == (cold.returncode, cold.stdout, cold.stderr)
    assert cold.stdout or cold.returncode == 1


T44 = "!tgraph.tensor<[4, 4], f32>"


@pytest.mark.parametrize(
    "status, case",
    [
        (0, ("cleave-run", "lit_tests/passes/canonicalize_unit_reshapes.mlir")),
        (0, ("cleave-run", "-", "--seed", "3")),  # stdin
        (1, ("cleave-run", "lit_tests/no_such_file.mlir")),  # an error: one line
        (0, ("filecheck", "{checks}")),  # stdin matches
        (2, ("filecheck", "{checks}", "--check-prefix=NOPE")),  # no check string with that prefix
        (1, ("filecheck", "{checks}", "--input-file", "{nan}")),  # a CHECK-NOT that matches: the mismatch shown
    ],
)
def test_a_warm_cleave_run_or_filecheck_is_the_tool(status: int, case: tuple[str, ...], warm_server: str, tmp_path: Path) -> None:
    """lit's `cleave-run` and `filecheck` lines run warm too (`warm_opt.py --tool`): output, errors and
    exit status are those of the installed console script."""
    (tmp_path / "checks.txt").write_text("// CHECK: @g output 0: shape [4, 4]\n// CHECK-NOT: nan\n")
    (tmp_path / "nan.txt").write_text("@g output 0: shape [4, 4] f32 sum nan\n")
    tool, *args = (a.format(checks=tmp_path / "checks.txt", nan=tmp_path / "nan.txt") for a in case)
    stdin = "@g output 0: shape [4, 4] f32 sum 1.5\n" if tool == "filecheck" else f"tgraph.graph @g(%a: {T44}) -> {T44} {{\n  %b = tgraph.exp %a : {T44}\n  tgraph.output %b : {T44}\n}}\n"
    bindir = Path(sys.executable).parent
    cold = subprocess.run([str(bindir / tool), *args], input=stdin, capture_output=True, text=True, cwd=ROOT)
    warm = subprocess.run([sys.executable, "-I", "-S", str(LIT_DIR / "warm_opt.py"), "--tool", tool, warm_server, *args], input=stdin, capture_output=True, text=True, cwd=ROOT)
    assert (warm.returncode, warm.stdout, warm.stderr) == (cold.returncode, cold.stdout, cold.stderr)
    assert cold.returncode == status, cold.stdout + cold.stderr
    if status:  # a failure says why
        assert cold.stderr
    elif tool == "cleave-run":  # the report
        assert " output 0: shape " in cold.stdout
