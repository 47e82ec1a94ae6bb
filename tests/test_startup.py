"""cleave-opt start-up: a run that only parses and prints graphs does not import what it does not use."""

from __future__ import annotations

import subprocess
import sys

from conftest import ROOT

# heavy modules no graph-only cleave-opt run needs (TileLang bodies, the GPU stack, the passes)
NOT_IMPORTED = ["xdsl.dialects.arith", "xdsl.dialects.math", "torch", "tilelang", "tvm", "cleave_ir.passes.superoptimize"]


def test_parsing_a_graph_imports_no_tilelang_builder_or_gpu_stack() -> None:
    code = (
        "import sys\n"
        "from cleave_ir.driver import main\n"
        f"assert main([{str(ROOT / 'lit_tests' / 'dialects' / 'tgraph' / 'matmul.mlir')!r}, '-o', '/dev/null']) == 0\n"
        f"print([m for m in {NOT_IMPORTED!r} if m in sys.modules])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
