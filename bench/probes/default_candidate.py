"""Probe (GPU): how fast is what a CPU-only compile ships by default (`run()`'s candidate 0)?

Modules emitted by `cleave compile GRAPH -o NAME_old.py` and `NAME_new.py` (two versions of the ranking) are
loaded from DIR; each module's default candidate runs on random inputs of its graph (bench/probes/unseen/NAME.mlir),
is checked against the graph in float64 and timed (median of 30 calls after 5), old and new interleaved over 3
rounds, beside torch.compile of nothing (the graph's own PyTorch reference is not compiled here).

    bash bench/on_device.sh bash -c 'cd /tmp && python $OLDPWD/bench/probes/default_candidate.py $OLDPWD/.gpu/defaults'
"""

from __future__ import annotations

import importlib.util
import json
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from gpu_suite import parse_graph  # noqa: E402
from fa_order import bench  # noqa: E402  (median of CUDA-event timings)


def load(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main() -> None:
    from cleave_ir.runtime import check, random_inputs, torch_reference

    d = Path(sys.argv[1])
    unseen = Path(__file__).resolve().parent / "unseen"
    out: dict[str, dict[str, object]] = {}
    for old in sorted(d.glob("*_old.py")):
        name = old.name[: -len("_old.py")]
        graph = parse_graph((unseen / f"{name}.mlir").read_text())
        xs = random_inputs(graph, seed=1)
        ref = torch_reference(graph, xs)[0]
        calls = {}
        for tag in ("old", "new"):
            mod = load(d / f"{name}_{tag}.py")
            res = mod.run(*xs)
            res = res[0] if isinstance(res, (list, tuple)) else res
            out[f"{name} {tag}"] = {"candidate": mod.CANDIDATES[0][2], "err": check(res, ref)}
            calls[tag] = lambda mod=mod: mod.run(*xs)
        times: dict[str, list[float]] = {t: [] for t in calls}
        for _ in range(3):
            for t, f in calls.items():
                times[t].append(bench(f))
        for t, ts in times.items():
            out[f"{name} {t}"].update({"us": round(statistics.median(ts), 1), "rounds": [round(u, 1) for u in ts]})
            print(f"{name} {t}: {out[f'{name} {t}']}", flush=True)
    Path(os.environ.get("OUT", "."), "default_candidate.json").write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
