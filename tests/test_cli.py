"""The installed console scripts: cleave-opt, cleave-run, and stock xdsl-opt through the plugin.

Every bad input must give exactly one line on stderr (`file:line:col: error: ...` where the input
has a location), exit code 1, and no Python traceback.

Each console script costs ~1 s of interpreter start-up, so the subprocess invocations are all
started at once by the module-scoped `runs` fixture (concurrently) and the tests check their
results; a few extra variants are checked in-process through `main(argv)`, which is the same code
(an exception escaping `main` would fail those tests just as a traceback would).
"""

from __future__ import annotations

import contextlib
import io
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from conftest import EXAMPLES_DIR, ROOT, only_graph, parse_text, run_tools_parallel
from cleave_ir import compile as compile_mod
from cleave_ir import driver
from cleave_ir import run as cleave_run
from cleave_ir.interpreter import random_inputs, run_graph

T44 = "!tgraph.tensor<[4, 4], f32>"


def assert_one_line_error(proc: subprocess.CompletedProcess[str], pattern: str) -> str:
    """exit 1, no traceback, exactly one stderr line, matching `pattern` (a regex)."""
    assert proc.returncode == 1, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert re.search(pattern, lines[0]), lines[0]
    return lines[0]


# --------------------------------------------------------------------------- inputs

BAD_INPUTS = {
    # a graph whose closing brace is missing
    "syntax": (
        f"tgraph.graph @g(%a: {T44}) -> {T44} {{\n"
        f"  %b = tgraph.exp %a : {T44}\n"
        f"  tgraph.output %b : {T44}\n",
        r"^bad_syntax\.mlir:\d+:\d+: error: ",
    ),
    # a type that is cut short
    "syntax_type": (
        f"tgraph.graph @g(%a: {T44}) -> {T44} {{\n"
        f"  %b = tgraph.exp %a : !tgraph.tensor<[4, 4], f32\n"
        f"  tgraph.output %b : {T44}\n}}\n",
        r"^bad_syntax_type\.mlir:3:\d+: error: '>' expected",
    ),
    "unknown_op": (
        f"tgraph.graph @g(%a: {T44}) -> {T44} {{\n"
        f"  %b = tgraph.frobnicate %a : {T44}\n"
        f"  tgraph.output %b : {T44}\n}}\n",
        r"^bad_unknown_op\.mlir:2:\d+: error: .*tgraph\.frobnicate.*not registered",
    ),
    # an attribute its verifier rejects, inside another: located where the inner one is written
    "boundary_view": (
        f"tgraph.graph @g(%a: {T44}) -> {T44} attributes {{cleave.boundary = #cleave.boundary<inputs = "
        f"[#cleave.view<input = 0, perm = [1, 1]>], outputs = [#cleave.part<output = 0>]>}} {{\n"
        f"  tgraph.output %a : {T44}\n}}\n",
        r"^bad_boundary_view\.mlir:1:138: error: cleave\.view: perm \[1, 1\] is not a permutation$",
    ),
    "matmul_shape": (
        "tgraph.graph @g(%a: !tgraph.tensor<[4, 8], f32>, %b: !tgraph.tensor<[4, 4], f32>) "
        f"-> {T44} {{\n"
        f"  %c = tgraph.matmul %a, %b : !tgraph.tensor<[4, 8], f32>, {T44} -> {T44}\n"
        f"  tgraph.output %c : {T44}\n}}\n",
        r"^bad_matmul_shape\.mlir:2:3: error: tgraph\.matmul: contracting dims differ: 8 vs 4$",
    ),
    "split_divide": (
        "tgraph.graph @g(%a: !tgraph.tensor<[4, 10], f32>) -> !tgraph.tensor<[3, 4, 3], f32> {\n"
        "  %c = tgraph.split %a dim 1 : !tgraph.tensor<[4, 10], f32> -> !tgraph.tensor<[3, 4, 3], f32>\n"
        "  tgraph.output %c : !tgraph.tensor<[3, 4, 3], f32>\n}\n",
        r"^bad_split_divide\.mlir:2:3: error: tgraph\.split: 3 parts do not divide dim 1 of size 10$",
    ),
    "element_type": (
        "tgraph.graph @g(%a: !tgraph.tensor<[4, 4], i32>) -> !tgraph.tensor<[4, 4], i32> {\n"
        "  tgraph.output %a : !tgraph.tensor<[4, 4], i32>\n}\n",
        r"^bad_element_type\.mlir:1:\d+: error: tgraph\.tensor element type must be f16, bf16, "
        r"f32 or f64, got i32$",
    ),
    "broadcast": (
        f"tgraph.graph @g(%a: !tgraph.tensor<[4, 3], f32>, %b: {T44}) -> {T44} {{\n"
        f"  %c = tgraph.add %a, %b : !tgraph.tensor<[4, 3], f32>, {T44} -> {T44}\n"
        f"  tgraph.output %c : {T44}\n}}\n",
        r"^bad_broadcast\.mlir:2:3: error: tgraph\.add: dim 1 does not broadcast: 3 vs 4",
    ),
    "zero_dim": (
        "tgraph.graph @g(%a: !tgraph.tensor<[0, 4], f32>) -> !tgraph.tensor<[0, 4], f32> {\n"
        "  tgraph.output %a : !tgraph.tensor<[0, 4], f32>\n}\n",
        r"^bad_zero_dim\.mlir:1:\d+: error: dims must be positive",
    ),
    "output_mismatch": (
        f"tgraph.graph @g(%a: {T44}) -> !tgraph.tensor<[4, 5], f32> {{\n"
        f"  tgraph.output %a : {T44}\n}}\n",
        r"^bad_output_mismatch\.mlir:1:1: error: tgraph\.graph @g: tgraph\.output returns",
    ),
    "reshape": (
        f"tgraph.graph @g(%a: {T44}) -> !tgraph.tensor<[16], f32> {{\n"
        f"  %c = tgraph.reshape %a : {T44} -> !tgraph.tensor<[16], f32>\n"
        f"  tgraph.output %c : !tgraph.tensor<[16], f32>\n}}\n",
        r"^bad_reshape\.mlir:2:3: error: tgraph\.reshape may only add or drop size-1 dims",
    ),
}
# the cases checked through the installed scripts; the others in-process
SUBPROCESS_CASES = ("syntax", "unknown_op", "matmul_shape", "split_divide", "element_type")
CLEAVE_RUN_CASES = ("matmul_shape",)

