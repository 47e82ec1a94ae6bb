"""`cleave-opt` is a drop-in `xdsl-opt` on input without Cleave ops.

Each case runs both drivers with the same flags and input and compares stdout, stderr and the
exit code byte for byte. Where stock xdsl-opt ends in a Python traceback (a parse or verifier
error without `--parsing-diagnostics`/`--verify-diagnostics`, invalid UTF-8, ...), cleave-opt
instead prints one line `file:line:col: error: <xDSL's message>` and exits 1, with the same stdout;
the tests check that line against the exception stock xdsl-opt raised.

Both run in-process (stock as `xDSLOptMain(args).run()`, which is all the `xdsl-opt` script does);
`test_subprocess_parity` checks a few cases through the installed scripts.
"""

from __future__ import annotations

import contextlib
import io
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from xdsl.ir import Attribute
from xdsl.utils.exceptions import ParseError
from xdsl.xdsl_opt_main import xDSLOptMain

from conftest import run_tools_parallel
from cleave_ir import driver

VALID = """func.func @add(%a: i32, %b: i32) -> i32 {
  %c = arith.addi %a, %b : i32
  %z = arith.constant 0 : i32
  %d = arith.addi %c, %z : i32
  func.return %d : i32
}
"""
# the same value used before its definition: xDSL (unlike MLIR) accepts it in func
USE_BEFORE_DEF = """func.func @f() -> i32 {
  %1 = arith.addi %0, %0 : i32
  %0 = arith.constant 1 : i32
  func.return %1 : i32
}
"""
FUNC_VERIFY = """func.func @f() -> i32 {
  %0 = arith.constant 1 : i64
  func.return %0 : i64
}
"""
ARITH_VERIFY = """func.func @f(%a: i32, %b: i64) -> i32 {
  %c = "arith.addi"(%a, %b) : (i32, i64) -> i32
  func.return %c : i32
}
"""
ARITH_CONSTANT_VERIFY = '%0 = "arith.constant"() <{value = 1 : i64}> : () -> i32\n'
BUILTIN_VERIFY = """func.func @f() {
  func.return
}
func.func @f() {
  func.return
}
"""
PARENT_VERIFY = '"builtin.module"() ({\n  "func.return"() : () -> ()\n}) : () -> ()\n'
PARSE_ERROR = "func.func @f() {\n  %0 = arith.constant 1 : \n}\n"
UNKNOWN_OP = "func.func @f() {\n  foo.bar\n  func.return\n}\n"
UNDEFINED_VALUE = "func.func @f() -> i32 {\n  func.return %x : i32\n}\n"
SPLIT = "\n// -----\n".join([VALID, FUNC_VERIFY, ARITH_VERIFY, "func.func @g() {\n  func.return\n}\n", BUILTIN_VERIFY])
SPLIT_PARSE = "\n// -----\n".join([VALID, PARSE_ERROR, UNKNOWN_OP, VALID])

