"""Shared fixtures and helpers for the Cleave-IR test-suite.

Helpers that test modules need at collection time (for `parametrize`) live here as plain module
attributes too; pytest puts this directory on `sys.path` (no `__init__.py`), so test modules can
`from conftest import ...` them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from cleave_ir.diagnostics import parse_module_text
from cleave_ir.dialects import tgraph
from cleave_ir.run import make_context

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES_DIR = ROOT / "examples"
EXAMPLE_FILES = sorted(EXAMPLES_DIR.glob("*.mlir"))
EXAMPLE_IDS = [p.stem for p in EXAMPLE_FILES]

# Every size that appears in the examples and is big enough to slow the interpreter down, mapped to
# a small size. Sizes, not positions, are mapped, so dims the ops tie together stay equal (the map
# is applied once: mla's 512 becomes 32 and mha's 32 heads become 4, independently).
SMALL = {4096: 64, 8192: 64, 14336: 96, 6144: 64, 576: 48, 512: 32, 128: 16, 32: 4}


def parse_text(text: str, name: str = "<test>", ctx: Context | None = None) -> ModuleOp:
    """Parse and verify `text` as cleave-opt does: a syntax error raises xDSL's ParseError, a
    verifier error a CleaveError whose message is one located line."""
    return parse_module_text(ctx or make_context(), text, name)


def graphs_of(module: ModuleOp) -> list[tgraph.GraphOp]:
    return [op for op in module.walk() if isinstance(op, tgraph.GraphOp)]


def only_graph(module: ModuleOp) -> tgraph.GraphOp:
    (graph,) = graphs_of(module)
    return graph


def load_example(name: str) -> tgraph.GraphOp:
    return only_graph(parse_text((EXAMPLES_DIR / f"{name}.mlir").read_text(), f"{name}.mlir"))


def value_types(graph: tgraph.GraphOp) -> list[Attribute]:
    """The types of every value of `graph` in program order: inputs, then op results."""
    out: list[Attribute] = [a.type for a in graph.inputs]
    for op in graph.block.ops:
        out.extend(r.type for r in op.results)
    return out


def build_graph(
    input_types: Sequence[tgraph.TensorType],
    body: Callable[[tuple[SSAValue, ...]], Sequence[Operation]],
    name: str = "g",
) -> tgraph.GraphOp:
    """Build a graph with the Python API: `body(args)` returns the ops; the last op's result is
    the output. The graph is verified."""
    block = Block(arg_types=input_types)
    ops = list(body(block.args))
    out = tgraph.OutputOp([ops[-1].results[0]])
    block.add_ops([*ops, out])
    graph = tgraph.GraphOp(
        name, list(input_types), [ops[-1].results[0].type], Region(block)
    )
    graph.verify()
    return graph


def tool(name: str) -> str:
    """Path of an installed console script (in the running interpreter's venv)."""
    candidate = Path(sys.executable).parent / name
    if candidate.exists():
        return str(candidate)
    found = shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not installed")
    return found


def run_tool(
    name: str, *args: str, input: str | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.pop("PYTHONWARNINGS", None)
    return subprocess.run(
        [tool(name), *args],
        input=input,
        capture_output=True,
        text=True,
        cwd=cwd or ROOT,
        env=env,
        timeout=120,
    )


def run_tools_parallel(
    calls: dict[str, tuple[Sequence[str], dict]],
) -> dict[str, subprocess.CompletedProcess[str]]:
    """Run several `run_tool(name, *args, **kwargs)` calls concurrently (each is a separate
    process, so this only saves the ~1 s interpreter start-up of each); keyed like `calls`.
    `calls[key] = ((name, *args), kwargs)`."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        futures = {k: pool.submit(run_tool, *argv, **kw) for k, (argv, kw) in calls.items()}
        return {k: f.result() for k, f in futures.items()}


def fp16_inputs(graph: tgraph.GraphOp, dist: str, seed: int = 3) -> list:
    """Inputs of `graph` rounded to fp16, as float64: "normal", "uniform" (-1..1), "heavy" (Student t
    with 3 degrees of freedom, scaled by 0.3) or "shifted" (the heavy ones plus 0.5)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    shapes = [tuple(int(d) for d in tgraph.tensor_type(a).shape) for a in graph.inputs]
    if dist == "normal":
        xs = [rng.standard_normal(s) for s in shapes]
    elif dist == "uniform":
        xs = [rng.uniform(-1, 1, s) for s in shapes]
    else:
        xs = [rng.standard_t(3, s) * 0.3 + (0.5 if dist == "shifted" else 0.0) for s in shapes]
    return [x.astype(np.float16).astype(np.float64) for x in xs]


def boundary_of(module: ModuleOp):  # noqa: ANN201 - BoundaryAttr | None
    """The `cleave.boundary` of the module's graphs (at most one), or None."""
    found = {g.attributes["cleave.boundary"] for g in module.walk() if isinstance(g, tgraph.GraphOp) and "cleave.boundary" in g.attributes}
    assert len(found) <= 1
    return found.pop() if found else None


def boundary_views(boundary, xs: list) -> list:  # noqa: ANN001
    """The rewritten graph's inputs from the given graph's `xs` (no boundary: `xs`)."""
    import numpy as np

    return list(xs) if boundary is None else [np.ascontiguousarray(v) for v in boundary.views(xs, np.transpose, np.concatenate)]


# --------------------------------------------------------------------------- fixtures


@pytest.fixture
def ctx() -> Context:
    """A fresh context with every xDSL dialect and Cleave-IR's (as cleave-opt has)."""
    return make_context()


@pytest.fixture(scope="session")
def examples() -> Path:
    """The examples/ directory."""
    return EXAMPLES_DIR


@pytest.fixture
def parse(ctx: Context) -> Callable[..., ModuleOp]:
    """`parse(text, name="<test>")`: parse and verify a text into a module."""

    def _parse(text: str, name: str = "<test>") -> ModuleOp:
        return parse_text(text, name, ctx)

    return _parse


# The longest tests (5-18 s on 2 cores) of no xdist group, in about that order. xdist's loadgroup
# scheduler hands out the groups of several tests first (the most tests first) and then single tests
# in collection order: under it these go to the front of the single tests, so that the run ends with
# short tests on both workers, not one worker finishing a long test while the other waits (up to
# 10-15 s of one idle core, with test_unseen_graphs' among the last). Only the order changes; a name
# no longer here is harmless.
HEAVY_SINGLE_TESTS = (
    "test_one_row_matmuls_use_tensor_cores_or_gemv",
    "test_a_bounded_kernel_is_kept_beside_a_candidate_that_serves_every_size",
    "test_causal_attention_over_77_keys_is_padded_bounded_and_exact",
    "test_a_small_representative_length_is_rounded_up_until_a_kernel_serves_every_length",
    "test_a_split_k_part_with_every_key_masked_adds_nothing",
    "test_a_kernel_that_fails_to_lower_drops_its_candidate_only",
    "test_real_pipeline_on_a_small_region",
    "test_a_decode_group_through_the_real_pipeline",
    "test_a_k_tile_over_128_wide_keeps_its_gemms_synchronous",
    "test_boolean_masked_attention_gets_the_flash_attention_form",
    "test_a_row_of_the_lowest_float_is_uniform_in_the_kernels",
    "test_generate_under_the_backend",
    "test_causal_attention_at_an_awkward_length_compiles_padded",
    "test_causal_attention_is_compiled",
    "test_decode_linear_against_a_kn_weight_reads_its_columns_from_global_memory",
    "test_decode_attention_over_an_odd_key_count_has_no_partial_warp_shuffle",
    "test_split_k_combine_copies_its_padded_partials_by_tma",
    "test_row_padding_is_an_mma_tile_where_no_reduction_reads_the_padded_rows",
    "test_a_norm_over_awkward_widths_holds_its_padded_width",
    "test_neighbourhood_keeps_placements_threads_and_skips_counts_tiles_do_not_lay_out",
    "test_compile_tunes_records_and_reuses",
    "test_split_k_parts_of_odd_rows_are_copied_slice_by_slice",
    "test_gqa_decode_with_head_dim_80_lowers",
    "test_bf16_computed_operand_of_a_second_matmul",
    "test_tuning_never_ships_a_variant_slower_than_the_measured_winner",
    "test_causal_attention_over_a_symbolic_length_makes_its_mask_per_call",
)


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]):
    """Under pytest-xdist (`--dist loadgroup`), keep tests that share expensive results on one worker:
    the tests of one module and one example (pipeline results are cached per process), and the tests
    of a module that use one of its module-scoped fixtures.

    A wrapper: the marks are added before pytest-xdist's own hook reads them, and afterwards each
    marked item's node id gets the `@group` suffix that xdist's scheduler splits on, where xdist did
    not add it: pytest-xdist 3.8 writes `item._nodeid`, which pytest 9.2's items no longer read (their
    id is `item._id`), so without this every test was scheduled alone, each worker recomputing the
    shared fixtures and caches."""
    for item in items:
        if item.get_closest_marker("xdist_group"):  # the test names its group itself
            continue
        params = getattr(getattr(item, "callspec", None), "params", {})
        example = params.get("name")
        if isinstance(example, str):
            item.add_marker(pytest.mark.xdist_group(f"{item.module.__name__}:{example}"))
            continue
        defs = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {})
        if any(d.scope == "module" for ds in defs.values() for d in ds):
            item.add_marker(pytest.mark.xdist_group(item.module.__name__))
    if getattr(config.option, "loadgroup", False):  # set in xdist workers under --dist loadgroup
        heavy = {name: i for i, name in enumerate(HEAVY_SINGLE_TESTS)}

        def rank(item: pytest.Item) -> int:
            if item.get_closest_marker("xdist_group"):
                return len(heavy)
            return heavy.get(getattr(item, "originalname", item.name), len(heavy))

        items.sort(key=rank)  # stable: the rest keep their order
    result = yield
    if getattr(config.option, "loadgroup", False):
        from _pytest.nodeid import NodeId

        for item in items:
            groups = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default")) for m in item.iter_markers("xdist_group")})
            suffix = "@" + "_".join(groups)
            if groups and not item.nodeid.endswith(suffix) and hasattr(item, "_id"):
                item._id = NodeId.parse(item.nodeid + suffix)
    return result


