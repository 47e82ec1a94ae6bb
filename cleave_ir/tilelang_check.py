"""Prove emitted TileLang modules valid without a GPU: lower every kernel to CUDA source for sm_90a."""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import re
import sys
import tempfile
import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

from cleave_ir.passes.cost_model import SMEM_BYTES


# (held weakly: a module lives as long as its kernels' users, not as long as the process)
_LOADED: weakref.WeakValueDictionary[tuple[Path, str], ModuleType] = weakref.WeakValueDictionary()


def load_module_file(path: str | Path, *, shared: bool = False) -> ModuleType:
    """Import an emitted module from its file (TileLang needs the source on disk).

    `shared`: once per path and content in a process, kernels compiled into it included. Importing
    builds every kernel's TIR function (about half a second a module), and `cleave compile`'s re-check
    of a cached winner and the PyTorch front end load the same file (3.3 of 33 s of a warm `optimize`
    of a Llama decode layer on the H100). Callers that patch the module's globals load their own."""
    path = Path(path)
    source = path.read_bytes()
    key = (path.resolve(), hashlib.sha256(source).hexdigest())
    if shared and (mod := _LOADED.get(key)) is not None:
        return mod
    spec = importlib.util.spec_from_file_location(f"cleave_emitted_{path.stem}", path)
    assert spec is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    # compiled from the bytes read above, not through the loader: its bytecode cache keys a file by size and
    # mtime in whole seconds, so a module rewritten within a second at the same size ran the old code
    exec(compile(source, str(path), "exec"), mod.__dict__)
    if shared:
        _LOADED[key] = mod
    return mod


EMITTED_FOR = {"kind": "cuda", "arch": "sm_90a"}
"""The target the emitted kernels are written for (the H200); CPU lowering uses it unless told otherwise."""


def kernel_func(mod: ModuleType, name: str, target: Any = "cuda"):
    """Kernel `name` of the emitted module `mod` as the TIR function to compile for `target` (inputs
    dense row-major): without its wait for prior kernels where the target cannot run it (before sm_90;
    the module's `has_pdl`). Modules emitted before either existed hold the kernel as a global."""
    if hasattr(mod, "has_pdl"):
        return mod.prim_func(name, pdl=mod.has_pdl(target))
    return mod.prim_func(name) if hasattr(mod, "prim_func") else getattr(mod, name)


def lowered(mod: ModuleType, name: str):
    """Kernel `name` of the emitted module `mod` lowered (a TileLang CompiledArtifact) under the pass
    configs the module compiles it with on the GPU (`KERNELS[name]["pass_configs"]`), inside the
    caller's target."""
    import tilelang
    from tilelang import tvm

    configs = mod.KERNELS[name].get("pass_configs") or {}
    target = tvm.target.Target.current(allow_none=True)
    func = kernel_func(mod, name, target if target is not None else EMITTED_FOR)
    with tvm.transform.PassContext(opt_level=3, config=configs):
        return tilelang.lower(func)


T_ = TypeVar("T_")

AST_RETRIES = 2
"""Lowerings repeated after `_ast_thread_race` (then the error stands)."""


def _ast_thread_race(e: BaseException) -> bool:
    """Whether `e` is CPython 3.11's `ast` recursion-depth check tripped by another thread (TileLang's
    lowering calls back into Python, and the `ast` module's C-level depth counter is not thread-safe
    there): "AST constructor recursion depth mismatch". Seen once in three CI runs lowering on 2 threads;
    the same kernel lowers when tried again."""
    return "AST constructor recursion depth mismatch" in str(e)


def past_ast_races(fn: Callable[[], T_]) -> T_:
    """`fn()`, called again (at most `AST_RETRIES` times) where it raised `_ast_thread_race`'s error."""
    for attempt in range(AST_RETRIES + 1):
        try:
            return fn()
        except RuntimeError as e:
            if attempt == AST_RETRIES or not _ast_thread_race(e):
                raise
    raise AssertionError("unreachable")


