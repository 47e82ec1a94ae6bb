"""Launch chosen variants of a `bench/tile_sweep.py prepare` directory once each, for ncu to read their
registers, shared memory and theoretical occupancy (one stage against two of FlashAttention's loop).

    ncu --section LaunchStats --section Occupancy -k regex:mha python bench/probes/stage_occupancy.py DIR CASE:KERNEL ...

Results: bench/results/fa_stages_2026-12-07s44_H100.md.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(directory: str, picks: list[str]) -> None:
    import torch

    from cleave_ir import runtime
    from cleave_ir.run import make_context
    from cleave_ir.tilelang_check import load_module_file
    from xdsl.parser import Parser

    manifest = json.loads((Path(directory) / "sweep.json").read_text())
    for pick in picks:
        case, name = pick.split(":")
        mod = load_module_file(Path(directory) / f"{case}.py")
        graph = Parser(make_context(), manifest[case]["graph"]).parse_module().body.block.first_op
        xs = runtime.random_inputs(graph)
        k = runtime.compile_candidates(mod, [name], 1)[name]
        k(*xs)
        torch.cuda.synchronize()
        print(pick, "launched", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
