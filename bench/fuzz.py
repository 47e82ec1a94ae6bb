"""Mutation fuzzing of cleave-opt, cleave-run, cleave compile and the Python API at scale (tests/test_fuzz.py's checks).

    nice python bench/fuzz.py --count 1000 [--seed 0] [--tools cleave-opt,cleave-run,api,cleave-compile]
        [--save-failures DIR] [--markdown FILE]

Every mutant of examples/*.mlir goes through each tool in-process (`cleave compile` without --gpu,
with a small search: tests/test_fuzz.py's COMPILE_ARGS); a run behaves if it exits 0 or 1, prints
no traceback, prints exactly one error line when it fails (only `warning:` lines when it succeeds) and stays within its bound on CPU time
(a run past twice the bound, or ten times it in wall-clock time, is stopped and reported). Prints one line per misbehaving run, a
progress line every 50 mutants and a summary line (counts, slowest run, peak memory); `--markdown`
also writes the tables per tool and per mutation kind. Exit code 1 if any run misbehaved.
"""

from __future__ import annotations

import argparse
import collections
import shlex
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from test_fuzz import TOOLS, check_file, max_rss_mb, mutants  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--count", type=int, default=1000, help="mutants (default 1000)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--tools", default=",".join(TOOLS), help=f"comma-separated, from {', '.join(TOOLS)} (default all)")
    p.add_argument("--save-failures", type=Path, help="write each misbehaving mutant here")
    p.add_argument("--markdown", type=Path, help="write the result tables here")
    args = p.parse_args()
    tools = tuple(args.tools.split(","))
    if unknown := [t for t in tools if t not in TOOLS]:
        p.error(f"unknown tools: {', '.join(unknown)}")
    per_tool: dict[str, collections.Counter[str]] = {t: collections.Counter() for t in tools}
    per_kind: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    tool_seconds: collections.Counter[str] = collections.Counter()
    tool_cpu: collections.Counter[str] = collections.Counter()
    slowest = (0.0, "")
    failures: list[str] = []
    done = 0
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "input.mlir"
        for name, data in mutants(args.seed, args.count):
            path.write_bytes(data)
            kinds = sorted(set(name.split("-", 3)[3].split("+")))
            for o in check_file(path, name, tools):
                verdict = "accepted" if o.rc == 0 else "rejected"
                tool_seconds[o.tool] += o.seconds
                tool_cpu[o.tool] += o.cpu_seconds
                slowest = max(slowest, (o.cpu_seconds, f"{o.tool} {name}, {o.seconds:.2f} s wall-clock"))
                problems = o.problems()
                if problems:
                    verdict = "misbehaved"
                    line = f"{o.tool} {name}: {', '.join(problems)}: {o.stderr[:300]!r}"
                    failures.append(line)
                    print(line, flush=True)
                    if args.save_failures:
                        args.save_failures.mkdir(parents=True, exist_ok=True)
                        (args.save_failures / f"{name}.mlir").write_bytes(data)
                per_tool[o.tool][verdict] += 1
                for kind in kinds:
                    per_kind[kind][verdict] += 1
            done += 1
            if done % 50 == 0:
                print(f"fuzz: {done}/{args.count} mutants, {len(failures)} misbehaved, {time.perf_counter() - t0:.0f} s", flush=True)
    total_s = time.perf_counter() - t0
    runs = sum(sum(c.values()) for c in per_tool.values())
    detail = ", ".join(f"{t} {v} {n}" for t, c in per_tool.items() for v, n in sorted(c.items()))
    summary = (
        f"fuzz: seed {args.seed}, {done} mutants x {len(tools)} tools = {runs} runs ({detail}); "
        f"{len(failures)} misbehaved; slowest {slowest[0]:.2f} s of CPU ({slowest[1]}); peak RSS {max_rss_mb():.0f} MB; {total_s:.0f} s"
    )
    print(summary)
    if args.markdown:
        args.markdown.write_text(markdown(args, tools, done, per_tool, per_kind, tool_seconds, tool_cpu, failures, summary))
    return 1 if failures else 0


def markdown(args, tools, done, per_tool, per_kind, tool_seconds, tool_cpu, failures, summary) -> str:
    """The result tables: runs per tool and per mutation kind, accepted / rejected / misbehaved."""
    cols = ("accepted", "rejected", "misbehaved")
    lines = [
        f"# Fuzz run: {done} mutants, seed {args.seed}",
        "",
        "Command: `nice python bench/fuzz.py " + " ".join(shlex.quote(a) for a in sys.argv[1:]) + "`",
        "",
        f"Summary: {summary.removeprefix('fuzz: ')}",
        "",
        "Accepted: exit 0; rejected: exit 1 with one `file:line:col: error: ...` or `error: ...` line;",
        "misbehaved: anything else (traceback, other exit code, several error lines, stderr on success,",
        "past the bound on CPU time). A mutant with several mutations counts once under each of its kinds.",
        "",
        "| tool | runs | " + " | ".join(cols) + " | wall-clock s | CPU s |",
        "|---|---:|" + "---:|" * len(cols) + "---:|---:|",
    ]
    for t in tools:
        c = per_tool[t]
        lines.append(f"| {t} | {sum(c.values())} | " + " | ".join(str(c[k]) for k in cols) + f" | {tool_seconds[t]:.0f} | {tool_cpu[t]:.0f} |")
    lines += ["", "| mutation kind | runs | " + " | ".join(cols) + " |", "|---|---:|" + "---:|" * len(cols)]
    for kind, c in sorted(per_kind.items()):
        lines.append(f"| {kind} | {sum(c.values())} | " + " | ".join(str(c[k]) for k in cols) + " |")
    lines += ["", f"Misbehaved: {len(failures)}" + (":" if failures else "."), ""]
    lines += [f"- `{f}`" for f in failures]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