def lower_all(path: str | Path, arch: str = "sm_90a", jobs: int = 1) -> dict[str, str]:
    """CUDA source of every kernel of the emitted module at `path`, lowered for `arch`.

    With `jobs` > 1 the kernels are lowered on that many threads (TVM releases the GIL while it
    lowers); the result is the same, in the module's kernel order. The first failure is raised.
    """
    out = lower_each(path, arch, jobs)
    for result in out.values():
        if isinstance(result, Exception):
            raise result
    return out  # type: ignore[return-value]


def lower_each(path: str | Path, arch: str = "sm_90a", jobs: int = 1) -> dict[str, str | Exception]:
    """As `lower_all`, with each kernel's failure in its place instead of raised."""
    from tilelang import tvm

    mod = load_module_file(path)
    target = tvm.target.Target({"kind": "cuda", "arch": arch})

    def lower(name: str) -> str | Exception:
        def attempt() -> Any:
            with target:  # the current target is thread-local in TVM: enter it in every worker
                return lowered(mod, name)

        try:
            artifact = past_ast_races(attempt)
        except Exception as e:  # noqa: BLE001 - recorded per kernel; the caller decides
            return e
        hazards = partial_warp_collectives(artifact.kernel_source)
        if hazards:  # it could hang the GPU: the candidate is dropped, as one that fails to lower
            return RuntimeError(f"{name}: a warp collective that some lanes skip (it can hang the GPU): {hazards[0]}")
        need = shared_bytes(artifact)
        if arch.startswith("sm_90") and need > SMEM_BYTES:  # past it the launch fails, though TileLang lowers the kernel
            return OverflowError(f"{name} needs {need / 1024:.1f} KiB of shared memory; a block on {arch} has {SMEM_BYTES // 1024} KiB")
        return artifact.kernel_source

    names = list(mod.KERNELS)
    if jobs <= 1 or len(names) <= 1:
        return {name: lower(name) for name in names}
    with ThreadPoolExecutor(max_workers=min(jobs, len(names)), thread_name_prefix="cleave-lower") as pool:
        return dict(zip(names, pool.map(lower, names)))


def dynamic_shared_bytes(path: str | Path, arch: str = "sm_90a") -> dict[str, int]:
    """The dynamic shared memory each kernel of the emitted module at `path` allocates once lowered
    for `arch`: what must fit in the H200's 227 KiB (TileLang packs buffers whose lifetimes do not
    overlap, such as a pipeline's and an epilogue's, into the same bytes)."""
    from tilelang import tvm

    mod = load_module_file(path)
    with tvm.target.Target({"kind": "cuda", "arch": arch}):
        return {name: shared_bytes(lowered(mod, name)) for name in mod.KERNELS}


def shared_bytes(artifact: Any) -> int:
    """The dynamic shared memory of a lowered kernel (a TileLang CompiledArtifact): the bytes its
    launch asks for (the device function's `dyn_shared_memory_buf`; TileLang packs every shared tile
    into that one buffer, tiles whose lifetimes do not overlap into the same bytes)."""
    sizes = re.findall(r'"dyn_shared_memory_buf": (\d+)', str(artifact.device_mod))
    return max((int(n) for n in sizes), default=0)


_WARP_COLLECTIVE = re.compile(r"tl::AllReduce<|shfl_\w*sync|warp_reduce|__syncwarp")
_TID = r"\(\(int\)threadIdx\.x\)"
_WARP_UNIFORM = [  # uses of the thread index that are the same for all 32 lanes of a warp
    (re.compile(_TID + r"\s*>>\s*(\d+)"), lambda m: int(m.group(1)) >= 5),
    (re.compile(_TID + r"\s*/\s*(\d+)"), lambda m: int(m.group(1)) % 32 == 0),
    (re.compile(_TID + r"\s*(<|>=)\s*(\d+)"), lambda m: int(m.group(2)) % 32 == 0),
    (re.compile(_TID + r"\s*(<=|>)\s*(\d+)"), lambda m: (int(m.group(2)) + 1) % 32 == 0),
]


