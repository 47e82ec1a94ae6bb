"""What limits each suite row's winning kernels: Nsight Compute metrics, as a markdown table.

Run on the GPU machine after `gpu_suite.py run` (same machine session, so TileLang's kernel cache
makes the compiles instant):

    python bench/ncu_rows.py SUITE_DIR RESULTS_JSON --out ncu.md [--rows REGEX] [--below 1.0]

It starts `ncu` over this script's `child` mode, which launches every selected row's best candidate
once to warm up and once inside an NVTX range that ncu profiles. Per kernel it reports the duration,
the achieved DRAM bandwidth against the GPU's (the H200's attainable 4.3 TB/s, the H100's 3.35), the tensor pipes' activity, SM throughput,
registers per thread and achieved occupancy, and names the nearer limit.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

H100_PEAKS = (3.35, 989)  # the H100 SXM's DRAM TB/s and dense fp16 TFLOP/s (vendor figures)
PEAK_DRAM_TBPS = 4.3  # what the H200 here reaches in practice (bench/results: copy probes), the goals' yardstick

RANGE = "cleave_ncu"
METRICS = {
    "gpu__time_duration.sum": "us",
    "dram__bytes_read.sum.per_second": "read",
    "dram__bytes_write.sum.per_second": "write",
    # wgmma (Hopper's warpgroup MMA) and mma.sync count on different pipes; a kernel uses one
    "sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active": "gmma %",
    "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active": "hmma %",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed": "SM %",
    "launch__registers_per_thread": "regs",
    "sm__warps_active.avg.pct_of_peak_sustained_active": "occupancy %",
    "launch__grid_size": "blocks",
}


# ncu's units (they vary with the version and the value's size) -> microseconds and TB/s
UNITS = {
    **{u: 1e-3 for u in ("ns", "nsecond", "nsec")},
    **{u: 1.0 for u in ("us", "usecond", "usec")},
    **{u: 1e3 for u in ("ms", "msecond", "msec")},
    **{u: 1e-12 for u in ("B/s", "byte/s", "byte/second")},
    **{u: 1e-9 for u in ("KB/s", "Kbyte/s", "Kbyte/second")},
    **{u: 1e-6 for u in ("MB/s", "Mbyte/s", "Mbyte/second")},
    **{u: 1e-3 for u in ("GB/s", "Gbyte/s", "Gbyte/second")},
    **{u: 1.0 for u in ("TB/s", "Tbyte/s", "Tbyte/second")},
}


def selected(results: dict[str, Any], pattern: str | None, below: float | None) -> list[dict[str, Any]]:
    """The finished full-variant rows to profile: matching `pattern`, ratio under `below`."""
    out = []
    rows = results["rows"]
    for r in rows.values() if isinstance(rows, dict) else rows:
        if r.get("variant") != "full" or "best" not in r:
            continue
        if pattern and not re.search(pattern, r["row"]):
            continue
        if below is not None and r.get("ratio") is not None and r["ratio"] >= below:
            continue
        out.append(r)
    return out


def child(suite: Path, results_path: Path, pattern: str | None, below: float | None) -> None:
    """Launch each selected row's best candidate: once to warm up, once inside the profiled range."""
    import torch

    import gpu_suite as gs
    from cleave_ir.runtime import compile_candidates, random_inputs
    from cleave_ir.tilelang_check import load_module_file

    manifest = json.loads((suite / "manifest.json").read_text())["entries"]
    for r in selected(json.loads(results_path.read_text()), pattern, below):
        entry = manifest[f"{r['row']}__full"]
        kernels = r["candidates"][r["best"]["candidate"]]["kernels"]
        mod = load_module_file(suite / entry["module"])
        compiled = compile_candidates(mod, kernels, raw=True)
        graph = gs.parse_graph(entry["graph"])
        xs = random_inputs(graph)
        if gs.is_model(graph.sym_name.data):
            xs = gs.model_inputs(graph, xs)
        cand = gs.Candidate(mod, kernels, compiled)
        cand(*xs)
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_push(RANGE)
        cand(*xs)
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()
        print(f"ncu child: {r['row']}: {', '.join(kernels)}", flush=True)


def available(metrics: list[str]) -> list[str]:
    """The metrics this GPU's ncu knows (an unknown name would fail the whole run)."""
    proc = subprocess.run(["ncu", "--query-metrics", "--csv"], capture_output=True, text=True)
    known = set(re.findall(r'^"?([a-z0-9_]+__[a-z0-9_]+)', proc.stdout, re.M))
    return [m for m in metrics if m.split(".")[0] in known] if known else metrics


