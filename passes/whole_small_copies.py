"""`cleave-whole-small-copies`: a pipelined loop's copy too small for cp.async is done once, whole,
before the loop.

TileLang spreads a thread copy over the block's threads; where a step's tile gives each thread fewer
than `ASYNC_COPY_MIN_BYTES` (a norm weight's [128] halves a K step, 2 bytes on each of 128 threads),
it cannot issue `cp.async` and loads synchronously: every iteration each thread waits for its load
behind everything the pipeline has in flight. The residual RMSNorm projection's one kernel (T=8,
[8, 4096] @ [4096, 6144], 4 stages) loaded its g tile so and ran 73.6 us on the H200, against 20.7 us
for the same work in two kernels whose loop has only cp.async copies
(bench/results/deep_stages_2026-12-04s22_H200.md).

A loop

    for r in T.Pipelined(n):   T.copy(g[0, a*r + b : a*r + b + a], g_t)   ...g_t[i]...

becomes

    T.copy(g[0, b : b + a*n], g_w)   for r in T.Pipelined(n):   ...g_w[a*r + i]...

where the tile steps by its own extent `a` along one dim (the steps' tiles cover one contiguous
range), its only other users read single elements (`tilelang.load`), the loop's trip count is a
constant, and the whole range fits: at most `WHOLE_COPY_MAX_BYTES`, and the kernel's shared memory
(`shared_bytes_bound`, less the tile's pipelined buffers) stays within the H200's.
Only thread copies qualify (a kernel without warp specialization, or a `no_tma` copy): a TMA bulk copy
of a small tile is asynchronous already.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy
from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.rewriter import InsertPoint, Rewriter

from cleave_ir.dialects import tilelang as tl
from cleave_ir.passes.cost_model import SMEM_BYTES
from cleave_ir.passes.options import CleavePass
from cleave_ir.shapes import symbol

ASYNC_COPY_MIN_BYTES = 4
"""The smallest copy a thread can issue as `cp.async` (4, 8 or 16 bytes)."""

WHOLE_COPY_MAX_BYTES = 16 * 1024
"""The largest whole range copied before a loop (a 4096-wide f16 weight row is 8 KiB)."""


@dataclass(frozen=True)
class _Plan:
    copy: tl.CopyOp
    src_dim: int  # the global dim the tile steps along
    dst_dim: int  # that dim in the shared buffer
    step: sympy.Expr  # the tile's extent there, and its offset's stride per iteration
    start: sympy.Expr  # the offset at iteration 0


def thread_copied(kernel: tl.KernelOp, copy: tl.CopyOp) -> bool:
    """Whether TileLang issues `copy` from the threads (cp.async or plain loads), not by TMA."""
    return tl.NO_WARP_SPECIALIZATION in kernel.attributes or copy.no_tma is not None


def too_small_for_async(copy: tl.CopyOp, threads: int) -> bool:
    """Whether `copy`'s tile, spread over `threads`, gives a thread under ASYNC_COPY_MIN_BYTES."""
    return tl.buffer_type(copy.dst).nbytes < ASYNC_COPY_MIN_BYTES * threads


def _readers_are_loads(loop: tl.PipelinedOp, copy: tl.CopyOp) -> bool:
    """Whether every use of `copy`'s destination but the copy is a `tilelang.load` inside `loop`."""
    return all(
        u.operation is copy or (isinstance(u.operation, tl.LoadOp) and loop.is_ancestor(u.operation))
        for u in copy.dst.uses
    )


def shared_bytes_bound(kernel: tl.KernelOp) -> int:
    """An upper bound of `kernel`'s shared memory: every shared buffer, those copied into inside a
    pipelined loop once per stage (TileLang may pack buffers whose lifetimes do not overlap into
    fewer bytes), and at least placement's `cleave.smem_bytes` (which counts padded rows unpadded)."""
    stages = {
        op.dst: loop.num_stages.value.data
        for loop in kernel.walk() if isinstance(loop, tl.PipelinedOp)
        for op in loop.body.block.ops if isinstance(op, tl.CopyOp)
    }
    total = sum(
        tl.buffer_type(op.result).nbytes * stages.get(op.result, 1)
        for op in kernel.body.block.ops if isinstance(op, tl.AllocSharedOp)
    )
    smem = kernel.attributes.get("cleave.smem_bytes")
    return max(total, smem.value.data if isinstance(smem, IntegerAttr) else 0)  # type: ignore[attr-defined]


