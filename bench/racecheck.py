"""compute-sanitizer racecheck and memcheck on one candidate of every kernel family the suite emits.

    bash bench/on_device.sh python bench/racecheck.py --out $OUT/rc          # the GPU machine, ~4 minutes
    python bench/racecheck.py --out DIR --suite SUITE                         # kernels prepared elsewhere
    python bench/racecheck.py --out DIR --rows '^$' --graphs bench/probes/llama3_decode_*_proj.mlir  # just these graphs
    python bench/racecheck.py --out DIR --suite SUITE --every-candidate --kernels '^swiglu_k0$'      # one kernel of every row

A family is an example of bench/gpu_suite.py's table (its first row; with `--models`, also every model
subgraph). Without `--suite` the rows are prepared here at the suite's scaled-down shapes (`prepare
--scale`, the best estimated candidate only: the kernels' structure is the same, the sanitizers run
far faster on small grids). Every kernel of each family's first candidate (with `--every-candidate`,
of every kept candidate; `--kernels REGEX` picks some) is compiled once (filling TileLang's cache),
then launched alone, once, on random inputs of its declared shapes, in a child
process under `compute-sanitizer --tool racecheck` and another under `--tool memcheck`. Writes
DIR/racecheck.md (kernel, racecheck hazards, memcheck errors), DIR/racecheck.json and each child's
log under DIR/logs/.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gpu_suite  # noqa: E402  (bench/ is not a package)

TOOLS = ("racecheck", "memcheck")
RACE_SUMMARY = re.compile(r"RACECHECK SUMMARY: (\d+) hazards? displayed \((\d+) errors?, (\d+) warnings?\)")
ERROR_SUMMARY = re.compile(r"ERROR SUMMARY: (\d+) errors?")
LAUNCHED = "racecheck-launch: ok"


def families(models: bool = False, pattern: str | None = None, graphs: Sequence[str] = ()) -> list[gpu_suite.Row]:
    """The first row of every example of the suite's table (and every model row with `models`, and a
    row per tgraph file of `graphs`, at the shapes written there)."""
    seen: dict[str, gpu_suite.Row] = {}
    for r in gpu_suite.rows() + (gpu_suite.model_rows() if models else []):
        seen.setdefault(r.example, r)
    chosen = [r for r in seen.values() if pattern is None or re.search(pattern, r.name)]
    return chosen + [gpu_suite.Row(Path(g).stem, str(Path(g).resolve())) for g in graphs]


def kernels_to_check(manifest: dict[str, Any], every_candidate: bool = False) -> list[tuple[str, str]]:
    """(manifest entry key, kernel) for every kernel of each prepared entry's first candidate (of
    every kept candidate with `every_candidate`)."""
    out = []
    for key, e in manifest["entries"].items():
        if e["status"] == "ok" and e.get("candidates"):
            chosen = e["candidates"] if every_candidate else e["candidates"][:1]
            out += [(key, k) for k in dict.fromkeys(k for c in chosen for k in c["kernels"])]
    return out


def parse_report(tool: str, log: str) -> dict[str, Any]:
    """A sanitizer child's outcome from its log: `count` (hazards or errors; None when the log has no
    summary), `launched` (the kernel ran to the end), and for racecheck the errors/warnings split."""
    res: dict[str, Any] = {"launched": LAUNCHED in log, "count": None}
    if tool == "racecheck":
        m = RACE_SUMMARY.search(log)
        if m:
            res.update(count=int(m.group(1)), errors=int(m.group(2)), warnings=int(m.group(3)))
    m = ERROR_SUMMARY.search(log)
    if m and res["count"] is None:
        res["count"] = int(m.group(1))
    return res


def cell(res: dict[str, Any] | None) -> str:
    """A table cell: the count, or why there is none."""
    if res is None:
        return "not run"
    if res.get("timeout"):
        return "timed out"
    if res["count"] is None:
        return f"no summary (rc {res.get('rc')})"
    text = str(res["count"])
    if "errors" in res and res["count"]:
        text += f" ({res['errors']} errors, {res['warnings']} warnings)"
    if not res["launched"]:
        text += " (kernel did not finish)"
    return text


def markdown(results: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    """The table: one line per kernel."""
    lines = [
        f"compute-sanitizer on {meta.get('gpu', '?')} ({meta.get('sanitizer', '?')}), {meta.get('date', '?')}; kernels from `{meta.get('suite')}`",
        "",
        "| row family | kernel | racecheck hazards | memcheck errors |",
        "| --- | --- | ---: | ---: |",
    ]
    for r in results:
        lines.append(f"| {r['entry']} | {r['kernel']} | {cell(r.get('racecheck'))} | {cell(r.get('memcheck'))} |")
    clean = sum(1 for r in results if all((r.get(t) or {}).get("count") == 0 and r[t]["launched"] for t in TOOLS))
    lines += ["", f"{clean} of {len(results)} kernels clean under both tools."]
    return "\n".join(lines) + "\n"


def sanitizer_path() -> str | None:
    return shutil.which("compute-sanitizer") or next(
        (p for p in ("/usr/local/cuda/bin/compute-sanitizer", "/usr/local/cuda/compute-sanitizer/compute-sanitizer") if os.path.exists(p)), None
    )


# ------------------------------------------------------------------------------ one launch (child)


def launch(suite: Path, key: str, kernel: str) -> int:
    """Run one kernel once on random inputs of its declared shapes (the child under the sanitizer)."""
    import torch

    from cleave_ir.runtime import compile_kernel, concrete_shape, dynamic_sizes, random_inputs
    from cleave_ir.tilelang_check import load_module_file

    entry = json.loads((suite / "manifest.json").read_text())["entries"][key]
    mod = load_module_file(suite / entry["module"])
    graph = gpu_suite.parse_graph(entry["graph"])
    first = mod.KERNELS[entry["candidates"][0]["kernels"][0]]
    sizes = dynamic_sizes(first, random_inputs(graph, device="cpu"))  # the dynamic dims take the row's sizes
    meta = mod.KERNELS[kernel]
    n = meta["inputs"]
    gen = torch.Generator(device="cuda").manual_seed(0)
    shapes = [concrete_shape(s, sizes) for s in meta["shapes"]]
    dtypes = [getattr(torch, d) for d in meta["dtypes"]]
    args = [(torch.randn(s, generator=gen, device="cuda") * 0.5).to(d) for s, d in zip(shapes[:n], dtypes[:n])]
    outs = [torch.empty(s, device="cuda", dtype=d) for s, d in zip(shapes[n:], dtypes[n:])]
    fn = compile_kernel(mod, kernel, raw=True)  # TileLang's cache: compiled by the parent
    gpu_suite.launch_into(mod, kernel, fn, args, outs)  # rows TMA cannot map: the variant the module's run takes
    torch.cuda.synchronize()
    print(LAUNCHED, flush=True)
    return 0


# ------------------------------------------------------------------------------------ the driver


def run_tool(sanitizer: str, tool: str, suite: Path, key: str, kernel: str, logs: Path, timeout: float) -> dict[str, Any]:
    """One child under `compute-sanitizer --tool tool`; its parsed report (the log kept in `logs`)."""
    cmd = [sanitizer, "--tool", tool, "--print-limit", "20", sys.executable, str(Path(__file__).resolve()), "launch", str(suite), key, kernel]
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        log, rc = p.stdout + p.stderr, p.returncode
        res = parse_report(tool, log)
    except subprocess.TimeoutExpired as e:
        log, rc = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or ""), None
        res = {"launched": False, "count": None, "timeout": True}
    (logs / f"{key}.{kernel}.{tool}.log").write_text(log)  # a kernel name recurs across rows
    res.update(rc=rc, seconds=round(time.perf_counter() - t0, 1))
    return res


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="racecheck.py", description=__doc__.split("\n\n")[0])
    if argv is None:
        argv = sys.argv[1:]
    if argv[:1] == ["launch"]:
        return launch(Path(argv[1]), argv[2], argv[3])
    p.add_argument("--out", required=True, help="directory for racecheck.md, racecheck.json and the logs")
    p.add_argument("--suite", help="a directory `gpu_suite.py prepare` wrote (default: prepare the families here, scaled down)")
    p.add_argument("--rows", help="only families whose first row's name matches this regex")
    p.add_argument("--models", action="store_true", help="also one family per model subgraph (examples/models)")
    p.add_argument("--graphs", nargs="+", default=[], metavar="FILE", help="also one family per tgraph file (e.g. bench/probes/*.mlir), at its written shapes")
    p.add_argument("-j", "--jobs", type=int, default=max(1, (os.cpu_count() or 2) - 1), help="prepare workers, compile threads and concurrent sanitizer runs")
    p.add_argument("--timeout", type=float, default=150.0, help="seconds per sanitizer run")
    p.add_argument("--every-candidate", action="store_true", help="every kept candidate's kernels, not only the first candidate's")
    p.add_argument("--kernels", help="only kernels whose name matches this regex")
    args = p.parse_args(argv)
    out = Path(args.out).resolve()
    (out / "logs").mkdir(parents=True, exist_ok=True)
    sanitizer = sanitizer_path()
    if sanitizer is None:
        print("error: racecheck: compute-sanitizer is neither on PATH nor under /usr/local/cuda", file=sys.stderr)
        return 1
    t0 = time.perf_counter()
    if args.suite:
        suite = Path(args.suite).resolve()
        manifest = json.loads((suite / "manifest.json").read_text())
    else:
        suite = out / "suite"
        manifest = gpu_suite.prepare(suite, args.jobs, scale=True, keep=1, top_k=1, only=families(args.models, args.rows, args.graphs))
    todo = [(key, k) for key, k in kernels_to_check(manifest, args.every_candidate) if args.kernels is None or re.search(args.kernels, k)]
    print(f"racecheck: {len(todo)} kernels ({time.perf_counter() - t0:.0f} s)", flush=True)

    from cleave_ir.runtime import compile_candidates
    from cleave_ir.tilelang_check import load_module_file

    compiled: dict[tuple[str, str], Any] = {}
    for key in dict.fromkeys(k for k, _ in todo):
        mod = load_module_file(suite / manifest["entries"][key]["module"])
        names = [k for kk, k in todo if kk == key]
        compiled.update({(key, n): c for n, c in compile_candidates(mod, names, args.jobs, raw=True).items()})
    print(f"racecheck: compiled ({time.perf_counter() - t0:.0f} s)", flush=True)
    results = [{"entry": key, "kernel": k} for key, k in todo]
    jobs = []
    for r in results:
        c = compiled[(r["entry"], r["kernel"])]
        if isinstance(c, Exception):
            r["compile_error"] = str(c).splitlines()[-1] if str(c) else type(c).__name__
            continue
        jobs += [(r, tool) for tool in TOOLS]
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = [(r, tool, pool.submit(run_tool, sanitizer, tool, suite, r["entry"], r["kernel"], out / "logs", args.timeout)) for r, tool in jobs]
        for r, tool, f in futures:
            r[tool] = f.result()
            print(f"  {r['kernel']} {tool}: {cell(r[tool])} ({r[tool]['seconds']} s)", flush=True)
    try:
        import torch

        gpu = torch.cuda.get_device_name()
    except Exception:  # recorded as unknown
        gpu = "?"
    version = subprocess.run([sanitizer, "--version"], capture_output=True, text=True).stdout.strip().splitlines()
    meta = {"gpu": gpu, "sanitizer": version[-1] if version else sanitizer, "date": time.strftime("%Y-%m-%d %H:%M"),
            "suite": str(suite), "wall_s": round(time.perf_counter() - t0, 1)}
    (out / "racecheck.json").write_text(json.dumps({"meta": meta, "kernels": results}, indent=1))
    md = markdown(results, meta)
    (out / "racecheck.md").write_text(md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
