"""`cleave-emulate-exp2`: part of a FlashAttention loop's exp2 moves from the MUFU to the FMA pipes
(run by `cleave-lower-tilelang` after `cleave-overlap-gemms`).

The softmax of a score tile S (an MMA accumulator, [rows, keys] with 64+ of each) computes
`exp2(s * c - m)` once per element. The MUFU issues 16 exp2 a clock per SM, a fourth of the tensor
cores' pace at head dim 64 (bench/results/fa_rows_2026-12-06s42_H200.md: the exp2 and the GEMMs add
up to the kernel's time). FlashAttention-4 computes some of them as a cubic on the FMA pipes instead.
Here `math.exp2` of such a loop becomes `tilelang.exp2_split` over the loop's key variable: one block
of 8 keys in `every` on the FMA pipes, the rest on the MUFU (an accumulator's 8-column blocks lie in
one thread's registers, so the choice is per register, not per thread).

The FMA form is within 1.4e-4 of 2^x (float32), under the half ulp of the f16 P it becomes; it
takes 2^-126 for 2^x below that (a masked -inf score included) where the MUFU takes 0.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import math
from xdsl.dialects.builtin import Float32Type, ModuleOp
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern, op_type_rewrite_pattern

from cleave_ir.diagnostics import CleaveError
from cleave_ir.dialects import tilelang as tl
from cleave_ir.passes.options import CleavePass
from cleave_ir.shapes import symbol

MIN_ROWS, MIN_KEYS = 128, 64  # the score tiles measured: 128 query rows on two warpgroups, 64+ keys
MAX_HEAD_DIM = 96
"""Largest contracted dim of Q K^T (the head dim) rewritten. The MUFU's share of the work falls as the head
dim grows (the exp2 per tensor-core FLOP): on the H100 (bench/results/exp2_fma_2026-12-07s45_H100.md) one block
of 8 keys in 8 on the FMA pipes took 3-8% off at head dims 64 and 96, 2% at 80 (within noise), and cost
0.6% at 112 and 7% at 128."""
EXP2_ON_FMA_EVERY = 8
"""The lowering's default `every` (0: every exp2 on the MUFU). 8 measured fastest: 4 and 2 were slower than
all-MUFU at every head dim tried (the FMA form's dozen instructions then cost more issue slots than the
MUFU saves)."""


def score_tile_loop(op: math.Exp2Op) -> tl.ParallelOp | None:
    """The T.Parallel loop over a score tile whose element `op` computes and stores: a [128+, 64+] tile
    that an asynchronous gemm of a pipelined loop of two or more gemms (FlashAttention-3's overlapped
    form, `cleave-overlap-gemms`) accumulates over a contracted dim of at most `MAX_HEAD_DIM`."""
    loop = op.parent_op()
    if not isinstance(loop, tl.ParallelOp) or len(loop.var_names) != 2 or not isinstance(op.result.type, Float32Type):
        return None
    extents = loop.extent_exprs
    if not all(e.is_Integer for e in extents) or int(extents[0]) < MIN_ROWS or int(extents[1]) < MIN_KEYS:
        return None
    index = tuple(symbol(v) for v in loop.var_names)
    stores = [u.operation for u in op.result.uses if isinstance(u.operation, tl.StoreOp)]
    tiles = {s.buffer for s in stores if tuple(s.index_exprs) == index and tl.buffer_type(s.buffer).shape == tuple(extents)}
    pipelined = loop.parent_op()
    while pipelined is not None and not isinstance(pipelined, tl.PipelinedOp):
        pipelined = pipelined.parent_op()
    if pipelined is None:
        return None
    gemms = [g for g in pipelined.walk() if isinstance(g, tl.GemmOp)]
    scores = [g for g in gemms if g.c in tiles and g.is_async is not None and _contracted(g) <= MAX_HEAD_DIM]
    return loop if len(gemms) >= 2 and scores else None


def _contracted(gemm: tl.GemmOp) -> float:
    a = tl.buffer_type(gemm.a).shape
    k = a[0] if gemm.transpose_a is not None else a[1]
    return int(k) if k.is_Integer else float("inf")


@dataclass
class _SplitExp2(RewritePattern):
    every: int

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: math.Exp2Op, rewriter: PatternRewriter) -> None:
        loop = score_tile_loop(op)
        if loop is None:
            return
        rewriter.replace(op, tl.Exp2SplitOp(op.operand, loop.var_names[-1], self.every))


def emulate_exp2(kernel: tl.KernelOp, every: int) -> None:
    """Rewrite `kernel`'s score-tile exp2 in place (`every` 0: leave it)."""
    if every:
        PatternRewriteWalker(_SplitExp2(every), apply_recursively=False).rewrite_region(kernel.body)


@dataclass(frozen=True)
class EmulateExp2Pass(CleavePass):
    """Every tilelang kernel's FlashAttention score tiles take one block of 8 keys in `every` of their
    exp2 on the FMA pipes."""

    name = "cleave-emulate-exp2"

    every: int = EXP2_ON_FMA_EVERY

    def check_options(self) -> None:
        if self.every < 1:
            raise CleaveError("error: cleave-emulate-exp2: every must be at least 1")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in [k for k in op.walk() if isinstance(k, tl.KernelOp)]:
            emulate_exp2(kernel, self.every)