def plan(kernel: tl.KernelOp, loop: tl.PipelinedOp, copy: tl.CopyOp) -> _Plan | None:
    """How to copy `copy`'s tiles whole before `loop`, or None where the rewrite does not apply."""
    n = sympy.sympify(loop.extent_expr)
    dst = tl.buffer_type(copy.dst)
    if (
        not n.is_Integer or int(n) < 2 or copy.src_region is None or copy.dst_region is not None
        or tl.buffer_type(copy.src).scope_name != tl.Scope.GLOBAL or dst.scope_name != tl.Scope.SHARED
        or not thread_copied(kernel, copy) or not too_small_for_async(copy, kernel.threads.value.data)
        or not _readers_are_loads(loop, copy)
    ):
        return None
    var = symbol(loop.var_name)
    offsets = [sympy.expand(sympy.sympify(e)) for e in copy.src_region.offset_exprs]
    sizes = [sympy.sympify(e) for e in copy.src_region.size_exprs]
    moving = [d for d, e in enumerate(offsets) if var in e.free_symbols]
    if len(moving) != 1:
        return None
    d = moving[0]
    step = sympy.expand(offsets[d] - offsets[d].subs(var, 0))
    if step != var * sizes[d] or sizes[d] == 1:  # tiles side by side, one contiguous range
        return None
    kept = [k for k, s in enumerate(sizes) if s != 1]  # the buffer's dims: the region's, squeezed
    if len(kept) != dst.rank or tl.buffer_type(copy.dst).shape[kept.index(d)] != sizes[d]:
        return None
    whole = dst.nbytes * int(n)
    used = shared_bytes_bound(kernel)
    if whole > WHOLE_COPY_MAX_BYTES or used - loop.num_stages.value.data * dst.nbytes + whole > SMEM_BYTES:
        return None
    return _Plan(copy, d, kept.index(d), sizes[d], offsets[d].subs(var, 0))


def copy_whole(loop: tl.PipelinedOp, p: _Plan) -> None:
    """Rewrite `loop` by plan `p`, as the module docstring shows."""
    copy, n, var = p.copy, sympy.sympify(loop.extent_expr), symbol(loop.var_name)
    t = tl.buffer_type(copy.dst)
    shape = list(t.shape)
    shape[p.dst_dim] = p.step * n
    whole = tl.AllocSharedOp(tl.BufferType(shape, t.element_type, tl.Scope.SHARED))
    whole.result.name_hint = copy.dst.name_hint
    old = copy.dst.owner
    assert isinstance(old, tl.AllocSharedOp) and copy.src_region is not None
    region = copy.src_region
    offsets, sizes = list(region.offset_exprs), list(region.size_exprs)
    offsets[p.src_dim], sizes[p.src_dim] = p.start, p.step * n
    for use in list(copy.dst.uses):
        load = use.operation
        if isinstance(load, tl.LoadOp):
            idx = list(load.index_exprs)
            idx[p.dst_dim] = sympy.expand(idx[p.dst_dim] + p.step * var)
            Rewriter.replace_op(load, tl.LoadOp(whole.result, idx))
    Rewriter.erase_op(copy)
    Rewriter.replace_op(old, whole)
    Rewriter.insert_op(tl.CopyOp(copy.src, whole.result, tl.RegionAttr(offsets, sizes), no_tma=copy.no_tma is not None), InsertPoint.before(loop))


def copy_small_tiles_whole(kernel: tl.KernelOp) -> int:
    """Apply the rewrite to every qualifying copy of `kernel`'s pipelined loops; how many there were.
    The kernel's `cleave.smem_bytes` counts the whole ranges in place of the tiles' stage buffers."""
    done = 0
    for loop in [op for op in kernel.walk() if isinstance(op, tl.PipelinedOp)]:
        for copy in [op for op in loop.body.block.ops if isinstance(op, tl.CopyOp)]:
            p = plan(kernel, loop, copy)
            if p is None:
                continue
            tile = tl.buffer_type(copy.dst).nbytes
            copy_whole(loop, p)
            smem = kernel.attributes.get("cleave.smem_bytes")
            if isinstance(smem, IntegerAttr):
                stages, trips = loop.num_stages.value.data, int(sympy.sympify(loop.extent_expr))
                kernel.attributes["cleave.smem_bytes"] = IntegerAttr(smem.value.data + tile * (trips - stages), smem.type)
            done += 1
    return done


@dataclass(frozen=True)
class WholeSmallCopiesPass(CleavePass):
    """Every tilelang kernel's per-step copies too small for cp.async are done once before their loop."""

    name = "cleave-whole-small-copies"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in [k for k in op.walk() if isinstance(k, tl.KernelOp)]:
            copy_small_tiles_whole(kernel)