def _lane_dependent(condition: str) -> bool:
    """Whether an `if` condition of lowered CUDA can differ between the lanes of one warp."""
    for pattern, uniform in _WARP_UNIFORM:
        condition = pattern.sub(lambda m: "W" if uniform(m) else m.group(0), condition)
    return "threadIdx" in condition


def partial_warp_collectives(source: str) -> list[str]:
    """Warp collectives of a lowered kernel that not every lane they name reaches: a warp shuffle
    (TileLang's `tl::AllReduce`: `shfl_xor_sync` over all 32 lanes, then named barriers past a warp)
    inside an `if` that some lanes of a warp skip. Such a kernel can wait forever on the GPU: TileLang
    0.1.15 puts the reduction of an [18, 4] fragment on 128 threads under `threadIdx.x < 72`, and the
    decode attention kernel that held it hung. A warp-uniform `if` (a warp-specialized kernel's
    consumer warpgroup: `threadIdx.x >= 128`) is TileLang's own design and passes. Returns the
    offending lines (empty: none)."""
    found: list[str] = []
    guards: list[str] = []  # the condition of each open block (`if`, `else`: its if's; others: "")
    for line in source.splitlines():
        text = line.strip()
        closes = text.startswith("}")
        if closes and guards:
            last = guards.pop()
            if text.startswith("} else"):
                guards.append(last)
                continue
        if _WARP_COLLECTIVE.search(text) and any(_lane_dependent(g) for g in guards):
            found.append(text)
        if text.endswith("{") and not closes:
            guards.append(text if text.startswith(("if ", "if(")) else "")
    return found


SYNC_WARNING = "[ThreadSync]"
"""How TileLang's shared-memory sync planner starts the warnings it logs (from C++, to file
descriptor 2): a sync hoisted out of an `if` whose race remains, a conflict it could not order."""


@contextlib.contextmanager
def captured_fd2(lines: list[str]):
    """What is written to file descriptor 2 meanwhile (TVM's C++ LOG lines, past Python's sys.stderr)
    is appended to `lines` instead of reaching the terminal."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            lines.extend(sink.read().decode(errors="replace").splitlines())


def sync_warnings(lines: list[str]) -> list[str]:
    """TileLang's ThreadSync warnings among logged lines, each as one line from the marker on."""
    return [line[line.index(SYNC_WARNING) :] for line in lines if SYNC_WARNING in line]


def lower_logged(path: str | Path, arch: str = "sm_90a") -> dict[str, tuple[str, list[str]]]:
    """Every kernel of the emitted module at `path` lowered for `arch`, one at a time (the log is per
    process): kernel -> (CUDA source, the lines TileLang logged meanwhile). The first failure is raised."""
    from tilelang import tvm

    mod = load_module_file(path)
    out: dict[str, tuple[str, list[str]]] = {}
    with tvm.target.Target({"kind": "cuda", "arch": arch}):
        for name in mod.KERNELS:
            lines: list[str] = []
            with captured_fd2(lines):
                source = lowered(mod, name).kernel_source
            out[name] = (source, lines)
    return out


@dataclass(frozen=True)
class RegisterUsage:
    """What ptxas reports for one kernel: registers per thread and local-memory spill traffic."""

    registers: int
    spill_stores: int  # bytes a thread
    spill_loads: int
    stack: int

    @property
    def spills(self) -> bool:
        return self.spill_stores > 0 or self.spill_loads > 0