T35 = "!tgraph.tensor<[3, 5], f32>"
GRAPH = """tgraph.graph @{name}(%x: {t}) -> {t} {{
  {body}
  tgraph.output %y : {t}
}}
"""
BODY_EXP = f"%y = tgraph.exp %x : {T35}"
# exp(x) computed another way: 1 / exp(-x)
BODY_EXP2 = (
    f"%n = tgraph.neg %x : {T35}\n  %e = tgraph.exp %n : {T35}\n"
    f"  %y = tgraph.reciprocal %e : {T35}"
)
BODY_SIGMOID = f"%y = tgraph.sigmoid %x : {T35}"


def module_text(*graphs: tuple[str, str]) -> str:
    return "".join(GRAPH.format(name=n, body=b, t=T35) for n, b in graphs)


SYMBOLIC = """tgraph.graph @sym(%a: !tgraph.tensor<[N, K], f32>, %b: !tgraph.tensor<[K, 2], f32>) -> !tgraph.tensor<[N, 2], f32> {
  %c = tgraph.matmul %a, %b : !tgraph.tensor<[N, K], f32>, !tgraph.tensor<[K, 2], f32> -> !tgraph.tensor<[N, 2], f32>
  tgraph.output %c : !tgraph.tensor<[N, 2], f32>
}
"""

FILES = {
    "agree.mlir": module_text(("a", BODY_EXP), ("b", BODY_EXP2)),
    "disagree.mlir": module_text(("a", BODY_EXP), ("b", BODY_SIGMOID)),
    "exp.mlir": module_text(("a", BODY_EXP)),
    "sym.mlir": SYMBOLIC,
    **{f"bad_{case}.mlir": text for case, (text, _) in BAD_INPUTS.items()},
}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("cli")
    for name, text in FILES.items():
        (d / name).write_text(text)
    return d


@pytest.fixture(scope="module")
def runs(workdir: Path) -> dict[str, subprocess.CompletedProcess[str]]:
    """Every subprocess invocation of this module, run concurrently; keyed by a short name."""
    w = {"cwd": workdir}
    root = {"cwd": ROOT}
    calls: dict[str, tuple[tuple[str, ...], dict]] = {
        "opt --version": (("cleave-opt", "--version"), root),
        "opt --help": (("cleave-opt", "--help"), root),
        "opt missing": (("cleave-opt", "nope.mlir"), w),
        "opt unknown pass": (("cleave-opt", "-p", "cleave-no-such-pass", "examples/matmul.mlir"), root),
        "run agree": (("cleave-run", "agree.mlir", "--seed", "7"), w),
        "run disagree": (("cleave-run", "disagree.mlir"), w),
        "run --graph b": (("cleave-run", "disagree.mlir", "--graph", "b"), w),
        "run --bind": (("cleave-run", "sym.mlir", "--bind", "N=3", "--bind", "K=5"), w),
        "run --resize": (("cleave-run", "examples/mha.mlir", "--resize", "4096=64"), root),
        "run full mha": (("cleave-run", "examples/mha.mlir"), root),
        "run stdin": (
            ("cleave-run", "-", "--resize", "4096=32"),
            {"input": (EXAMPLES_DIR / "matmul_rowsum.mlir").read_text(), **root},
        ),
        "xdsl-opt": (("xdsl-opt", "examples/mha.mlir"), root),
        "xdsl-opt symbolize": (("xdsl-opt", "-p", "cleave-symbolize", "examples/mha.mlir"), root),
    }
    for case in SUBPROCESS_CASES:
        calls[f"opt bad {case}"] = (("cleave-opt", f"bad_{case}.mlir"), w)
    for case in CLEAVE_RUN_CASES:
        calls[f"run bad {case}"] = (("cleave-run", f"bad_{case}.mlir"), w)
    return run_tools_parallel(calls)


OUTPUT_LINE = re.compile(
    r"^@(\w+) output (\d+): shape \[([\d, ]*)\] (\w+) sum (\S+) abs-sum (\S+)$"
)


def output_lines(stdout: str) -> dict[str, tuple[list[int], str, float, float]]:
    """`{graph: (shape, element type, sum, abs-sum)}` from cleave-run's report (output 0)."""
    out = {}
    for line in stdout.splitlines():
        if m := OUTPUT_LINE.match(line):
            shape = [int(d) for d in m.group(3).split(",")] if m.group(3) else []
            out[m.group(1)] = (shape, m.group(4), float(m.group(5)), float(m.group(6)))
    return out


