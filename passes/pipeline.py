"""`cleave-pipeline`: every pass with defaults, then keep the best few candidates (what `-t tilelang` emits).

decompose -> canonicalize (on by default: softmax written with its max shift, norms with div/sqrt) -> symbolize -> superoptimize -> split-rows -> concretize -> stabilize-split-k -> partition-split-k -> schedule (exps of whole rows shifted by the row max; a graph no single kernel
schedules is cut into a chain, in graph order and by reduction level) -> drop-unstable ->
place-memory -> dynamic-shapes (schedule with `per-matmul-cut`: a chain of matmuls is also offered as
one kernel per matmul), then the candidates (a graph's best kernel, or a split kernel plus
its combine kernel) are ranked by the cost model's estimate and only `keep` of them are left in the
module, with their kernels: the best of each form (one kernel, a Split-K pair, a chain of cut
pieces; `form`) first, then the next best. The model ranks forms less reliably than it ranks
schedules of one form (swiglu at T=1: a Split-K form estimated 51.7 us measured 89.7 us, the one-kernel
GEMV estimated 58.3 us measured 56.1 us), so measurement (`cleave compile --gpu`) gets each form to time.

Ablations (the Cleave paper's Figure 12), as options: `no-split=true` searches without the Split
operator (max-splits=0: no Split-K or FlashDecoding candidates), `no-search=true` skips the algebraic
search (only the input graph itself is scheduled, as one kernel: no per-matmul cut), `iterative-tiling=false` and
`horizontal-fusion=false` are passed to `cleave-schedule`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from cleave_ir.dialects import itgraph, tgraph, tilelang
from cleave_ir.dialects.cleave import Stage
from cleave_ir.diagnostics import CleaveError
from cleave_ir.passes.canonicalize import CanonicalizePass
from cleave_ir.passes import partition_kernels
from cleave_ir.passes.concretize import ConcretizePass
from cleave_ir.passes.fold_structural import FoldStructuralPass
from cleave_ir.passes.decompose import DecomposePass
from cleave_ir.passes.dynamic_shapes import DynamicShapesPass, rounded_representatives
from cleave_ir.passes.options import CleavePass
from cleave_ir.passes.partition_split_k import PartitionSplitKPass
from cleave_ir.passes.place_memory import PlaceMemoryPass
from cleave_ir.passes.schedule import SchedulePass
from cleave_ir.passes.split_projections import SplitProjectionsPass
from cleave_ir.passes.split_rows import SplitRowsPass
from cleave_ir.passes.split_shared_inputs import split_shared_inputs
from cleave_ir.passes.stabilize_exp import DropUnstablePass
from cleave_ir.passes.stabilize_split_k import StabilizeSplitKPass
from cleave_ir.passes.superoptimize import DEFAULT_BUDGET, SuperoptimizePass
from cleave_ir.passes.symbolize import SymbolizePass


_ref = tgraph.referenced_symbol


Unit = tuple[float, list[str], str]
"""A candidate: estimated us, its kernels in launch order, the graph it starts with."""


def rank_candidates(module: ModuleOp) -> list[Unit]:
    """(estimated us, kernels in launch order, graph) for every schedulable candidate, best first:
    candidates with a kernel that spills registers (`cleave.spill_bytes`, from `cleave compile
    --registers`) after all others.

    Kernels are itgraph kernels or, after cleave-lower-tilelang, tilelang kernels.
    """
    best: dict[str, tuple[float, str]] = {}
    for k in module.body.block.ops:
        if isinstance(k, (itgraph.KernelOp, tilelang.KernelOp)) and "cleave.estimated_us" in k.attributes:
            src = _ref(k, "cleave.schedule_of")
            us = k.attributes["cleave.estimated_us"].value.data  # type: ignore[attr-defined]
            if src is not None and (src not in best or us < best[src][0]):
                best[src] = (us, k.sym_name.data)
    graphs = {g.sym_name.data: g for g in module.body.block.ops if isinstance(g, tgraph.GraphOp)}
    units = []
    for g in graphs.values():
        if not partition_kernels.chain_head(g):
            continue  # runs after the graph before it
        c = partition_kernels.chain(g, graphs)  # one graph, a split and its combine, or a cut graph's pieces
        if c is None or any(x.sym_name.data not in best for x in c):
            continue
        units.append((sum(best[x.sym_name.data][0] for x in c), [best[x.sym_name.data][1] for x in c], g.sym_name.data))
    spilling = {k.sym_name.data for k in module.body.block.ops if isinstance(k, (itgraph.KernelOp, tilelang.KernelOp)) and "cleave.spill_bytes" in k.attributes}
    return sorted(units, key=lambda u: (any(k in spilling for k in u[1]), u))


def form(module: ModuleOp, graph: str) -> Stage | None:
    """The form of the candidate whose kernels start with `graph`: SPLIT (a Split-K graph and its
    combine), FIRST (a graph cut into a chain of kernels) or None (one kernel)."""
    head = next((g for g in module.body.block.ops if isinstance(g, tgraph.GraphOp) and g.sym_name.data == graph), None)
    return partition_kernels.stage(head) if head is not None else None


def kernel_key(module: ModuleOp) -> Callable[[Unit], Hashable]:
    """What a unit's kernels are, up to names and views: per kernel its tiles, threads, stages,
    estimate and the ops it runs in order, reshapes left out. Candidates that differ only in
    operand order or in where a view sits (swiglu's `silu(g) * u` and `u * silu(g)`) get the same
    key; a unit is kept only if no better one has its key."""
    kernels = {k.sym_name.data: k for k in module.body.block.ops if isinstance(k, (itgraph.KernelOp, tilelang.KernelOp))}
    names = ("cleave.tiles", "cleave.threads", "cleave.stages", "cleave.estimated_us")

    def key(kernel: Operation) -> Hashable:
        ops = tuple(o.name for o in kernel.walk() if not isinstance(o, tgraph.ReshapeOp))
        return (*(str(kernel.attributes.get(n)) for n in names), ops)

    return lambda u: tuple(key(kernels[k]) for k in u[1])


# how far (times the best estimate) a form's best may be and still be kept ahead of the rank: the
# model's misranking of forms seen on the H200 is under 2x (swiglu T=1: 51.7/58.3 us estimated,
# 89.7/56.1 us measured); an unfused attention estimated 10x slower is not worth timing
FORM_SLACK = 3.0


def select_kept(units: Sequence[Unit], keep: int, form_of: Callable[[str], Hashable], same: Callable[[Unit], Hashable] = id) -> list[Unit]:
    """`keep` of the ranked `units`, none with the same `same` key as a better one: the best of every
    form estimated within `FORM_SLACK` of the best first (best forms first), then the next best of
    any form; in rank order."""
    seen: set[Hashable] = set()
    distinct: list[Unit] = []
    for u in units:
        if (key := same(u)) not in seen:
            seen.add(key)
            distinct.append(u)
    units = distinct
    firsts: dict[Hashable, Unit] = {}
    for u in units:
        if u[0] <= FORM_SLACK * units[0][0]:
            firsts.setdefault(form_of(u[2]), u)
    chosen = list(firsts.values())[:keep]
    chosen += [u for u in units if u not in chosen][: keep - len(chosen)]
    return sorted(chosen, key=units.index)


def static_roots(module: ModuleOp) -> set[str]:
    """The input graphs of `module` (after the pipeline) with candidates, none of which serves every size
    of the graph's dynamic dims (each has a kernel `cleave-dynamic-shapes` left `cleave.static_only`)."""
    kernels = {k.sym_name.data: k for k in module.body.block.ops if isinstance(k, itgraph.KernelOp)}
    graphs = {g.sym_name.data: g for g in module.body.block.ops if isinstance(g, tgraph.GraphOp)}
    seen: set[str] = set()
    serving: set[str] = set()
    for _, names, g in rank_candidates(module):
        root = (tgraph.referenced_symbol(graphs[g], "cleave.candidate_of") if g in graphs else None) or g
        seen.add(root)
        if all("cleave.static_only" not in kernels[k].attributes for k in names if k in kernels):
            serving.add(root)
    return seen - serving


@dataclass(frozen=True)
class PipelinePass(CleavePass):
    """The whole pipeline with defaults; leaves the input graphs and `keep` candidates (`select_kept`)."""

    name = "cleave-pipeline"

    max_ops: int = 12
    search_budget: int = DEFAULT_BUDGET
    # max-subtracted softmax reaches the max-free forms; a graph cut into kernels gets its max back
    # (`stabilize_exp.shifted_for_cut`), so no exp crosses a kernel boundary unshifted
    canonicalize: bool = True
    top_k: int = 2
    keep: int = 3
    split_counts: tuple[int, ...] = (2, 4, 8, 16, 32)
    no_split: bool = False
    no_search: bool = False
    iterative_tiling: bool = True
    horizontal_fusion: bool = True
    hoist_elementwise: bool = False  # `cleave-place-memory{hoist-elementwise}`: not yet checked on a GPU

    def passes(self, loop_dynamic: bool = False) -> list[ModulePass]:
        """The passes this configuration runs, in order (the search is left out under `no-search`);
        `loop_dynamic`: `cleave-schedule{loop-dynamic=true}` (the schedule at rounded sizes)."""
        search: list[ModulePass] = [] if self.no_search else [SuperoptimizePass(max_ops=self.max_ops, max_splits=0 if self.no_split else 2, budget=self.search_budget)]
        if not self.no_search and not self.no_split:
            search.append(SplitRowsPass())  # row statistics the search found no Split-K form for
            search.append(SplitProjectionsPass())  # projections of graphs of several outputs (not searched)
        return [
            DecomposePass(),  # reduce mean -> reduce sum + scale
            *([CanonicalizePass()] if self.canonicalize else []),  # softmax without a cancelled max shift, norms with rsqrt
            SymbolizePass(),
            *search,
            ConcretizePass(split_counts=self.split_counts, max_check_gb=0.5),  # makes the input graph concrete again
            StabilizeSplitKPass(),  # Split-K exp sums in log-sum-exp form: finite for any logits
            PartitionSplitKPass(),
            SchedulePass(top_k=self.top_k, iterative_tiling=self.iterative_tiling, horizontal_fusion=self.horizontal_fusion, per_matmul_cut=not self.no_search, loop_dynamic=loop_dynamic),
            DropUnstablePass(),  # candidates whose softmax spans kernels without a shared max
            PlaceMemoryPass(hoist_elementwise=self.hoist_elementwise),
            DynamicShapesPass(),  # kernels of graphs with dynamic dims serve every size of them
        ]

    def check_options(self) -> None:
        for option, value in (("max-ops", self.max_ops), ("search-budget", self.search_budget), ("top-k", self.top_k), ("keep", self.keep)):
            if value < 1:
                raise CleaveError(f"error: cleave-pipeline: {option} must be at least 1")
        if not self.split_counts or any(c < 2 for c in self.split_counts):
            raise CleaveError("error: cleave-pipeline: split-counts must be integers >= 2")

    def _with_shared_inputs_split(self, ctx: Context, op: ModuleOp, before: ModuleOp, failure: CleaveError | None) -> ModuleOp:
        """Where a graph input is read in two roles around a matmul (by both operands: `x @ x^T`,
        `softmax(x x^T) x`; by an operand and an op computing no operand: `silu(x W) + x`), run the passes again
        with the second role reading a copy (`cleave-split-shared-inputs`): the two tiles of that input
        then need not agree. The split result replaces `op`'s contents where
        the first run failed or the split's best candidate wins (`_split_wins`: fewer kernels and estimated
        faster, the split letting a fusion happen: self-attention over one tensor, one kernel instead of one
        per matmul; or as many kernels and estimated `SPLIT_MARGIN` times faster);
        otherwise the input stays loaded once (the keys and values of `softmax(q x^T) x`; the cos and sin
        tables that a rotary embedding of q and of k both read: at `llama_rope_scores`' real size the split
        fuses it into one kernel estimated 477 us against the cut pair's 155, at its test size into one
        kernel 12% faster by estimate, against one; neither measured on a GPU yet). Returns the module
        before the passes of the result kept; raises `failure` (the first run's) where neither ran."""
        split_before = before.clone()
        graphs = [g for g in split_before.body.block.ops if isinstance(g, tgraph.GraphOp)]
        split = [g.sym_name.data for g in graphs if split_shared_inputs(g)]
        if not split:
            if failure is not None:
                raise failure
            return before
        retry = split_before.clone()
        try:
            for p in self.passes():
                p.apply(ctx, retry)
        except CleaveError:
            if failure is not None:
                raise failure from None
            return before
        ranked, split_ranked = rank_candidates(op) if failure is None else [], rank_candidates(retry)
        if not split_ranked or (ranked and not _split_wins(ranked[0], split_ranked[0])):
            if failure is not None:
                raise failure
            return before
        for name in split:
            print(f"cleave-pipeline: @{name}: an input a matmul's operands read in two roles is read as two inputs (cleave-split-shared-inputs)", file=sys.stderr)
        _replace_contents(op, retry)
        return split_before

    def _rounded_retry(self, ctx: Context, op: ModuleOp, before: ModuleOp) -> None:
        """Where a graph's dynamic dims got no kernel that serves every size at their representative sizes,
        run the passes again with those sizes rounded up (`rounded_representatives`), each graph that
        reduces over a dynamic dim keeping a configuration that loops over a reduction
        (`cleave-schedule{loop-dynamic=true}`); where every such graph then has one, that result replaces `op`'s contents."""
        rounded = rounded_representatives(before, static_roots(op))
        if not rounded:
            return
        said = {
            name: ", ".join(str([str(d) for d in tgraph.tensor_type(a).shape]).replace("'", "") for a in graph.inputs) for name, graph in rounded.items()
        }
        for graph in [g for g in before.body.block.ops if isinstance(g, tgraph.GraphOp) and g.sym_name.data in rounded]:
            Rewriter.replace_op(graph, rounded[graph.sym_name.data])
        for p in self.passes(loop_dynamic=True):
            p.apply(ctx, before)
        if rounded.keys() & static_roots(before):  # (not a multiple of the quantum either: as first scheduled)
            return
        for name, shapes in said.items():
            print(f"cleave-pipeline: @{name} scheduled again at its dynamic sizes rounded up ({shapes}): its kernels serve every size", file=sys.stderr)
        _replace_contents(op, before)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        self.check_options()
        FoldStructuralPass().apply(ctx, op)  # transposes, slices and concats out of the graphs, where they can go
        for x in op.walk():
            if isinstance(x, tgraph.StructuralOp):
                graph = x.parent_op()
                where = f" in @{graph.sym_name.data}" if isinstance(graph, tgraph.GraphOp) else ""
                raise CleaveError(f"error: cleave-schedule: {x.name} is not supported by the scheduler yet{where}", op=x)
        before = op.clone()
        failure: CleaveError | None = None
        try:
            for p in self.passes():
                p.apply(ctx, op)
        except CleaveError as e:
            failure = e
        before = self._with_shared_inputs_split(ctx, op, before, failure)
        self._rounded_retry(ctx, op, before)
        units = select_kept(rank_candidates(op), self.keep, lambda g: form(op, g), kernel_key(op))
        kept_kernels = {k for _, ks, _ in units for k in ks}
        kept_graphs = {_ref(k, "cleave.schedule_of") for k in op.body.block.ops if isinstance(k, itgraph.KernelOp) and k.sym_name.data in kept_kernels}
        for x in list(op.body.block.ops):
            if isinstance(x, itgraph.KernelOp) and x.sym_name.data not in kept_kernels:
                Rewriter.erase_op(x)
            elif (
                isinstance(x, tgraph.GraphOp)
                and "cleave.candidate_of" in x.attributes
                and x.sym_name.data not in kept_graphs
            ):
                Rewriter.erase_op(x)
        for rank, (us, ks, g) in enumerate(units):
            print(f"cleave-pipeline: #{rank + 1} @{g}: kernels {', '.join('@' + k for k in ks)}, estimated {us:.1f} us", file=sys.stderr)


SPLIT_MARGIN = 2.0
"""How much faster by estimate a split graph's best candidate must be where it has as many kernels as the
unsplit graph's (the estimate alone then decides; a margin keeps cost-model error from deciding)."""


def _split_wins(unsplit: tuple, split: tuple) -> bool:
    """Whether the split graph's best candidate (us, kernels, head) replaces the unsplit graph's: fewer kernels
    and a lower estimate, or as many kernels and an estimate `SPLIT_MARGIN` times lower (outputs `x @ w` and
    `2 x` in one kernel: the unsplit kernel's tiles span whole rows, estimated 23 us, the split's 5)."""
    (us, kernels, _), (split_us, split_kernels, _) = unsplit, split
    if len(split_kernels) < len(kernels):
        return split_us < us
    return len(split_kernels) == len(kernels) and split_us * SPLIT_MARGIN <= us


def _replace_contents(op: ModuleOp, other: ModuleOp) -> None:
    """`op`'s operations become `other`'s (moved)."""
    for x in list(op.body.block.ops):
        op.body.block.erase_op(x, safe_erase=False)
    for x in list(other.body.block.ops):
        x.detach()
        op.body.block.add_op(x)
