"""Probe (GPU): the host time of an eager `run()` before and after it replays its decisions (`_plans`).

Prepare on the CPU (`prepare DIR GRAPH...`, GRAPH in bench/probes/unseen): each graph is compiled once
(`cleave compile`), and written twice: `NAME_new.py` as emitted, `NAME_old.py` with the runtime section
(from `_compiled = {}` on) of the emitter at git revision OLD (default HEAD~1). On the GPU (`time DIR`):
for every candidate of every module, on random inputs of its graph (and for the first candidate, where a graph's
first input has 2+ dims, on that input as a strided view: its rows 64 elements wider than it reads), old and new must give
bitwise-equal outputs, within the graph's float64 tolerance; then the wall time a call of each,
back to back (host-bound) and one at a time (synchronized after each), interleaved over 3 rounds, and
the new `run` once captured in CUDA graphs (`runtime.timed`, as `cleave compile --gpu` times it).

    python bench/probes/run_replay.py prepare .gpu/replay logsumexp_t4_v32000 ...
    bash bench/on_device.sh bash -c 'cd /tmp && python $OLDPWD/bench/probes/run_replay.py time $OLDPWD/.gpu/replay'
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
UNSEEN = Path(__file__).resolve().parent / "unseen"
MARK = "\n_compiled = {}\n"


def old_runtime(rev: str) -> str:
    """The emitted runtime section at git revision `rev` (the `_RUNTIME` string literal)."""
    src = subprocess.run(["git", "show", f"{rev}:cleave_ir/tilelang_emitter.py"], capture_output=True, text=True, check=True).stdout
    start = src.index("_RUNTIME = '''") + len("_RUNTIME = '''")
    return src[start : src.index("'''", start)]


def prepare(out: Path, graphs: list[str], rev: str) -> None:
    out.mkdir(parents=True, exist_ok=True)
    old = old_runtime(rev)
    for g in graphs:
        new = out / f"{g}_new.py"
        subprocess.run(["cleave", "compile", str(UNSEEN / f"{g}.mlir"), "-o", str(new)], check=True, capture_output=True)
        text = new.read_text()
        (out / f"{g}_old.py").write_text(text[: text.index(MARK)] + old)
        print(f"{g}: {text.count(chr(10))} lines", flush=True)


def per_call_us(fn, n: int, sync_each: bool) -> float:
    import torch

    for _ in range(10):
        fn()
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(n):
        fn()
        if sync_each:
            torch.cuda.synchronize()
    torch.cuda.synchronize()
    return (time.perf_counter() - t) / n * 1e6


def strided(x):
    """`x` as a view whose rows are 64 elements wider than it (read in place, or copied)."""
    import torch

    wide = torch.zeros(*x.shape[:-1], x.shape[-1] + 64, dtype=x.dtype, device=x.device)
    wide[..., : x.shape[-1]] = x
    return wide[..., : x.shape[-1]]


def first(res):
    return res[0] if isinstance(res, (list, tuple)) else res


def time_dir(d: Path) -> None:
    import torch
    from default_candidate import load
    from gpu_suite import parse_graph

    from cleave_ir.runtime import check, compile_candidates, random_inputs, timed, torch_reference

    rows = []
    for new_path in sorted(d.glob("*_new.py")):
        name = new_path.name[: -len("_new.py")]
        graph = parse_graph((UNSEEN / f"{name}.mlir").read_text())
        mods = {"old": load(d / f"{name}_old.py"), "new": load(new_path)}
        for m in mods.values():  # in parallel (the second module's kernels: TileLang's disk cache)
            compile_candidates(m, [k for _, ks, _ in m.CANDIDATES for k in ks], jobs=15)
        xs = random_inputs(graph, seed=3)
        ref = torch_reference(graph, xs)[0]
        sets = {"dense": xs}
        if xs[0].dim() >= 2:
            sets["strided x0"] = [strided(xs[0]), *xs[1:]]
        for c, (est, kernels, head) in enumerate(mods["new"].CANDIDATES):
            for set_name, args in sets.items() if c == 0 else [("dense", xs)]:
                got = {t: first(m.run(*args, candidate=c)) for t, m in mods.items()}
                row = {"graph": name, "candidate": head, "kernels": len(kernels), "inputs": set_name,
                       "bitwise": bool(torch.equal(got["old"], got["new"])), "err": check(got["new"], ref)}
                calls = {t: (lambda m=m, args=args, c=c: m.run(*args, candidate=c)) for t, m in mods.items()}
                for mode, n, sync in (("back to back", 300, False), ("one at a time", 200, True)):
                    ts: dict[str, list[float]] = {t: [] for t in calls}
                    for _ in range(3):
                        for t, f in calls.items():
                            ts[t].append(per_call_us(f, n, sync))
                    for t in calls:
                        row[f"{t} {mode} us"] = round(statistics.median(ts[t]), 1)
                row["new graphed us"] = round(timed(calls["new"]).us, 2)
                if c == 0 and set_name == "dense" and len(kernels) == 1:  # TileLang's own launcher, and its executable
                    k0 = mods["new"]._compiled[(kernels[0], ())]
                    row["launcher alone us"] = round(per_call_us(lambda: k0(*xs), 300, False), 1)
                    try:
                        exe = k0.adapter._get_executable()
                        row["executable alone us"] = round(per_call_us(lambda: exe(*xs, xs[0]), 300, False), 1)
                    except Exception as e:  # noqa: BLE001 - a private API: report, do not fail
                        row["executable alone us"] = f"{type(e).__name__}: {str(e)[:80]}"
                rows.append(row)
                print(json.dumps(row), flush=True)
    Path(os.environ.get("OUT", "."), "run_replay.json").write_text(json.dumps(rows, indent=1))
    print("\n| graph | candidate | kernels | inputs | bitwise | err | old b2b us | new b2b us | old 1-by-1 us | new 1-by-1 us | graphed us |")
    print("| --- | --- | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        print(f"| {r['graph']} | {r['candidate']} | {r['kernels']} | {r['inputs']} | {r['bitwise']} | {r['err']:.1e} | "
              f"{r['old back to back us']} | {r['new back to back us']} | {r['old one at a time us']} | "
              f"{r['new one at a time us']} | {r['new graphed us']} |")


if __name__ == "__main__":
    if sys.argv[1] == "prepare":
        rev = os.environ.get("OLD", "HEAD~1")
        prepare(Path(sys.argv[2]), sys.argv[3:], rev)
    else:
        time_dir(Path(sys.argv[2]))
