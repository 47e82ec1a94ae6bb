"""The gate: a compiled region replaces PyTorch only if it is correct and measurably faster.

Correct: on every input set (the example run's values, the region's inputs when the model runs on its
example inputs shuffled and on normal(0, 1) inputs (`with_model_runs`), then random normal(0, 1),
uniform(-1, 1) and normal(0, 0.1) tensors, and where the region has dynamic dims, normal(0, 1) tensors
at other sizes), the kernel's output is within `tolerance` (max abs error / max abs
reference) of PyTorch's version of the region evaluated in float64, where the region's type can compute
that result (past its range, or where PyTorch's own region in that type is not finite, PyTorch fails
too; `PAST_RANGE_SKIP`). Faster: `t_ours * (1 + margin) <
t_pytorch`, both timed by `timer` (injectable; tests fake it). Otherwise PyTorch's version stays and
the report row says why.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from cleave_ir.runtime import check, one_line
from cleave_ir.torch.partition import Region, has_fp32_matmul

Timer = Callable[[Callable[..., Any], Sequence[torch.Tensor], str, Region], float]
"""timer(fn, inputs, which, region) -> microseconds per call of fn(*inputs); which is 'pytorch' or 'cleave'."""

TOLERANCE = {torch.float16: 1e-2, torch.bfloat16: 2e-2, torch.float32: 1e-3}
DISTRIBUTIONS = ("example", "normal(0,1)", "uniform(-1,1)", "normal(0,0.1)")


@dataclass
class Row:
    """The gate's verdict on one region."""

    region: int
    ops: list[str]
    decision: str  # "cleave" or "pytorch"
    reason: str
    pytorch_us: float | None = None
    cleave_us: float | None = None
    error: float | None = None
    pytorch_error: float | None = None
    tgraph_ops: list[str] = field(default_factory=list)
    members: list[int] = field(default_factory=list)  # a projection group's row: the regions it computes
    group: int | None = None  # a member's row where its group was accepted: the group's region index


@dataclass
class Report:
    """One row per region (compiled or not), plus the plan text."""

    rows: list[Row]
    margin: float
    plan: str = ""

    def regions(self) -> list[Row]:
        """The rows of regions (a projection group's own row left out: its members have theirs)."""
        return [r for r in self.rows if not r.members]

    def replaced(self) -> list[Row]:
        """The regions that run our kernels (a group's members, not the group's own row)."""
        return [r for r in self.rows if r.decision == "cleave" and not r.members]

    def table(self) -> str:
        lines = [
            f"| region | ops | decision | reason | PyTorch us | ours us | rel. error (ours) | rel. error (PyTorch) |",
            "| ---: | --- | --- | --- | ---: | ---: | ---: | ---: |",
        ]
        for r in self.rows:
            ops = ", ".join(o.removeprefix("aten.") for o in r.ops)
            reason = r.reason if len(r.reason) <= 160 else r.reason[:157] + "..."
            lines.append(
                f"| {r.region} | {ops} | {r.decision} | {reason} | {_num(r.pytorch_us)} | {_num(r.cleave_us)} | {_err(r.error)} | {_err(r.pytorch_error)} |"
            )
        return "\n".join(lines)

    def __str__(self) -> str:
        return f"gate margin {self.margin:.0%}: {len(self.replaced())} of {len(self.regions())} regions run our kernels\n" + self.table()

    def __repr__(self) -> str:  # a REPL shows the table
        return str(self)

    def to_json(self) -> dict[str, Any]:
        return {"margin": self.margin, "rows": [dict(r.__dict__) for r in self.rows]}


def _inputs(name: str) -> str:
    """An input set's name in a sentence: "normal(0,1) inputs", "the model run on normal(0,1) inputs"."""
    return name if name.endswith("inputs") else f"{name} inputs"


