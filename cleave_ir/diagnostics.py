"""One-line, located error messages for bad input (`file:line:col: error: ...`).

xDSL reports a verifier failure by printing the whole module; users of `cleave-opt` and
`cleave-run` get one line instead, pointing at the op in their file. The parser below remembers
where every op started so that verifier errors can be located after parsing.

`parse_module_text` is the public entry point: it returns a verified module or raises a
`CleaveError` whose message is one line, whatever the input (invalid UTF-8, NUL bytes, deep
nesting, values used before their definition, integer types wider than MLIR allows, ...). `read_source` reads a file, `-` (stdin) or
reports why it cannot.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sys
import tempfile
from types import TracebackType

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, Block, BlockArgument, Operation, OpResult, SSAValue
from xdsl.parser import Parser
from xdsl.parser.core import UnresolvedOperand
from xdsl.utils.exceptions import DiagnosticException, ParseError, VerifyException
from xdsl.utils.lexer import Location, Span

from cleave_ir.universe import get_all_dialects

CLEAVE_DIALECTS = frozenset(get_all_dialects())
"""Names of our dialects: their ops' errors are always reported in the one-line form."""

MAX_MESSAGE = 400
"""Longest message printed; longer ones (e.g. a parse error echoing a huge token) are cut."""


MAX_INTEGER_WIDTH = (1 << 24) - 1
"""The widest integer type (`i16777215`), as in MLIR."""


class CleaveError(DiagnosticException):
    """An error meant for the user: its message is one complete line.

    `op`, when given, is the operation the error is about: a tool that parsed the input puts where
    it starts in front of a message that does not say (`located_line`)."""

    def __init__(self, message: str, *, op: Operation | None = None) -> None:
        super().__init__(message)
        self.op = op


def one_line(text: str, limit: int = MAX_MESSAGE, *, join: bool = False) -> str:
    """The first non-empty line of `text` (all its lines joined with `join`), control characters
    escaped, at most `limit` characters."""
    lines = [s.strip() for s in str(text).splitlines() if s.strip()]
    line = " ".join(lines) if join else next(iter(lines), "")
    line = "".join(c if c.isprintable() else ascii(c)[1:-1] for c in line)
    return line if len(line) <= limit else line[: limit - 3] + "..."


class LocatingParser(Parser):
    """A Parser that records where every operation starts (locations are computed on demand)."""

    def __init__(self, ctx: Context, text: str, name: str = "<unknown>", line_offset: int = 0) -> None:
        super().__init__(ctx, text, name)
        self.line_offset = line_offset
        self.spans: dict[int, Span] = {}
        self.first_uses: dict[str, Span] = {}  # where each forward-referenced value name is first used
        self.last_op: tuple[Operation, int] | None = None  # the op parsed last, and where the token after it starts

    def _parse_optional_integer_or_float_type(self):
        # MLIR's limit; xDSL has none and computes the bounds of an i2147483648 (minutes, gigabytes)
        match = self._builtin_integer_type_regex.match(self._current_token.text)
        if match is not None and int(match.group(1)) > MAX_INTEGER_WIDTH:
            self.raise_error(f"integer bitwidth is limited to {MAX_INTEGER_WIDTH} bits")
        return super()._parse_optional_integer_or_float_type()

    def _parse_dialect_type_or_attribute_body(self, attr_name: str, is_type: bool, is_opaque: bool, starting_opaque_pos):
        # A parameter its verifier rejects (`#cleave.view<input = 0, perm = [0, 0]>`) is raised while the
        # attribute is built, before any op holds it: remember where the attribute or type is written.
        body = self._current_token.span.start
        try:
            return super()._parse_dialect_type_or_attribute_body(attr_name, is_type, is_opaque, starting_opaque_pos)
        except VerifyException as e:
            # kept a VerifyException (`--verify-diagnostics` prints it, as xdsl-opt does), told where it is
            text = self.lexer.input.content
            start = max(text.rfind("#", 0, body), text.rfind("!", 0, body), 0)
            loc = Span(start, self._current_token.span.start, self.lexer.input).get_location()
            if not hasattr(e, "cleave_location"):  # the innermost attribute, not those holding it
                e.cleave_location = loc._replace(line=loc.line + self.line_offset)  # type: ignore[attr-defined]
            raise

    def parse_operation(self) -> Operation:
        start = self._current_token.span
        op = super().parse_operation()
        self.spans[id(op)] = start
        self.last_op = (op, self._current_token.span.start)
        return op

    def resolve_operand(self, operand: UnresolvedOperand, type: Attribute) -> SSAValue:
        if operand.operand_name not in self.ssa_values and operand.operand_name not in self.forward_ssa_references:
            self.first_uses[operand.operand_name] = operand.span
        return super().resolve_operand(operand, type)

    def parse_module(self, allow_implicit_module: bool = True) -> ModuleOp:
        """xDSL's parse; for our dialects two errors are said better (other dialects keep xDSL's
        message, as `xdsl-opt` prints it): a value never defined is reported where it is first used,
        not at the end of the file, and text left over right after an op names the op's form
        (xDSL says only "in block definition" there)."""
        try:
            return super().parse_module(allow_implicit_module)
        except ParseError as e:
            for name, refs in self.forward_ssa_references.items():
                users = [u.operation for value in refs.values() for u in value.uses]
                if name in self.first_uses and any(op.dialect_name() in CLEAVE_DIALECTS for op in users):
                    self.raise_error(f"use of undefined value %{name}", self.first_uses[name])
            if self._left_after_op(e.span):
                op = self.last_op[0]  # type: ignore[index]
                form = getattr(type(op), "assembly_format", None)
                self.raise_error(f"unexpected '{one_line(e.span.text, 40)}' after {op.name}" + (f"; its form is: {op.name} {form}" if form else ""), e.span)
            raise

    def _left_after_op(self, span: Span) -> bool:
        """Whether `span`, where parsing failed, is text right after an op of ours on that op's line."""
        if self.last_op is None or span.start != self.last_op[1] or not span.text:
            return False
        op, _ = self.last_op
        start = self.spans.get(id(op))
        return op.dialect_name() in CLEAVE_DIALECTS and start is not None and "\n" not in span.input.content[start.start : span.start]

    def location(self, op: Operation | None) -> Location | None:
        """Where `op` starts in the file (chunk offset included), if this parser parsed it."""
        span = self.spans.get(id(op)) if op is not None else None
        if span is None:
            return None
        loc = span.get_location()
        return loc._replace(line=loc.line + self.line_offset)

    def here(self) -> str:
        """The location of the token the parser stopped at."""
        loc = self._current_token.span.get_location()
        return str(loc._replace(line=loc.line + self.line_offset))


