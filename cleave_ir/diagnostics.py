"""One-line, located error messages for bad input (`file:line:col: error: ...`).

xDSL reports a verifier failure by printing the whole module; users of `cleave-opt` and
`cleave-run` get one line instead, pointing at the op in their file. The parser below remembers
where every op started so that verifier errors can be located after parsing.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.utils.exceptions import DiagnosticException, ParseError
from xdsl.utils.lexer import Location


class CleaveError(DiagnosticException):
    """An error meant for the user: its message is one complete line."""


class LocatingParser(Parser):
    """A Parser that records the source location of every operation it parses."""

    def __init__(self, ctx: Context, text: str, name: str = "<unknown>", line_offset: int = 0) -> None:
        super().__init__(ctx, text, name)
        self.line_offset = line_offset
        self.locations: dict[int, Location] = {}

    def parse_operation(self) -> Operation:
        start = self._current_token.span
        op = super().parse_operation()
        loc = start.get_location()
        self.locations[id(op)] = loc._replace(line=loc.line + self.line_offset)
        return op


def parse_error_line(error: ParseError) -> str:
    """`file:line:col: error: message` for a ParseError."""
    msg = error.msg.strip().splitlines()[0] if error.msg.strip() else "parse error"
    return f"{error.span.get_location()}: error: {msg}"


def _first_line(error: Exception) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def verify_located(module: ModuleOp, locations: dict[int, Location], filename: str) -> None:
    """Verify `module` op by op, innermost first; raise CleaveError at the first failing op."""
    ops = list(module.walk())
    for op in reversed(ops):  # ops inside a graph are checked before the graph itself
        try:
            op.verify(verify_nested_ops=False)
        except DiagnosticException as e:
            cause = e.__cause__ if e.__cause__ is not None else e
            msg = _first_line(cause).removeprefix("Operation does not verify: ")
            loc = locations.get(id(op))
            where = str(loc) if loc is not None else filename
            raise CleaveError(f"{where}: error: {msg}") from None


def parse_module_text(ctx: Context, text: str, filename: str, line_offset: int = 0) -> ModuleOp:
    """Parse and verify `text` (a chunk starting `line_offset` lines into `filename`).

    Raises xDSL's ParseError for syntax errors (so xDSL's drivers can shift and report them) and a
    one-line CleaveError, located at the failing op, for verifier errors.
    """
    parser = LocatingParser(ctx, text, filename, line_offset)
    module = parser.parse_module()
    verify_located(module, parser.locations, filename)
    return module