def checksums(text: str, seed: int, bindings: dict[str, int] | None = None) -> tuple[float, float]:
    """sum and abs-sum of the (single) graph's output, computed in-process."""
    graph = only_graph(parse_text(text))
    (out,) = run_graph(graph, random_inputs(graph, seed, bindings), bindings=bindings)
    return float(np.sum(out)), float(np.sum(np.abs(out)))


# --------------------------------------------------------------------------- cleave-opt basics


def test_cleave_opt_version(runs):
    p = runs["opt --version"]
    assert p.returncode == 0, p.stderr
    assert re.search(r"cleave-opt 0\.1\.0 built on xdsl 0\.74", p.stdout + p.stderr)


def test_cleave_opt_help(runs):
    p = runs["opt --help"]
    assert p.returncode == 0, p.stderr
    assert "usage: cleave-opt" in p.stdout and "Cleave-IR" in p.stdout


def test_cleave_run_help(capsys):
    with pytest.raises(SystemExit) as exc:
        cleave_run.main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "usage: cleave-run" in out
    for flag in ("--seed", "--graph", "--bind", "--resize", "--mode", "--max-memory-gb"):
        assert flag in out


# --------------------------------------------------------------------------- bad inputs


@pytest.mark.parametrize("case", SUBPROCESS_CASES)
def test_cleave_opt_bad_input(runs, case: str):
    p = runs[f"opt bad {case}"]
    assert_one_line_error(p, BAD_INPUTS[case][1])
    assert p.stdout == ""


@pytest.mark.parametrize("case", CLEAVE_RUN_CASES)
def test_cleave_run_bad_input(runs, case: str):
    p = runs[f"run bad {case}"]
    assert_one_line_error(p, BAD_INPUTS[case][1])
    assert p.stdout == ""


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
@pytest.mark.parametrize("main", [driver.main, cleave_run.main], ids=["cleave-opt", "cleave-run"])
def test_bad_input_in_process(workdir: Path, case: str, main, capsys, monkeypatch):
    monkeypatch.chdir(workdir)
    rc = main([f"bad_{case}.mlir"])
    out, err = capsys.readouterr()
    assert rc == 1
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert re.search(BAD_INPUTS[case][1], lines[0]), lines[0]


def test_missing_file(runs, workdir: Path, capsys, monkeypatch):
    assert_one_line_error(runs["opt missing"], r"^error: .*nope\.mlir")
    monkeypatch.chdir(workdir)
    assert cleave_run.main(["nope.mlir"]) == 1
    assert capsys.readouterr().err == "error: cannot read nope.mlir: No such file or directory\n"


def test_unknown_pass(runs):
    assert_one_line_error(runs["opt unknown pass"], r"^error: .*cleave-no-such-pass")


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("cleave-superoptimize{max-ops=x}", "error: cleave-superoptimize: option max-ops expects an integer, got 'x'"),
        ("cleave-superoptimize{max-opz=3}", "error: cleave-superoptimize: unknown option 'max-opz' (options: max-ops, "),
        ("cleave-symbolize{x=1}", "error: cleave-symbolize: unknown option 'x' (options: none)"),
        ("cleave-concretize{split-counts=a,b}", "error: cleave-concretize: option split-counts expects a comma-separated list of integers, got 'a,b'"),
        ("cleave-place-memory{strict=maybe}", "error: cleave-place-memory: option strict expects true or false, got 'maybe'"),
        ("cleave-superoptimize{time-limit=0}", "error: cleave-superoptimize: time-limit must be positive, got 0.0"),
        ("cleave-concretize{max-check-gb=0}", "error: cleave-concretize: max-check-gb must be positive, got 0.0"),
        # checked when the pipeline is parsed: no search runs first
        ("cleave-pipeline{top-k=0}", "error: cleave-pipeline: top-k must be at least 1"),
        ("cleave-pipeline{keep=0}", "error: cleave-pipeline: keep must be at least 1"),
        ("cleave-pipeline{search-budget=abc}", "error: cleave-pipeline: option search-budget expects an integer, got 'abc'"),
    ],
)
def test_bad_pass_options_are_one_line(spec: str, expected: str, capsys) -> None:
    """A bad option value names the pass, the option and what it takes, before any pass runs."""
    assert driver.main([str(EXAMPLES_DIR / "matmul.mlir"), "-p", spec]) == 1
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1 and err.startswith(expected), err


def test_float_pass_options_take_integers(capsys, tmp_path: Path) -> None:
    """`time-limit=5` and `max-check-gb=1`: xDSL's conversion refused an integer for a float option."""
    (tmp_path / "g.mlir").write_text(GRAPH.format(name="g", t=T35, body=BODY_EXP))
    spec = "cleave-superoptimize{time-limit=5},cleave-concretize{max-check-gb=1}"
    assert driver.main([str(tmp_path / "g.mlir"), "-p", spec]) == 0, capsys.readouterr().err


def test_cleave_opt_symbolize_and_bind_values(capsys, tmp_path: Path):
    assert driver.main([str(EXAMPLES_DIR / "matmul.mlir"), "-p", "cleave-symbolize"]) == 0
    sym = capsys.readouterr().out
    assert "%a: !tgraph.tensor<[d0, d1], f16>, %b: !tgraph.tensor<[d1, d2], f16>" in sym
    (tmp_path / "s.mlir").write_text(sym)
    rc = driver.main([str(tmp_path / "s.mlir"), "-p", 'cleave-bind{values="d0=2 d1=3 d2=5"}'])
    out, err = capsys.readouterr()
    assert rc == 0, err
    assert "%a: !tgraph.tensor<[2, 3], f16>, %b: !tgraph.tensor<[3, 5], f16>" in out
    assert "bindings" not in out


