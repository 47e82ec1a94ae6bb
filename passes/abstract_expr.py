"""Abstract expressions: the goal-directed pruning of the superoptimizer (Mirage's idea, Prism §3.3).

Every term gets a normal form that forgets what equivalent graphs may change (which dims are
indexed, transposes, constants, signs, splits and reshapes, the order and grouping of products) and
keeps what they cannot (which nonlinear functions are applied to what, what is multiplied with what,
how many elements are summed). A term whose normal form cannot be a sub-expression of the output's
is dropped before it is evaluated.

Normal forms (hashable tuples):
- `("leaf", i)`: graph input i;
- `("fn", kind, x)`: a nonlinear unary function (exp, sqrt, silu, sigmoid) or a max-reduction;
- `("prod", factors, sums)`: a product of factors with integer powers (`factors` sorted tuple of
  (form, power)) under sums over `sums` elements (sorted tuple of (symbol name, exponent): the
  product of the summed sizes, so that summing `K/s` then `s` elements is summing `K`). A sum is a
  marker on the product, not a scope: `sum_k(a * b)` and `b * sum_k(a)` normalise alike, which is an
  over-approximation (fine for pruning; equivalence is decided by testing);
- `("add", terms)`: sums and differences (signs forgotten); `("max", terms)`: elementwise max;
- `("select", condition, a, b)`: a where the condition holds, else b. The condition keeps its place
  (a select of a mask by the scores is not a select of the scores by the mask); an elementwise op
  with a forgotten constant (scale, `x - c`) moves across it freely, as its forms are their
  operands'.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Iterable

import sympy

Form = tuple

ONE: Form = ("prod", (), ())


def leaf(i: int) -> Form:
    return ("leaf", i)


def _size_key(size: sympy.Expr) -> tuple:
    powers: Counter = Counter()
    for base, exp in size.as_powers_dict().items():
        if isinstance(base, sympy.Symbol):
            powers[base.name] += int(exp)
    return tuple(sorted((k, v) for k, v in powers.items() if v))


def _parts(x: Form) -> tuple[Counter, Counter]:
    """Factors and sums of `x` seen as a product."""
    if x[0] == "prod":
        return Counter(dict(x[1])), Counter(dict(x[2]))
    return Counter({x: 1}), Counter()


def _make_prod(factors: Counter, sums: Counter) -> Form:
    f = tuple(sorted(((k, v) for k, v in factors.items() if v), key=repr))
    s = tuple(sorted((k, v) for k, v in sums.items() if v))
    if not s and len(f) == 1 and f[0][1] == 1:
        return f[0][0]
    return ("prod", f, s)


def mul(a: Form, b: Form) -> Form:
    fa, sa = _parts(a)
    fb, sb = _parts(b)
    fa.update(fb)
    sa.update(sb)
    return _make_prod(fa, sa)


def inv(a: Form) -> Form:
    if a[0] == "prod" and not a[2]:
        return _make_prod(Counter({k: -v for k, v in a[1]}), Counter())
    return _make_prod(Counter({a: -1}), Counter())


def total(a: Form, size: sympy.Expr) -> Form:
    """Sum over `size` elements."""
    f, s = _parts(a)
    s.update(dict(_size_key(size)))
    return _make_prod(f, s)


def fn(kind: str, a: Form) -> Form:
    return ("fn", kind, a)


def add(a: Form, b: Form) -> Form:
    terms: list[Form] = []
    for x in (a, b):
        terms.extend(x[1] if x[0] == "add" else (x,))
    return ("add", tuple(sorted(terms, key=repr)))


def maximum(a: Form, b: Form) -> Form:
    return ("max", tuple(sorted((a, b), key=repr)))


def square(a: Form) -> Form:
    return mul(a, a)


def select(c: Form, a: Form, b: Form) -> Form:
    return ("select", c, a, b)


@functools.cache
def has_select(x: Form) -> bool:
    """Does `x` hold a select?"""
    return any(t[0] == "select" for t in _walk(x))


def _walk(x: Form) -> Iterable[Form]:
    yield x
    if x[0] == "fn":
        yield from _walk(x[2])
    elif x[0] == "prod":
        for f, _ in x[1]:
            yield from _walk(f)
    elif x[0] in ("add", "max"):
        for t in x[1]:
            yield from _walk(t)
    elif x[0] == "select":
        for t in x[1:]:
            yield from _walk(t)


class Goal:
    """The output's normal form, answering 'can this form be a sub-expression of it?'."""

    def __init__(self, output: Form) -> None:
        self.nodes = set(_walk(output))
        self.prods = [(Counter(dict(n[1])), Counter(dict(n[2]))) for n in self.nodes if n[0] == "prod"]
        self.adds = [Counter(n[1]) for n in self.nodes if n[0] == "add"]
        self.select_pairs = {(n[1], n[2]) for n in self.nodes if n[0] == "select"}
        self._memo: dict[Form, bool] = {}

    def admits(self, x: Form) -> bool:
        hit = self._memo.get(x)
        if hit is None:
            hit = self._memo[x] = self._admits(x)
        return hit

    def admits_select_of(self, c: Form, a: Form) -> bool:
        """Can some select by condition `c` that picks `a` be a sub-expression of the output?"""
        return (c, a) in self.select_pairs

    def _admits(self, x: Form) -> bool:
        if x in self.nodes:
            return True
        if x == ONE:
            # a bare constant (x / x, or (x - c) / (k x) with constants forgotten): the output's form
            # holds none (a product drops it), so such a term only multiplies another by an
            # abstract 1; building it and every term over it multiplies the search for nothing
            return False
        if x[0] == "prod":
            f, s = Counter(dict(x[1])), Counter(dict(x[2]))
            for pf, ps in self.prods:
                # the term's summed size must divide the product's: P/T has no negative exponent
                if all(_within(p, pf.get(k, 0)) for k, p in f.items()) and all(
                    ps.get(k, 0) - e >= 0 for k, e in s.items()
                ):
                    return True
            return False
        if x[0] == "add":
            t = Counter(x[1])
            return any(all(a[k] >= n for k, n in t.items()) for a in self.adds)
        return False


def _within(p: int, q: int) -> bool:
    """A factor with power p fits inside one with power q (same sign, no larger)."""
    return (p > 0 and q >= p) or (p < 0 and q <= p)
