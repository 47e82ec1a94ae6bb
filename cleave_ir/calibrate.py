"""`python -m cleave_ir.calibrate`: refit the cost model's constants from measured kernel times.

    python -m cleave_ir.calibrate bench/results/calibration_2026-12-01_H200.json -o passes/cost_model_calibration.json
    python -m cleave_ir.calibrate bench/results/gpu_suite_*_H200.json --records-out RECORDS.json
    python -m cleave_ir.calibrate ~/.cache/cleave-ir/measurements.jsonl bench/results/calibration_*.json -o ...

Inputs are measurement records: the JSON lines `cleave compile --gpu` tuning appends to
`<cache>/measurements.jsonl` (each variant's cost-model terms and measured time), a records file
written by `--records-out`, or `bench/gpu_suite.py` results (each measured candidate's estimate,
kernel count and time). A group is one graph's candidates measured together: the ranking the cost
model should get right.

The fit: with terms for every record, for each ratio of the compute to the memory scale on a grid,
a weighted least-squares fit (relative error) of the memory scale, the iteration cost and the
launch cost, non-negative; the best ratio is kept. Records without terms (the suite's) only give a
candidate's total estimate: then one scale for the whole estimate and a launch cost per kernel are
fitted. `--report` prints how often the measured winner of a group is in the model's top-k before
the refit and, leave-one-group-out, after it (each group ranked by a fit on the other groups).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from cleave_ir.passes.cost_model import ITERATION_S, Calibration, Terms

RATIOS = tuple(float(x) for x in np.geomspace(0.25, 4.0, 17))


@dataclass(frozen=True)
class Record:
    """One measured candidate: its group, kernel count, uncorrected estimate, terms (if known), time."""

    group: str
    name: str
    kernels: int
    raw_us: float  # the estimate with the uncorrected constants
    us: float
    terms: tuple[Terms, ...] | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "group": self.group,
            "name": self.name,
            "kernels": self.kernels,
            "raw_us": self.raw_us,
            "us": self.us,
            "terms": None if self.terms is None else [t.to_json() for t in self.terms],
        }

    @staticmethod
    def from_json(d: dict[str, Any]) -> Record:
        terms = None if d.get("terms") is None else tuple(Terms(**t) for t in d["terms"])
        return Record(d["group"], d["name"], int(d["kernels"]), float(d["raw_us"]), float(d["us"]), terms)


def _from_terms(terms: Sequence[Terms]) -> float:
    base = Calibration()
    return sum(base.kernel_us(t) for t in terms)


def suite_records(data: dict[str, Any], source: str) -> list[Record]:
    """The correct, timed candidates of a `bench/gpu_suite.py` results file (estimates uncorrected)."""
    out = []
    for key, row in data.get("rows", {}).items():
        for c in row.get("candidates", []):
            if c.get("ok") and c.get("us"):
                out.append(Record(f"{source}:{key}", c["graph"], len(c["kernels"]), float(c["estimated_us"]), float(c["us"])))
    return out


def load_records(paths: Sequence[Path]) -> list[Record]:
    """Records from suite results, records files (`--records-out`) and measurements.jsonl files."""
    out: list[Record] = []
    for path in paths:
        text = path.read_text()
        if path.suffix == ".jsonl":
            for n, line in enumerate(text.splitlines(), 1):
                if not line.strip():
                    continue
                try:
                    d = json.loads(line)
                    terms = [Terms(**t) for t in d["terms"]] if all(t is not None for t in d["terms"]) else None
                    raw = _from_terms(terms) if terms else float(d["estimated_us"])
                    out.append(Record(f"{path.name}:{d['group']}", d["variant"], int(d["kernels"]), raw, float(d["us"]), tuple(terms) if terms else None))
                except (ValueError, KeyError, TypeError) as e:
                    raise ValueError(f"{path}:{n}: not a measurement record ({e})") from None
            continue
        data = json.loads(text)
        if isinstance(data, dict) and "rows" in data:
            out.extend(suite_records(data, path.name))
        elif isinstance(data, dict) and "records" in data:
            out.extend(Record.from_json(r) for r in data["records"])
        else:
            raise ValueError(f"{path}: neither suite results, a records file nor measurement lines")
    return out


# ----------------------------------------------------------------------------- fitting


def _lstsq_nonneg(a: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Least squares with coefficients >= 0 (features dropped until none is negative)."""
    active = list(range(a.shape[1]))
    coef = np.zeros(a.shape[1])
    while active:
        sol, *_ = np.linalg.lstsq(a[:, active], y, rcond=None)
        if (sol >= 0).all():
            coef[active] = sol
            return coef
        active.pop(int(np.argmin(sol)))
    return coef


