"""Probe (GPU): what a Split-K candidate's separate combine kernel costs, against two ways to hide it.

For each row's first candidate in a `gpu_suite.py prepare` directory (it must be a split kernel
followed by its combine kernel), variants of the emitted module, each checked against float64 and
timed in CUDA graphs (`runtime.timed`, inputs rotated past the L2), 5 interleaved rounds:
- `base`: the module's `run()`, as the suite times it (the combine waits with `T.pdl_sync()`);
- `trigger`: also `T.pdl_trigger()` in the split kernel right after its main loop, so the combine
  may launch while the split kernel writes its partials;
- `fused`: one kernel. After the split body, each block counts itself in with an acq_rel atomic on
  a per-group ticket (a group: the blocks that share the grid coordinates after the split dim);
  the group's last block runs the combine body over the combine grid's first dim serially, then
  resets the ticket. Only rows whose combine grid is (C, *G) for the split grid (S, *G), with the
  same threads.

    bash bench/on_device.sh python bench/probes/fused_combine.py DIR ROW...   # $OUT/fused_combine.json
    python bench/probes/fused_combine.py --lower DIR ROW...                  # CPU: lower the variants for sm_90a
"""

from __future__ import annotations

import json
import os
import re
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import gpu_suite as gs  # noqa: E402

OUT = Path(os.environ.get("OUT", "/tmp"))
LOWER = "--lower" in sys.argv
ARGS = [a for a in sys.argv[1:] if not a.startswith("--")]
GRID = re.compile(r"^    with T\.Kernel\((.*?), threads=(\d+)\) as \(?([\w, ]+?)\)?:$")
ALLOC = re.compile(r"^        (\w+) = T\.alloc_(shared|fragment|local)\(")


def function(src: str, name: str) -> list[str]:
    """The lines of `def name(...)` and its body."""
    lines = src.split("\n")
    start = next(i for i, l in enumerate(lines) if l.startswith(f"def {name}("))
    end = start + 1
    while end < len(lines) and (lines[end].startswith("    ") or not lines[end].strip()):
        end += 1
    return lines[start:end]


def params(header: str) -> list[tuple[str, str]]:
    """(name, type text) of each parameter of a `def` line."""
    inner = header[header.index("(") + 1 : header.rindex(")")]
    out, depth, cur = [], 0, ""
    for ch in inner:
        depth += ch in "([" and 1 or (ch in ")]" and -1 or 0)
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    return [(p.split(":", 1)[0].strip(), p.split(":", 1)[1].strip()) for p in out if p.strip()]


def main_loop_end(body: list[str]) -> int | None:
    """Index just after the last top-level pipelined (else serial) loop of a kernel body."""
    for kind in ("T.Pipelined(", "T.serial("):
        starts = [i for i, l in enumerate(body) if l.startswith("        for ") and kind in l]
        if starts:
            j = starts[-1] + 1
            while j < len(body) and body[j].startswith("         "):
                j += 1
            return j
    return None


def with_trigger(src: str, split: str) -> str:
    lines = function(src, split)
    at = main_loop_end(lines)
    if at is None:
        raise ValueError(f"{split}: no main loop")
    new = lines[:at] + ["        T.pdl_trigger()"] + lines[at:]
    return src.replace("\n".join(lines), "\n".join(new))