def located_line(error: CleaveError, parser: LocatingParser | None, filename: str) -> str:
    """`error`'s line, with `file:line:col` of its op in front when the message starts `error:`
    (the file alone where the op was not parsed from it, e.g. a pass made it)."""
    msg = one_line(str(error))
    if error.op is None or not msg.startswith("error:"):
        return msg
    loc = parser.location(error.op) if parser is not None else None
    return f"{loc if loc is not None else filename}: {msg}"


def parse_error_line(error: ParseError) -> str:
    """`file:line:col: error: message` for a ParseError."""
    return f"{error.span.get_location()}: error: {one_line(error.msg) or 'parse error'}"


def decode_source(data: bytes, name: str, line_offset: int = 0) -> str:
    """`data` as UTF-8; a CleaveError at the first invalid byte otherwise."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1 + line_offset
        col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise CleaveError(f"{name}:{line}:{col}: error: invalid UTF-8 byte 0x{data[e.start]:02x}") from None


def read_source(path: str, stdin_name: str = "<stdin>") -> tuple[str, str]:
    """(text, name) of a file, or of stdin for `-`; a one-line CleaveError if it cannot be read."""
    name = stdin_name if path == "-" else path
    try:
        data = sys.stdin.buffer.read() if path == "-" else open(path, "rb").read()
    except AttributeError:  # a text stream standing in for stdin (tests)
        data = sys.stdin.read().encode("utf-8", "surrogateescape")
    except IsADirectoryError:
        raise CleaveError(f"error: cannot read {path}: it is a directory") from None
    except OSError as e:
        raise CleaveError(f"error: cannot read {path}: {e.strerror or e}") from None
    return decode_source(data, name), name


def failing_op(error: BaseException) -> Operation | None:
    """The operation whose `verify` raised `error` (the innermost one on the traceback), if any."""
    op = None
    tb: TracebackType | None = error.__traceback__
    verify_code = Operation.verify.__code__
    while tb is not None:
        if tb.tb_frame.f_code is verify_code:
            op = tb.tb_frame.f_locals.get("self")
        tb = tb.tb_next
    return op if isinstance(op, Operation) else None


def is_cleave_error(error: BaseException) -> bool:
    """Whether `error` is ours: a CleaveError, raised by an op of our dialects or by our code."""
    if isinstance(error, CleaveError):
        return True
    op = failing_op(error)
    if op is not None and op.dialect_name() in CLEAVE_DIALECTS:
        return True
    tb = error.__traceback__
    while tb is not None:
        module = str(tb.tb_frame.f_globals.get("__name__", ""))
        if module.startswith("cleave_ir.") and module not in TOOL_MODULES:
            return True
        tb = tb.tb_next
    return False


TOOL_MODULES = frozenset({"cleave_ir.driver", "cleave_ir.diagnostics", "cleave_ir.run", "cleave_ir.compile"})
"""Our modules that only pass errors on (their frames do not make an error ours)."""


def _symbol_redefinition(op: Operation, message: str) -> Operation | None:
    """The second definition of the symbol a SymbolTable's 'Redefinition of symbol' names."""
    if not message.startswith('Redefinition of symbol "') or not op.regions:
        return None
    name = message.split('"')[1]
    seen = False
    for child in op.regions[0].blocks[0].ops if op.regions[0].blocks else ():
        sym = child.get_attr_or_prop("sym_name")
        if getattr(sym, "data", None) == name:
            if seen:
                return child
            seen = True
    return None