@pytest.fixture
def tf32_allowed():
    """PyTorch's float32 matmul precision at "high" (TF32 allowed) for the test: the PyTorch front end
    compiles no fp32 matmul at "highest", PyTorch's default (`cleave_ir.torch.partition.tf32_refused`),
    and its tests' models are fp32. PyTorch's CPU matmuls are the same at both settings."""
    import torch

    old = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("high")
    yield
    torch.set_float32_matmul_precision(old)


def interpreting_compile(module, meta, torch):  # noqa: ANN001, ANN202
    """A stand-in for `tilelang.compile` that runs a kernel in the TileLang interpreter (`module`'s lowered
    kernel of the prim_func's name; `meta`: the emitted module's KERNELS) and, as TileLang's launcher does on
    a GPU, refuses tensors whose strides are not the ones its buffers were specialized to."""
    import numpy as np

    from cleave_ir.dialects import tilelang as tl
    from cleave_ir.interpreter_tilelang import run_kernel

    by_name = {k.sym_name.data: k for k in module.walk() if isinstance(k, tl.KernelOp)}

    def compile_(func, out_idx=None, target="cuda", pass_configs=None):  # noqa: ANN001, ANN202
        name = str(func.attrs["global_symbol"])
        kernel, n_in, dtypes = by_name[name], meta[name]["inputs"], meta[name]["dtypes"]
        want = [[int(st) for st in func.buffer_map[q].strides] if func.buffer_map[q].strides else None for q in func.params]

        def launch(*args):  # noqa: ANN002, ANN202
            for w, x in zip(want, args):
                if w is not None and any(a != b for a, b, n in zip(w, x.stride(), x.shape) if n > 1):
                    raise ValueError(f"stride mismatch: {list(x.stride())} for buffer strides {w}")
            # (the compiled kernel's own arguments: an input it reads stored transposed comes transposed)
            results = [torch.from_numpy(np.asarray(r, dtype=np.float64)) for r in run_kernel(kernel, [x.double().numpy() for x in args[:n_in]])]
            if out_idx is None:
                for o, r in zip(args[n_in:], results):
                    o.copy_(r)
                return None
            outs = [r.to(getattr(torch, d)) for r, d in zip(results, dtypes[n_in:])]
            return outs[0] if len(outs) == 1 else outs

        return launch

    return compile_