def profile(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Run ncu over the child; one record per profiled kernel launch."""
    metrics = available(list(METRICS))
    print(f"ncu metrics: {', '.join(metrics)}", flush=True)
    cmd = ["ncu", "--csv", "--page", "raw", "--nvtx", "--nvtx-include", f"{RANGE}/",
           "--metrics", ",".join(metrics), sys.executable, __file__, "child", args.suite, args.results]
    if args.rows:
        cmd += ["--rows", args.rows]
    if args.below is not None:
        cmd += ["--below", str(args.below)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    text = proc.stdout
    start = text.find('"ID"')
    if start < 0:
        raise SystemExit(f"ncu produced no table (exit {proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    rows = list(csv.DictReader(io.StringIO(text[start:])))
    units = rows[0]
    # the child launches each row's kernels once, in the order it printed them
    owners = [row for row, kernels in re.findall(r"^ncu child: (\S+): (.*)$", text[:start], re.M) for _ in kernels.split(", ")]
    records = []
    for i, raw in enumerate(rows[1:]):
        rec: dict[str, Any] = {"row": owners[i] if i < len(owners) else "?", "kernel": raw.get("Kernel Name", "?")}
        for metric, label in METRICS.items():
            value = raw.get(metric, "")
            try:
                x = float(value.replace(",", ""))
            except ValueError:
                continue
            unit = units.get(metric, "")
            rec[label] = x * UNITS.get(unit, 1.0)
            if unit:
                rec.setdefault("units", {})[label] = unit
        records.append(rec)
    return records


def peaks(gpu: str) -> tuple[float, str]:
    """The DRAM bandwidth to measure against on `gpu` (its name as nvidia-smi prints it), and its description."""
    if "H100" in gpu:
        tbps, tflops = H100_PEAKS
        return tbps, f"{gpu}: {tbps} TB/s DRAM, ~{tflops} TFLOP/s dense fp16"
    return PEAK_DRAM_TBPS, f"{gpu or 'H200'}: {PEAK_DRAM_TBPS} TB/s DRAM attainable, ~790 TFLOP/s dense fp16 attainable"


def markdown(records: list[dict[str, Any]], command: str, gpu: str = "") -> str:
    peak, described = peaks(gpu)
    lines = [
        f"Nsight Compute on the suite's winning kernels ({described}).",
        f"Command: `{command}`",
        "",
        f"| row | kernel | us | blocks | regs | occupancy % | DRAM TB/s (% of {peak}) | tensor pipe % | SM % | nearer limit |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for r in records:
        dram = r.get("read", 0.0) + r.get("write", 0.0)
        pct = 100 * dram / peak
        tensor = r.get("gmma %", 0.0) + r.get("hmma %", 0.0)
        limit = "DRAM bandwidth" if pct >= tensor else "tensor cores"
        if max(pct, tensor) < 50:
            limit += " (neither above 50%: latency or occupancy)"
        lines.append(
            f"| {r['row']} | {r['kernel']} | {r.get('us', 0):.1f} | {r.get('blocks', 0):.0f} | {r.get('regs', 0):.0f} | {r.get('occupancy %', 0):.0f} "
            f"| {dram:.2f} ({pct:.0f}%) | {tensor:.0f} | {r.get('SM %', 0):.0f} | {limit} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("mode", nargs="?", default="profile", choices=["profile", "child"])
    p.add_argument("suite", help="the directory `gpu_suite.py prepare` wrote")
    p.add_argument("results", help="the JSON `gpu_suite.py run` wrote")
    p.add_argument("--rows", help="only rows whose name matches this regex")
    p.add_argument("--below", type=float, help="only rows whose ratio is under this")
    p.add_argument("--out", help="markdown table (and a .json beside it)")
    if argv and argv[0] not in ("profile", "child"):
        argv = ["profile", *argv]
    args = p.parse_args(argv)
    if args.mode == "child":
        child(Path(args.suite), Path(args.results), args.rows, args.below)
        return 0
    records = profile(args)
    gpu = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True, text=True)
    text = markdown(records, "python bench/ncu_rows.py " + " ".join(argv[1:]), gpu.stdout.strip().splitlines()[0] if gpu.stdout.strip() else "")
    print(text)
    if args.out:
        Path(args.out).write_text(text)
        Path(args.out).with_suffix(".json").write_text(json.dumps(records, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