# --------------------------------------------------------------------------- cleave-run


def test_cleave_run_prints_shape_and_checksum_of_every_graph_and_agrees(runs):
    p = runs["run agree"]
    assert p.returncode == 0, p.stderr
    lines = output_lines(p.stdout)
    assert set(lines) == {"a", "b"}
    s, abs_s = checksums(FILES["exp.mlir"], seed=7)
    assert s != pytest.approx(checksums(FILES["exp.mlir"], seed=0)[0], rel=1e-8)  # --seed matters
    for name in ("a", "b"):
        shape, elt, got_s, got_abs = lines[name]
        assert shape == [3, 5] and elt == "f32"
        assert got_s == pytest.approx(s, rel=1e-8)
        assert got_abs == pytest.approx(abs_s, rel=1e-8)
    assert re.search(
        r"^@b vs @a: agree \(max relative error \S+, tolerance 1e-09\)$", p.stdout, re.M
    ), p.stdout


def test_cleave_run_disagree(runs):
    p = runs["run disagree"]
    assert p.returncode == 1
    assert "Traceback" not in p.stderr
    assert re.search(r"^@b vs @a: DISAGREE \(max relative error", p.stdout, re.M), p.stdout
    assert set(output_lines(p.stdout)) == {"a", "b"}


def test_cleave_run_graph_option(runs, workdir: Path, capsys):
    p = runs["run --graph b"]
    assert p.returncode == 0, p.stderr  # one graph only: nothing to disagree with
    assert set(output_lines(p.stdout)) == {"b"}
    assert "DISAGREE" not in p.stdout
    assert cleave_run.main([str(workdir / "disagree.mlir"), "--graph", "zzz"]) == 1
    out, err = capsys.readouterr()
    assert err == "error: no graph @zzz in the module\n" and out == ""


def test_cleave_run_bind_symbolic(runs, workdir: Path, capsys):
    p = runs["run --bind"]
    assert p.returncode == 0, p.stderr
    shape, elt, s, _ = output_lines(p.stdout)["sym"]
    assert (shape, elt) == ([3, 2], "f32")
    assert s == pytest.approx(checksums(SYMBOLIC, 0, {"N": 3, "K": 5})[0], rel=1e-8)
    # the comma-separated form, in-process
    bindings = cleave_run._parse_pairs(["N=4,K=1"], "--bind", keys_int=False)
    assert bindings == {"N": 4, "K": 1}
    buf = io.StringIO()
    module = cleave_run.load_module(str(workdir / "sym.mlir"))
    assert cleave_run.run_module(module, bindings=bindings, out=buf)
    assert output_lines(buf.getvalue())["sym"][0] == [4, 2]


def test_cleave_run_bind_errors(workdir: Path, capsys):
    assert cleave_run.main([str(workdir / "sym.mlir"), "--bind", "N=3"]) == 1
    assert capsys.readouterr().err == "error: dim K has unbound symbol(s) K\n"
    assert cleave_run.main([str(workdir / "sym.mlir"), "--bind", "N=x"]) == 1
    assert capsys.readouterr().err == "error: --bind expects NAME=POSITIVE_INT, got 'N=x'\n"


def test_cleave_run_resize(runs):
    p = runs["run --resize"]
    assert p.returncode == 0, p.stderr
    assert output_lines(p.stdout)["mha"][:2] == ([1, 32, 64, 128], "f16")


def test_cleave_run_memory_guard_full_size_mha(runs):
    p = runs["run full mha"]
    line = assert_one_line_error(p, r"^examples/mha.mlir:2:1: error: @mha needs about [\d.]+ GiB to interpret")
    assert "[1, 32, 4096, 4096]" in line and "--resize" in line
    assert p.stdout == ""


def test_cleave_run_stdin(runs):
    p = runs["run stdin"]
    assert p.returncode == 0, p.stderr
    assert output_lines(p.stdout)["matmul_rowsum"][:2] == ([32, 1], "f16")


def test_cleave_run_stdin_bad(capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO("tgraph.graph @g("))
    assert cleave_run.main(["-"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1
    assert re.match(r"^<stdin>:1:\d+: error: ", err)


def test_cleave_run_report_follows_redirected_stdout():
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = cleave_run.main([str(EXAMPLES_DIR / "matmul.mlir"), "--resize", "4096=8"])
    assert rc == 0
    assert "@matmul output 0: shape [8, 8] f16" in buf.getvalue()


SPLIT = """tgraph.graph @g(%a: !tgraph.tensor<[4, 12], f32>) -> !tgraph.tensor<[3, 4, 4], f32> {
  %c = tgraph.split %a dim 1 : !tgraph.tensor<[4, 12], f32> -> !tgraph.tensor<[3, 4, 4], f32>
  tgraph.output %c : !tgraph.tensor<[3, 4, 4], f32>
}
"""


def _symbolized_split(tmp_path: Path, capsys) -> Path:
    (tmp_path / "split.mlir").write_text(SPLIT)
    assert driver.main([str(tmp_path / "split.mlir"), "-p", "cleave-symbolize"]) == 0
    (tmp_path / "sym.mlir").write_text(capsys.readouterr().out)
    return tmp_path


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(("cleave-run", "split.mlir", "--resize", "12=7"), id="run-resize-breaks-split"),
        pytest.param(("cleave-opt", "sym.mlir", "-p", 'cleave-bind{values="s=5"}'), id="opt-bind-breaks-split"),
    ],
)
def test_pass_errors_are_one_line_and_exit_1(argv, tmp_path: Path, capsys, monkeypatch):
    """A --resize or cleave-bind that breaks a split's divisibility: one line, exit 1."""
    monkeypatch.chdir(_symbolized_split(tmp_path, capsys))
    main = driver.main if argv[0] == "cleave-opt" else cleave_run.main
    assert main(list(argv[1:])) == 1
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1
    assert re.search(r"@g: .*d1/s is not an integer", err)


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(("cleave-run", "split.mlir", "--resize", "12=7"), id="run-resize"),
        pytest.param(("cleave-opt", "sym.mlir", "-p", 'cleave-bind{values="s=5"}'), id="opt-bind"),
    ],
)
def test_pass_errors_say_error(argv, tmp_path: Path, capsys, monkeypatch):
    monkeypatch.chdir(_symbolized_split(tmp_path, capsys))
    main = driver.main if argv[0] == "cleave-opt" else cleave_run.main
    assert main(list(argv[1:])) == 1
    err = capsys.readouterr().err
    assert re.match(r"^(\S+:\d+:\d+: )?error: ", err), err


