"""Prove emitted TileLang modules valid without a GPU: lower every kernel to CUDA source for sm_90a."""

from __future__ import annotations

import importlib.util
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import ModuleType


def load_module_file(path: str | Path) -> ModuleType:
    """Import an emitted module from its file (TileLang needs the source on disk)."""
    path = Path(path)
    spec = importlib.util.spec_from_file_location(f"cleave_emitted_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def lower_all(path: str | Path, arch: str = "sm_90a", jobs: int = 1) -> dict[str, str]:
    """CUDA source of every kernel of the emitted module at `path`, lowered for `arch`.

    With `jobs` > 1 the kernels are lowered on that many threads (TVM releases the GIL while it
    lowers); the result is the same, in the module's kernel order. The first failure is raised.
    """
    import tilelang
    from tilelang import tvm

    mod = load_module_file(path)
    target = tvm.target.Target({"kind": "cuda", "arch": arch})

    def lower(name: str) -> str:
        with target:  # the current target is thread-local in TVM: enter it in every worker
            return tilelang.lower(getattr(mod, name)).kernel_source

    names = list(mod.KERNELS)
    if jobs <= 1 or len(names) <= 1:
        return {name: lower(name) for name in names}
    with ThreadPoolExecutor(max_workers=min(jobs, len(names)), thread_name_prefix="cleave-lower") as pool:
        return dict(zip(names, pool.map(lower, names)))


def main(argv: list[str] | None = None) -> int:
    """`python -m cleave_ir.tilelang_check kernel.py`: lower every kernel for sm_90a, one line each."""
    import argparse
    import time

    p = argparse.ArgumentParser(prog="python -m cleave_ir.tilelang_check")
    p.add_argument("module", help="a module written by cleave-opt ... -t tilelang -o FILE")
    p.add_argument("--arch", default="sm_90a")
    p.add_argument("-j", "--jobs", type=int, default=1, help="kernels lowered in parallel (default 1)")
    args = p.parse_args(argv)
    t0 = time.perf_counter()
    try:
        sources = lower_all(args.module, args.arch, args.jobs)
    except Exception as e:  # one line for the user, whatever TileLang raised
        lines = [line for line in str(e).splitlines() if line.strip()]
        print(f"error: {args.module}: lowering failed: {lines[-1] if lines else type(e).__name__}", file=sys.stderr)
        return 1
    for name, src in sources.items():
        print(f"{name}: {len(src.splitlines())} lines of CUDA for {args.arch}")
    print(f"lowered {len(sources)} kernels in {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
