"""Probe (GPU): what a Split-K candidate's combine kernel costs beside its split kernel.

For each row, the pipeline's first Split-K candidate (two kernels: split, combine) is timed three ways
in CUDA graphs (`runtime.timed`, inputs rotated past the L2, 5 interleaved rounds): the pair as
`run()` launches it, the split kernel alone, the combine kernel alone (on the split's outputs). The pair
minus the split is what fusing the combine into the split's last blocks could save at most.

    bash bench/on_device.sh python bench/probes/split_combine_cost.py ROW...   # $OUT/split_combine_cost.json
"""

import json
import os
import statistics
import sys
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import gpu_suite as gs  # noqa: E402
from launch_overlap import emit  # noqa: E402  (the row's module as `prepare` emits it)

OUT = Path(os.environ.get("OUT", "/tmp"))
ROW_NAMES = [a for a in sys.argv[1:] if not a.startswith("--")]


def main() -> None:
    import torch

    from cleave_ir import runtime
    from cleave_ir.tilelang_check import load_module_file

    with ProcessPoolExecutor(min(len(ROW_NAMES), 15)) as ex:
        sources = dict(zip(ROW_NAMES, ex.map(emit, ROW_NAMES)))
    mods = {}
    for row, src in sources.items():
        path = Path(f"/tmp/split_cost_{row}.py")
        path.write_text(src)
        m = load_module_file(path)
        pick = [c for c, (_, names, _) in enumerate(m.CANDIDATES) if len(names) == 2 and "split" in names[0]]
        if pick:
            mods[row] = (m, pick[0])
        else:
            print(row, "no Split-K candidate", flush=True)
    with ThreadPoolExecutor(15) as ex:  # compile every kernel up front, in parallel
        list(ex.map(lambda mn: mn[0].compile_kernel(mn[1]), [(m, n) for m, c in mods.values() for n in m.CANDIDATES[c][1]]))
    res: dict = {}
    for row, (m, c) in mods.items():
        split, combine = m.CANDIDATES[c][1]
        graph = gs.parse_graph(gs.graph_text({r.name: r for r in gs.rows()}[row]))
        xs = runtime.random_inputs(graph)
        ref = runtime.torch_reference(graph, xs)[0]
        err = runtime.check(m.run(*xs, candidate=c), ref)
        sets = runtime.rotating_copies(xs)
        ks, kc = m.compile_kernel(split), m.compile_kernel(combine)

        def combine_args(a, parts):  # type: ignore[no-untyped-def]
            env = dict(zip(m.KERNELS[split]["input_names"], a))
            extra = [env[n] for n in m.KERNELS[combine]["passthrough"]]
            parts = list(parts) if isinstance(parts, (list, tuple)) else [parts]
            return parts[: m.KERNELS[combine]["inputs"] - len(extra)] + extra

        csets = [combine_args(a, ks(*a)) for a in sets]
        fns = {
            "pair": (lambda *a: m.run(*a, candidate=c), sets),
            "split": (lambda *a: ks(*a), sets),
            "combine": (lambda *a: kc(*a), csets),
        }
        samples: dict = {n: [] for n in fns}
        for _ in range(5):
            for n, (fn, s) in fns.items():
                samples[n].append(runtime.timed(fn, rotate=s, batch=50, iters=15).us)
        res[row] = {"candidate": m.CANDIDATES[c][2], "rel_error": err} | {n: statistics.median(v) for n, v in samples.items()}
        r = res[row]
        print(f"{row:24s} {r['candidate']:32s} pair {r['pair']:8.2f} split {r['split']:8.2f} combine {r['combine']:7.2f} "
              f"pair-split {r['pair'] - r['split']:6.2f} us err {err:.1e}", flush=True)
        torch.cuda.synchronize()
    (OUT / "split_combine_cost.json").write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