def emulated_gpu_check(graph: tgraph.GraphOp, module: ModuleOp, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # noqa: ANN201
    """`cleave compile --gpu`'s check of every candidate, emulated on the CPU: the emitted module of the lowered
    `module` with TileLang replaced by its interpreter (`interpreting_compile`), `runtime.run_poisoned` on inputs
    of the graph as written, against its float64 reference. Returns (the emitted module, inputs, references)."""
    torch = pytest.importorskip("torch")
    from cleave_ir import runtime
    from cleave_ir.tilelang_emitter import module_source

    path = tmp_path / "kernels.py"
    path.write_text(module_source(module))
    mod = runtime.load_module_file(path)
    monkeypatch.setattr(mod.tilelang, "compile", interpreting_compile(module, mod.KERNELS, torch))
    xs = runtime.random_inputs(graph, device="cpu")
    refs = runtime.torch_reference(graph, xs)
    for _, kernels, cand in mod.CANDIDATES:
        compiled = runtime.compile_candidates(mod, kernels, 1)
        raw = runtime.compile_candidates(mod, kernels[-1:], 1, raw=True)
        got = runtime.run_poisoned(mod, kernels, xs, compiled, raw[kernels[-1]])
        assert len(got) == len(refs) and max(runtime.check(g, r) for g, r in zip(got, refs)) < runtime.TOLERANCE, cand
    return mod, xs, refs
