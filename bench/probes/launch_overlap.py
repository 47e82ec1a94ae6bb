"""Probe (GPU): does a kernel's launch overlap the end of the kernel before it, and what does that save?

TileLang launches a kernel with programmatic stream serialization where it calls `T.pdl_sync()`
(`griddepcontrol.wait`), and its `cython` launcher does so for every kernel. For each row's kept
candidates (the pipeline run here, as `gpu_suite.py prepare` does), variants of the emitted module:
`base` without `T.pdl_sync()` (TileLang's default `tvm_ffi` launcher: each kernel starts after the one
before it has finished), `cython` (that launcher, no wait in the kernels), `cython_sync` and
`tvmffi_sync` (the wait first after the allocations, what `cleave-lower-tilelang` now emits), and with
`--trigger` also `T.pdl_trigger()` right after it (the next kernel may launch once every block of
this one has started). Each candidate is checked against float64 and timed in CUDA graphs
(`runtime.timed`), 5 interleaved rounds.

    bash bench/on_device.sh python bench/probes/launch_overlap.py ROW...   # $OUT/launch_overlap.json
"""

import io
import contextlib
import json
import os
import statistics
import sys
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import gpu_suite as gs  # noqa: E402

OUT = Path(os.environ.get("OUT", "/tmp"))
TRIGGER = "--trigger" in sys.argv
ROW_NAMES = [a for a in sys.argv[1:] if not a.startswith("--")]


def emit(row: str) -> str:
    """The row's emitted module (the pipeline as `prepare` runs it)."""
    from xdsl.context import Context

    from cleave_ir.passes.pipeline import PipelinePass
    from cleave_ir.tilelang_emitter import module_source

    graph = gs.parse_graph(gs.graph_text({r.name: r for r in gs.rows()}[row]))
    module = graph.parent_op()  # the pipeline replaces the graph
    with contextlib.redirect_stderr(io.StringIO()):
        PipelinePass(keep=3, top_k=2).apply(Context(), module)
    return module_source(module)


def variant(text: str, v: str) -> str:
    text = "\n".join(line for line in text.split("\n") if line.strip() not in ("T.pdl_sync()", "T.pdl_trigger()"))
    if "cython" in v:
        text = text.replace("target=target, pass_configs", 'target=target, execution_backend="cython", pass_configs')
    if "sync" in v or "trigger" in v:
        text = "\n".join(_with_wait(text.split("\n"), "trigger" in v))
    return text


def _with_wait(lines: list[str], trigger: bool) -> list[str]:
    out, i = [], 0
    while i < len(lines):
        out.append(lines[i])
        if lines[i].startswith("    with T.Kernel("):
            j = i + 1
            while j < len(lines) and (" = T.alloc_" in lines[j] or "T.use_swizzle" in lines[j]):
                out.append(lines[j])
                j += 1
            out += ["        T.pdl_sync()"] + (["        T.pdl_trigger()"] if trigger else [])
            i = j
            continue
        i += 1
    return out


def main() -> None:
    import tilelang
    import torch

    from cleave_ir import runtime
    from cleave_ir.tilelang_check import load_module_file

    with ProcessPoolExecutor(min(len(ROW_NAMES), 15)) as ex:
        sources = dict(zip(ROW_NAMES, ex.map(emit, ROW_NAMES)))
    variants = ["base", "cython", "cython_sync", "tvmffi_sync"] + (["cython_sync_trigger", "tvmffi_sync_trigger"] if TRIGGER else [])
    plan = []  # (row, variant, module, candidate): the base module's every candidate, the variants' first
    for row, src in sources.items():
        for v in variants:
            path = Path(f"/tmp/launch_{row}_{v}.py")
            path.write_text(variant(src, v))
            mod = load_module_file(path)
            plan += [(row, v, mod, c) for c in range(len(mod.CANDIDATES) if v == "base" else 1)]
    jobs = {(id(m), n): (m, n, "cython" if "cython" in v else "tvm_ffi") for _, v, m, c in plan for n in m.CANDIDATES[c][1]}
    funcs = {k: m.prim_func(n) for k, (m, n, _) in jobs.items()}

    def comp(k):  # type: ignore[no-untyped-def]
        m, n, backend = jobs[k]
        meta = m.KERNELS[n]
        try:
            outs = list(range(meta["inputs"], meta["inputs"] + meta["outputs"]))
            return tilelang.compile(funcs[k], out_idx=outs, target="cuda", execution_backend=backend, pass_configs=meta.get("pass_configs"))
        except Exception as e:  # noqa: BLE001 - recorded
            return e

    with ThreadPoolExecutor(15) as ex:
        for k, kern in zip(jobs, ex.map(comp, list(jobs))):
            m, n, backend = jobs[k]
            if isinstance(kern, Exception):
                print("compile failed:", n, backend, runtime.one_line(kern), flush=True)
            else:
                m._compiled[(n, ())] = kern
    res: dict = {}
    for row in sources:
        graph = gs.parse_graph(gs.graph_text({r.name: r for r in gs.rows()}[row]))
        xs = runtime.random_inputs(graph)
        ref = runtime.torch_reference(graph, xs)[0]
        sets = runtime.rotating_copies(xs)
        fns, res[row] = {}, {}
        for r, v, m, c in plan:
            if r != row:
                continue
            name = f"{v}/{m.CANDIDATES[c][2]}"
            fn = (lambda m, c: (lambda *a: m.run(*a, candidate=c)))(m, c)
            try:
                err = runtime.check(fn(*xs), ref)
            except Exception as e:  # noqa: BLE001 - recorded
                print(row, name, "failed:", runtime.one_line(e), flush=True)
                continue
            res[row][name] = {"rel_error": err}
            if err < 1e-2:
                fns[name] = fn
        samples: dict = {n: [] for n in fns}
        for _ in range(5):
            for n, fn in fns.items():
                samples[n].append(runtime.timed(fn, rotate=sets, batch=50, iters=15))
        for n, ts in samples.items():
            res[row][n] |= {"us": statistics.median(t.us for t in ts), "method": ts[0].method}
            print(f"{row:24s} {n:60s} {res[row][n]['us']:8.2f} us ({ts[0].method}) err {res[row][n]['rel_error']:.1e}", flush=True)
        torch.cuda.synchronize()
    (OUT / "launch_overlap.json").write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
