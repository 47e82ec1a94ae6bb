"""Equivalence of two tgraph graphs by differential testing in float64 (the search's verifier).

Random standard-normal inputs are weak evidence: a max of a dozen normals is almost always positive,
so a rewrite that is valid only for monotone functions (moving a max past `square`) agrees on them.
A check here runs both graphs on several input distributions at several instantiations of the
symbols, each chosen to break one class of wrong rewrite:

- `normal`: standard normal (the common case);
- `shifted`: normal plus a per-tensor shift drawn from +-U(1, 3): mostly one sign, some of the other;
- `wide`: random sign times 10^U(-3, 3) (magnitudes that expose reassociation of unequal terms);
- `positive` / `negative`: U(0.1, 3) and its negation (monotone-decreasing vs increasing orderings);
- `ties`: integers in [-3, 3] (equal elements, so max/min picks and argmax orderings collide);
- `opposed` / `opposed_flipped`: normal shifted by +-2.5 with the sign set by the input's index
  (see OPPOSED), so that inputs of opposite signs meet in max(a, b) both ways round.

The comparison accounts for magnitude: the error of each output is measured against its largest
finite reference value, and a trial where the reference (or candidate) overflows or leaves the
domain on most elements (exp of wide inputs, sqrt of negatives) counts as uninformative rather than
as a disagreement. A candidate that is inf or nan where the reference is finite disagrees (x / x for
1 fails at x = 0), except on the wide inputs, where equivalent forms overflow at different places. A check fails if any informative trial disagrees, or if fewer than
`min_informative` trials were informative. Seeds are fixed: the verdict depends only on the graphs.

An input that is the condition of a `tgraph.select` (a mask) is drawn so that the condition
matters: 0/1 masks of several densities, a causal (lower-triangular) mask, integer ties (zeros
among values of both signs) and, on the wide inputs, nonzero reals (every element picks the first
side). A `cleave.causal` input always holds its causal mask (the value it promises). Every row (last dim) of a mask keeps a nonzero element (a mask of one column: not all zero):
a fully masked row is where the
max-free softmax (exp of -1e4 logits underflows to 0, then 0 / 0) and the max-subtracted one part
in float64, although they are equal in exact arithmetic; the kernels shift by the running max.

An input read only through element-wise ops whose values leave float64's exp range on these draws
(an additive mask, `(mask - 1) * 1e4`: `elementwise_cones.range_cone`) would make every trial of a
softmax overflow; a candidate computing the same ops of that input is compared at their result
instead, drawn like an input (equal there, the two graphs are equal for every value of the input).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from cleave_ir.dialects import tgraph
from cleave_ir.passes.elementwise_cones import Cone, outline, range_cone, same_cone
from cleave_ir.interpreter import InterpretationError, input_shapes, run_graph, with_causal_masks

Sampler = Callable[[np.random.Generator, tuple[int, ...]], np.ndarray]


def _normal(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.standard_normal(shape)


def _shifted(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    shift = rng.choice([-1.0, 1.0]) * rng.uniform(1.0, 3.0)
    return rng.standard_normal(shape) + shift


def _wide(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    sign = rng.choice([-1.0, 1.0], size=shape)
    return sign * 10.0 ** rng.uniform(-3.0, 3.0, size=shape)


def _positive(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.uniform(0.1, 3.0, size=shape)


def _negative(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return -rng.uniform(0.1, 3.0, size=shape)


def _ties(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.integers(-3, 4, size=shape).astype(np.float64)


DISTRIBUTIONS: dict[str, Sampler] = {
    # the most discriminating first: a wrong candidate fails early and cheaply
    "shifted": _shifted,
    "opposed": _normal,  # plus the shifts of OPPOSED
    "opposed_flipped": _normal,
    "negative": _negative,
    "normal": _normal,
    "wide": _wide,
    "positive": _positive,
    "ties": _ties,
}


OPPOSED = {"opposed": 1.0, "opposed_flipped": -1.0}
"""Normal inputs shifted by +-2.5 by input index: at variant v (the instantiation), input i gets
sign (-1)^(bit v of i), times -1 for `opposed_flipped`. So every two inputs among the first eight
get shifts of opposite signs, both ways round, in some trial: a max(a, b) that `shifted` (random
signs per tensor) leaves one-sided by chance (sum(exp(x)) > c whenever both share a sign) is
exercised on both sides."""


def condition_inputs(graph: tgraph.GraphOp) -> set[int]:
    """Indices of the inputs that are (casts of) the condition operand of a select."""
    index = {a: i for i, a in enumerate(graph.inputs)}
    out: set[int] = set()
    for op in graph.block.ops:
        if not isinstance(op, tgraph.ElementwiseOp) or op.semantics().algebra.condition is None:
            continue
        value = op.operands[op.semantics().algebra.condition]
        while isinstance(value.owner, tgraph.CastOp):
            value = value.owner.input
        if value in index:
            out.add(index[value])
    return out


def _with_nonzero_rows(rng: np.random.Generator, mask: np.ndarray) -> np.ndarray:
    """`mask` with one random element of every all-zero row (last dim) set to 1.

    A mask whose last dim has size 1 (broadcast along the rows of the select) keeps its zeros,
    else it would be all ones and a candidate that ignores it would pass; only an all-zero mask
    gets one element set."""
    if not mask.size:
        return mask
    if mask.shape[-1] == 1:
        if np.any(mask != 0):
            return mask
        out = mask.copy()
        out.flat[int(rng.integers(mask.size))] = 1.0
        return out
    empty = ~np.any(mask != 0, axis=-1)
    pick = rng.integers(0, mask.shape[-1], size=mask.shape[:-1])
    one_hot = np.arange(mask.shape[-1]) == pick[..., None]
    return np.where(empty[..., None] & one_hot, 1.0, mask)


def _causal(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """1 where key <= query over the last two dims (top-left aligned), as Llama's causal mask."""
    if len(shape) < 2:
        return np.ones(shape)
    rows, cols = np.arange(shape[-2])[:, None], np.arange(shape[-1])[None, :]
    return np.broadcast_to((cols <= rows).astype(np.float64), shape).copy()


