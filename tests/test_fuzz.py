"""Seeded mutation fuzzing of the tools: any input gives a result or one error line, exit 1.

Mutants of examples/*.mlir (byte flips, truncation, duplicated or swapped lines, number
mutations, deep nesting, invalid UTF-8 and NUL bytes, renamed symbols and values) go through
`cleave-opt`, `cleave-run`, `cleave compile` (without --gpu, a small search) and the Python API's
`parse_module_text`, in-process through their `main()` functions (a subprocess costs ~1 s of
start-up), plus a few real subprocess runs. Each run must exit 0 or 1, print no traceback, print
exactly one error line when it fails, and stay within a bound on its CPU time (a run past twice its
bound, or far past it in wall-clock time, is stopped, so a hang is reported, not waited for). `bench/fuzz.py` runs the same checks on 1,000+
mutants.
"""

from __future__ import annotations

import contextlib
import io
import random
import re
import resource
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from conftest import EXAMPLE_FILES, ROOT
from cleave_ir import compile as cleave_compile
from cleave_ir import driver
from cleave_ir import run as cleave_run
from cleave_ir.diagnostics import CleaveError, parse_module_text

EXAMPLES = {p.name: p.read_bytes() for p in EXAMPLE_FILES}

INTERESTING_NUMBERS = [
    b"0", b"-1", b"-4096", b"1", b"2", b"3", b"7", b"16", b"64", b"4096", b"2147483648", b"9223372036854775807", b"9223372036854775808",
    b"18446744073709551616", b"340282366920938463463374607431768211456", b"1" + b"0" * 5000,
]
GARBAGE = [b"\xff", b"\xfe\xff", b"\xc3", b"\xed\xa0\x80", b"\x00", b"\xe2\x82", b"\x80\x80", b"\xf4\x90\x80\x80"]
NESTINGS = [
    lambda n: b"(" * n + b"4" + b")" * n,  # a dim expression
    lambda n: b"[" * n + b"]" * n,  # an array attribute
    lambda n: b"{a = " * n + b"1" + b"}" * n,  # dictionaries
    lambda n: b"!tgraph.tensor<[" * n + b"4], f32>" * n,  # types in types
]

# ------------------------------------------------------------------------------------ mutators

Mutator = Callable[[random.Random, bytes], bytes]


def flip_bytes(rng: random.Random, data: bytes) -> bytes:
    b = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        b[rng.randrange(len(b))] = rng.randrange(256)
    return bytes(b)


def truncate(rng: random.Random, data: bytes) -> bytes:
    return data[: rng.randrange(len(data))]


def _lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True)


def duplicate_line(rng: random.Random, data: bytes) -> bytes:
    lines = _lines(data)
    i = rng.randrange(len(lines))
    return b"".join(lines[: i + 1] + [lines[i]] * rng.choice([1, 2, 50]) + lines[i + 1 :])


def swap_lines(rng: random.Random, data: bytes) -> bytes:
    """Often a value used before its definition."""
    lines = _lines(data)
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    lines[i], lines[j] = lines[j], lines[i]
    return b"".join(lines)


def delete_line(rng: random.Random, data: bytes) -> bytes:
    lines = _lines(data)
    del lines[rng.randrange(len(lines))]
    return b"".join(lines)


def mutate_number(rng: random.Random, data: bytes) -> bytes:
    numbers = list(re.finditer(rb"\d+", data))
    if not numbers:
        return data
    m = rng.choice(numbers)
    if rng.random() < 0.5:  # every occurrence: keeps the graph consistent, so deeper code runs
        return data.replace(m.group(), rng.choice(INTERESTING_NUMBERS))
    return data[: m.start()] + rng.choice(INTERESTING_NUMBERS) + data[m.end() :]


def insert_nesting(rng: random.Random, data: bytes) -> bytes:
    at = rng.randrange(len(data))
    return data[:at] + rng.choice(NESTINGS)(rng.choice([50, 300, 3000])) + data[at:]


def insert_garbage(rng: random.Random, data: bytes) -> bytes:
    at = rng.randrange(len(data))
    return data[:at] + rng.choice(GARBAGE) + data[at:]


