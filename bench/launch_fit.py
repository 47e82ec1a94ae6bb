"""What a candidate's first kernel and each later one cost beyond their work, fitted on suite timings.

    python bench/launch_fit.py bench/results/gpu_suite_2026-12-05s27_H200.json bench/results/gpu_suite_2026-12-05s25_H200.json

Each measured candidate of a `bench/gpu_suite.py run` results file gives its total estimate, its kernel count n
and its measured time. Those runs ranked candidates with the calibrated launch (`launch_us`) on every kernel, so
an estimate's work is `estimated_us - n * launch_us`. A least-squares fit of the relative error,
`measured = scale * work + first + follow * (n - 1)`, gives the launch of a candidate's first kernel and of each
later one (`cost_model.FOLLOW_LAUNCH_US`): later kernels wait for the one before with programmatic dependent
launch, so their launches overlap it. Also printed for the candidates measured under 60 us alone.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from cleave_ir.passes.cost_model import CALIBRATION


def main(paths: list[str]) -> None:
    rows = []
    for p in paths:
        for row in json.loads(Path(p).read_text())["rows"].values():
            for c in row.get("candidates", []):
                if c.get("ok") and c.get("us") and c.get("estimated_us") and "graph" in c:
                    rows.append((len(c["kernels"]), c["estimated_us"], c["us"]))
    n = np.array([r[0] for r in rows], dtype=float)
    work = np.array([r[1] for r in rows]) - n * CALIBRATION.launch_us
    us = np.array([r[2] for r in rows])
    for name, keep in (("all", us > 0), ("under 60 us", us < 60)):
        a = np.stack([work, np.ones_like(n), n - 1], 1)[keep] / us[keep, None]
        (scale, first, follow), *_ = np.linalg.lstsq(a, np.ones(int(keep.sum())), rcond=None)
        print(f"{name} ({int(keep.sum())} candidates): scale {scale:.3f}, first kernel {first:.2f} us, each later kernel {follow:.2f} us")


if __name__ == "__main__":
    main(sys.argv[1:])