def _num(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def _err(x: float | None) -> str:
    return "-" if x is None else f"{x:.1e}"


InputSet = tuple[str, list[torch.Tensor]]


def input_sets(example: Sequence[torch.Tensor], other_shapes: Sequence[Sequence[int]] | None = None, seed: int = 0) -> list[InputSet]:
    """(name, tensors): the example values, one random set per distribution of `DISTRIBUTIONS[1:]`,
    and with `other_shapes` (other sizes of the dynamic dims) a normal(0,1) set of those shapes.
    A boolean or integer input (an attention mask) keeps its example value; at other shapes it is causal.

    Values are drawn on each input's own device (one generator per device, seeded with `seed`): a layer's
    weights drawn on the CPU in float64 took most of a warm `optimize` on the GPU (10 of 33 s)."""
    gens: dict[torch.device, torch.Generator] = {}

    def draw(shape: Sequence[int], x: torch.Tensor, dist: str) -> torch.Tensor:
        if x.device not in gens:
            gens[x.device] = torch.Generator(device=x.device).manual_seed(seed)
        wide = torch.float64 if x.device.type in ("cpu", "cuda") else torch.float32  # (MPS has no float64)
        kw: dict[str, Any] = {"generator": gens[x.device], "dtype": wide, "device": x.device}
        if dist == "uniform(-1,1)":
            r = torch.rand(list(shape), **kw) * 2 - 1
        else:
            r = torch.randn(list(shape), **kw) * (0.1 if dist == "normal(0,0.1)" else 1.0)
        return r.to(x.dtype)

    sets: list[InputSet] = [(DISTRIBUTIONS[0], list(example))]
    for dist in DISTRIBUTIONS[1:]:
        # a boolean or integer mask keeps its values
        sets.append((dist, [draw(x.shape, x, dist) if x.is_floating_point() else x for x in example]))
    if other_shapes is not None:
        resized = [
            draw(shape, x, "normal(0,1)") if x.is_floating_point() else causal_mask(list(shape), x.device).to(x.dtype)
            for shape, x in zip(other_shapes, example)
        ]
        sets.append((f"normal(0,1) at shapes {[list(s) for s in other_shapes]}", resized))
    return sets


def with_model_runs(sets: Sequence[InputSet], runs: Sequence[tuple[str, dict[Any, Any]]], region: Region) -> list[InputSet]:
    """`sets` with, after the example, the region's inputs in each of the model's own runs on other
    inputs (`capture.model_runs`: values the model makes, where the region-level random sets may leave
    the region's domain)."""
    nodes = region.tensor_inputs()
    extra = [(name, [values[n] for n in nodes]) for name, values in runs if all(n in values for n in nodes)]
    return [*sets[:1], *extra, *sets[1:]]


def causal_mask(shape: list[int], device: Any) -> torch.Tensor:
    """A boolean mask of `shape` keeping key j for query i when j <= i + (keys - queries): no row empty."""
    q, k = (shape[-2], shape[-1]) if len(shape) >= 2 else (1, shape[-1])
    return torch.ones(q, k, dtype=torch.bool, device=device).tril(k - q).expand(shape).contiguous()


def default_timer(fn: Callable[..., Any], inputs: Sequence[torch.Tensor], which: str, region: Region) -> float:
    """CUDA: `cleave_ir.runtime.timed` (CUDA graphs, rotating input copies); CPU: median wall time of 5 calls."""
    if inputs and inputs[0].is_cuda:
        from cleave_ir.runtime import rotating_copies, timed

        return timed(fn, rotate=rotating_copies(list(inputs))).us
    fn(*inputs)
    samples = []
    for _ in range(5):
        t0 = time.perf_counter()
        fn(*inputs)
        samples.append((time.perf_counter() - t0) * 1e6)
    return statistics.median(samples)


def _tensors(out: Any) -> list[torch.Tensor]:
    """A region's output as a list: a projection group returns one tensor per member."""
    return list(out) if isinstance(out, (list, tuple)) else [out]


def _check(got: torch.Tensor, ref: torch.Tensor) -> float:
    """`runtime.check` where elements NaN in both, or the same infinity in both, count as equal
    (PyTorch's own NaN: a row that masked_fill(-inf) masks whole; a logsumexp's -inf there)."""
    both = (got.isnan() & ref.isnan()) | (got.isinf() & (got == ref))
    if bool(both.any()):
        got, ref = got.masked_fill(both, 0), ref.masked_fill(both, 0)
    return check(got, ref)


PAST_RANGE_SKIP = 0.01
"""An input set that drives more than this share of the elements beyond what the region's type computes
(`_beyond_dtype`) says nothing of the kernel: it is skipped, as a set outside the region's domain is."""


def _beyond_dtype(ref: torch.Tensor, theirs: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """Where the float64 `ref` is finite but the region's type cannot compute it: past `dtype`'s largest
    finite value (PyTorch in that type gives inf as well: an fp16 SwiGLU's silu(x Wg) * (x Wu) on
    normal(0, 1) weights, K = 4096), or where PyTorch's own region in that type (`theirs`) is not
    finite (an intermediate overflows: fp16 F.normalize over random norms, a negative one clamped to
    1e-12, divides q by it)."""
    if not dtype.is_floating_point or dtype == torch.float64:
        return torch.zeros_like(ref, dtype=torch.bool)
    finite = torch.isfinite(ref)  # an infinite reference is compared as is (`_check`)
    return finite & ((ref.abs() > torch.finfo(dtype).max) | ~torch.isfinite(theirs))


def _inverted_masks(xs: Sequence[torch.Tensor], example: Sequence[torch.Tensor]) -> list[torch.Tensor] | None:
    """`xs` with its boolean or integer masks made for other sizes (`input_sets`: causal) inverted;
    None where it has none."""
    made = [not x.is_floating_point() and x.shape != x0.shape for x, x0 in zip(xs, example)]
    if not any(made):
        return None
    return [(~x if x.dtype == torch.bool else 1 - x) if m else x for x, m in zip(xs, made)]


TF32_TOLERANCE = TOLERANCE[torch.float16]
"""A float32 region's tolerance where its matmuls run in TF32 (PyTorch's "high" precision, which the
region was allowed under: `partition.tf32_refused`): TF32 keeps fp16's 10-bit mantissa, and PyTorch's
own TF32 region is off by more than float32's 1e-3 on long sums."""


PYTORCH_ERROR_FACTOR = 2.0
"""A kernel may be this many times as far from float64 as PyTorch's own region on the same inputs, where
that is past the type's tolerance (fp16 attention whose random scores span a wide range: PyTorch's
region 2.1e-2 off, ours the same, was refused at 1e-2), up to `PYTORCH_ERROR_CAP` tolerances."""
PYTORCH_ERROR_CAP = 10.0


def allowed_error(tol: float, pytorch_error: float) -> float:
    """The relative error a kernel may have on an input set where PyTorch's region has `pytorch_error`."""
    return max(tol, min(PYTORCH_ERROR_FACTOR * pytorch_error, PYTORCH_ERROR_CAP * tol)) if math.isfinite(pytorch_error) else tol


def region_tolerance(region: Region) -> float:
    """The tolerance of the least precise floating type the region computes, reads or returns (a
    float32 input cast to bf16 inside is checked at bf16's; float32 matmuls in TF32 at fp16's)."""
    vals = [n.meta.get("val") for n in [*region.nodes, *region.tensor_inputs()]]
    dtypes = {v.dtype for v in vals if isinstance(v, torch.Tensor) and v.dtype.is_floating_point}
    tol = max((TOLERANCE.get(d, 1e-2) for d in dtypes), default=1e-2)
    if region.graph is not None and has_fp32_matmul(region.graph) and torch.get_float32_matmul_precision() != "highest":
        tol = max(tol, TF32_TOLERANCE)
    return tol


def gate(
    region: Region,
    pytorch: Callable[..., torch.Tensor],
    kernel: Callable[..., torch.Tensor],
    sets: Sequence[InputSet],
    *,
    timer: Timer = default_timer,
    margin: float = 0.03,
    tolerance: float | None = None,
    baseline: Callable[..., torch.Tensor] | None = None,
    reference: Callable[..., torch.Tensor] | None = None,
) -> Row:
    """Check `kernel` against `reference` (default `pytorch`; `region_module(region, float64=True)`
    where the region converts dtypes) run in float64 on every input set, then time it against
    `baseline` (default `pytorch`; e.g. the region under torch.compile); the verdict."""
    row = Row(region.index, region.ops(), "pytorch", "", tgraph_ops=region.tgraph_ops(), members=[m.index for m in region.members])
    tol = tolerance if tolerance is not None else region_tolerance(region)
    errors, torch_errors, names, skipped, out_of_range = [], [], [], [], []
    beyond: list[str] = []  # sets the region's type cannot compute (`_beyond_dtype`)
    dtype = ""  # the region's output type, once known
    try:
        example_finite: list[torch.Tensor] | None = None
        with torch.no_grad():
            for i, (name, xs) in enumerate(sets):
                refs = _tensors((pytorch if reference is None else reference)(*[x.double() if x.is_floating_point() else x for x in xs]))
                finite = [torch.isfinite(r) for r in refs]
                if i > 0 and not all(bool(f.all()) for f in finite) and (inverted := _inverted_masks(xs, sets[0][1])) is not None:
                    # a mask made for other sizes keeps where True; a masked_fill drops there, and rows it drops whole are NaN
                    name, xs = f"{name} with masks inverted", inverted
                    refs = _tensors((pytorch if reference is None else reference)(*[x.double() if x.is_floating_point() else x for x in xs]))
                    finite = [torch.isfinite(r) for r in refs]
                if i == 0:
                    example_finite = finite
                elif example_finite is not None:  # non-finite where the example's is too (a mask's NaN rows)
                    finite = [f | ~e if f.shape == e.shape else f for f, e in zip(finite, example_finite)]
                if i > 0 and not all(bool(f.all()) for f in finite):
                    skipped.append(name)
                    continue  # random inputs outside the region's domain (e.g. rsqrt of a negative): no reference
                gots = _tensors(kernel(*xs))
                if len(gots) != len(refs):
                    raise ValueError(f"{len(gots)} outputs on {name} inputs, expected {len(refs)}")
                dtype = str(gots[0].dtype).removeprefix("torch.")
                for got, ref in zip(gots, refs):
                    if tuple(got.shape) != tuple(ref.shape):
                        raise ValueError(f"output shape {tuple(got.shape)} on {name} inputs, expected {tuple(ref.shape)}")
                theirs_all = _tensors(pytorch(*xs))
                pasts = [_beyond_dtype(ref, theirs, got.dtype) for got, ref, theirs in zip(gots, refs, theirs_all)]
                if float(torch.cat([p.flatten().float() for p in pasts]).mean()) > PAST_RANGE_SKIP:
                    beyond.append(name)
                    continue
                errs, torch_errs = [], []
                for got, ref, theirs, past in zip(gots, refs, theirs_all, pasts):
                    if bool(past.any()):  # compared where the region's type can compute the result
                        got, theirs, ref = got.masked_fill(past, 0), theirs.masked_fill(past, 0), ref.masked_fill(past, 0)
                        out_of_range.append(f"{name}, {int(past.sum())} of {past.numel()} elements")
                    errs.append(_check(got, ref))
                    torch_errs.append(_check(theirs, ref))
                errors.append(max(errs))
                torch_errors.append(max(torch_errs))
                names.append(name)
    except Exception as e:  # a kernel that cannot run keeps PyTorch
        row.reason = f"kernel failed: {one_line(e)}"
        return row
    if not errors:
        row.reason = f"not checked: no input set in the region's domain ({'; '.join(skipped + [f'{n} (beyond what {dtype} computes)' for n in beyond])})"
        return row
    row.error, row.pytorch_error = max(errors), max(torch_errors)
    worst = max(range(len(errors)), key=lambda i: errors[i])
    if not math.isfinite(row.error):
        row.reason = f"wrong: ours is inf or NaN where the float64 reference is not, on {_inputs(names[worst])}"
        return row
    limits = [allowed_error(tol, e) for e in torch_errors]
    over = [i for i in range(len(errors)) if errors[i] > limits[i]]
    if over:
        i = max(over, key=lambda i: errors[i] / limits[i])
        limit = limits[i]
        beside = f" (PyTorch's own {torch_errors[i]:.1e})" if limit > tol else ""
        shown = f"{limit:.1e}" if limit > tol else f"{limit:.0e}"
        row.reason = f"wrong: rel. error {errors[i]:.1e} > {shown}{beside} on {_inputs(names[i])}"
        return row
    try:
        with torch.no_grad():
            row.pytorch_us = timer(pytorch if baseline is None else baseline, sets[0][1], "pytorch", region)  # not `or`: a GraphModule has no truth value
            row.cleave_us = timer(kernel, sets[0][1], "cleave", region)
    except Exception as e:
        row.reason = f"timing failed: {one_line(e)}"
        return row
    if row.cleave_us * (1 + margin) < row.pytorch_us:
        row.decision = "cleave"
        row.reason = f"correct on {len(names)} input sets and {row.pytorch_us / row.cleave_us:.2f}x faster"
        if skipped:
            row.reason += f" (not checked where the reference is not finite: {'; '.join(skipped)})"
        if beyond:
            row.reason += f" (not checked where {dtype} cannot compute the result, PyTorch's own region not finite or past its range: {'; '.join(beyond)})"
        if out_of_range:
            row.reason += f" (not compared where the region's type cannot compute the result, past its range or not finite in PyTorch too: {'; '.join(out_of_range)})"
    else:
        row.reason = f"correct but not faster by {margin:.0%} ({row.pytorch_us / row.cleave_us:.2f}x)"
    return row