def rename_name(rng: random.Random, data: bytes) -> bytes:
    """A `%value` or `@symbol` renamed at one use: undefined values and symbols, redefinitions."""
    names = list(re.finditer(rb"[%@][A-Za-z_][\w.]*", data))
    if not names:
        return data
    m = rng.choice(names)
    other = rng.choice(names).group() if rng.random() < 0.5 else m.group()[:1] + b"nope"
    return data[: m.start()] + other + data[m.end() :]


def duplicate_file(rng: random.Random, data: bytes) -> bytes:
    return data + data


MUTATORS: list[Mutator] = [
    flip_bytes, truncate, duplicate_line, swap_lines, delete_line, mutate_number, mutate_number,
    insert_nesting, insert_garbage, rename_name, duplicate_file,
]


def mutants(seed: int, count: int) -> Iterator[tuple[str, bytes]]:
    """`count` mutants of the examples (1-3 mutations each), reproducible from `seed`."""
    rng = random.Random(seed)
    names = sorted(EXAMPLES)
    for i in range(count):
        name = rng.choice(names)
        data = EXAMPLES[name]
        steps = []
        for _ in range(rng.choice([1, 1, 2, 3])):
            m = rng.choice(MUTATORS)
            data = m(rng, data) or b"\n"
            steps.append(m.__name__)
        yield f"{seed}-{i}-{Path(name).stem}-{'+'.join(steps)}", data


# ------------------------------------------------------------------------------------ checks

TIME_LIMIT_S = 20.0
"""CPU seconds per input and tool (typical runs take 0.01-1 s). CPU time, not wall-clock time, so
that a machine shared with other jobs does not make a run look hung."""

COMPILE_TIME_LIMIT_S = 90.0
"""CPU seconds for `cleave compile`, which searches, schedules, emits and lowers with TileLang (typically 1-15 s)."""

WALL_FACTOR = 10.0
"""A run still going after this many times its bound in wall-clock time (a deadlock uses no CPU) is stopped."""

RUN_ARGS = ["--max-memory-gb", "0.25", "--resize", "4096=16,8192=16,14336=24,6144=16,576=12,512=8,128=8"]
"""cleave-run shrinks the examples' sizes (so that mutants run) and refuses graphs above 256 MiB."""


@dataclass
class Outcome:
    tool: str
    name: str
    rc: int
    stdout: str
    stderr: str
    seconds: float  # wall-clock
    cpu_seconds: float = 0.0  # of this process (in-process runs)

    def problems(self) -> list[str]:
        """What is wrong with this run (empty if it behaved)."""
        out = []
        limit = COMPILE_TIME_LIMIT_S if self.tool == "cleave-compile" else TIME_LIMIT_S
        if self.rc not in (0, 1):
            out.append(f"exit code {self.rc}")
        if "Traceback" in self.stdout or "Traceback" in self.stderr:
            out.append("traceback")
        lines = self.stderr.splitlines()
        disagree = self.tool == "cleave-run" and "DISAGREE" in self.stdout
        if self.rc == 1 and not disagree and len(lines) != 1:
            out.append(f"{len(lines)} error lines")
        if self.rc == 1 and lines and not re.match(r"^(\S.*:\d+:\d+: |\S+: )?error: \S", lines[0]):
            out.append("error line not in the form 'file:line:col: error: ...'")
        if self.rc == 0 and any(not line.startswith("warning: ") for line in lines):
            out.append("stderr on success")  # but warnings (a kept kernel that serves one size of a dynamic dim)
        if self.cpu_seconds > limit:
            out.append(f"took {self.cpu_seconds:.1f} s of CPU")
        if self.seconds > WALL_FACTOR * limit:
            out.append(f"took {self.seconds:.1f} s")
        return out


class Hang(BaseException):
    """Raised in a run that took far past its time bound (a BaseException: tools do not catch it)."""


