"""`cleave-overlap-gemms`: a pipelined loop's second gemm runs one iteration late, on the tensor cores
while the loop's element-wise work runs (FlashAttention-3's intra-warpgroup overlap, on TileLang's
asynchronous `T.wgmma_gemm` and `T.wait_wgmma`).

A loop whose body is

    [loads]  S = A1 @ B1        (S cleared in the loop: this iteration's)
    [work]   ... P = f(S) ...   (element-wise and row ops; some rescale the carried O)
    B2 <- tile j of a global ;  O += P @ B2      (the last op: O carried across iterations)

becomes

    P = 0                                     (before the loop)
    [loads]  S = A1 @ B1            async     (S's clear folded in: clear_accum)
    B2 <- tile (j - 1) mod n ;  O += P @ B2  async   (the previous iteration's P)
    wait(1), retiring B1's tile              S is ready; P @ B2 still runs
    [work not touching P, B2 or O]           overlaps P @ B2
    wait(0), retiring B2
    [work touching P or O]                   O's rescale, P's new value
    ...after the loop:  B2' <- tile n - 1 ;  O += P @ B2'

At j = 0 the late gemm adds 0 @ (the last tile): nothing. The work is split only where every
dependence between its ops is kept. Both gemms must have TileLang's WGMMA form (64+ rows over whole
warpgroups, FullRow, f16/bf16 operands), else `T.wgmma_gemm` does not compile. The retired tiles are
read once after their wait in the emitted code, so TileLang's warp-specialized producer does not
refill them while a gemm still reads them.

Measured on the H200 (bench/results/fa_overlap_2026-12-02_H200.json, text edits of our emitted
kernel): attention B1 H32 S4096 D128 499.8 -> 466.3 us, S8192 D64 1381.8 -> 1279.2 us, same error.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy
from xdsl.context import Context
from xdsl.dialects.builtin import BFloat16Type, Float16Type, IntegerAttr, ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from cleave_ir.dialects import tilelang as tl
from cleave_ir.passes.cost_model import SMEM_BYTES
from cleave_ir.passes.options import CleavePass
from cleave_ir.shapes import symbol


# the widest row of a tile read after its wait: TileLang 0.1.15's StorageRewrite fails on that read of
# a [128, 256] K tile ("Can't fetch the lanes of a scalable vector"; GQA decode at head dim 256,
# bench/probes/unseen/gqa_decode_d256_bf16.mlir), and lowers the same kernel at head dim 128
MAX_RETIRED_ROW = 128


def wgmma_form(gemm: tl.GemmOp, threads: int) -> bool:
    """Whether TileLang lowers `gemm` to Hopper's WGMMA with every warp on its own rows (FullRow):
    then `T.wgmma_gemm` compiles."""
    ta, tb, tc = (tl.buffer_type(v) for v in (gemm.a, gemm.b, gemm.c))
    if not all(d.is_Integer for d in (*ta.shape, *tc.shape)):
        return False
    (m, k), n = (int(d) for d in ta.shape), int(tc.shape[1])
    warps = threads // 32
    halves = (Float16Type, BFloat16Type)
    return (
        gemm.warp_policy == tl.WarpPolicy.FULL_ROW
        and isinstance(ta.element_type, halves)
        and isinstance(tb.element_type, halves)
        and warps % 4 == 0
        and m >= 64
        and m % (16 * warps) == 0
        and n % 8 == 0
        and n <= 256
        and k % 16 == 0
        and (gemm.transpose_b is not None or n % 16 == 0)
    )


def _fully_written(op: Operation, buf: SSAValue) -> bool:
    """Whether `op` writes every element of `buf` (a whole-buffer copy, clear or fill, or a parallel
    loop over its shape storing each element)."""
    if isinstance(op, tl.CopyOp):
        return op.dst == buf and op.dst_region is None
    if isinstance(op, (tl.ClearOp, tl.FillOp)):
        return op.buffer == buf
    if isinstance(op, tl.ParallelOp):
        shape = tl.buffer_type(buf).shape
        return tuple(op.extent_exprs) == tuple(shape) and any(
            isinstance(s, tl.StoreOp) and s.buffer == buf and s.accumulate is None
            and tuple(s.index_exprs) == tuple(symbol(v) for v in op.var_names)
            for s in op.body.block.ops
        )
    return False


@dataclass
class _Plan:
    first: tl.GemmOp
    late: tl.GemmOp
    load: tl.CopyOp
    early_work: list[Operation]
    late_work: list[Operation]
    first_tiles: list[SSAValue]


MIN_TRIPS = 8
"""Fewest iterations a loop is rewritten at. The rewrite loads one tile more per block (the wrapped
tile at j = 0) and the last tile outside TileLang's pipeline: a few-iteration loop (a decode split
of 2 to 4 KV tiles, bound by memory) pays that and gains little overlap. Measured on the H200: the
gqa_decode splits slowed by 10-40% (B1 L4096 10.3 -> 14.2 us), the 32- and 16-iteration prefill
loops sped up (bench/results/gpu_suite_2026-12-02s_H200.md). A loop whose trip count is not a
constant (a dynamic KV length) is not rewritten either, nor a causal loop that ends at the diagonal
(`bx + 1` iterations): rewritten, it measured slower on the H200, 99.8 -> 108.1 us at B1 H32 S2048
D128 and 331.3 -> 349.6 us at S4096 (bench/results/causal_attention_2026-12-02_H200.json)."""


def plan(loop: tl.PipelinedOp, threads: int) -> _Plan | None:
    """How `loop` is rewritten, or None where the rewrite does not apply, would change a result, or
    would not pay (fewer than MIN_TRIPS iterations)."""
    if not (loop.extent_expr.is_Integer and int(loop.extent_expr) >= MIN_TRIPS):
        return None
    body = list(loop.body.block.ops)
    gemms = [op for op in body if isinstance(op, tl.GemmOp)]
    if len(gemms) != 2 or body[-1] is not gemms[1] or any(g.is_async is not None for g in gemms):
        return None
    first, late = gemms
    if not (wgmma_form(first, threads) and wgmma_form(late, threads)):
        return None
    effects = {op: tl.buffer_effects(op) for op in body}
    touched = {op: effects[op][0] | effects[op][1] for op in body}
    i = body.index(first)
    pre, mid = body[:i], body[i + 1 : -1]
    p, b, o = late.a, late.b, late.c
    if late.clear is not None:  # O is carried: a clearing late gemm is not an accumulation
        return None
    if first.clear is None and not any(_fully_written(op, first.c) for op in pre):  # S is this iteration's
        return None
    if any(o in effects[op][1] and isinstance(op, (tl.ClearOp, tl.FillOp)) for op in body):  # O is carried
        return None
    loads = [op for op in mid if b in effects[op][1]]
    if len(loads) != 1 or not isinstance(loads[0], tl.CopyOp):
        return None
    load = loads[0]
    if load.src_region is None or load.dst_region is not None or tl.buffer_type(load.src).scope_name != tl.Scope.GLOBAL:
        return None
    if any(b in touched[op] for op in body if op not in (load, late)):  # the tile feeds the late gemm only
        return None
    if any({p, b, o} & touched[op] for op in (*pre, first)):  # what moves before the late gemm keeps off its buffers
        return None
    work = [op for op in mid if op is not load]
    if not any(_fully_written(op, p) for op in work):  # P is this iteration's: 0 stands in at j = 0
        return None
    late_work = [op for op in work if {p, o} & touched[op]]
    early_work = [op for op in work if op not in late_work]
    for n, x in enumerate(work):  # moving late work past early work keeps each dependence
        if x in late_work:
            rx, wx = effects[x]
            for y in work[n + 1 :]:
                if y in early_work and (wx & touched[y] or rx & effects[y][1]):
                    return None
    for value in (p, b):  # P and the tile are the loop's own: nothing outside reads them
        if any(not loop.is_ancestor(use.operation) for use in value.uses):
            return None
    loaded = {op.dst for op in body if isinstance(op, tl.CopyOp) and op.src_region is not None}
    first_tiles = [v for v in (first.a, first.b) if v in loaded and tl.buffer_type(v).scope_name == tl.Scope.SHARED]
    if any(not (w := tl.buffer_type(v).shape[-1]).is_Integer or int(w) > MAX_RETIRED_ROW for v in (*first_tiles, b)):
        return None
    return _Plan(first, late, load, early_work, late_work, first_tiles)


def _clear_before(gemm: tl.GemmOp) -> tl.ClearOp | None:
    """The `tilelang.clear` of the gemm's accumulator before it in its block, with nothing touching
    the accumulator in between (its clear can be the gemm's own)."""
    op = gemm.prev_op
    while op is not None:
        if isinstance(op, tl.ClearOp) and op.buffer == gemm.c:
            return op
        reads, writes = tl.buffer_effects(op)
        if gemm.c in reads | writes:
            return None
        op = op.prev_op
    return None


def _shifted(region: tl.RegionAttr, var: str, to: sympy.Expr) -> tl.RegionAttr:
    v = symbol(var)
    return tl.RegionAttr([sympy.sympify(e).subs(v, to) for e in region.offset_exprs], list(region.size_exprs))


def overlap_loop(loop: tl.PipelinedOp, pl: _Plan) -> None:
    """Rewrite `loop` in place by its plan, as the module docstring shows."""
    n, var = loop.extent_expr, loop.var_name
    p, b, o = pl.late.a, pl.late.b, pl.late.c
    Rewriter.insert_op(tl.ClearOp(p), InsertPoint.before(loop))
    # the last tile's product, after the loop, through a tile of its own (TileLang's pipeline owns `b`)
    last_tile = tl.AllocSharedOp(tl.buffer_type(b))
    last_tile.result.name_hint = f"{b.name_hint or 'tile'}_last"
    Rewriter.insert_op(last_tile, InsertPoint.after(b.owner))  # type: ignore[arg-type]
    assert pl.load.src_region is not None
    epilogue = [
        tl.CopyOp(pl.load.src, last_tile.result, _shifted(pl.load.src_region, var, n - 1)),
        tl.GemmOp(p, last_tile.result, o, pl.late.transpose_b is not None, pl.late.warp_policy, transpose_a=pl.late.transpose_a is not None),
    ]
    Rewriter.insert_op(epilogue, InsertPoint.after(loop))
    # the loop body: first gemm, late load and gemm (async), wait, early work, wait, late work
    block = loop.body.block
    # S's clear folded into its gemm (WGMMA's first step does not add S): measured 1411 -> 1276 us
    # at S8192 D64 against a separate T.clear (bench/results/fa_overlap_ab_2026-12-02_H200.json)
    cleared = _clear_before(pl.first)
    if cleared is not None:
        Rewriter.erase_op(cleared)
    first = tl.GemmOp(
        pl.first.a, pl.first.b, pl.first.c, pl.first.transpose_b is not None, pl.first.warp_policy,
        is_async=True, clear=cleared is not None or pl.first.clear is not None, transpose_a=pl.first.transpose_a is not None,
    )
    late = tl.GemmOp(p, b, o, pl.late.transpose_b is not None, pl.late.warp_policy, is_async=True, transpose_a=pl.late.transpose_a is not None)
    load = tl.CopyOp(pl.load.src, b, _shifted(pl.load.src_region, var, sympy.Mod(symbol(var) + n - 1, n)), no_tma=pl.load.no_tma is not None)
    for op in (pl.load, *pl.early_work, *pl.late_work):
        op.detach()
    Rewriter.replace_op(pl.first, first)
    Rewriter.erase_op(pl.late)
    tail = [load, late, tl.WaitGemmOp(1, pl.first_tiles), *pl.early_work, tl.WaitGemmOp(0, [b]), *pl.late_work]
    Rewriter.insert_op(tail, InsertPoint.after(first))
    assert block.last_op is tail[-1]


def overlap_kernel(kernel: tl.KernelOp) -> int:
    """Rewrite every pipelined loop of `kernel` that the overlap applies to; how many were.

    Kernels compiled without TileLang's warp specialization (`cleave.no_warp_specialization`) keep
    their loops: that pipeline was not measured with async gemms. A kernel whose shared memory
    (`cleave.smem_bytes`) leaves no room for the last tile's own buffer keeps them too.
    """
    if "cleave.no_warp_specialization" in kernel.attributes:
        return 0
    threads = kernel.threads.value.data
    smem = kernel.attributes.get("cleave.smem_bytes")
    used = smem.value.data if isinstance(smem, IntegerAttr) else 0
    done = 0
    for loop in [op for op in kernel.walk() if isinstance(op, tl.PipelinedOp)]:
        pl = plan(loop, threads)
        if pl is None or used + tl.buffer_type(pl.late.b).nbytes > SMEM_BYTES:
            continue
        overlap_loop(loop, pl)
        used += tl.buffer_type(pl.late.b).nbytes
        done += 1
    return done


@dataclass(frozen=True)
class OverlapGemmsPass(CleavePass):
    """Every tilelang kernel's two-gemm pipelined loops run their second gemm one iteration late."""

    name = "cleave-overlap-gemms"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in [k for k in op.walk() if isinstance(k, tl.KernelOp)]:
            overlap_kernel(kernel)