def _bernoulli(p: float) -> Sampler:
    return lambda rng, shape: (rng.uniform(size=shape) < p).astype(np.float64)


MASK_DISTRIBUTIONS: dict[str, Sampler] = {
    "shifted": _causal,
    "negative": _bernoulli(0.2),
    "normal": _bernoulli(0.5),
    "wide": _wide,
    "positive": _bernoulli(0.8),
    "opposed": _bernoulli(0.5),
    "opposed_flipped": _causal,
    "ties": _ties,
}


def draw_mask(rng: np.random.Generator, distribution: str, shape: tuple[int, ...]) -> np.ndarray:
    """A select condition from `distribution`'s mask sampler, no row all zero."""
    return _with_nonzero_rows(rng, MASK_DISTRIBUTIONS[distribution](rng, shape))


def sample_inputs(
    graph: tgraph.GraphOp, distribution: str, seed: int, bindings: Mapping[str, int], variant: int = 0
) -> list[np.ndarray]:
    """One float64 array per input of `graph`, drawn from `distribution`, reproducible from `seed`
    (select conditions from the distribution's mask sampler); `variant` picks the sign pattern of
    the OPPOSED distributions."""
    rng = np.random.default_rng(seed)
    draw = DISTRIBUTIONS[distribution]
    shapes = input_shapes(graph, bindings)
    xs = [draw(rng, shape) for shape in shapes]
    if distribution in OPPOSED:
        bit = variant % 3
        xs = [x + OPPOSED[distribution] * (-1.0) ** ((i >> bit) & 1) * 2.5 for i, x in enumerate(xs)]
    masks = condition_inputs(graph)
    if masks:
        mask_rng = np.random.default_rng([seed, 1])
        for i in sorted(masks):
            xs[i] = draw_mask(mask_rng, distribution, shapes[i])
    return with_causal_masks(graph, xs, shapes)