@contextlib.contextmanager
def stop_after(cpu_s: float | None, wall_s: float | None = None) -> Iterator[None]:
    """Raise Hang in the main thread once this process has used `cpu_s` more CPU seconds or `wall_s`
    seconds have passed (when Python code next runs); a no-op outside the main thread."""
    if not cpu_s or sys.platform == "win32" or threading.current_thread() is not threading.main_thread():
        yield
        return

    def hang(signum: int, frame: object) -> None:
        raise Hang(f"stopped after {cpu_s:.0f} s of CPU" if signum == signal.SIGPROF else f"stopped after {wall_s:.0f} s")

    old = signal.signal(signal.SIGPROF, hang), signal.signal(signal.SIGALRM, hang)
    signal.setitimer(signal.ITIMER_PROF, cpu_s)
    signal.setitimer(signal.ITIMER_REAL, wall_s or 0)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGPROF, old[0])
        signal.signal(signal.SIGALRM, old[1])


def call_main(
    main: Callable[[list[str]], int], argv: list[str], stdin: bytes | None = None, stop_s: float | None = None
) -> tuple[int, str, str]:
    """Run a tool's `main(argv)` in-process: (exit code, stdout, stderr); SystemExit counts as an exit.
    A run past `stop_s` CPU seconds, or WALL_FACTOR times that in wall-clock time, is stopped (exit code 99)."""
    out, err = io.StringIO(), io.StringIO()
    old_stdin = sys.stdin
    if stdin is not None:
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin))
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                with stop_after(stop_s, stop_s and WALL_FACTOR * stop_s / 2):
                    rc = main(argv)
            except SystemExit as e:
                rc = e.code if isinstance(e.code, int) else 1
            except BaseException as e:  # an escaping exception is the traceback a user would see
                rc, err = 99, io.StringIO(f"Traceback: {type(e).__name__}: {e}")
    finally:
        sys.stdin = old_stdin
    return rc, out.getvalue(), err.getvalue()


def api_main(argv: list[str]) -> int:
    """The Python API as a tool: parse_module_text on the file's bytes; CleaveError is the error line."""
    data = sys.stdin.buffer.read() if argv[0] == "-" else Path(argv[0]).read_bytes()
    try:
        parse_module_text(cleave_run.make_context(), data, argv[0])
    except CleaveError as e:
        print(str(e), file=sys.stderr)
        return 1
    return 0


COMPILE_ARGS = ["--no-cache", "--keep", "1", "--top-k", "1", "--search-budget", "200", "--split-counts", "2", "-j", "1"]
"""`cleave compile` with a small search (the mutants' own sizes: compile does not interpret)."""


def compile_main(argv: list[str]) -> int:
    """`cleave compile FILE -o FILE.py` (no GPU), the kernel module written beside the input."""
    return cleave_compile.main(["compile", argv[0], "-o", str(Path(argv[0]).with_suffix(".py")), *argv[1:]])


TOOLS: dict[str, tuple[Callable[[list[str]], int], list[str]]] = {
    "cleave-opt": (driver.main, []),
    "cleave-run": (cleave_run.main, RUN_ARGS),
    "api": (api_main, []),
    "cleave-compile": (compile_main, COMPILE_ARGS),
}

FAST_TOOLS = ("cleave-opt", "cleave-run", "api")
"""The tools that take well under a second per input (`cleave-compile` lowers with TileLang)."""


def check_file(path: Path, name: str, tools: tuple[str, ...] = FAST_TOOLS) -> list[Outcome]:
    outcomes = []
    for tool in tools:
        main, extra = TOOLS[tool]
        limit = COMPILE_TIME_LIMIT_S if tool == "cleave-compile" else TIME_LIMIT_S
        t0, c0 = time.perf_counter(), time.process_time()
        with np.errstate(all="ignore"):
            rc, out, err = call_main(main, [str(path), *extra], stop_s=2 * limit)
        outcomes.append(Outcome(tool, name, rc, out, err, time.perf_counter() - t0, time.process_time() - c0))
    return outcomes


def max_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# ------------------------------------------------------------------------------------ tests

CI_SEED, CI_COUNT = 12, 40


