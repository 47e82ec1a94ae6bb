"""`cleave-opt`: xDSL's opt driver with every xDSL dialect plus Cleave-IR's dialects and passes."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from typing import IO, ClassVar

from xdsl.utils.exceptions import ArgSpecParseError
from xdsl.utils.exceptions import DiagnosticException, ParseError
from xdsl.xdsl_opt_main import xDSLOptMain

from cleave_ir.diagnostics import CleaveError, parse_module_text
from cleave_ir.universe import get_all_dialects, get_all_passes, get_all_targets


def cleave_version() -> str:
    try:
        return version("cleave-ir")
    except PackageNotFoundError:  # running from a source tree
        return "unknown"


class CleaveOptMain(xDSLOptMain):
    """xDSLOptMain with Cleave-IR's dialects, passes and located one-line errors."""

    version_format: ClassVar[str] = (
        "cleave-opt " + cleave_version() + " built on xdsl {xdsl_version}"
    )

    def __init__(self, args: Sequence[str] | None = None) -> None:
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

        def parse_mlir(io: IO[bytes]):
            text = io.read()
            if isinstance(text, bytes):
                text = text.decode()
            return parse_module_text(self.ctx, text, self.get_input_name(), self._chunk_offset)

        self.available_frontends["mlir"] = parse_mlir

    _chunk_offset: int = 0

    def parse_chunk(self, chunk: IO[bytes], file_extension: str, start_offset: int = 0):
        # remembered so that verifier errors in a `// -----` chunk name the file's line
        self._chunk_offset = start_offset
        return super().parse_chunk(chunk, file_extension, start_offset)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `cleave-opt`; errors are one line on stderr and exit code 1."""
    try:
        CleaveOptMain(args=argv).run()
    except CleaveError as e:
        print(str(e), file=sys.stderr)
        return 1
    except ParseError as e:
        print(f"{e.span.get_location()}: error: {e.msg}", file=sys.stderr)
        return 1
    except DiagnosticException as e:
        first = str(e).strip().splitlines()
        print(f"error: {first[0] if first else type(e).__name__}", file=sys.stderr)
        return 1
    except FileNotFoundError as e:
        print(f"error: no such file: {e.filename}", file=sys.stderr)
        return 1
    except ArgSpecParseError as e:  # a BaseException in xDSL: malformed pass pipeline
        lines = [line.strip() for line in str(e).splitlines() if line.strip()]
        print(f"error: malformed pass pipeline: {lines[-1] if lines else e}", file=sys.stderr)
        return 1
    except Exception as e:  # never a traceback for the user; the message names what went wrong
        first = str(e).strip().splitlines()
        print(f"error: {first[0] if first else type(e).__name__}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
