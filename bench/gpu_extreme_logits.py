"""Attention at extreme logits on the GPU: every kept candidate of the suite's attention rows, with the
query scaled so that the largest |logit| is 1000, checked against PyTorch in float64 (torch.softmax,
which subtracts the row max). A candidate passes when its output is finite and within 1e-2 of the
reference (max |error| / max |reference|); the CPU interpreters check the same at small shapes
(tests/test_stabilize.py -m slow).

`--uniform-values X` checks large values instead: every logit equal (a zero query) and V drawn around
X (X (1 + 0.05 N(0, 1))), so the output is about X while a chunk's unnormalized P.V is X times its
length (past f16's range from 66 keys at X = 1000; tests/test_partition_split_k.py checks the same).

    python bench/gpu_suite.py prepare --out /tmp/suite -j 15 --rows 'mha_b1|gqa_b1|mqa|mla_b1|decode'
    bash bench/on_device.sh python bench/gpu_extreme_logits.py /tmp/suite --out results.md
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import gpu_suite  # noqa: E402

from cleave_ir.runtime import check, one_line, random_inputs  # noqa: E402

TOLERANCE = 1e-2


def reference(q, k, v, scale: float):  # type: ignore[no-untyped-def]
    """softmax(q k^T * scale) v in float64 (broadcasting over heads as the examples' eager forms do)."""
    import torch

    s = torch.matmul(q.double(), k.double().transpose(-1, -2)) * scale
    return torch.matmul(torch.softmax(s, dim=-1), v.double()), s.abs().max().item()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("suite", help="the directory `gpu_suite.py prepare` wrote")
    p.add_argument("--out", required=True, help="markdown results (JSON beside it)")
    p.add_argument("--logit", type=float, default=1000.0, help="the largest |logit| after scaling the query (default 1000)")
    p.add_argument("--uniform-values", type=float, metavar="X", help="equal logits and values around X instead of scaled logits")
    p.add_argument("--rows", help="only rows whose name matches this regex")
    p.add_argument("--top-k", type=int, default=3)
    p.add_argument("-j", "--jobs", type=int, default=15)
    args = p.parse_args(argv)
    import torch

    suite = Path(args.suite)
    manifest = json.loads((suite / "manifest.json").read_text())
    lines = [
        f"Command: `python bench/gpu_extreme_logits.py {args.suite} --out {args.out} "
        + (f"--uniform-values {args.uniform_values:g}" if args.uniform_values else f"--logit {args.logit:g}")
        + f"`; GPU: {torch.cuda.get_device_name()}",
        "",
        "| row | candidate | max abs logit | finite | rel. error | verdict |",
        "| --- | --- | ---: | --- | ---: | --- |",
    ]
    records = []
    for entry in manifest["entries"].values():
        if entry.get("status") != "ok" or entry["variant"] != "full":
            continue
        graph = gpu_suite.parse_graph(entry["graph"])
        if graph.sym_name.data not in gpu_suite.ATTENTION or (args.rows and not re.search(args.rows, entry["row"])):
            continue
        t0 = time.perf_counter()
        built = gpu_suite.compile_row(entry, suite, args.top_k, args.jobs)
        mod, compiled = built.mod, built.kernels
        q, k, v = random_inputs(graph)
        scale = gpu_suite._scale_of(graph) or 1.0
        _, biggest = reference(q, k, v, scale)
        if args.uniform_values:
            q = torch.zeros_like(q)
            v = (args.uniform_values * (1 + 0.05 * torch.randn_like(v.float()))).half()
        else:
            q = (q.float() * (args.logit / biggest)).half()
        ref, biggest = reference(q, k, v, scale)
        for c in entry["candidates"][: args.top_k]:
            bad = [n for n in c["kernels"] if isinstance(compiled.get(n), Exception)]
            if bad:
                verdict, finite, err = f"compile failed: {one_line(compiled[bad[0]])[:80]}", "-", float("nan")
            else:
                try:
                    cand = gpu_suite.Candidate(mod, c["kernels"], compiled)
                    cand(q, k, v)
                    cand.poison()
                    out = cand(q, k, v)
                    torch.cuda.synchronize()
                    finite = "yes" if bool(torch.isfinite(out).all()) else "NO"
                    err = check(out, ref)
                    verdict = "ok" if err <= TOLERANCE else "WRONG"
                except Exception as e:  # a candidate that fails to run is reported, the others go on
                    verdict, finite, err = f"run failed: {one_line(e)[:80]}", "-", float("nan")
            records.append({"row": entry["row"], "candidate": c["graph"], "max_abs_logit": biggest, "finite": finite, "error": err, "verdict": verdict})
            lines.append(f"| {entry['row']} | {c['graph']} | {biggest:.0f} | {finite} | {err:.1e} | {verdict} |")
        print(f"{entry['row']}: {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        del ref
        torch.cuda.empty_cache()
    out = Path(args.out)
    out.write_text("\n".join(lines) + "\n")
    out.with_suffix(".json").write_text(json.dumps(records, indent=1))
    print("\n".join(lines))
    return 0 if all(r["verdict"] == "ok" for r in records) else 1


if __name__ == "__main__":
    raise SystemExit(main())