@pytest.fixture(scope="module")
def ci_outcomes(tmp_path_factory: pytest.TempPathFactory) -> list[Outcome]:
    d = tmp_path_factory.mktemp("fuzz")
    outcomes = []
    for name, data in mutants(CI_SEED, CI_COUNT):
        path = d / "input.mlir"
        path.write_bytes(data)
        outcomes += check_file(path, name)
    return outcomes


def test_mutants_give_a_result_or_one_error_line(ci_outcomes: list[Outcome]):
    bad = [f"{o.tool} {o.name}: {', '.join(o.problems())}: {o.stderr[:300]!r}" for o in ci_outcomes if o.problems()]
    assert not bad, "\n".join(bad)
    # the mutants are not all rejected at once: some parse, some run
    assert any(o.rc == 0 for o in ci_outcomes if o.tool == "cleave-opt")
    assert any(o.rc == 1 for o in ci_outcomes if o.tool == "cleave-run")


CI_COMPILE_SEED, CI_COMPILE_COUNT = 101, 10
"""Ten mutants, one of which parses (and goes through the search, emission and lowering)."""


def test_compile_mutants_give_a_result_or_one_error_line(tmp_path: Path):
    """`cleave compile` (no GPU, a small search) on a few mutants: the same checks as the other tools."""
    outcomes = []
    for name, data in mutants(CI_COMPILE_SEED, CI_COMPILE_COUNT):
        path = tmp_path / "input.mlir"
        path.write_bytes(data)
        outcomes += check_file(path, name, ("cleave-compile",))
    bad = [f"{o.name}: {', '.join(o.problems())}: {o.stderr[:300]!r}" for o in outcomes if o.problems()]
    assert not bad, "\n".join(bad)
    assert sum(o.rc == 1 for o in outcomes) >= CI_COMPILE_COUNT - 1
    assert not (tmp_path / "input.py").exists() or any(o.rc == 0 for o in outcomes)  # -o only on success


def test_a_hang_is_stopped():
    """A run spinning past its CPU bound, or blocked far past it in wall-clock time, is stopped and reported."""

    def spin(argv: list[str]) -> int:
        while True:
            pass

    def block(argv: list[str]) -> int:
        time.sleep(60)
        return 0

    for main, message in ((spin, "s of CPU"), (block, "stopped after 1 s")):
        t0 = time.perf_counter()
        rc, out, err = call_main(main, [], stop_s=0.2)
        assert rc == 99 and err.startswith("Traceback: Hang: stopped after") and message in err, err
        assert time.perf_counter() - t0 < 30
        assert Outcome("t", "n", rc, out, err, time.perf_counter() - t0).problems()[:2] == ["exit code 99", "traceback"]


def test_mutators_are_reproducible():
    assert list(mutants(3, 5)) == list(mutants(3, 5))
    assert list(mutants(3, 5)) != list(mutants(4, 5))


def _graph(dims: str, body: str = "") -> bytes:
    t = f"!tgraph.tensor<[{dims}], f32>"
    return f"tgraph.graph @g(%a: {t}) -> {t} {{\n{body}  tgraph.output %a : {t}\n}}\n".encode()