def fused(src: str, split: str, combine: str, name: str) -> str:
    """A kernel `name`: the split body, then the combine body in each group's last block."""
    s, c = function(src, split), function(src, combine)
    gs_, gc = GRID.match(s[1]), GRID.match(c[1])
    sdims, cdims = [d.strip() for d in gs_.group(1).split(",")], [d.strip() for d in gc.group(1).split(",")]
    if gs_.group(2) != gc.group(2) or sdims[1:] != cdims[1:]:
        raise ValueError(f"grids {sdims} t{gs_.group(2)} and {cdims} t{gc.group(2)} do not pair")
    gvars = [v.strip() for v in gs_.group(3).split(",")]
    group = "0"
    for v, d in zip(gvars[1:], sdims[1:]):
        group = f"({group}) * {d} + {v}"
    sp, cp = params(s[0]), params(c[0])
    souts = [n for n, _ in sp][-(len(cp) - 1) :]  # the split's outputs are the combine's inputs, in order
    cin, cout = [n for n, _ in cp][:-1], cp[-1]
    if len(souts) != len(cin):
        raise ValueError("the split's outputs and the combine's inputs differ in number")
    shape, dtype = re.match(r"T\.StridedTensor\((\(.*?\)), \(.*\), (\"\w+\")\)", cout[1]).groups()
    header = f"def {name}({', '.join(f'{n}: {t}' for n, t in sp)}, fin0: T.Tensor({shape}, {dtype}), ticket_counter: T.Tensor(({' * '.join(sdims[1:]) or '1'},), \"int32\")):"
    sbody = s[2:]
    cbody = [l for l in c[2:] if l.strip() != "T.pdl_sync()"]
    calloc = [l for l in cbody if ALLOC.match(l)]
    crest = [l for l in cbody if not ALLOC.match(l) and l.strip()]
    renames = {ALLOC.match(l).group(1): f"c_{ALLOC.match(l).group(1)}" for l in calloc}
    renames |= dict(zip(cin, souts)) | {cout[0]: "fin0", gc.group(3).split(",")[0].strip(): "cbx"}

    def rename(line: str) -> str:
        return re.sub(r"\b(" + "|".join(map(re.escape, renames)) + r")\b", lambda m: renames[m.group(1)], line)

    salloc = [l for l in sbody if ALLOC.match(l)]
    srest = [l for l in sbody if not ALLOC.match(l) and l.strip()]
    ccopies = [re.sub(r"^(\s*T\.copy\((?:%s)\[.*)\)$" % "|".join(souts), r'\1, annotations={"disable_tma": True})', rename(l)) for l in crest]
    return "\n".join(
        ["@T.prim_func", header, s[1]]
        + salloc
        + [rename(l) for l in calloc]
        + ["        ticket = T.alloc_shared((1,), \"int32\")"]
        + srest
        + [
            "        T.evaluate(T.call_extern(\"handle\", \"__threadfence\"))",
            "        T.sync_threads()",
            "        tid = T.get_thread_binding(0)",
            "        if tid == 0:",
            f"            ticket[0] = T.atomic_add(ticket_counter[{group}], 1, memory_order=\"acq_rel\", return_prev=True)",
            "        T.sync_threads()",
            f"        if ticket[0] == {sdims[0]} - 1:",
            f"            for cbx in T.serial({cdims[0]}):",
        ]
        + ["        " + l for l in ccopies]
        + ["            if tid == 0:", f"                ticket_counter[{group}] = 0"]
    ) + "\n"


def variants(path: Path) -> dict[str, str]:
    src = path.read_text()
    cands = eval(re.search(r"^CANDIDATES = (.*)$", src, re.M).group(1))  # noqa: S307 - our own emitted module
    names = cands[0][1]
    if len(names) != 2:
        raise ValueError(f"candidate 0 has {len(names)} kernels")
    out = {"base": src}
    try:
        out["trigger"] = with_trigger(src, names[0])
    except ValueError as e:
        print(path.name, "trigger: skipped:", e, flush=True)
    try:
        out["fused"] = src.replace("\nKERNELS = {", "\n" + fused(src, names[0], names[1], "fused_k0") + "\n\nKERNELS = {", 1)
    except ValueError as e:
        print(path.name, "fused: skipped:", e, flush=True)
    return out