CASES: dict[str, tuple[str, list[str]]] = {
    "valid": (VALID, []),
    "valid generic": (VALID, ["--print-op-generic"]),
    "valid canonicalize": (VALID, ["-p", "canonicalize"]),
    "valid cse,dce": (VALID, ["-p", "cse,dce"]),
    "valid debuginfo": (VALID, ["--print-debuginfo"]),
    "valid no implicit module": ("builtin.module {\n" + VALID + "}\n", ["--no-implicit-module"]),
    "use before def": (USE_BEFORE_DEF, []),
    "func verify": (FUNC_VERIFY, []),
    "func verify diagnostics": (FUNC_VERIFY, ["--verify-diagnostics"]),
    "func disable verify": (FUNC_VERIFY, ["--disable-verify"]),
    "arith verify": (ARITH_VERIFY, []),
    "arith verify diagnostics": (ARITH_VERIFY, ["--verify-diagnostics"]),
    "arith constant verify diagnostics": (ARITH_CONSTANT_VERIFY, ["--verify-diagnostics"]),
    "builtin verify": (BUILTIN_VERIFY, []),
    "builtin verify diagnostics": (BUILTIN_VERIFY, ["--verify-diagnostics"]),
    "builtin disable verify": (BUILTIN_VERIFY, ["--disable-verify"]),
    "parent verify diagnostics": (PARENT_VERIFY, ["--verify-diagnostics"]),
    "parse error": (PARSE_ERROR, []),
    "parse error diagnostics": (PARSE_ERROR, ["--parsing-diagnostics"]),
    "unknown op diagnostics": (UNKNOWN_OP, ["--parsing-diagnostics"]),
    "undefined value": (UNDEFINED_VALUE, []),
    "undefined value diagnostics": (UNDEFINED_VALUE, ["--parsing-diagnostics"]),
    "split verify diagnostics": (SPLIT, ["--split-input-file", "--verify-diagnostics"]),
    "split verify": (SPLIT, ["--split-input-file"]),
    "split parse diagnostics": (SPLIT_PARSE, ["--split-input-file", "--parsing-diagnostics"]),
    "split parse": (SPLIT_PARSE, ["--split-input-file"]),
    "split valid generic": ("\n// -----\n".join([VALID, VALID]), ["--split-input-file", "--print-op-generic"]),
    "invalid utf-8": ("func.func @f\udcff() {\n  func.return\n}\n", []),
    "empty": ("", []),
}


@dataclass
class Result:
    rc: int
    stdout: str
    stderr: str
    error: BaseException | None = None  # what stock xdsl-opt raised (its traceback's last line)
    output_file: str | None = None


def _run(main, argv: list[str], text: str, tmp: Path, use_stdin: bool) -> Result:
    data = text.encode("utf-8", "surrogateescape")
    path = tmp / "in.mlir"
    path.write_bytes(data)
    out_file = tmp / "out.mlir"
    argv = [a.replace("OUT", str(out_file)) for a in argv]
    out, err = io.StringIO(), io.StringIO()
    old_stdin, post_init = sys.stdin, Attribute.__post_init__
    sys.stdin = io.TextIOWrapper(io.BytesIO(data))
    error = None
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), contextlib.chdir(tmp):
            try:
                rc = main(argv if use_stdin else ["in.mlir", *argv])
            except SystemExit as e:
                rc = e.code if isinstance(e.code, int) else 1
            except Exception as e:  # stock xdsl-opt: a traceback and exit code 1
                rc, error = 1, e
    finally:
        sys.stdin, Attribute.__post_init__ = old_stdin, post_init  # type: ignore[method-assign]
    written = out_file.read_text() if out_file.exists() else None
    if out_file.exists():
        out_file.unlink()
    return Result(rc if rc is not None else 0, out.getvalue(), err.getvalue(), error, written)


def stock(argv: list[str]) -> int:
    xDSLOptMain(args=argv).run()
    return 0


def compare(text: str, flags: list[str], tmp: Path, *, stdin: tuple[list[str], list[str]] | None = None) -> None:
    """Both drivers on `text`; `stdin` gives (stock argv, cleave argv) that read standard input."""
    s_argv, c_argv = stdin if stdin else (flags, flags)
    s = _run(stock, s_argv, text, tmp, stdin is not None)
    c = _run(driver.main, c_argv, text, tmp, stdin is not None)
    assert c.stdout == s.stdout
    assert c.output_file == s.output_file or (s.error is not None and c.output_file is None)
    if s.error is None:
        assert (c.rc, c.stderr) == (s.rc, s.stderr)
        return
    # stock ends in a traceback; cleave-opt prints one located line with the same message
    assert c.rc == 1
    lines = c.stderr.splitlines()
    assert len(lines) == 1, c.stderr
    e = s.error
    if isinstance(e, ParseError):
        assert lines[0] == f"{e.span.get_location()}: error: {e.msg}"
    elif isinstance(e, UnicodeDecodeError):
        assert re.fullmatch(r"\S+:\d+:\d+: error: invalid UTF-8 byte 0x[0-9a-f]{2}", lines[0]), lines[0]
    else:
        message = " ".join(line.strip() for line in str(e).splitlines() if line.strip())
        assert re.fullmatch(r"in\.mlir:\d+:\d+: error: " + re.escape(message), lines[0]), (lines[0], message)