def _run_module(path: Path, **kw) -> tuple[bool, str]:
    buf = io.StringIO()
    ok = cleave_run.run_module(cleave_run.load_module(str(path)), out=buf, **kw)
    return ok, buf.getvalue()


def test_cleave_run_declared_mode_and_rtol(workdir: Path):
    ok, out = _run_module(workdir / "agree.mlir", mode="declared")
    assert ok
    assert re.search(r"^@b vs @a: agree \(max relative error \S+, tolerance 0\.02\)$", out, re.M), out
    # sigmoid vs exp disagree at the default tolerance, agree with a huge one
    ok, out = _run_module(workdir / "disagree.mlir")
    assert not ok and "DISAGREE" in out
    ok, out = _run_module(workdir / "disagree.mlir", rtol=10.0)
    assert ok and "tolerance 10)" in out


def test_cleave_run_max_memory_gb():
    with pytest.raises(cleave_run.CleaveError, match=r"^error: @matmul needs about"):
        _run_module(EXAMPLES_DIR / "matmul.mlir", resize={4096: 64}, max_memory_gb=1e-6)
    ok, out = _run_module(EXAMPLES_DIR / "matmul.mlir", resize={4096: 64})
    assert ok and "@matmul output 0: shape [64, 64] f16" in out


MULTI = """tgraph.graph @m(%x: !tgraph.tensor<[3, 4, 1], f32>, %w: !tgraph.tensor<[3, 4], f32>) -> (!tgraph.tensor<[3, 4], f32>, !tgraph.tensor<[3, 1], f32>) {
  %r = tgraph.reshape %x : !tgraph.tensor<[3, 4, 1], f32> -> !tgraph.tensor<[3, 4], f32>
  %a = tgraph.add %r, %w : !tgraph.tensor<[3, 4], f32>, !tgraph.tensor<[3, 4], f32> -> !tgraph.tensor<[3, 4], f32>
  %m = tgraph.reduce max %a dim 1 : !tgraph.tensor<[3, 4], f32> -> !tgraph.tensor<[3, 1], f32>
  tgraph.output %a, %m : !tgraph.tensor<[3, 4], f32>, !tgraph.tensor<[3, 1], f32>
}
"""


def test_cleave_run_reports_every_output(tmp_path: Path):
    (tmp_path / "multi.mlir").write_text(MULTI)
    ok, out = _run_module(tmp_path / "multi.mlir", seed=3)
    assert ok
    graph = only_graph(parse_text(MULTI))
    x, w = random_inputs(graph, 3)
    a = x.reshape(3, 4) + w
    matches = [OUTPUT_LINE.match(line) for line in out.splitlines()]
    assert [(m.group(1), m.group(2), m.group(3), m.group(4)) for m in matches] == [
        ("m", "0", "3, 4", "f32"),
        ("m", "1", "3, 1", "f32"),
    ]
    assert float(matches[0].group(5)) == pytest.approx(float(a.sum()), rel=1e-8)
    assert float(matches[1].group(5)) == pytest.approx(float(a.max(axis=1).sum()), rel=1e-8)


INF_TWICE = "".join(
    f"""tgraph.graph @{n}(%x: !tgraph.tensor<[3, 5], f16>) -> !tgraph.tensor<[3, 5], f16> {{
  %s = tgraph.scale %x, 10.0 : !tgraph.tensor<[3, 5], f16>
  %y = tgraph.exp %s : !tgraph.tensor<[3, 5], f16>
  tgraph.output %y : !tgraph.tensor<[3, 5], f16>
}}
"""
    for n in ("a", "b")
)


@pytest.mark.filterwarnings("ignore:invalid value encountered in subtract:RuntimeWarning")
def test_identical_graphs_with_fp16_overflow_agree(tmp_path: Path):
    (tmp_path / "inf.mlir").write_text(INF_TWICE)
    ok, out = _run_module(tmp_path / "inf.mlir", mode="declared")
    assert "sum inf" in out  # exp(10 x) overflows f16 for some x: that is expected
    assert ok, out


# --------------------------------------------------------------------------- stock xdsl-opt


def test_stock_xdsl_opt_parses_examples(runs):
    p = runs["xdsl-opt"]
    assert p.returncode == 0, p.stderr
    assert "tgraph.graph @mha" in p.stdout


