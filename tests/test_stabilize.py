"""cleave-stabilize-split-k: Split-K exp sums in the log-sum-exp form, finite for any logits.

The rewritten candidates equal the originals; after partition and scheduling, the split kernel is
one online-softmax pass (rescaled sums with the chunk max as the running max) and the split+combine
kernels stay finite and right for logits of ~1e4, where the unstabilized pair gives inf/NaN.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import StringAttr, SymbolRefAttr

from cleave_ir.builder import GraphBuilder, module_of
from cleave_ir.diagnostics import parse_module_text
from cleave_ir.dialects import itgraph, tgraph
from cleave_ir.interpreter import max_relative_error, random_inputs, run_graph, run_split_k
from cleave_ir.interpreter_itgraph import run_kernel
from cleave_ir.passes.concretize import ConcretizePass
from cleave_ir.passes.partition_split_k import partition
from cleave_ir.passes.pipeline import PipelinePass, rank_candidates
from cleave_ir.passes.schedule import Config, build_kernel, plan, schedule_graph
from cleave_ir.passes.stabilize_exp import drop_unstable_candidates, stabilize_exps, unshifted_exps
from cleave_ir.passes.stabilize_split_k import StabilizeSplitKPass, stabilize
from cleave_ir.passes.superoptimize import SuperoptimizePass
from cleave_ir.passes.tmap_propagation import Unschedulable
from cleave_ir.run import load_module, make_context, resize_graph
from conftest import SMALL, load_example

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

# name -> (heads dims, scale): decode attention like lit_tests/passes/dynamic_shapes.mlir, and GQA decode
SHAPES = {"decode": ((), 1.0), "gqa_decode": ((2,), 0.08838834764831845)}


def decode_graph(name: str) -> tgraph.GraphOp:
    """softmax(scale * q k^T) v with q [1, *heads, 4, 128] and k, v [1, *heads, 1024, 128] (f16)."""
    heads, scale = SHAPES[name]
    b = GraphBuilder(name, "f16")
    q = b.input("q", [1, *heads, 4, 128])
    k = b.input("k", [1, *heads, 1024, 128])
    v = b.input("v", [1, *heads, 1024, 128])
    s = b.matmul(q, k, transpose_b=True)
    if scale != 1.0:
        s = b.scale(s, scale)
    e = b.exp(s)
    r = len(heads) + 2
    return b.build(b.div(b.matmul(e, v), b.reduce("sum", e, r)))


@cache
def _candidates_text(name: str) -> str:
    module = module_of(decode_graph(name))
    for p in (SuperoptimizePass(), ConcretizePass(split_counts=(4,))):
        p.apply(Context(), module)
    return str(module)


def candidates(name: str) -> list[tgraph.GraphOp]:
    """The input graph and its concrete candidates (split count 4), not partitioned; fresh each call."""
    module = parse_module_text(make_context(), _candidates_text(name), name)
    return [g for g in module.body.block.ops if isinstance(g, tgraph.GraphOp)]


def flash_decoding(name: str) -> tuple[tgraph.GraphOp, tgraph.GraphOp]:
    """(original, stabilized) FlashDecoding candidate: the one graph the rewrite applies to."""
    found = []
    for g in candidates(name):
        original = g.clone()
        if stabilize(g):
            found.append((original, g))
    assert len(found) == 1, [g.sym_name.data for _, g in found]
    return found[0]


def huge_logit_inputs(graph: tgraph.GraphOp, seed: int = 0) -> list[np.ndarray]:
    q, k, v = random_inputs(graph, seed)
    return [q * 1000.0, k, v]  # logits of ~1e3-1e4: exp overflows fp32 (and fp64)


def stable_reference(name: str, q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    s = (q @ np.swapaxes(k, -1, -2)) * SHAPES[name][1]
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v


def run_pair(split_k: itgraph.KernelOp, combine_k: itgraph.KernelOp, combine: tgraph.GraphOp, split: tgraph.GraphOp, xs: list[np.ndarray]) -> np.ndarray:
    partials = run_kernel(split_k, xs)
    names = split.input_names()
    extra = [xs[names.index(n.data)] for n in combine.attributes["cleave.passthrough"].data]  # type: ignore[attr-defined]
    return run_kernel(combine_k, [*partials, *extra])[0]


@pytest.mark.parametrize("name", list(SHAPES))
def test_rewritten_candidates_equal_the_originals(name: str) -> None:
    """Only the FlashDecoding candidate changes; it equals the original (and the input graph)."""
    graphs = candidates(name)
    module = module_of(*[g.clone() for g in graphs])
    StabilizeSplitKPass().apply(Context(), module)
    rewritten = 0
    for before, after in zip(graphs, module.body.block.ops):
        assert isinstance(after, tgraph.GraphOp)
        if str(before) == str(after):
            continue
        rewritten += 1
        assert "exp shifted by the chunk max" in after.attributes["cleave.note"].data  # type: ignore[attr-defined]
        assert sum(isinstance(op, tgraph.ReduceOp) and op.kind.data == tgraph.ReduceKind.MAX for op in after.block.ops) == 2
        for seed in (0, 1):
            xs = random_inputs(before, seed)
            assert max_relative_error(run_graph(before, xs)[0], run_graph(after, xs)[0]) < 1e-9
            assert max_relative_error(run_graph(graphs[0], xs)[0], run_graph(after, xs)[0]) < 1e-9
    assert rewritten == 1
    again = [stabilize(g) for g in module.body.block.ops if isinstance(g, tgraph.GraphOp)]
    assert again == [0] * len(again)  # idempotent


def test_partition_cuts_the_stabilized_graph_after_the_chunk_max() -> None:
    _, g = flash_decoding("decode")
    split, combine = partition(g)  # type: ignore[misc]
    # the split graph returns the chunk max, P.V and the row sum; the combine does the rest
    assert [tgraph.tensor_type(t).shape[-1] for t in split.function_type.outputs.data] == [1, 128, 1]
    assert sum(isinstance(op, tgraph.ReduceOp) and op.kind.data == tgraph.ReduceKind.MAX for op in split.block.ops) == 1
    kinds = [(op.kind.data.value, op.axis) for op in combine.block.ops if isinstance(op, tgraph.ReduceOp)]
    assert kinds == [("max", 0), ("sum", 0), ("sum", 0)]
    assert [op.name for op in combine.block.ops].count("tgraph.exp") == 1  # exp(m - M)
    xs = random_inputs(g, 0)
    assert max_relative_error(run_graph(g, xs)[0], run_split_k(split, combine, xs)[0]) < 1e-12


@pytest.mark.parametrize("name", list(SHAPES))
def test_split_and_combine_kernels_are_finite_for_huge_logits(name: str) -> None:
    original, stable = flash_decoding(name)
    xs = huge_logit_inputs(stable)
    s = xs[0] @ np.swapaxes(xs[1], -1, -2) * SHAPES[name][1]
    assert np.abs(s).max() > 1000
    want = stable_reference(name, *xs)
    split, combine = partition(stable)  # type: ignore[misc]
    combine_k = schedule_graph(combine, 1)[0][0].kernel
    kernels = schedule_graph(split, 3)[0]
    assert len(kernels) == 3
    for sk in kernels:
        got = run_pair(sk.kernel, combine_k, combine, split, xs)
        assert np.all(np.isfinite(got)), sk.config
        assert max_relative_error(want, got) < 1e-9, sk.config
    # no exp of unshifted logits anywhere: every exp reads x - max
    for k in (kernels[0].kernel, combine_k):
        exps = [op for op in k.walk() if isinstance(op, tgraph.ExpOp)]
        assert exps and all(isinstance(op.input.owner, tgraph.SubOp) for op in exps)
    # in fp32 (declared mode) the stabilized graphs stay finite; the original pair overflows
    with np.errstate(all="ignore"):
        assert np.all(np.isfinite(run_split_k(split, combine, xs, mode="declared")[0]))
        o_split, o_combine = partition(original)  # type: ignore[misc]
        assert not np.all(np.isfinite(run_split_k(o_split, o_combine, xs, mode="declared")[0]))
        o_kernel = schedule_graph(o_split, 1)[0][0].kernel
        o_combine_k = schedule_graph(o_combine, 1)[0][0].kernel
        assert not np.all(np.isfinite(run_pair(o_kernel, o_combine_k, o_combine, o_split, xs)))


@pytest.mark.parametrize("name", list(SHAPES))
def test_split_kernel_is_one_online_softmax_pass(name: str) -> None:
    _, g = flash_decoding(name)
    split, _ = partition(g)  # type: ignore[misc]
    # the kernels that loop over their chunk of K/V (a tile holding a whole 256-key chunk, also
    # among the top 3 now that its shared memory is counted once, reads it in one step)
    best = [s for s in schedule_graph(split, 3)[0] if s.config.reduce_tile is not None]
    assert best
    for s in best:
        k = s.kernel
        par = k.body.block.first_op
        assert isinstance(par, itgraph.ParallelOp)
        loops = [op for op in k.walk() if isinstance(op, itgraph.SequentialOp)]
        assert len(loops) == 1 and loops[0].parent_op() is par, s.config  # one pass over K/V
        assert loops[0].accumulate_kinds == ["rescaled_sum", "rescaled_sum", "max"]
        inside = [op for op in loops[0].body.block.ops]
        assert any(isinstance(op, tgraph.ReduceOp) and op.kind.data == tgraph.ReduceKind.MAX for op in inside)
        assert sum(isinstance(op, itgraph.LoadOp) and op.source.name_hint == "k" for op in k.walk()) == 1
        # the loop's results are exactly the graph's partials (m included)
        xs = random_inputs(split, 3)
        for want, got in zip(run_graph(split, xs), run_kernel(k, xs)):
            assert max_relative_error(want, got) < 1e-12


def test_explicit_max_loop_with_a_foreign_sum() -> None:
    """A running max is sound for a loop of sums of exp(x - max) and of plain sums that do not read the
    max (a cross-entropy's sum of x times a one-hot target: accumulated as `sum`); a sum that reads the
    max any other way is rejected."""
    b = GraphBuilder("g", "f32")
    x = b.input("x", [4, 256])
    m = b.reduce("max", x, 1)
    e = b.exp(b.sub(x, m))
    g = b.build(m, b.reduce("sum", e, 1), b.reduce("sum", x, 1))
    xs = [np.random.default_rng(0).standard_normal((4, 256)) * 1e4]
    k = build_kernel(plan(g, Config((4, 1), 64)), "k")
    assert [sorted(op.accumulate_kinds) for op in k.walk() if isinstance(op, itgraph.SequentialOp)] == [["max", "rescaled_sum", "sum"]]
    for want, got in zip(run_graph(g, xs), run_kernel(k, xs)):
        assert max_relative_error(want, got) < 1e-12
    b = GraphBuilder("d", "f32")
    x = b.input("x", [4, 256])
    m = b.reduce("max", x, 1)
    e = b.exp(b.sub(x, m))
    d = b.build(m, b.reduce("sum", e, 1), b.reduce("sum", b.sub(x, m), 1))
    with pytest.raises(Unschedulable):
        plan(d, Config((4, 1), 64))
    b = GraphBuilder("h", "f32")
    x = b.input("x", [4, 256])
    m = b.reduce("max", x, 1)
    e = b.exp(b.sub(x, m))
    h = b.build(m, b.reduce("sum", e, 1))
    xs = [np.random.default_rng(0).standard_normal((4, 256)) * 1e4]
    k = build_kernel(plan(h, Config((4, 1), 64)), "k")
    assert [op.accumulate_kinds for op in k.walk() if isinstance(op, itgraph.SequentialOp)] == [["rescaled_sum", "max"]]
    for want, got in zip(run_graph(h, xs), run_kernel(k, xs)):
        assert max_relative_error(want, got) < 1e-12
    # exp(x - max) not summed (a softmax numerator as output): the max stays a plain max loop
    b = GraphBuilder("n", "f32")
    x = b.input("x", [4, 256])
    m = b.reduce("max", x, 1)
    n = b.build(m, b.exp(b.sub(x, m)))
    k = build_kernel(plan(n, Config((4, 1), 64)), "k")
    assert [op.accumulate_kinds for op in k.walk() if isinstance(op, itgraph.SequentialOp)] == [["max"]]
    for want, got in zip(run_graph(n, xs), run_kernel(k, xs)):
        assert max_relative_error(want, got) < 1e-12


def test_graphs_without_the_pattern_are_unchanged() -> None:
    """Split-K without exp, and exp sums whose denominator is not split, are left alone."""
    g = load_module(str(EXAMPLES / "matmul_rowsum.mlir")).body.block.first_op
    assert isinstance(g, tgraph.GraphOp)
    module = module_of(resize_graph(g, {4096: 256}).clone())
    module.body.block.first_op.attributes.pop("constraints", None)  # type: ignore[union-attr]
    for p in (SuperoptimizePass(), ConcretizePass(split_counts=(4,))):
        p.apply(Context(), module)
    assert all(stabilize(x) == 0 for x in module.body.block.ops if isinstance(x, tgraph.GraphOp))
    untouched = [g for g in candidates("decode") if "1 partial result" in getattr(g.attributes.get("cleave.note"), "data", "")]
    assert untouched and all(stabilize(x) == 0 for x in untouched)


@pytest.mark.parametrize("name", list(SHAPES))
def test_tilelang_numerics_stay_finite_for_huge_logits(name: str) -> None:
    """The lowered TileLang kernels (fp16 tiles, fp32 fragments) of the pair: finite, unlike the original's."""
    from cleave_ir.interpreter_tilelang import run_kernels
    from cleave_ir.passes.lower_tilelang import lower_kernel
    from cleave_ir.passes.place_memory import place

    original, stable = flash_decoding(name)
    xs = huge_logit_inputs(stable)
    want = stable_reference(name, *xs)
    for g, finite in ((stable, True), (original, False)):
        split, combine = partition(g)  # type: ignore[misc]
        passthrough = [n.data for n in combine.attributes["cleave.passthrough"].data]  # type: ignore[attr-defined]
        lowered = []
        for x, extra in ((split, []), (combine, passthrough)):
            k = schedule_graph(x, 1)[0][0].kernel
            place(k)
            lowered.append(lower_kernel(k, extra))
        got = run_kernels(lowered, xs)[0]
        assert bool(np.all(np.isfinite(got))) == finite, g.sym_name.data
        if finite:
            assert max_relative_error(want, got) < 1e-2  # fp16 logits and tiles


# --------------------------------------------------------------------------- every kernel kind
# Every candidate the pipeline keeps, of every attention example (reduced sizes), at logits of
# +-1000: finite and equal to the float64 softmax (itgraph interpreter), finite and close (tilelang
# interpreter, fp16 tiles). The default run checks mha and gqa_decode at split count 4; the slow
# sweep checks all seven examples at every split count:
#   python -m pytest tests/test_stabilize.py -m slow -p no:xdist

ATTENTION = ["mha", "gqa", "mqa", "mla", "mha_decode", "gqa_decode", "mla_decode"]
FAST = ["mha", "gqa_decode"]
LOGIT_SCALES = (1000.0, -1000.0)
ALL_SPLITS = (2, 4, 8, 16, 32)
EVERY = [
    *[pytest.param(name, (4,), id=f"{name}-split4") for name in FAST],
    *[pytest.param(name, ALL_SPLITS, id=f"{name}-all_splits", marks=pytest.mark.slow) for name in ATTENTION],
]


@cache
def _pipelined(name: str, splits: tuple[int, ...]) -> str:
    """The example at SMALL sizes after cleave-pipeline with every candidate kept (one kernel each)."""
    g = resize_graph(load_example(name), SMALL)
    module = module_of(g)
    PipelinePass(top_k=1, keep=10_000, split_counts=splits).apply(Context(), module)
    return str(module)


def _module(name: str, splits: tuple[int, ...]):
    return parse_module_text(make_context(), _pipelined(name, splits), name)


def _huge(graph: tgraph.GraphOp, scale: float) -> list[np.ndarray]:
    q, *rest = random_inputs(graph, 0)
    return [q * scale, *rest]


def _stable_reference(graph: tgraph.GraphOp, xs: list[np.ndarray]) -> np.ndarray:
    ref = graph.clone()
    assert stabilize_exps(ref) == 1  # the input graph's softmax, shifted by its row max
    return run_graph(ref, xs)[0]


def _run_itgraph_unit(module, kernels: list[str], xs: list[np.ndarray], names: list[str]) -> np.ndarray:
    """The kernels of one candidate in launch order, as `interpreter.run_chain` runs their graphs."""
    graphs = {g.sym_name.data: g for g in module.body.block.ops if isinstance(g, tgraph.GraphOp)}
    by_name = {k.sym_name.data: k for k in module.body.block.ops if isinstance(k, itgraph.KernelOp)}
    values = list(xs)
    env = dict(zip(names, xs))
    for kn in kernels:
        k = by_name[kn]
        src = graphs[tgraph.referenced_symbol(k, "cleave.schedule_of")]  # type: ignore[index]
        extra = [env[n.data] for n in getattr(src.attributes.get("cleave.passthrough"), "data", ())]  # type: ignore[attr-defined]
        args = values[: len(k.inputs) - len(extra)] + extra
        env.update(zip(src.input_names(), args))
        values = list(run_kernel(k, args))
        env.update(zip((n.data for n in getattr(src.attributes.get("cleave.output_names"), "data", ())), values))  # type: ignore[attr-defined]
    return values[0]


@pytest.mark.parametrize("name, splits", EVERY)
def test_every_candidate_has_only_shifted_exps(name: str, splits: tuple[int, ...]) -> None:
    module = _module(name, splits)
    kernels = [k for k in module.body.block.ops if isinstance(k, itgraph.KernelOp)]
    assert kernels
    for k in kernels:
        assert not unshifted_exps(k), k.sym_name.data
    notes = " ".join(str(getattr(g.attributes.get("cleave.note"), "data", "")) for g in module.body.block.ops if isinstance(g, tgraph.GraphOp))
    if name.endswith("decode"):
        assert "log-sum-exp" in notes  # FlashDecoding is kept


@pytest.mark.parametrize("name, splits", EVERY)
def test_every_candidate_itgraph_finite_at_huge_logits(name: str, splits: tuple[int, ...]) -> None:
    module = _module(name, splits)
    graph = next(g for g in module.body.block.ops if isinstance(g, tgraph.GraphOp) and "cleave.candidate_of" not in g.attributes)
    units = rank_candidates(module)
    assert len(units) >= 2
    for scale in LOGIT_SCALES:
        xs = _huge(graph, scale)
        want = _stable_reference(graph, xs)
        assert np.all(np.isfinite(want))
        with np.errstate(all="ignore"):
            assert not np.all(np.isfinite(run_graph(graph, xs)[0]))  # the raw softmax overflows float64
        for _, kernels, g in units:
            got = _run_itgraph_unit(module, kernels, xs, graph.input_names())
            assert np.all(np.isfinite(got)), (g, scale)
            assert max_relative_error(want, got) < 1e-9, (g, scale)


@pytest.mark.parametrize("name, splits", EVERY)
def test_every_candidate_tilelang_finite_at_huge_logits(name: str, splits: tuple[int, ...]) -> None:
    from cleave_ir.interpreter_tilelang import candidate_kernels, run_kernels
    from cleave_ir.passes.lower_tilelang import lower_module

    module = _module(name, splits)
    graph = next(g for g in module.body.block.ops if isinstance(g, tgraph.GraphOp) and "cleave.candidate_of" not in g.attributes)
    lower_module(module)
    units = candidate_kernels(module)
    assert len(units) >= 2
    for scale in LOGIT_SCALES:
        xs = _huge(graph, scale)
        want = _stable_reference(graph, xs)
        for g, kernels in units:
            got = run_kernels(kernels, xs)[0]
            assert np.all(np.isfinite(got)), (g, scale)
            # fp16 logits of ~1e3 carry an absolute error of ~0.5: near-ties between the largest
            # logits move weight, so the check is against the output's range
            err = np.abs(got - want).max() / np.abs(want).max()
            assert err < 0.25, (g, scale, err)


def _whole_row_softmax(rows: int = 4, n: int = 64) -> tgraph.GraphOp:
    b = GraphBuilder("softmax", "f16")
    x = b.input("x", [rows, n])
    e = b.exp(x)
    return b.build(b.div(e, b.reduce("sum", e, 1)))


def test_whole_row_kernel_subtracts_the_row_max() -> None:
    """A softmax whose rows fit one tile (no loop): exp reads x - max x, and stays finite."""
    g = _whole_row_softmax()
    k = build_kernel(plan(g, Config((4, 64), None)), "k")
    (exp,) = [op for op in k.walk() if isinstance(op, tgraph.ExpOp)]
    sub = exp.input.owner
    assert isinstance(sub, tgraph.SubOp) and isinstance(sub.rhs.owner, tgraph.ReduceOp)
    assert sub.rhs.owner.kind.data == tgraph.ReduceKind.MAX and sub.rhs.owner.axis == 1
    xs = [np.random.default_rng(0).standard_normal((4, 64)) * 1000]
    ref = g.clone()
    stabilize_exps(ref)
    got = run_kernel(k, xs)[0]
    assert np.all(np.isfinite(got)) and max_relative_error(run_graph(ref, xs)[0], got) < 1e-12


def test_a_shift_by_the_max_of_another_value_is_shifted_again() -> None:
    """softmax(c s) written `exp(c s - max(s))` (the search's form of a d112 attention: any row
    constant cancels in the normalization) is not stable: for c = 0.0945 and scores of max ~30 its
    exps are ~e^-27, 0 in f16, and the kernel's output was 0. The kernel subtracts the max of its
    own argument as well, and matches the graph at logits of any size."""
    b = GraphBuilder("a", "f16")
    s = b.input("s", [4, 64])
    v = b.input("v", [64, 16])
    e = b.exp(b.sub(b.scale(s, 0.0945), b.reduce("max", s, 1)))
    g = b.build(b.div(b.matmul(e, v), b.reduce("sum", e, 1)))
    k = build_kernel(plan(g, Config((4, 16), None)), "k")
    assert not unshifted_exps(k)
    (exp,) = [op for op in k.walk() if isinstance(op, tgraph.ExpOp)]
    assert exp.input.owner.rhs.owner.input == exp.input.owner.lhs  # x - max(x) of the same x
    rng = np.random.default_rng(0)
    for scale in (1.0, 30.0, 1000.0):
        xs = [rng.standard_normal((4, 64)) * scale, rng.standard_normal((64, 16))]
        z = 0.0945 * xs[0]
        p = np.exp(z - z.max(1, keepdims=True))
        want = (p / p.sum(1, keepdims=True)) @ xs[1]
        got = run_kernel(k, xs)[0]
        assert np.all(np.isfinite(got)) and max_relative_error(want, got) < 1e-9


def test_kernels_that_do_not_normalize_keep_their_exp() -> None:
    """exp stored as it is, or summed into a partial (a split kernel): no shift is inserted."""
    b = GraphBuilder("e", "f32")
    x = b.input("x", [4, 64])
    g = b.build(b.exp(x))
    k = build_kernel(plan(g, Config((4, 64), None)), "k")
    assert unshifted_exps(k)
    b = GraphBuilder("s", "f32")
    x = b.input("x", [4, 64])
    g = b.build(b.reduce("sum", b.exp(x), 1))
    k = build_kernel(plan(g, Config((4, 1), None)), "k")
    assert unshifted_exps(k)


def test_drop_unstable_keeps_the_input_graph_and_stable_candidates() -> None:
    """A candidate whose exp is unshifted in every kernel goes; the input graph always stays."""
    g = _whole_row_softmax()
    other = g.clone()
    other.sym_name = StringAttr("softmax_c1")
    other.attributes["cleave.candidate_of"] = SymbolRefAttr("softmax")
    module = module_of(g, other)
    for graph in (g, other):
        k = build_kernel(plan(graph, Config((4, 64), None)), f"{graph.sym_name.data}_k0")
        k.attributes["cleave.schedule_of"] = SymbolRefAttr(graph.sym_name.data)
        module.body.block.add_op(k)
    for exp in [op for op in module.body.block.last_op.walk() if isinstance(op, tgraph.ExpOp)]:
        exp.operands[0] = exp.input.owner.lhs  # type: ignore[union-attr]  # the candidate's shift undone
    assert drop_unstable_candidates(module) == ["softmax_c1"]
    assert [op.sym_name.data for op in module.body.block.ops] == ["softmax", "softmax_k0"]  # type: ignore[attr-defined]
    assert drop_unstable_candidates(module) == []


def test_split_k_partial_maxima_and_sums_are_f32() -> None:
    """The chunk max and row sum cross to the combine in f32 (P.V keeps f16); the combine computes in
    f32. Lowered to TileLang, the pair is closer to the float64 softmax than with f16 partials."""
    from cleave_ir.interpreter_tilelang import run_kernels
    from cleave_ir.passes.lower_tilelang import lower_kernel
    from cleave_ir.passes.place_memory import place

    _, g = flash_decoding("gqa_decode")
    split, combine = partition(g)  # type: ignore[misc]
    elts = [str(tgraph.tensor_type(t).element_type) for t in split.function_type.outputs.data]
    assert elts == ["f32", "f16", "f32"]
    assert [str(tgraph.tensor_type(a).element_type) for a in combine.inputs] == elts
    assert str(tgraph.tensor_type(combine.output_op.outputs[0]).element_type) == "f16"
    assert {str(tgraph.tensor_type(op.results[0]).element_type) for op in combine.block.ops if op.results} == {"f32", "f16"}
    lowered = []
    for x in (split, combine):
        k = schedule_graph(x, 1)[0][0].kernel
        place(k)
        lowered.append(lower_kernel(k, []))
    assert [str(o.type.element_type) for o in lowered[0].outputs] == ["f32", "f16", "f32"]  # type: ignore[attr-defined]
    assert [str(a.type.element_type) for a in lowered[1].inputs] == ["f32", "f16", "f32"]  # type: ignore[attr-defined]
    q, k_, v = random_inputs(g, 0)
    xs = [x.astype(np.float16).astype(np.float64) for x in (q * 8.0, k_, v)]  # logits of ~100
    got = run_kernels(lowered, xs)[0]
    assert max_relative_error(stable_reference("gqa_decode", *xs), got) < 2e-3  # 1.0e-3 measured (1.9e-3 with f16 partials)


def test_softmax_of_a_product_cut_into_kernels_stays_finite(monkeypatch: pytest.MonkeyPatch) -> None:
    """softmax(x @ w) written with its max: the default pipeline (canonicalize on) cuts some candidates
    into kernel chains; the max goes back in before the cut, so every exp of every chain reads x - max.
    (Chains arise where not even a few whole rows fit a tile; at this small size only without the
    few-row fallback, which the test turns off.)"""
    from cleave_ir.passes import partition_kernels, schedule
    from cleave_ir.passes.stabilize_exp import chain_unshifted_exps

    monkeypatch.setattr(schedule, "FALLBACKS", schedule.FALLBACKS[:2])
    monkeypatch.setattr(schedule, "FEW_ROWS_BESIDE_WIDE", False)

    b = GraphBuilder("sm", "f16")
    x = b.input("x", [64, 256])
    w = b.input("w", [256, 512])
    s = b.matmul(x, w)
    e = b.exp(b.sub(s, b.reduce("max", s, 1)))
    g = b.build(b.div(e, b.reduce("sum", e, 1)))
    module = module_of(g.clone())
    PipelinePass(keep=100, split_counts=(2, 16)).apply(Context(), module)
    graphs = {x.sym_name.data: x for x in module.body.block.ops if isinstance(x, tgraph.GraphOp)}
    units = rank_candidates(module)
    assert any(len(ks) > 2 for _, ks, _ in units)  # a chain of cut kernels among them
    xs = random_inputs(g, 0)
    xs[0] = xs[0] * 30  # logits of ~500
    want = run_graph(g, xs)[0]
    by_name = {k.sym_name.data: k for k in module.body.block.ops if isinstance(k, itgraph.KernelOp)}
    for _, kernels, head in units:
        chain = partition_kernels.chain(graphs[head], graphs) or []
        raw = set(chain_unshifted_exps(chain))  # not shifted by a max of the chain: the kernel shifts them
        for graph, kernel in zip(chain, kernels):
            if any(op in raw for op in graph.block.ops):
                assert not unshifted_exps(by_name[kernel]), kernel
        got = _run_itgraph_unit(module, kernels, xs, g.input_names())
        assert np.all(np.isfinite(got)), head
        assert max_relative_error(want, got) < 1e-9, head


def test_split_k_partial_scores_before_a_softmax_are_f32() -> None:
    """q k^T split over the head dim: the combine sums the partial scores and takes exp(s - max s), so
    an f16 partial's absolute error (|s| * 2^-11, 0.5 at logits of 1000) would become a relative
    error of the output; those partials cross in f32. So does, since session 49, a split over the KV
    length whose combine divides the summed P.V products by the summed exps (a partial that the combine
    scales down can exceed fp16 where the output does not); the stabilized split's P.V crosses in f16,
    divided by its chunk's sum (bounded by max |V|)."""
    kinds = {}
    for g in candidates("decode")[1:]:
        stabilize(g)
        pair = partition(g)
        if pair is None:
            continue
        split, _ = pair
        note = str(getattr(g.attributes.get("cleave.note"), "data", ""))
        kinds[note] = [str(tgraph.tensor_type(t).element_type) for t in split.function_type.outputs.data]
    assert [k for n, k in kinds.items() if n.startswith("split %q dim 2 by s")] == [["f32"]]
    assert [k for n, k in kinds.items() if n.startswith("split %k dim 1 by s") and "log-sum-exp" not in n] == [["f32"]]