def main() -> None:
    import tilelang

    from cleave_ir.tilelang_check import load_module_file

    directory, rows = Path(ARGS[0]), ARGS[1:]
    mods: dict = {}
    for row in rows:
        for v, text in variants(directory / "kernels" / f"{row}__full.py").items():
            p = Path(f"/tmp/fused_combine_{row}_{v}.py")
            p.write_text(text)
            mods[row, v] = load_module_file(p)
    if LOWER:
        from tvm import target as tt

        target = tt.Target({"kind": "cuda", "arch": "sm_90a"})
        for (row, v), m in mods.items():
            if v != "base":
                name = "fused_k0" if v == "fused" else m.CANDIDATES[0][1][0]
                with target:
                    art = tilelang.lower(m.prim_func(name), target=target)
                src = art.kernel_source if hasattr(art, "kernel_source") else str(art)
                print(row, v, "lowered:", sum(k in src for k in ("atomic", "griddepcontrol", "Programmatic", "__threadfence")), "markers", flush=True)
                Path(f"/tmp/fused_combine_{row}_{v}.cu").write_text(src)
        return
    run_gpu(mods, rows)


def run_gpu(mods: dict, rows: list[str]) -> None:
    import tilelang
    import torch

    from cleave_ir import runtime

    res: dict = {}
    for row in rows:
        graph = gs.parse_graph(gs.graph_text({r.name: r for r in gs.rows()}[row]))
        xs = runtime.random_inputs(graph)
        ref = runtime.torch_reference(graph, xs)[0]
        sets = runtime.rotating_copies(xs)
        fns = {}
        for v in ("base", "trigger", "fused"):
            m = mods.get((row, v))
            if m is None:
                continue
            if v != "fused":
                fns[v] = (lambda m: (lambda *a: m.run(*a, candidate=0)))(m)
                continue
            split, combine = m.CANDIDATES[0][1]
            meta_s, meta_c = m.KERNELS[split], m.KERNELS[combine]
            kern = tilelang.compile(m.prim_func("fused_k0"), out_idx=[], target="cuda", pass_configs=meta_s.get("pass_configs"))
            sizes = {n: int(x.shape[i]) for x, shp in zip(xs, meta_s["shapes"]) for i, n in enumerate(shp) if isinstance(n, str)}
            dims = lambda shp: [sizes[d] if isinstance(d, str) else d for d in shp]  # noqa: E731
            dt = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
            parts = [(dims(shp), dt[d]) for shp, d in zip(meta_s["shapes"][meta_s["inputs"] :], meta_s["dtypes"][meta_s["inputs"] :])]
            fshape, fdt = dims(meta_c["shapes"][-1]), dt[meta_c["dtypes"][-1]]
            groups = 1
            for d in re.search(r"with T\.Kernel\((.*?), threads", open(m.__file__).read().split("def fused_k0(")[1]).group(1).split(",")[1:]:
                groups *= eval(d.strip(), {}, sizes)  # noqa: S307
            counter = torch.zeros(groups, dtype=torch.int32, device="cuda")

            def fn(*a, kern=kern, parts=parts, fshape=fshape, fdt=fdt, counter=counter):  # type: ignore[no-untyped-def]
                ps = [torch.empty(s, dtype=d, device="cuda") for s, d in parts]
                out = torch.empty(fshape, dtype=fdt, device="cuda")
                kern(*a, *ps, out, counter)
                return out

            fns[v] = fn
        res[row] = {}
        for v, fn in list(fns.items()):
            try:
                err = runtime.check(fn(*xs), ref)
            except Exception as e:  # noqa: BLE001 - recorded
                print(row, v, "failed:", runtime.one_line(e), flush=True)
                del fns[v]
                continue
            res[row][v] = {"rel_error": err}
            if err >= 1e-2:
                print(row, v, "wrong:", err, flush=True)
                del fns[v]
        samples: dict = {v: [] for v in fns}
        for _ in range(5):
            for v, fn in fns.items():
                samples[v].append(runtime.timed(fn, rotate=sets, batch=50, iters=15))
        for v, fn in fns.items():
            again = runtime.check(fn(*xs), ref)  # after ~4000 calls: the tickets were reset each time
            res[row][v] |= {"us": statistics.median(t.us for t in samples[v]), "rel_error_after": again}
            print(f"{row:24s} {v:8s} {res[row][v]['us']:8.2f} us  err {res[row][v]['rel_error']:.1e} after {again:.1e}", flush=True)
        torch.cuda.synchronize()
    (OUT / "fused_combine.json").write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