def test_stock_xdsl_opt_runs_cleave_symbolize(runs):
    p = runs["xdsl-opt symbolize"]
    assert p.returncode == 0, p.stderr
    assert "bindings = {d0 = 32 : i64" in p.stdout
    assert "!tgraph.tensor<[1, d0, d1, d2], f16>" in p.stdout


def test_cleave_compile_without_gpu_stops_after_emission(tmp_path) -> None:
    """`cleave compile` writes and lowers the kernel module; `--gpu` on a CPU-only machine says so."""
    import torch

    from cleave_ir.compile import main as cleave_main

    if torch.cuda.is_available():  # pragma: no cover - CI and this machine have no GPU
        pytest.skip("a GPU is present: the no-GPU message cannot be checked")
    src = tmp_path / "rowsum.mlir"
    src.write_text(
        """tgraph.graph @rowsum(%a: !tgraph.tensor<[64, 32], f16>, %b: !tgraph.tensor<[32, 48], f16>) -> !tgraph.tensor<[64, 1], f16> {
  %y = tgraph.matmul %a, %b : !tgraph.tensor<[64, 32], f16>, !tgraph.tensor<[32, 48], f16> -> !tgraph.tensor<[64, 48], f16>
  %r = tgraph.reduce sum %y dim 1 : !tgraph.tensor<[64, 48], f16> -> !tgraph.tensor<[64, 1], f16>
  tgraph.output %r : !tgraph.tensor<[64, 1], f16>
}
"""
    )
    out = tmp_path / "k.py"
    cache = ["--cache-dir", str(tmp_path / "cache")]
    assert cleave_main(["compile", str(src), "-o", str(out), *cache]) == 0
    assert "CANDIDATES" in out.read_text()
    assert cleave_main(["compile", str(src), "-o", str(out), "--gpu", *cache]) == 1


def test_cleave_compile_errors_are_one_line(tmp_path, capsys) -> None:
    """Bad input, options and unreadable files: one line on stderr, exit code 1 (argparse's 2), no traceback."""
    from cleave_ir.compile import main as cleave_main

    src = tmp_path / "two.mlir"
    graph = """tgraph.graph @g%d(%%a: !tgraph.tensor<[4, 4], f16>) -> !tgraph.tensor<[4, 4], f16> {
  tgraph.output %%a : !tgraph.tensor<[4, 4], f16>
}
"""
    src.write_text(graph % 1 + graph % 2)
    cache = ["--cache-dir", str(tmp_path / "cache")]
    for args, message in [
        ([str(src)], "cleave compile takes one tgraph.graph, found 2"),
        ([str(tmp_path / "missing.mlir")], "error: cannot read"),
        ([str(src), "-j", "0"], "error: -j/--jobs must be at least 1"),
    ]:
        capsys.readouterr()
        assert cleave_main(["compile", *args, "-o", str(tmp_path / "k.py"), *cache]) == 1
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and message in err and "Traceback" not in err
    with pytest.raises(SystemExit) as e:
        cleave_main(["compile", str(src), "--split-counts", "2,x"])
    assert e.value.code == 2


# --------------------------------------------------------------------------- cleave compile: quiet, -o, progress, API

COMPILE_SMALL = ["--no-cache", "--keep", "1", "--top-k", "1", "--search-budget", "100", "--split-counts", "2", "-j", "1"]
"""A small, quick `cleave compile` (the report's shape does not depend on the search's size)."""

# `cleave compile` whose lowering also logs as TileLang does (Python logging) and as TVM's C++ code
# does (to file descriptor 2); with `fake` in argv[1] the lowering itself is skipped
NOISY_COMPILE = """
import logging, os, sys
import cleave_ir.compile as c
real = c.lower_each
def lower_each(*args, **kwargs):
    import tilelang
    logging.getLogger("tilelang.jit.kernel").info("TileLang begins to compile kernel (test)")
    logging.getLogger("tilelang.cache").warning("kernel cache warning (test)")
    os.write(2, b"[00:00:00] /src/tvm/pass.cc:1: Warning: native log line (test)\\n")
    return {"k0": "__global__"} if fake else real(*args, **kwargs)
c.lower_each = lower_each
fake = sys.argv.pop(1) == "fake"
sys.exit(c.main(sys.argv[1:]))
"""