def register_usage(source: str, arch: str = "sm_90a", fast_math: bool = True) -> RegisterUsage:
    """Compile a lowered kernel's CUDA source to a cubin with nvcc (as TileLang does, on the CPU: no
    GPU needed) and read ptxas's report. Raises RuntimeError without nvcc or where it fails."""
    import shutil
    import subprocess

    from tilelang import env

    nvcc = shutil.which("nvcc")
    if nvcc is None:
        raise RuntimeError("nvcc is not on PATH")
    with tempfile.TemporaryDirectory() as tmp:
        cu = Path(tmp) / "kernel.cu"
        cu.write_text(source)
        cmd = [nvcc, "-std=c++20", "-w", "-cubin", f"-arch={arch}", "-Xptxas", "-v", "-o", str(Path(tmp) / "kernel.cubin"), str(cu)]
        cmd += [f"-I{env.TILELANG_TEMPLATE_PATH}", f"-I{env.CUTLASS_INCLUDE_DIR}"] + (["--use_fast_math"] if fast_math else [])
        done = subprocess.run(cmd, capture_output=True, text=True)
    report = done.stdout + done.stderr
    regs = re.search(r"Used (\d+) registers", report)
    frame = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", report)
    if done.returncode != 0 or regs is None or frame is None:
        last = [line for line in report.splitlines() if line.strip()]
        raise RuntimeError(f"nvcc failed: {last[-1] if last else done.returncode}")
    stack, stores, loads = (int(g) for g in frame.groups())
    return RegisterUsage(int(regs.group(1)), stores, loads, stack)


def register_usages(sources: dict[str, str], arch: str = "sm_90a", jobs: int = 1) -> dict[str, RegisterUsage | RuntimeError]:
    """`register_usage` of every kernel source, on `jobs` threads (they overlap nvcc's processes);
    each kernel's RuntimeError in its place."""

    def usage(src: str) -> RegisterUsage | RuntimeError:
        try:
            return register_usage(src, arch)
        except RuntimeError as e:
            return e

    with ThreadPoolExecutor(max(1, jobs)) as pool:
        return dict(zip(sources, pool.map(usage, sources.values())))


def main(argv: list[str] | None = None) -> int:
    """`python -m cleave_ir.tilelang_check kernel.py`: lower every kernel for sm_90a, one line each."""
    import argparse
    import time

    p = argparse.ArgumentParser(prog="python -m cleave_ir.tilelang_check")
    p.add_argument("module", help="a module written by cleave-opt ... -t tilelang -o FILE")
    p.add_argument("--arch", default="sm_90a")
    p.add_argument("-j", "--jobs", type=int, default=1, help="kernels lowered in parallel (default 1)")
    p.add_argument("--sync-warnings", action="store_true", help="lower one kernel at a time, list TileLang's ThreadSync warnings and fail on any")
    p.add_argument("--registers", action="store_true", help="compile each kernel with nvcc (no GPU needed), report its registers and fail on spills")
    args = p.parse_args(argv)
    t0 = time.perf_counter()
    warned: dict[str, list[str]] = {}
    try:
        if args.sync_warnings:
            logged = lower_logged(args.module, args.arch)
            sources = {name: src for name, (src, _) in logged.items()}
            warned = {name: w for name, (_, lines) in logged.items() if (w := sync_warnings(lines))}
        else:
            sources = lower_all(args.module, args.arch, args.jobs)
    except Exception as e:  # one line for the user, whatever TileLang raised
        lines = [line for line in str(e).splitlines() if line.strip()]
        print(f"error: {args.module}: lowering failed: {lines[-1] if lines else type(e).__name__}", file=sys.stderr)
        return 1
    spilled: list[str] = []
    usage = register_usages(sources, args.arch, args.jobs) if args.registers else {}
    for name, src in sources.items():
        line = f"{name}: {len(src.splitlines())} lines of CUDA for {args.arch}"
        if args.registers:
            use = usage[name]
            if isinstance(use, RuntimeError):
                print(f"error: {args.module}: {name}: {use}", file=sys.stderr)
                return 1
            line += f", {use.registers} registers" + (f", spills {use.spill_stores} B stored / {use.spill_loads} B loaded a thread" if use.spills else "")
            if use.spills:
                spilled.append(name)
        print(line)
        for w in warned.get(name, []):
            print(f"  {w}")
    print(f"lowered {len(sources)} kernels in {time.perf_counter() - t0:.1f} s")
    if spilled:
        print(f"error: {args.module}: {len(spilled)} kernels spill registers: {', '.join(spilled)}", file=sys.stderr)
        return 1
    if warned:
        print(f"error: {args.module}: {len(warned)} kernels with ThreadSync warnings: {', '.join(warned)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