@pytest.mark.parametrize("case", sorted(CASES))
def test_parity(case: str, tmp_path: Path):
    text, flags = CASES[case]
    compare(text, flags, tmp_path)


@pytest.mark.parametrize("case", ["valid", "func verify diagnostics", "parse error", "split verify diagnostics"])
def test_parity_stdin(case: str, tmp_path: Path):
    """`cleave-opt -` and `cleave-opt` read stdin as `xdsl-opt` does (input name `stdin`)."""
    text, flags = CASES[case]
    compare(text, flags, tmp_path, stdin=(flags, ["-", *flags]))
    compare(text, flags, tmp_path, stdin=(flags, flags))


@pytest.mark.parametrize("case", ["valid", "split verify diagnostics", "valid canonicalize"])
def test_parity_output_file(case: str, tmp_path: Path):
    text, flags = CASES[case]
    compare(text, [*flags, "-o", "OUT"], tmp_path)


def test_failure_leaves_no_output_file(tmp_path: Path):
    """Stock xdsl-opt leaves an empty `-o` file when the input is bad; cleave-opt writes none."""
    s = _run(stock, ["-o", "OUT"], FUNC_VERIFY, tmp_path, False)
    assert s.error is not None and s.output_file == ""
    c = _run(driver.main, ["-o", "OUT"], FUNC_VERIFY, tmp_path, False)
    assert c.rc == 1 and c.output_file is None


def test_cleave_ops_keep_one_line_errors(tmp_path: Path):
    """Under --verify-diagnostics our dialects' errors stay one located line (unlike xDSL's)."""
    text = (
        "tgraph.graph @g(%a: !tgraph.tensor<[4, 8], f32>, %b: !tgraph.tensor<[4, 4], f32>) -> !tgraph.tensor<[4, 4], f32> {\n"
        "  %c = tgraph.matmul %a, %b : !tgraph.tensor<[4, 8], f32>, !tgraph.tensor<[4, 4], f32> -> !tgraph.tensor<[4, 4], f32>\n"
        "  tgraph.output %c : !tgraph.tensor<[4, 4], f32>\n}\n"
    )
    c = _run(driver.main, ["--verify-diagnostics"], text, tmp_path, False)
    assert (c.rc, c.stderr) == (0, "")
    assert c.stdout == "in.mlir:2:3: error: tgraph.matmul: contracting dims differ: 8 vs 4\n"


def test_subprocess_parity(tmp_path: Path):
    """The installed scripts, concurrently: success and --verify-diagnostics byte for byte."""
    (tmp_path / "valid.mlir").write_text(VALID)
    (tmp_path / "split.mlir").write_text(SPLIT)
    calls = {}
    for tool in ("xdsl-opt", "cleave-opt"):
        calls[f"{tool} valid"] = ((tool, "valid.mlir", "-p", "canonicalize"), {"cwd": tmp_path})
        calls[f"{tool} split"] = ((tool, "split.mlir", "--split-input-file", "--verify-diagnostics"), {"cwd": tmp_path})
    runs = run_tools_parallel(calls)
    for case in ("valid", "split"):
        s, c = runs[f"xdsl-opt {case}"], runs[f"cleave-opt {case}"]
        assert (c.returncode, c.stdout, c.stderr) == (s.returncode, s.stdout, s.stderr), case
        assert s.returncode == 0 and s.stdout