@pytest.fixture(scope="module")
def compile_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, subprocess.CompletedProcess[str]]:
    """`cleave compile` of an example in subprocesses (concurrently), its lowering logging as TileLang
    and TVM do: as by default (lowering for real), and with -v --progress (lowering skipped)."""
    import sys
    from concurrent.futures import ThreadPoolExecutor

    d = tmp_path_factory.mktemp("compile")
    src = str(EXAMPLES_DIR / "swiglu.mlir")
    calls = {
        "default": [sys.executable, "-c", NOISY_COMPILE, "real", "compile", src, "-o", str(d / "a.py"), *COMPILE_SMALL],
        "-v --progress": [sys.executable, "-c", NOISY_COMPILE, "fake", "compile", src, "-o", str(d / "b.py"), "-v", "--progress", *COMPILE_SMALL],
    }

    def run(argv: list[str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(argv, cwd=d, capture_output=True, text=True, timeout=600, check=False)

    with ThreadPoolExecutor(len(calls)) as pool:
        return dict(zip(calls, pool.map(run, calls.values())))


LOG_LINE = re.compile(r"INFO|\[TileLang|Warning|native log line")


def test_cleave_compile_is_quiet_without_verbose(compile_runs):
    """No TileLang or TVM log line, no progress bar (stderr is a pipe): only the report on stdout."""
    p = compile_runs["default"]
    assert p.returncode == 0, p.stderr
    assert p.stderr == ""
    assert not [line for line in p.stdout.splitlines() if LOG_LINE.search(line)], p.stdout
    assert "kernel module written to" in p.stdout and "lower (sm_90a, 1 jobs)" in p.stdout


def test_cleave_compile_verbose_shows_logs_and_progress_shows_bars(compile_runs):
    p = compile_runs["-v --progress"]
    assert p.returncode == 0, p.stderr
    assert "[TileLang:tilelang.jit.kernel:INFO]" in p.stdout and "TileLang begins to compile kernel (test)" in p.stdout
    assert "[TileLang:tilelang.cache:WARNING]" in p.stdout
    assert "Warning: native log line (test)" in p.stderr
    assert "search+schedule: 00:0" in p.stderr and "lower (sm_90a): 00:" in p.stderr and "Traceback" not in p.stderr
    assert "search+schedule: 00:" not in p.stdout  # the report stays on stdout, the bars on stderr


ROWSUM_SMALL = """tgraph.graph @rowsum(%a: !tgraph.tensor<[64, 32], f16>, %b: !tgraph.tensor<[32, 48], f16>) -> !tgraph.tensor<[64, 1], f16> {
  %y = tgraph.matmul %a, %b : !tgraph.tensor<[64, 32], f16>, !tgraph.tensor<[32, 48], f16> -> !tgraph.tensor<[64, 48], f16>
  %r = tgraph.reduce sum %y dim 1 : !tgraph.tensor<[64, 48], f16> -> !tgraph.tensor<[64, 1], f16>
  tgraph.output %r : !tgraph.tensor<[64, 1], f16>
}
"""


@pytest.mark.parametrize("case", ["missing parent", "directory", "unwritable"])
def test_cleave_compile_bad_output_is_reported_before_any_work(case: str, tmp_path: Path, capsys, monkeypatch):
    import os

    from cleave_ir import diagnostics

    src = tmp_path / "rowsum.mlir"
    src.write_text(ROWSUM_SMALL)
    target = {"missing parent": tmp_path / "no" / "k.py", "directory": tmp_path, "unwritable": tmp_path / "ro" / "k.py"}[case]
    message = {
        "missing parent": f"error: cannot write {target}: no such directory {tmp_path}/no",
        "directory": f"error: cannot write {target}: it is a directory",
        "unwritable": f"error: cannot write {target}: permission denied",
    }[case]
    if case == "unwritable":
        (tmp_path / "ro").mkdir(mode=0o500)
        if os.geteuid() == 0:  # root may write anywhere: make the check see what a user would
            real = os.access
            monkeypatch.setattr(diagnostics.os, "access", lambda p, mode: False if str(p) == str(tmp_path / "ro") else real(p, mode))

    def no_work(*args, **kwargs):
        raise AssertionError("the search started")

    monkeypatch.setattr(compile_mod, "load_module", no_work)
    monkeypatch.setattr(compile_mod, "_search_and_emit", no_work)
    capsys.readouterr()
    assert compile_mod.main(["compile", str(src), "-o", str(target), *COMPILE_SMALL]) == 1
    out, err = capsys.readouterr()
    assert (out, err) == ("", message + "\n")
    assert not (tmp_path / "no").exists()


def test_cleave_compile_gpu_refuses_a_graph_given_folded(tmp_path: Path, capsys, monkeypatch):
    """A graph that carries `cleave.boundary` (the output of `cleave-fold-structural`) has no reference
    for the GPU check (its ops leave out the boundary's views and parts): one located line, before any work."""
    src = tmp_path / "folded.mlir"
    src.write_text(
        "tgraph.graph @g(%a: !tgraph.tensor<[4, 8], f16>) -> !tgraph.tensor<[4, 8], f16> attributes "
        "{cleave.boundary = #cleave.boundary<inputs = [#cleave.view<input = 0, perm = [1, 0]>], outputs = [#cleave.part<output = 0>]>} {\n"
        "  %b = tgraph.exp %a : !tgraph.tensor<[4, 8], f16>\n  tgraph.output %b : !tgraph.tensor<[4, 8], f16>\n}\n"
    )

    def no_work(*args, **kwargs):
        raise AssertionError("the search started")

    monkeypatch.setattr(compile_mod, "_search_and_emit", no_work)
    capsys.readouterr()
    assert compile_mod.main(["compile", str(src), "-o", str(tmp_path / "k.py"), "--gpu", *COMPILE_SMALL]) == 1
    out, err = capsys.readouterr()
    assert out == "" and re.fullmatch(r".*/folded\.mlir:1:1: error: --gpu: @g is already folded \(cleave\.boundary\).*\n", err), err


@pytest.mark.parametrize("failure", ["search", "lowering"])
def test_cleave_compile_failure_leaves_no_file_and_keeps_an_earlier_one(failure: str, tmp_path: Path, capsys, monkeypatch):
    src = tmp_path / "rowsum.mlir"
    src.write_text(ROWSUM_SMALL)
    out = tmp_path / "k.py"
    if failure == "search":
        monkeypatch.setattr(compile_mod, "rank_candidates", lambda module: [])
        message = "error: no candidate could be scheduled and placed"
    else:
        def fail(path, arch, jobs=1):
            assert Path(path) != out and Path(path).read_text().startswith('"""')  # a staged copy is lowered
            raise RuntimeError("TVM error\n  at some/where.cc\nValueError: lowering exploded")

        monkeypatch.setattr(compile_mod, "lower_each", fail)
        message = f"error: {out}: lowering for sm_90a failed: ValueError: lowering exploded"
    argv = ["compile", str(src), "-o", str(out), *COMPILE_SMALL]
    capsys.readouterr()
    assert compile_mod.main(argv) == 1
    assert capsys.readouterr().err == message + "\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rowsum.mlir"]  # no output, empty or partial, no temporary
    out.write_text("an earlier result")
    assert compile_mod.main(argv) == 1
    assert out.read_text() == "an earlier result"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.py", "rowsum.mlir"]


def test_cleave_compile_writes_output_after_lowering(tmp_path: Path, capsys, monkeypatch):
    src = tmp_path / "rowsum.mlir"
    src.write_text(ROWSUM_SMALL)
    out = tmp_path / "k.py"

    def lower(path, arch, jobs=1):
        assert not out.exists()
        return {"k0": "__global__"}

    monkeypatch.setattr(compile_mod, "lower_each", lower)
    assert compile_mod.main(["compile", str(src), "-o", str(out), *COMPILE_SMALL]) == 0
    assert "CANDIDATES" in out.read_text() and oct(out.stat().st_mode & 0o777) != "0o600"
    assert "lower (sm_90a, 1 jobs): 1 kernels in" in capsys.readouterr().out


def test_compile_graph_and_cleave_compile_share_one_code_path(tmp_path: Path, capsys, monkeypatch):
    """The same report, module and cache entry from the command and from the Python API."""
    monkeypatch.setattr(compile_mod, "lower_each", lambda path, arch, jobs=1: {"k0": "__global__"})
    src = tmp_path / "rowsum.mlir"
    src.write_text(ROWSUM_SMALL)
    options = ["--keep", "1", "--top-k", "1", "--search-budget", "100", "--split-counts", "2", "-j", "1", "--cache-dir", str(tmp_path / "cache")]
    capsys.readouterr()
    assert compile_mod.main(["compile", str(src), "-o", str(tmp_path / "a.py"), *options]) == 0
    from_main = capsys.readouterr().out
    report = io.StringIO()
    graph = only_graph(parse_text(ROWSUM_SMALL))
    job = compile_mod.compile_graph(graph, tmp_path / "b.py", [*options[:-2], "--no-cache"], out=report)
    assert (tmp_path / "a.py").read_text() == (tmp_path / "b.py").read_text() == Path(job.args.output).read_text()

    def shape(text: str) -> list[str]:
        lines = [re.sub(r"\d+\.\d+ s", "N s", line).replace("a.py", "b.py") for line in text.splitlines()]
        return [line for line in lines if not line.startswith("cache:")]

    assert shape(from_main) == shape(report.getvalue())
    assert from_main.splitlines()[0].startswith("cache: miss") and report.getvalue().startswith("cache: off (--no-cache)")


def test_compile_graph_raises_one_documented_error(tmp_path: Path, monkeypatch):
    import cleave_ir
    from cleave_ir import CleaveError

    graph = only_graph(parse_text(ROWSUM_SMALL))
    bad_graph = graph.clone()
    bad_graph.block.last_op.detach()  # no tgraph.output
    cases = [
        (("not a graph", tmp_path / "k.py"), {}, r"^error: compile_graph: expected a tgraph\.graph, got str$"),
        ((graph, tmp_path / "k.py", ["--keep", "x"]), {}, r"^error: cleave compile options: argument --keep: invalid int value: 'x'$"),
        ((graph, tmp_path / "k.py", ["--bogus"]), {}, r"^error: cleave compile options: unrecognized arguments: --bogus$"),
        ((graph, tmp_path / "k.py", "--keep 2"), {}, r"^error: compile_graph: options must be a sequence"),
        ((graph, tmp_path / "no" / "k.py"), {}, r"^error: cannot write .*: no such directory"),
        ((bad_graph, tmp_path / "k.py"), {}, r"^error: @rowsum: "),
    ]
    for args, kwargs, pattern in cases:
        with pytest.raises(CleaveError) as e:
            cleave_ir.compile_graph(*args, **kwargs)
        assert re.search(pattern, str(e.value)) and "\n" not in str(e.value), str(e.value)

    def deep(*args, **kwargs):
        raise KeyError("deep inside\nsecond line")

    monkeypatch.setattr(compile_mod, "_search_and_emit", deep)
    with pytest.raises(CleaveError) as e:
        compile_mod.compile_graph(graph, tmp_path / "k.py", ["--no-cache"], out=io.StringIO())
    assert str(e.value).startswith("error: internal error (KeyError): ") and "\n" not in str(e.value)
    assert e.value.__cause__ is None and e.value.__suppress_context__


def test_no_correct_candidate_says_why_each_failed() -> None:
    """The one line for a GPU phase without a winner names each candidate's failure or error (the compile
    log's table is not where a PyTorch user, reading the gate's report, would look)."""
    from cleave_ir.runtime import CandidateResult, Measurement

    rows = [
        CandidateResult(0, "g_c1", ["k0"], 4.0, error=0.31),
        CandidateResult(1, "g_c2", ["k1"], 5.0, failure="run failed: ValueError: stride mismatch\nat line 2"),
    ]
    assert compile_mod._why_not(Measurement("H100", rows)) == "#0: rel. error 3.1e-01; #1: run failed: ValueError: stride mismatch"
    assert compile_mod._why_not(Measurement("H100", rows * 2)).endswith("; ...")
