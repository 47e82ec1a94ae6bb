"""What an elementwise tgraph op computes, stated once: the record its op class carries.

Every elementwise op (`tgraph.UnaryOp`, `tgraph.BinaryOp` and the other `tgraph.ElementwiseOp`s)
answers `op.semantics()` with a `Semantics` record; passes derive their tables from it:

- `numpy(*xs)`: float64 arrays in, array out (the reference interpreter and the search);
- `torch(*xs)`: torch tensors in, tensor out (the GPU reference of `cleave compile --gpu`);
- `tilelang(b, *xs)`: the scalar `arith`/`math` ops of one T.Parallel statement, built with the
  lowering's statement builder `b` (an `ElementBuilder`: `add(op)`, `const(value, type)`,
  `binary(cls, a, b)` with TVM's float promotion, `cast(x, type)`);
- `abstract(ax, *forms)`: the op's abstract expression, built with `passes.abstract_expr` passed
  as `ax` (the search's goal-directed pruning); None: an opaque function of its operands;
- `algebra`: the properties a rewrite may rely on (see `Algebra`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from fractions import Fraction
from typing import Any, Protocol

import numpy as np
from xdsl.ir import Attribute, Operation, SSAValue


class ElementBuilder(Protocol):
    """The statement builder `tilelang` functions receive (lower_tilelang's `_Statements`)."""

    def add(self, op: Operation) -> SSAValue: ...

    def const(self, value: float, t: Attribute) -> SSAValue: ...

    def binary(self, cls: type[Operation], a: SSAValue, b: SSAValue) -> SSAValue: ...

    def cast(self, x: SSAValue, t: Attribute) -> SSAValue: ...


class Monotone(Enum):
    """Direction of a function in an argument (non-strict)."""

    INCREASING = "increasing"
    DECREASING = "decreasing"


class Domain(Enum):
    """Where a unary function is defined (finite, real-valued)."""

    REAL = "real"
    POSITIVE = "positive"  # sqrt at 0 is fine but rsqrt/log are not: the safe common domain
    NONZERO = "nonzero"


@dataclass(frozen=True)
class Algebra:
    """Algebraic properties of an elementwise op (all default to 'not known').

    Unary `f`:
    - `monotone`: f(a) <= f(b) for a <= b (INCREASING) or f(a) >= f(b) (DECREASING), on `domain`;
      so f(max(a, b)) = max(f(a), f(b)) for INCREASING, = min(f(a), f(b)) for DECREASING;
    - `odd` f(-x) = -f(x); `even` f(-x) = f(x);
    - `homogeneous` k: f(c x) = c^k f(x) for every c > 0 (neg, scale: 1; square: 2; reciprocal: -1);
    - `linear`: f(a + b) = f(a) + f(b) and f(c x) = c f(x) for every real c (so f commutes with sums
      and with matmuls on either side);
    - `nonnegative`: f(x) >= 0 everywhere on `domain`; `domain`: where it is finite.
    Binary `f(a, b)` (`monotone` is then a pair, one entry per argument, None where not monotone):
    - `commutative`, `associative`, `idempotent` (f(a, a) = a), `identity` (f(e, x) = x);
    - `distributes_over`: names (`tgraph.add`, ...) of the binary ops g with
      f(a, g(b, c)) = g(f(a, b), f(a, c)) for every a (mul over add/sub; add over max/min);
    - `linear`: linear in both arguments jointly (add, sub);
    - `linear_in`: per argument, whether f is linear in it while the other is held fixed,
      f(a + a', b) = f(a, b) + f(a', b) and f(c a, b) = c f(a, b) (mul: both; div: the dividend;
      add is only affine in each). So a sum commutes with f in that argument when the other does
      not vary along the summed dim: sum_k (x_k / r) = (sum_k x_k) / r, the rescale after a matmul.
    Ternary `select(m, a, b)`:
    - `condition`: the index of the operand that picks, per element, which of the other operands
      is the result (select: 0). So an elementwise f moves across it, f(select(m, a, b)) =
      select(m, f(a), f(b)), and select(m, a, a) = a; a reduction does not (sum over a dim where m
      varies mixes elements picked from a and from b), so the search never moves one across it.
    Any arity:
    - `relative`: the result is as relatively precise as the operands (an error of eps*|x| in each
      operand gives one of O(eps)*|f|): products, quotients, scalings, conversions and the sums a
      Split-K combine adds its partials with, but not a difference such as `s - max s`, which turns
      the operands' absolute error into the relative error of a following exp.
    """

    monotone: Monotone | tuple[Monotone | None, ...] | None = None
    odd: bool = False
    even: bool = False
    homogeneous: Fraction | None = None
    linear: bool = False
    nonnegative: bool = False
    domain: Domain = Domain.REAL
    commutative: bool = False
    associative: bool = False
    idempotent: bool = False
    identity: float | None = None
    distributes_over: frozenset[str] = field(default_factory=frozenset)
    linear_in: tuple[bool, ...] = ()
    condition: int | None = None
    relative: bool = False


@dataclass(frozen=True)
class Semantics:
    """The meaning of one elementwise op (see the module docstring)."""

    numpy: Callable[..., np.ndarray]
    torch: Callable[..., Any]
    tilelang: Callable[..., SSAValue]
    abstract: Callable[..., tuple] | None = None
    algebra: Algebra = Algebra()


def torch_module() -> Any:
    """torch, imported on first use (importing the dialect must not need it)."""
    import torch

    return torch


_erf = np.vectorize(math.erf, otypes=[np.float64])


def np_erf(x: np.ndarray) -> np.ndarray:
    """erf elementwise (numpy has none; math.erf is exact to double precision)."""
    return _erf(np.asarray(x, dtype=np.float64)).astype(np.result_type(x, np.float32))


SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
GELU_TANH_C = 0.044715


@dataclass(frozen=True)
class Reduction:
    """The meaning of one `tgraph.reduce` kind over one dim (kept as size 1).

    `combine`: the binary op (by name) the reduction folds with, when it is such a fold (sum: add,
    max: max; mean is a sum times 1/n); `fill`: the fold's identity, for padding and accumulators;
    `relative`: the result is as relatively precise as the input (`Algebra.relative`).
    """

    numpy: Callable[[np.ndarray, int], np.ndarray]
    torch: Callable[[Any, int], Any]
    abstract: Callable[..., tuple]
    combine: str | None = None
    fill: float | None = None
    linear: bool = False
    relative: bool = False
