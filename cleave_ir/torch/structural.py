"""Which transposes, slices and concats a PyTorch region keeps (the partition's structural rules).

A region keeps its structural ops only where `cleave-fold-structural` moves them all to its boundary
without splitting a matmul (`folded`); a concat that would split one cuts the region before the matmul's
operand (`matmul_operands_after_joins`); a transpose or slice of a value PyTorch computes, or at a region's
root, stays a PyTorch view (`VIEW_OF_PYTORCH`, `VIEW_OF_REGION`, `view_tail`). A split's pieces are views
of its input (`users`, `sources` see through it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from torch import fx

from cleave_ir.dialects import tgraph
from cleave_ir.torch.aten import SPLITS, Unsupported, op_name

if TYPE_CHECKING:
    from cleave_ir.torch.partition import Cost, Region

VIEW_OF_PYTORCH = "a transpose or slice of a value PyTorch computes: a view there, which the region reads in place"
VIEW_OF_REGION = "a transpose or slice of a region's result: a view there, of the layout its kernel writes (`stitch.bind`)"
SPLIT_MATMUL_CUT = "a matmul's operand made with a concat: joined, the concat would split the matmul (`folded`)"
IDENTITIES = ("aten.clone", "aten.contiguous", "aten.alias", "aten.detach")
JOINS = ("aten.cat", "aten.concat", "aten.stack")
"""aten ops that join tensors (copies in PyTorch; parts of a kernel's inputs or outputs in a region)."""


def users(n: fx.Node) -> list[fx.Node]:
    """`n`'s users, a split's pieces (`getitem`) in place of the split (which only makes views)."""
    return [p for u in n.users for p in (u.users if op_name(u) in SPLITS else [u])]


def sources(n: fx.Node) -> list[fx.Node]:
    """The nodes `n` reads, a split's input in place of the split its piece comes from."""
    return [s for a in n.all_input_nodes for s in (a.all_input_nodes if op_name(a) in SPLITS else [a])]


class StructuralRefused(Unsupported):
    """The region's transposes, slices or concats do not all leave it (`cleave-fold-structural`), or
    leave it with more matmuls or ops than a region holds (`splits_matmul`): the region is cut before the
    matmul, else they stay in PyTorch (`partition`)."""

    def __init__(self, message: str, splits_matmul: bool = False) -> None:
        super().__init__(message)
        self.splits_matmul = splits_matmul


def folded(graph: tgraph.GraphOp, max_ops: int) -> tgraph.GraphOp:
    """`graph` with its structural ops moved to its boundary (`cleave.boundary`); StructuralRefused
    where they do not all go, or where moving them adds matmuls (a rotary embedding's concat sunk
    through attention splits its score matmul in two) or more than doubles the region's op budget."""
    from cleave_ir.passes.fold_structural import fold_structural

    def count(g: tgraph.GraphOp) -> tuple[int, int]:
        ops = [op for op in g.block.ops if not isinstance(op, (tgraph.OutputOp, tgraph.ReshapeOp, tgraph.StructuralOp))]
        return len(ops), sum(isinstance(op, tgraph.MatmulOp) for op in ops)

    trial = graph.clone()
    # joins=False: a concat a matmul contracts is PyTorch's copy before the region (`SPLIT_MATMUL_CUT`), as
    # `cleave compile` keeps it a join its `run` copies (`#cleave.join`)
    if not fold_structural(trial, joins=False):
        left = next((op.name for op in trial.block.ops if isinstance(op, tgraph.StructuralOp)), None)
        raise StructuralRefused(f"cleave-fold-structural cannot move its {left or 'transposes, slices and concats'} out of the region")
    trial.verify()
    (ops, mms), (_, before) = count(trial), count(graph)
    if mms > before:
        raise StructuralRefused(f"its slices and concats, moved out, split its {before} matmuls into {mms}", splits_matmul=True)
    if ops > 2 * max_ops:  # each part computes its share of the ops: twice the budget bounds the search
        raise StructuralRefused(f"its slices and concats, moved out, leave {ops} tgraph ops (more than {2 * max_ops})")
    return trial


def is_view(n: fx.Node, reasons: dict[fx.Node, Any]) -> bool:
    """Whether `n` is supported (`reasons[n]` a Cost) and only moves elements in place (a transpose,
    slice, select or split's piece)."""
    return getattr(reasons.get(n), "structural", False) and op_name(n) not in JOINS


def view_tail(region: Region, reasons: dict[fx.Node, Any]) -> list[fx.Node]:
    """The region's root when it is a view, with the copies (`contiguous`, `clone`) after it; else []."""
    chain: list[fx.Node] = []
    n: Any = region.root
    while isinstance(n, fx.Node) and n in region.nodes:
        chain.append(n)
        if is_view(n, reasons):
            return chain
        if op_name(n) not in IDENTITIES or not n.args:
            return []
        n = n.args[0]
    return []


def matmul_operands_after_joins(region: Region, cost: dict[fx.Node, Cost]) -> list[fx.Node]:
    """The nodes of `region` downstream of one of its concats, before any matmul, that feed a matmul of it
    (directly or through views and reshapes): where to cut so that the concat's region holds no matmul.
    (Nodes without a cost, a grouped attention's repeat of K and V, are views it takes in.)"""
    inside = set(region.nodes)

    def matmuls(n: fx.Node) -> int:
        return cost[n].matmuls if n in cost else 0

    def ops(n: fx.Node) -> int:
        return cost[n].ops if n in cost else 0

    after: set[fx.Node] = set()
    for n in region.nodes:  # (in graph order)
        if (op_name(n) in JOINS or any(s in after for s in sources(n))) and not matmuls(n):
            after.add(n)

    def feeds_matmul(n: fx.Node) -> bool:
        return any(u in inside and (matmuls(u) or (not ops(u) and feeds_matmul(u))) for u in users(n))

    return [n for n in region.nodes if n in after and ops(n) and feeds_matmul(n)]
