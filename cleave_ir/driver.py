"""`cleave-opt`: xDSL's opt driver with every xDSL dialect plus Cleave-IR's dialects and passes.

For input without Cleave ops it behaves as stock `xdsl-opt` (same output, same diagnostics under
`--verify-diagnostics` and `--parsing-diagnostics`, same exit codes). Where stock xdsl-opt would
end in a Python traceback, cleave-opt prints one line `file:line:col: error: ...` and exits 1.
Errors of our dialects and passes are always that one located line. It also reads `-` as stdin,
checks use-before-def in our ops, and writes `-o` only when the run succeeds.
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from typing import IO, ClassVar

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute
from xdsl.utils.diagnostic import Diagnostic
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError
from xdsl.xdsl_opt_main import xDSLOptMain

from cleave_ir.blas_threads import one_blas_thread
from cleave_ir.diagnostics import (
    CleaveError,
    LocatingParser,
    check_dominance,
    check_output_path,
    decode_source,
    is_cleave_error,
    located_line,
    one_line,
    parse_error_line,
    parse_located,
    verify_error_line,
    write_atomically,
)
from cleave_ir.universe import get_all_dialects, get_all_passes, get_all_targets


def cleave_version() -> str:
    try:
        return version("cleave-ir")
    except PackageNotFoundError:  # running from a source tree
        return "unknown"


class _Pending(io.StringIO):
    """The `-o` output, held until the run succeeds (xDSL closes its output stream either way)."""

    def close(self) -> None:
        pass


class CleaveOptMain(xDSLOptMain):
    """xDSLOptMain with Cleave-IR's dialects, passes and located one-line errors."""

    version_format: ClassVar[str] = (
        "cleave-opt " + cleave_version() + " built on xdsl {xdsl_version}"
    )

    def __init__(self, args: Sequence[str] | None = None) -> None:
        self.parser: LocatingParser | None = None  # of the chunk being processed
        self._chunk_offset = 0
        self._pending: _Pending | None = None
        super().__init__(description="Cleave-IR modular optimizer driver", args=args)

    def register_all_dialects(self) -> None:
        super().register_all_dialects()
        for name, factory in get_all_dialects().items():
            if name not in self.ctx.registered_dialect_names:
                self.ctx.register_dialect(name, factory)

    def register_all_passes(self) -> None:
        super().register_all_passes()
        for name, factory in get_all_passes().items():
            if name not in self.available_passes:
                self.register_pass(name, factory)

    def register_all_targets(self) -> None:
        super().register_all_targets()
        for name, factory in get_all_targets().items():
            if name not in self.available_targets:
                self.available_targets[name] = factory

    def register_all_frontends(self) -> None:
        super().register_all_frontends()

        def parse_mlir(stream: IO[bytes]) -> ModuleOp:
            # xDSL's own parser (same output, same errors), remembering where each op starts
            name = self.get_input_name()
            text = decode_source(stream.read(), name, self._chunk_offset)
            module, self.parser = parse_located(
                self.ctx, text, name, self._chunk_offset, not self.args.no_implicit_module
            )
            return module

        self.available_frontends["mlir"] = parse_mlir

    def get_input_stream(self) -> tuple[IO[bytes], str]:
        path = self.args.input_file
        if path == "-":
            return sys.stdin.buffer, "mlir"
        if path is not None and os.path.isdir(path):
            raise CleaveError(f"error: cannot read {path}: it is a directory")
        return super().get_input_stream()

    def get_input_name(self) -> str:
        return "stdin" if self.args.input_file in (None, "-") else self.args.input_file

    def parse_chunk(self, chunk: IO[bytes], file_extension: str, start_offset: int = 0):
        # remembered so that verifier errors in a `// -----` chunk name the file's line
        self._chunk_offset = start_offset
        self.parser = None
        return super().parse_chunk(chunk, file_extension, start_offset)

    def prepare_output(self) -> IO[str]:
        if self.args.output_file is None:
            return sys.stdout
        check_output_path(self.args.output_file)
        self._pending = _Pending()
        return self._pending

    def apply_passes(self, prog: ModuleOp) -> None:
        name = self.get_input_name()
        if not self.args.disable_verify:
            check_dominance(prog, self.parser, name)
        try:
            super().apply_passes(prog)
        except CleaveError as e:
            raise CleaveError(located_line(e, self.parser, name)) from None
        except DiagnosticException as e:
            if is_cleave_error(e) and not isinstance(e, CleaveError):
                raise CleaveError(verify_error_line(e, self.parser, name)) from None
            raise

    def run(self) -> None:
        super().run()
        if self._pending is not None:
            write_atomically(self.args.output_file, self._pending.getvalue())


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `cleave-opt`; errors are one line on stderr and exit code 1."""
    tool: CleaveOptMain | None = None
    post_init, colored = Attribute.__post_init__, Diagnostic.colored  # xDSL patches these per run
    try:
        tool = CleaveOptMain(args=argv)
        with one_blas_thread():
            tool.run()
    except CleaveError as e:
        print(one_line(str(e)), file=sys.stderr)
        return 1
    except ParseError as e:
        print(parse_error_line(e), file=sys.stderr)
        return 1
    except DiagnosticException as e:
        name = tool.get_input_name() if tool is not None else "error"
        print(verify_error_line(e, tool.parser if tool else None, name), file=sys.stderr)
        return 1
    except RecursionError:
        name = tool.get_input_name() if tool is not None else "<input>"
        print(f"{name}: error: input nested too deeply", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"error: cannot open {e.filename}: {e.strerror or e}", file=sys.stderr)
        return 1
    except ArgSpecParseError as e:  # a BaseException in xDSL: malformed pass pipeline
        lines = [line.strip() for line in str(e).splitlines() if line.strip()]
        print(f"error: malformed pass pipeline: {lines[-1] if lines else e}", file=sys.stderr)
        return 1
    except Exception as e:  # never a traceback for the user; the message names what went wrong
        if os.environ.get("CLEAVE_DEBUG"):
            raise
        print(f"error: {one_line(str(e)) or type(e).__name__}", file=sys.stderr)
        return 1
    finally:
        Attribute.__post_init__, Diagnostic.colored = post_init, colored  # type: ignore[method-assign]
    return 0


if __name__ == "__main__":
    sys.exit(main())
