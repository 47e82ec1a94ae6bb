"""Prove emitted TileLang modules valid without a GPU: lower every kernel to CUDA source for sm_90a."""

from __future__ import annotations

import importlib.util
import sys
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


def lower_all(path: str | Path, arch: str = "sm_90a") -> dict[str, str]:
    """CUDA source of every kernel of the emitted module at `path`, lowered for `arch`."""
    import tilelang
    from tilelang import tvm

    mod = load_module_file(path)
    out = {}
    with tvm.target.Target({"kind": "cuda", "arch": arch}):
        for name in mod.KERNELS:
            out[name] = tilelang.lower(getattr(mod, name)).kernel_source
    return out