T = "!tgraph.tensor<[4, 4], f32>"
CASES: dict[str, tuple[bytes, str]] = {
    # name: (input, a regex the error line must match; "" where the input is valid)
    "utf8": (b"// \xff\n" + _graph("4"), r"^in\.mlir:1:4: error: invalid UTF-8 byte 0xff$"),
    "nul": (_graph("4").replace(b"%a:", b"%a\x00:"), r"^in\.mlir:1:\d+: error: .*\\x00"),
    "dim 2^63": (_graph("9223372036854775808, 4"), ""),
    "dim 2^64": (_graph("18446744073709551616, 18446744073709551616"), ""),
    "negative dim": (_graph("-4, 4"), r"^in\.mlir:1:\d+: error: "),
    "deep nesting": (_graph("(" * 5000 + "4" + ")" * 5000), r"^in\.mlir:1:\d+: error: input nested too deeply$"),
    "use before def": (
        f"tgraph.graph @g(%a: {T}) -> {T} {{\n  %c = tgraph.exp %b : {T}\n  %b = tgraph.exp %a : {T}\n"
        f"  tgraph.output %c : {T}\n}}\n".encode(),
        r"^in\.mlir:2:3: error: tgraph\.exp: operand #0 \(%b\) is used before it is defined$",
    ),
    "undefined value": (
        f"tgraph.graph @g(%a: {T}) -> {T} {{\n  %c = tgraph.exp %zz : {T}\n  tgraph.output %c : {T}\n}}\n".encode(),
        r"^in\.mlir:2:19: error: use of undefined value %zz$",  # at its use, not at the end of the file
    ),
    "text after an op": (  # xDSL says only "in block definition"
        f"tgraph.graph @g(%a: {T}) -> {T} {{\n  %c = tgraph.exp %a : {T} -> {T}\n  tgraph.output %c : {T}\n}}\n".encode(),
        r"^in\.mlir:2:52: error: unexpected '->' after tgraph\.exp; its form is: tgraph\.exp \$input attr-dict `:` type\(\$input\)$",
    ),
    "redefined symbol": (_graph("4") + _graph("4"), r'^in\.mlir:4:1: error: Redefinition of symbol "g"$'),
    "truncated": (_graph("4")[:40], r"^in\.mlir:1:\d+: error: "),
    "huge digits": (_graph("9" * 300000), r"^in\.mlir:1:\d+: error: .*digits"),
    # xDSL alone takes seconds and a gigabyte to compute the bounds of an i2147483648 (minutes on a busy machine)
    "integer width 2^31": (
        _graph("4").replace(b"%a: !tgraph.tensor<[4], f32>", b"%a: !tgraph.tensor<[4], f32> {cleave.x = 1 : i2147483648}"),
        r"^in\.mlir:1:\d+: error: integer bitwidth is limited to 16777215 bits$",
    ),
    "empty": (b"", r"^in\.mlir:1:1: error: Could not parse entire input!$"),  # as in xdsl-opt
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_inputs_every_tool(case: str, tmp_path: Path):
    data, pattern = CASES[case]
    path = tmp_path / "in.mlir"
    path.write_bytes(data)
    for o in check_file(path, case):
        assert not o.problems(), (o.tool, o.problems(), o.stderr)
        if pattern:  # every tool rejects it the same way
            assert o.rc == 1 and re.search(pattern, o.stderr.removeprefix(f"{tmp_path}/")), (o.tool, o.stderr)
        elif o.tool != "cleave-run":  # valid; cleave-run may still refuse to interpret it
            assert o.rc == 0, (o.tool, o.stderr)


def test_huge_dims_trip_the_memory_guard(tmp_path: Path):
    """Dims of 2^64: an estimate far past int64 is refused, not an overflow in numpy."""
    path = tmp_path / "in.mlir"
    path.write_bytes(_graph("18446744073709551616, 18446744073709551616"))
    rc, out, err = call_main(cleave_run.main, [str(path), "--max-memory-gb", "1e300"])
    assert rc == 1 and out == ""
    assert re.match(rf"^{re.escape(str(path))}:\d+:\d+: error: @g needs about 2\^\d+ GiB to interpret", err), err


MAX_RATIO = 6.0
"""Four times the dims: linear takes at most 4 times as long (less, with the tools' fixed start-up
cost), quadratic up to 16 times; 6 leaves room for noise and fails once a quadratic term costs about
as much as the linear work at the larger size."""


@pytest.mark.parametrize(
    "sizes", [(1000, 4000), pytest.param((10000, 40000), marks=pytest.mark.slow)], ids=["1000-4000", "10000-40000"]
)
def test_long_line_is_linear(sizes: tuple[int, int], tmp_path: Path):
    """A type with many dims: four times the length takes about four times the time.

    CPU times are compared on the same machine within the test (a ratio, not seconds), each the
    fastest of interleaved repetitions so that a busy CI machine does not count; a ratio past
    MAX_RATIO is measured once more before it fails.
    """
    small, large = (tmp_path / f"long{n}.mlir" for n in sizes)
    for path, n in zip((small, large), sizes):
        path.write_bytes(_graph(", ".join(["2"] * n)))
    for o in check_file(large, "long", ("cleave-opt", "cleave-run")):
        assert not o.problems(), (o.tool, o.problems(), o.stderr)
        if o.tool == "cleave-opt":
            assert o.rc == 0
        else:
            assert re.match(r"^error: @g: cannot interpret a value of rank \d+", o.stderr)
    best = {small: float("inf"), large: float("inf")}
    ratio = float("inf")
    for _ in range(3):
        for path in (small, large):
            (o,) = check_file(path, path.stem, ("cleave-opt",))
            assert o.rc == 0, o.stderr
            best[path] = min(best[path], o.cpu_seconds)
        ratio = best[large] / best[small]
        if ratio < MAX_RATIO:
            break
    assert ratio < MAX_RATIO, (ratio, best)


def test_directory_and_missing_file(tmp_path: Path):
    for tool in ("cleave-opt", "cleave-run"):
        main = TOOLS[tool][0]
        rc, out, err = call_main(main, [str(tmp_path)])
        assert (rc, out) == (1, "") and err == f"error: cannot read {tmp_path}: it is a directory\n", (tool, err)
        rc, out, err = call_main(main, [str(tmp_path / "nope.mlir")])
        assert (rc, out) == (1, "") and len(err.splitlines()) == 1 and "nope.mlir" in err, (tool, err)


def test_stdin_dash(tmp_path: Path):
    data = EXAMPLES["matmul.mlir"]
    rc, out, err = call_main(driver.main, ["-"], stdin=data)
    assert rc == 0 and err == "" and "tgraph.graph @matmul" in out
    rc, out, err = call_main(driver.main, ["-"], stdin=b"\xff")
    assert (rc, out, err) == (1, "", "stdin:1:1: error: invalid UTF-8 byte 0xff\n")
    rc, out, err = call_main(cleave_run.main, ["-", "--resize", "4096=8"], stdin=data)
    assert rc == 0 and err == "" and "@matmul output 0: shape [8, 8] f16" in out
    rc, out, err = call_main(cleave_run.main, ["-"], stdin=b"tgraph.graph @g(\xff")
    assert (rc, out, err) == (1, "", "<stdin>:1:17: error: invalid UTF-8 byte 0xff\n")


def test_cleave_opt_output_file_only_on_success(tmp_path: Path):
    good, bad = tmp_path / "good.mlir", tmp_path / "bad.mlir"
    good.write_bytes(EXAMPLES["matmul.mlir"])
    bad.write_bytes(CASES["use before def"][0])
    out = tmp_path / "out.mlir"
    assert call_main(driver.main, [str(bad), "-o", str(out)])[0] == 1
    assert not out.exists()
    assert call_main(driver.main, [str(good), "-o", str(out)]) == (0, "", "")
    assert "tgraph.graph @matmul" in out.read_text()
    before = out.read_text()
    assert call_main(driver.main, [str(bad), "-o", str(out)])[0] == 1
    assert out.read_text() == before  # a failed run leaves an earlier result alone
    rc, stdout, err = call_main(driver.main, [str(good), "-o", str(tmp_path / "no" / "out.mlir")])
    assert (rc, stdout) == (1, "") and err == f"error: cannot write {tmp_path}/no/out.mlir: no such directory {tmp_path}/no\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.mlir", "good.mlir", "out.mlir"]  # no temporary left


def test_subprocess_runs(tmp_path: Path):
    """A few mutants through the installed scripts, concurrently: what a user sees in a terminal."""
    picks = [m for m in mutants(99, 3)]
    procs = []
    for i, (name, data) in enumerate(picks):
        path = tmp_path / f"m{i}.mlir"
        path.write_bytes(data)
        tool, extra = ("cleave-opt", []) if i % 2 == 0 else ("cleave-run", RUN_ARGS)
        procs.append((tool, name, subprocess.Popen([tool, str(path), *extra], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)))
    for tool, name, p in procs:
        out, err = p.communicate(timeout=120)
        o = Outcome(tool, name, p.returncode, out, err, 0.0)
        assert not o.problems(), (tool, name, o.problems(), err)
