"""Search time on a 12-op norm + gated MLP: RMSNorm (mean as sum + scale, eps, gamma), SwiGLU, down projection.

    python bench/norm_mlp_search.py [--max-ops 14] [--budget N] [--twice]

    o = (silu(xn @ W1) * (xn @ W3)) @ W2,  xn = x * rsqrt(sum(x^2) / D + eps) * gamma

Prints the ops, the work done, CPU and wall seconds and the candidates found. With `--twice` the
search runs again and the two candidate lists must be identical (the work budget, not the clock,
bounds the search, so machine load cannot change the result).
"""

from __future__ import annotations

import argparse
import sys
import time

from cleave_ir.builder import GraphBuilder
from cleave_ir.dialects import tgraph
from cleave_ir.passes.superoptimize import DEFAULT_BUDGET, superoptimize_graph


def norm_mlp(t: int = 16, d: int = 256, f: int = 512) -> tgraph.GraphOp:
    b = GraphBuilder("rmsnorm_swiglu", "f16")
    x, gamma, eps = b.input("x", [t, d]), b.input("gamma", [1, d]), b.input("eps", [1, 1])
    w1, w3, w2 = b.input("w1", [d, f]), b.input("w3", [d, f]), b.input("w2", [f, d])
    mean_sq = b.scale(b.reduce("sum", b.square(x), 1), 1.0 / d)
    xn = b.mul(b.mul(x, b.rsqrt(b.add(mean_sq, eps))), gamma)
    return b.build(b.matmul(b.mul(b.silu(b.matmul(xn, w1)), b.matmul(xn, w3)), w2))


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--max-ops", type=int, default=14)
    p.add_argument("--budget", type=int, default=DEFAULT_BUDGET)
    p.add_argument("--twice", action="store_true")
    args = p.parse_args()
    results = []
    for _ in range(2 if args.twice else 1):
        graph = norm_mlp()
        cpu, wall = time.process_time(), time.monotonic()
        cands, stats = superoptimize_graph(graph, max_ops=args.max_ops, budget=args.budget)
        cpu, wall = time.process_time() - cpu, time.monotonic() - wall
        ops = sum(1 for _ in graph.block.ops) - 1
        print(f"{ops} ops, max-ops {args.max_ops}, budget {args.budget}: work {stats.work}, {stats.line()}; "
              f"cpu {cpu:.1f} s, wall {wall:.1f} s")
        for c in cands:
            kinds = [op.name.removeprefix("tgraph.") for op in c.graph.block.ops][:-1]
            print(f"  {c.note}: {' '.join(kinds)}")
        results.append([str(c.graph) for c in cands])
    if args.twice:
        same = results[0] == results[1]
        print("two runs: " + ("identical candidates" if same else "DIFFERENT candidates"))
        return 0 if same else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