def fit(records: Sequence[Record]) -> Calibration:
    """The calibration that minimizes the relative error of `records` (see the module docstring)."""
    if not records:
        raise ValueError("no measurement records to fit")
    us = np.array([r.us for r in records])
    if all(r.terms is not None for r in records):
        fixed = np.array([sum(t.waves * t.unscaled_s() * 1e6 for t in r.terms or ()) for r in records])
        best: tuple[float, Calibration] | None = None
        for ratio in RATIOS:
            feats = np.array(
                [
                    [
                        sum(t.waves * t.busy_s(1.0, ratio) * 1e6 for t in r.terms or ()),
                        sum(t.waves * t.iterations for t in r.terms or ()),
                        r.kernels,
                    ]
                    for r in records
                ]
            )
            a = feats / us[:, None]
            target = 1.0 - fixed / us  # the seconds no constant scales (`Terms.unscaled_s`) are taken out first
            coef = _lstsq_nonneg(a, target)
            sse = float(((a @ coef) - target) @ ((a @ coef) - target))
            cal = Calibration(float(coef[0]), float(coef[0] * ratio), float(coef[1]) * 1e-6, float(coef[2]))
            if best is None or sse < best[0]:
                best = (sse, cal)
        assert best is not None
        return best[1]
    a = np.array([[r.raw_us, r.kernels] for r in records]) / us[:, None]
    scale, launch = _lstsq_nonneg(a, np.ones(len(records)))
    return Calibration(float(scale), float(scale), ITERATION_S * float(scale), float(launch))


def predict(cal: Calibration, r: Record) -> float:
    """The calibrated estimate of a record (from its terms, else from its total estimate)."""
    if r.terms is not None:
        return sum(cal.kernel_us(t) for t in r.terms)
    if not math.isclose(cal.memory_scale, cal.compute_scale) or not math.isclose(cal.iteration_s, ITERATION_S * cal.memory_scale):
        raise ValueError(f"{r.group} {r.name}: a calibration with separate scales needs the record's terms")
    return cal.memory_scale * r.raw_us + cal.launch_us * r.kernels


def groups(records: Sequence[Record]) -> dict[str, list[Record]]:
    out: dict[str, list[Record]] = {}
    for r in records:
        out.setdefault(r.group, []).append(r)
    return out


def hits(group: Sequence[Record], score: Any, k: int) -> bool:
    """Whether the measured winner of `group` is among the `k` best by `score` (ties: record order)."""
    ranked = sorted(range(len(group)), key=lambda i: (score(group[i]), i))
    winner = min(range(len(group)), key=lambda i: (group[i].us, i))
    return winner in ranked[:k]


def evaluate(records: Sequence[Record], ks: Sequence[int] = (1, 2)) -> dict[str, Any]:
    """Top-k hit counts over the groups of two or more candidates: before (uncorrected estimates)
    and after (leave-one-group-out fits)."""
    gs = {g: rs for g, rs in groups(records).items() if len(rs) >= 2}
    out: dict[str, Any] = {"groups": len(gs), "records_in_groups": sum(len(rs) for rs in gs.values())}
    for k in ks:
        out[f"top{k}_before"] = sum(hits(rs, lambda r: r.raw_us, k) for rs in gs.values())
        after = 0
        for g, rs in gs.items():
            cal = fit([r for r in records if r.group != g])
            after += hits(rs, lambda r, cal=cal: predict(cal, r), k)
        out[f"top{k}_after_loo"] = after
    return out


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m cleave_ir.calibrate", description=__doc__.splitlines()[0])
    p.add_argument("inputs", nargs="+", type=Path, help="suite results (.json), records files (.json), measurements (.jsonl)")
    p.add_argument("-o", "--output", type=Path, help="write the calibration here (e.g. passes/cost_model_calibration.json)")
    p.add_argument("--records-out", type=Path, help="write the records read (a committed data file)")
    p.add_argument("--report", action="store_true", help="top-k hits of the measured winner before and after the refit")
    args = p.parse_args(argv)
    try:
        records = load_records(args.inputs)
        cal = fit(records)
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except (KeyError, TypeError) as e:  # a records or results file of another shape
        print(f"error: {', '.join(str(x) for x in args.inputs)}: not measurement records (missing or bad {e})", file=sys.stderr)
        return 1
    print(
        f"{len(records)} records in {len(groups(records))} groups: memory x{cal.memory_scale:.3f}, compute x{cal.compute_scale:.3f}, "
        f"{cal.iteration_s * 1e6:.3f} us per iteration, {cal.launch_us:.2f} us per kernel"
    )
    report = evaluate(records) if args.report or args.output else {}
    for key, value in report.items():
        print(f"  {key}: {value}")
    if args.records_out:
        args.records_out.write_text(json.dumps({"sources": [str(x) for x in args.inputs], "records": [r.to_json() for r in records]}, indent=1) + "\n")
    if args.output:
        fitted = Calibration(cal.memory_scale, cal.compute_scale, cal.iteration_s, cal.launch_us, {"inputs": [x.name for x in args.inputs], **report})
        args.output.write_text(json.dumps(fitted.to_json(), indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
