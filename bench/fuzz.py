"""Mutation fuzzing of cleave-opt, cleave-run and the Python API at scale (tests/test_fuzz.py's checks).

    python bench/fuzz.py --count 1000 [--seed 0] [--tools cleave-opt,cleave-run,api] [--save-failures DIR]

Every mutant of examples/*.mlir goes through each tool in-process; a run behaves if it exits 0 or 1,
prints no traceback, prints exactly one error line when it fails and finishes within the time bound.
Prints one line per misbehaving run and a summary line (counts, slowest run, peak memory).
Exit code 1 if any run misbehaved.
"""

from __future__ import annotations

import argparse
import collections
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
    p.add_argument("--tools", default=",".join(TOOLS), help=f"comma-separated, from {', '.join(TOOLS)}")
    p.add_argument("--save-failures", type=Path, help="write each misbehaving mutant here")
    args = p.parse_args()
    tools = tuple(args.tools.split(","))
    counts: collections.Counter[str] = collections.Counter()
    slowest = (0.0, "")
    bad = 0
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "input.mlir"
        for name, data in mutants(args.seed, args.count):
            path.write_bytes(data)
            for o in check_file(path, name, tools):
                counts[f"{o.tool} {'accepted' if o.rc == 0 else 'rejected'}"] += 1
                slowest = max(slowest, (o.seconds, f"{o.tool} {name}"))
                if problems := o.problems():
                    bad += 1
                    print(f"{o.tool} {name}: {', '.join(problems)}: {o.stderr[:300]!r}", flush=True)
                    if args.save_failures:
                        args.save_failures.mkdir(parents=True, exist_ok=True)
                        (args.save_failures / f"{name}.mlir").write_bytes(data)
    runs = sum(counts.values())
    detail = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    print(
        f"fuzz: seed {args.seed}, {args.count} mutants x {len(tools)} tools = {runs} runs ({detail}); "
        f"{bad} misbehaved; slowest {slowest[0]:.2f} s ({slowest[1]}); peak RSS {max_rss_mb():.0f} MB; "
        f"{time.perf_counter() - t0:.0f} s"
    )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