def fingerprint_inputs(
    graph: tgraph.GraphOp, seed: int, bindings: Mapping[str, int]
) -> list[list[np.ndarray]]:
    """The input sets on which the search fingerprints its terms: standard normal (the same as
    `random_inputs(graph, seed)`), normal shifted by -1.5 (mostly negative, so even and
    non-monotone functions do not commute with max), and integer ties. Select conditions are masks
    instead: half-dense 0/1, causal, and integer ties, with no row all zero (see `draw_mask`)."""
    shapes = input_shapes(graph, bindings)
    rng = np.random.default_rng(seed)
    normal = [rng.standard_normal(s) for s in shapes]
    rng = np.random.default_rng(seed + 1)
    negative = [rng.standard_normal(s) - 1.5 for s in shapes]
    rng = np.random.default_rng(seed + 2)
    ties = [_ties(rng, s) for s in shapes]
    mask_rng = np.random.default_rng([seed, 1])
    for i in sorted(condition_inputs(graph)):  # masks: half 0/1, causal, integer ties
        normal[i] = draw_mask(mask_rng, "normal", shapes[i])
        negative[i] = draw_mask(mask_rng, "shifted", shapes[i])
        ties[i] = draw_mask(mask_rng, "ties", shapes[i])
    return [with_causal_masks(graph, xs, shapes) for xs in (normal, negative, ties)]


def output_error(want: np.ndarray, got: np.ndarray, min_finite: float = 0.5, strict: bool = True) -> float | None:
    """max |got - want| over the elements both compute finitely, relative to the largest finite |want|.

    None (uninformative) when fewer than `min_finite` of the elements are finite in both; inf when
    the shapes differ, or (`strict`) when the candidate is inf or nan where the reference is finite:
    a candidate must be defined wherever its reference is (x / x is not 1 at x = 0).
    """
    want = np.asarray(want, dtype=np.float64)
    got = np.asarray(got, dtype=np.float64)
    if want.shape != got.shape:
        return float("inf")
    if not want.size:
        return 0.0
    both = np.isfinite(want) & np.isfinite(got)
    if strict and not np.array_equal(both, np.isfinite(want)):
        return float("inf")
    if both.mean() < min_finite:
        return None
    scale = float(np.max(np.abs(want[both]))) if both.any() else 0.0
    diff = float(np.max(np.abs(got[both] - want[both]))) if both.any() else 0.0
    return diff / scale if scale > 0 else diff


@dataclass
class Verdict:
    """The outcome of one check: equivalent or not, with the evidence."""

    equivalent: bool
    informative: int = 0
    trials: int = 0
    worst: float = 0.0
    failure: str = ""  # the first disagreeing trial, e.g. "negative at {d0: 6, d1: 5}: error 0.3"

    def __bool__(self) -> bool:
        return self.equivalent


RANGE_RTOL = 1e-4
"""The most a trial may disagree by and still be judged again at reduced input scale (`RANGE_SCALES`):
equal forms whose values leave float64's range round differently by far less than a wrong rewrite errs."""
RANGE_SCALES = (0.25, 0.0625)