def verify_error_line(error: Exception, parser: LocatingParser | None, filename: str) -> str:
    """`file:line:col: error: message` for a verifier error, located at the failing op."""
    msg = one_line(str(error), join=True) or one_line(str(error.__cause__ or ""), join=True)
    msg = msg.removeprefix("Operation does not verify: ") or type(error).__name__
    op = failing_op(error)
    if op is not None:
        op = _symbol_redefinition(op, msg) or op
    loc = getattr(error, "cleave_location", None) or (parser.location(op) if parser is not None else None)
    return f"{loc if loc is not None else filename}: error: {msg}"


def check_dominance(module: Operation, parser: LocatingParser | None, filename: str) -> None:
    """Every operand of an op of our dialects is defined before its use (as MLIR requires).

    xDSL's parser accepts forward references anywhere and its verifier does not check dominance;
    our graphs and kernels are straight-line code, so a value used before its definition is an error.
    """
    for op in module.walk():
        if op.dialect_name() not in CLEAVE_DIALECTS:
            continue
        for i, operand in enumerate(op.operands):
            if not _dominates(operand, op):
                loc = parser.location(op) if parser is not None else None
                raise CleaveError(
                    f"{loc if loc is not None else filename}: error: {op.name}: operand #{i} "
                    f"(%{operand.name_hint or '?'}) is used before it is defined"
                )


def _dominates(value, user: Operation) -> bool:
    if isinstance(value, BlockArgument):
        block: Block | None = user.parent_block()
        while block is not None and block is not value.owner:
            parent = block.parent_op()
            block = parent.parent_block() if parent is not None else None
        return block is not None
    if not isinstance(value, OpResult):
        return True
    definer = value.op
    ancestor: Operation | None = user
    while ancestor is not None and ancestor.parent_block() is not definer.parent_block():
        ancestor = ancestor.parent_op()
    if ancestor is None or ancestor is definer:
        return False
    return definer.is_before_in_block(ancestor)


def check_output_path(path: str) -> None:
    """A one-line CleaveError now if `path` cannot be written (before any long work)."""
    parent = os.path.dirname(path) or "."
    if os.path.isdir(path):
        raise CleaveError(f"error: cannot write {path}: it is a directory")
    if not os.path.isdir(parent):
        raise CleaveError(f"error: cannot write {path}: no such directory {parent}")
    if not os.access(parent, os.W_OK):
        raise CleaveError(f"error: cannot write {path}: permission denied")


def write_atomically(path: str, data: str | bytes) -> None:
    """Write `path` whole or not at all (a temporary file in its directory, then a rename)."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path) or ".", prefix=".tmp-", suffix="-" + os.path.basename(path))
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def parse_located(
    ctx: Context, text: str, filename: str, line_offset: int = 0, implicit_module: bool = True
) -> tuple[ModuleOp, LocatingParser]:
    """Parse `text` (a chunk `line_offset` lines into `filename`); xDSL's ParseError on bad syntax.

    Nesting deeper than Python's recursion limit is a one-line CleaveError where the parser stopped.
    """
    parser = LocatingParser(ctx, text, filename, line_offset)
    try:
        return parser.parse_module(implicit_module), parser
    except (ParseError, DiagnosticException):
        raise
    except RecursionError:
        raise CleaveError(f"{parser.here()}: error: input nested too deeply") from None
    except Exception as e:  # e.g. an integer literal with more digits than int() accepts
        raise CleaveError(f"{parser.here()}: error: {one_line(str(e)) or type(e).__name__}") from None


def verify_located(module: ModuleOp, parser: LocatingParser | None, filename: str) -> None:
    """Verify `module` as xDSL does, plus dominance; a one-line located CleaveError on failure."""
    check_dominance(module, parser, filename)
    try:
        module.verify()
    except DiagnosticException as e:
        raise CleaveError(verify_error_line(e, parser, filename)) from None
    except RecursionError:
        raise CleaveError(f"{filename}: error: input nested too deeply") from None


def parse_module_text(ctx: Context, text: str | bytes, filename: str, line_offset: int = 0) -> ModuleOp:
    """Parse and verify `text` (a chunk starting `line_offset` lines into `filename`).

    Any problem with the input is a CleaveError with a one-line message (`file:line:col: error: ...`).
    """
    return parse_module_text_located(ctx, text, filename, line_offset)[0]


def parse_module_text_located(ctx: Context, text: str | bytes, filename: str, line_offset: int = 0) -> tuple[ModuleOp, LocatingParser]:
    """`parse_module_text`, with the parser that knows where each of the module's ops starts."""
    if isinstance(text, bytes):
        text = decode_source(text, filename, line_offset)
    try:
        module, parser = parse_located(ctx, text, filename, line_offset)
    except CleaveError:
        raise
    except ParseError as e:
        e.span = dataclasses.replace(e.span, line_offset=line_offset)
        raise CleaveError(parse_error_line(e)) from None
    except DiagnosticException as e:  # raised while building an attribute, outside xDSL's wrapping
        raise CleaveError(verify_error_line(e, None, filename)) from None
    verify_located(module, parser, filename)
    return module, parser
