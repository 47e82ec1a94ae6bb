"""Symbolic tensor dimensions: integers, named symbols and products/quotients of them.

A dim is a sympy expression over positive integer symbols (`N`, `s`, `K/s`). Symbols are
created here, never through `sympify`, so that names such as `N`, `S`, `E` or `I` stay plain
symbols instead of becoming sympy's functions and constants.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache

import sympy

Dim = sympy.Expr


@lru_cache(maxsize=None)
def symbol(name: str) -> sympy.Symbol:
    """The dim symbol called `name` (a positive integer)."""
    return sympy.Symbol(name, integer=True, positive=True)


def as_dim(value: int | str | sympy.Expr) -> Dim:
    """Coerce an int, a symbol name or an expression into a dim."""
    if isinstance(value, bool):
        raise TypeError("a dim cannot be a bool")
    if isinstance(value, int):
        return sympy.Integer(value)
    if isinstance(value, str):
        return parse_dim_text(value)
    return _simplify(value) if not value.is_Atom else value


@lru_cache(maxsize=65536)
def _simplify(value: sympy.Expr) -> Dim:
    return sympy.simplify(value)


@lru_cache(maxsize=65536)
def dim_str(dim: Dim) -> str:
    """Canonical text of a dim in the type grammar: `4096`, `N`, `K/s`, `K*K`, `K/(s*s)`."""
    if dim.is_Atom:
        return str(dim)
    num, den = sympy.fraction(sympy.factor_terms(dim))

    def product(e: sympy.Expr) -> list[str]:
        out: list[str] = []
        coeff, rest = e.as_coeff_Mul()
        if coeff != 1:
            out.append(str(coeff))
        for base, exp in sorted(rest.as_powers_dict().items(), key=lambda t: str(t[0])):
            if base == 1:
                continue
            if not (exp.is_Integer and exp > 0) or not base.is_Atom:
                return [f"({e})"]  # not a monomial: outside the grammar, printed as is
            out.extend([str(base)] * int(exp))
        return out or ["1"]

    n, d = product(num), product(den)
    text = "*".join(n)
    if d != ["1"]:
        text += "/" + (d[0] if len(d) == 1 else "(" + "*".join(d) + ")")
    return text


def is_one(dim: Dim) -> bool:
    return dim == 1


def free_symbols(dims: Sequence[Dim]) -> set[sympy.Symbol]:
    out: set[sympy.Symbol] = set()
    for d in dims:
        out |= d.free_symbols  # type: ignore[arg-type]
    return out


def evaluate(dim: Dim, bindings: Mapping[str, int]) -> int:
    """The integer value of `dim` under `bindings` (symbol name -> int).

    Raises ValueError naming the unbound symbols or a non-integer result.
    """
    if dim.is_Integer:
        return int(dim)
    missing = sorted(s.name for s in dim.free_symbols if s.name not in bindings)  # type: ignore[attr-defined]
    if missing:
        raise ValueError(f"dim {dim} has unbound symbol(s) {', '.join(missing)}")
    if dim.is_Symbol:  # the common case, without sympy's substitution
        return int(bindings[dim.name])  # type: ignore[attr-defined]
    used = tuple(sorted((s.name, int(bindings[s.name])) for s in dim.free_symbols))  # type: ignore[attr-defined]
    value = _substitute(dim, used)
    if not value.is_Integer:
        raise ValueError(f"dim {dim} is not an integer under {dict(bindings)}: {value}")
    return int(value)


@lru_cache(maxsize=4096)
def _substitute(dim: Dim, used: tuple[tuple[str, int], ...]) -> sympy.Expr:
    return dim.subs({symbol(k): v for k, v in used})


def evaluate_shape(dims: Sequence[Dim], bindings: Mapping[str, int]) -> tuple[int, ...]:
    return tuple(evaluate(d, bindings) for d in dims)


def is_integral(dim: Dim) -> bool:
    """False when `dim` is provably not an integer (e.g. 4096/3)."""
    return not (dim.is_Rational and not dim.is_Integer)


@lru_cache(maxsize=65536)
def parse_dim_text(text: str) -> Dim:
    """Parse the dim grammar used in types (`4096`, `N`, `K/s`, `2*s`, `(K/s)/2`)."""
    tokens: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c.isspace():
            i += 1
        elif c in "*/()":
            tokens.append(c)
            i += 1
        elif c.isalnum() or c == "_":
            j = i
            while j < len(text) and (text[j].isalnum() or text[j] == "_"):
                j += 1
            tokens.append(text[i:j])
            i = j
        else:
            raise ValueError(f"unexpected character {c!r} in dim {text!r}")
    pos = 0

    def primary() -> Dim:
        nonlocal pos
        if pos >= len(tokens):
            raise ValueError(f"dim {text!r} ends early")
        tok = tokens[pos]
        pos += 1
        if tok == "(":
            value = product()
            if pos >= len(tokens) or tokens[pos] != ")":
                raise ValueError(f"missing ')' in dim {text!r}")
            pos += 1
            return value
        if tok.isdigit():
            return sympy.Integer(int(tok))
        if tok[0].isalpha() or tok[0] == "_":
            return symbol(tok)
        raise ValueError(f"unexpected {tok!r} in dim {text!r}")

    def product() -> Dim:
        nonlocal pos
        value = primary()
        while pos < len(tokens) and tokens[pos] in "*/":
            op = tokens[pos]
            pos += 1
            rhs = primary()
            value = value * rhs if op == "*" else value / rhs
        return value

    result = product()
    if pos != len(tokens):
        raise ValueError(f"unexpected {tokens[pos]!r} in dim {text!r}")
    return result
