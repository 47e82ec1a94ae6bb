"""The generality suite on the GPU: every subgraph of `examples/models/` at its real shape, our best
candidate against eager PyTorch (the graph op by op) and torch.compile, checked against float64.

    python bench/models.py prepare --out .gpu/models -j 16            # the pipeline for every model (any CPU)
    bash bench/on_device.sh python bench/models.py run .gpu/models --out bench/results/models_DATE_H200.json
    python bench/models.py smoke                                       # CPU: prepare at the test shapes, check the baselines

A thin entry to `bench/gpu_suite.py` (its `prepare`/`run` split, timing, checks and tables):
`prepare` gets `--models` (the rows are the model files, resized by their `// gpu-resize:` lines),
`run` and `chart` are gpu_suite's. The run writes RESULTS.json and RESULTS.md; with the default
`--deadline 480` it fits one 10-minute command (rows past the deadline are recorded as not run; a
second `run ... --previous RESULTS.json` finishes them).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import gpu_suite  # noqa: E402


def smoke() -> int:
    """Without a GPU: every model's eager baseline (`graph_eager`, on the CPU) against the
    float64 reference on the test shapes, with `model_inputs`; one line per model."""
    from cleave_ir.runtime import check, random_inputs, torch_reference

    bad = 0
    for row in gpu_suite.model_rows():
        graph = gpu_suite.parse_graph(gpu_suite.graph_text(row, scale=True))
        xs = gpu_suite.model_inputs(graph, random_inputs(graph, device="cpu"))
        ref = torch_reference(graph, xs)[0]
        err = check(gpu_suite.graph_eager(graph)(*xs), ref)
        real = gpu_suite.parse_graph(gpu_suite.graph_text(row))
        print(f"{row.name}: eager error {err:.1e}, real shape inputs {gpu_suite.graph_costs(real)[0]}")
        bad += not err < 1e-2
    return 1 if bad else 0


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["smoke"]:
        return smoke()
    if args[:1] == ["prepare"] and "--models" not in args:
        args.append("--models")
    return gpu_suite.main(args)


if __name__ == "__main__":
    sys.exit(main())