@dataclass
class Checker:
    """Checks candidates against one reference graph; reference outputs are computed once per trial."""

    reference: tgraph.GraphOp
    instantiations: Sequence[Mapping[str, int]]
    seed: int = 0
    distributions: Sequence[str] = tuple(DISTRIBUTIONS)
    rtol: float = 1e-9
    wide_rtol: float = 1e-7
    min_informative: int = 2
    _want: dict[tuple[int, str], tuple[list[np.ndarray], tuple[np.ndarray, ...]] | None] = field(default_factory=dict)
    _cone: Cone | None = field(default=None, init=False)
    _at_root: Checker | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        # an input's cone whose values leave float64's exp range (an additive mask, `(m - 1) * 1e4`):
        # candidates computing the same cone are compared at its root, drawn like any input
        self._cone = range_cone(self.reference)
        if self._cone is not None:
            self._at_root = Checker(outline(self.reference, self._cone), self.instantiations, self.seed,
                                    self.distributions, self.rtol, self.wide_rtol, self.min_informative)

    def _trial(self, i: int, dist: str) -> tuple[list[np.ndarray], tuple[np.ndarray, ...]] | None:
        key = (i, dist)
        if key not in self._want:
            b = dict(self.instantiations[i])
            try:
                xs = sample_inputs(self.reference, dist, self.seed * 7919 + 101 * i + len(dist), b, variant=i)
                with np.errstate(all="ignore"):
                    self._want[key] = (xs, run_graph(self.reference, xs, bindings=b))
            except InterpretationError:
                self._want[key] = None
        return self._want[key]

    def _agrees_scaled(self, candidate: tgraph.GraphOp, xs: Sequence[np.ndarray], b: Mapping[str, int], tol: float) -> bool:
        """Whether `candidate` agrees with the reference within `tol` on the trial's inputs scaled down
        (`RANGE_SCALES`; a select's conditions as they are) at every scale: a trial that disagreed by a
        little (`RANGE_RTOL`) because its values left float64's range (exps of a row all subnormal or
        near overflow, which two equal forms round differently) is judged where they do not."""
        conditions = condition_inputs(self.reference)
        for factor in RANGE_SCALES:
            scaled = [x if j in conditions else x * factor for j, x in enumerate(xs)]
            try:
                with np.errstate(all="ignore"):
                    want, got = run_graph(self.reference, scaled, bindings=b), run_graph(candidate, scaled, bindings=b)
            except InterpretationError:
                return False
            errors = [output_error(w, g) for w, g in zip(want, got)]
            if any(e is None or not e <= tol for e in errors):
                return False
        return True

    def check(self, candidate: tgraph.GraphOp, extra: Mapping[str, int] | None = None) -> Verdict:
        """Run `candidate` (with `extra` bindings, e.g. its split count) against the reference; at the
        root of the reference's out-of-range cone (`elementwise_cones.range_cone`) when the candidate
        computes the same cone: equal there, they are equal for every value of the input."""
        if self._at_root is not None and (mine := same_cone(candidate, self._cone)) is not None:  # type: ignore[arg-type]
            return self._at_root.check(outline(candidate, mine), extra)
        verdict = Verdict(True)
        for dist in self.distributions:
            for i, b0 in enumerate(self.instantiations):
                trial = self._trial(i, dist)
                if trial is None:
                    continue
                xs, want = trial
                b = {**b0, **(extra or {})}
                verdict.trials += 1
                try:
                    with np.errstate(all="ignore"):
                        got = run_graph(candidate, xs, bindings=b)
                except InterpretationError as e:
                    return Verdict(False, verdict.informative, verdict.trials, float("inf"), f"{dist} at {dict(b)}: {e}")
                # wide inputs overflow exp and friends at different places in equivalent forms
                errors = [output_error(w, g, strict=dist != "wide") for w, g in zip(want, got)]
                if any(e is None for e in errors):
                    continue
                verdict.informative += 1
                err = max(errors, default=0.0)  # type: ignore[type-var]
                verdict.worst = max(verdict.worst, err)  # type: ignore[arg-type]
                tol = self.wide_rtol if dist == "wide" else self.rtol
                if not err <= tol and err <= RANGE_RTOL and self._agrees_scaled(candidate, xs, b, tol):  # type: ignore[operator]
                    continue
                if not err <= tol:  # type: ignore[operator]
                    verdict.equivalent = False
                    verdict.failure = f"{dist} inputs at {dict(b)}: max relative error {err:.3g}"
                    return verdict
        if verdict.informative < self.min_informative:
            verdict.equivalent = False
            verdict.failure = f"only {verdict.informative} of {verdict.trials} trials had finite outputs"
        return verdict


def equivalent(
    reference: tgraph.GraphOp,
    candidate: tgraph.GraphOp,
    instantiations: Sequence[Mapping[str, int]],
    *,
    seed: int = 0,
    distributions: Sequence[str] = tuple(DISTRIBUTIONS),
    rtol: float = 1e-9,
) -> Verdict:
    """Check `candidate` against `reference` on every distribution at every instantiation."""
    return Checker(reference, instantiations, seed, distributions, rtol).check(candidate)
