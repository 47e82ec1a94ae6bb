"""Probe (GPU): a decode attention whose mask has an odd cache length runs without a failed TMA launch.

`generate` on the H100 (session 39) printed `Fatal: Invalid TMA descriptor ... globalStrides ... must be a
multiple of 16 bytes` for a `[1, 1, 1, 18]` f16 mask: `tma_maps` did not count the strides of its size-1
dims. This runs one emitted module (`cleave compile GRAPH -o MODULE`, the graph's key length dynamic) at
several lengths, checks every result against float64 torch, and prints which compiled variants ran
(TMA or thread copies). Run it with stderr captured and count the `Fatal` lines:

    bash bench/on_device.sh bash -c 'python bench/probes/odd_mask_tma.py GRAPH MODULE 2>&1 | tee log; grep -c Fatal log'

GRAPH: `bench/probes/masked_decode_l18.mlir` (a decode attention over 18 keys with an additive 0/1 mask
`[1, 1, 1, 18]`, the key length dynamic); MODULE: `cleave compile bench/probes/masked_decode_l18.mlir -o MODULE`.

Not run yet: written in session 39 for the fix (e03019c), whose GPU run was cut off; no device time since.
"""

from __future__ import annotations

import sys

import torch
from xdsl.parser import Parser

from cleave_ir.dialects import tgraph
from cleave_ir.passes.dynamic_shapes import at_sizes, dynamic_inputs
from cleave_ir.run import make_context
from cleave_ir.runtime import check, random_inputs, torch_reference
from cleave_ir.tilelang_check import load_module_file


def main(graph_path: str, module_path: str, lengths: tuple[int, ...] = (18, 37, 256, 1000)) -> int:
    graph = Parser(make_context(), open(graph_path).read()).parse_module().body.block.first_op
    assert isinstance(graph, tgraph.GraphOp)
    mod = load_module_file(module_path)
    name = next(f"{a}_d{d[0]}" for a, d in dynamic_inputs(graph).items())
    worst = 0.0
    for n in lengths:
        g = at_sizes(graph, {name: n})
        xs = random_inputs(g, seed=n)
        xs = [(x > 0).to(x.dtype) if "mask" in (a.name_hint or "") else x for a, x in zip(g.inputs, xs)]
        (ref,) = torch_reference(g, xs)
        got = mod.run(*xs)
        torch.cuda.synchronize()
        err = check(got, ref)
        worst = max(worst, err)
        keys = sorted({k[-1] == "no_tma" for k in mod._compiled})
        print(f"length {n}: rel. error {err:.1e}; compiled variants so far: {['thread copies' if k else 'TMA' for k in keys]}", flush=True)
    print(f"worst rel. error {worst:.1e}")
    return 0 if worst < 1e-2 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
