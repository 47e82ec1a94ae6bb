"""An analytical cost model for itgraph kernels on the H200 (Welder/Roller style, paper appendix A).

Per threadblock: bytes moved from global memory (every load and store, times the sequential trips
around it) and tensor-core flops; a block takes the longer of the two at its share of the GPU
(4.3 TB/s and 790 TFLOP/s over 132 SMs) plus a fixed cost per sequential iteration, and blocks run
in waves of 132. Loaded tiles must fit in shared memory (227 KiB) and computed fp32 tiles in the
registers (64K x 32 bit per SM). Buffers are not reused in this estimate, so footprints are upper
bounds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.dialects.builtin import BFloat16Type, Float16Type
from xdsl.ir import Operation

from cleave_ir.dialects import itgraph, tgraph
from cleave_ir.shapes import evaluate

SMS = 132
HBM_BYTES_PER_S = 4.3e12
TENSOR_FLOPS = 790e12
SMEM_BYTES = 227 * 1024
REGISTER_BYTES = 64 * 1024 * 4
# per block and sequential iteration: barrier and pipeline hand-off (measured on the H200 with
# bench/tile_sweep.py: 4096^3 matmul, 128x128 tiles, K tile 32 vs 64 at 3 stages: ~0.2 us per iteration)
ITERATION_S = 0.2e-6


@dataclass
class Estimate:
    microseconds: float
    bytes: int
    flops: int
    grid: int
    smem_bytes: int
    register_bytes: int
    fits: bool
    reason: str = ""

    @property
    def footprint_bytes(self) -> int:
        return self.smem_bytes + self.register_bytes


def _numel(value) -> int:
    return math.prod(evaluate(d, {}) for d in tgraph.tensor_type(value).shape)


def _elt_bytes(value) -> int:
    return 2 if isinstance(tgraph.tensor_type(value).element_type, (Float16Type, BFloat16Type)) else 4


def tile_bytes(value) -> int:
    """Bytes of a (concrete) tile at its element type: 2 for f16/bf16, 4 otherwise."""
    return _numel(value) * _elt_bytes(value)


def _trips(op: Operation) -> int:
    n = 1
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, itgraph.ParallelOp):
        if isinstance(parent, itgraph.SequentialOp):
            n *= evaluate(parent.extent_dim, {})
        parent = parent.parent_op()
    return n


def peak_live_bytes(par: itgraph.ParallelOp) -> int:
    """The most fp32 bytes of computed tiles alive at once in one block (registers, before reuse).

    A tile lives from its op to its last use; one used inside a sequential loop it was not defined
    in lives to the loop's end. Loads (shared memory) and the loop's accumulators are not counted here.
    The compiler keeps a T.Parallel tile in registers and reuses dead ones, so the peak, not the sum,
    is what has to fit (bench/tile_sweep.py: 128-row FlashAttention tiles fit and run faster).
    """
    order = {op: i for i, op in enumerate(par.walk())}
    end = {op: max((order[o] for o in op.walk()), default=order[op]) for op in order if isinstance(op, itgraph.SequentialOp)}
    events: list[tuple[int, int]] = []
    for op, i in order.items():
        if isinstance(op, (itgraph.LoadOp, itgraph.ParallelOp, itgraph.SequentialOp, itgraph.KernelOp)) or not op.results:
            continue
        last = i
        for use in op.results[0].uses:
            user, j = use.operation, order.get(use.operation, i)
            loop = user.parent_op()
            while isinstance(loop, itgraph.SequentialOp) and not loop.is_ancestor(op):
                j, loop = max(j, end[loop]), loop.parent_op()
            last = max(last, j)
        size = _numel(op.results[0]) * 4
        events += [(i, size), (last + 1, -size)]
    live = peak = 0
    for _, delta in sorted(events, key=lambda e: (e[0], e[1])):
        live += delta
        peak = max(peak, live)
    return peak


def estimate(kernel: itgraph.KernelOp) -> Estimate:
    """Estimated time and footprint of `kernel` (concrete shapes)."""
    par = kernel.body.block.first_op
    assert isinstance(par, itgraph.ParallelOp)
    grid = math.prod(evaluate(e, {}) for e in par.extent_dims)
    moved = flops = smem = accumulators = 0
    iterations = 0
    for op in par.walk():
        if isinstance(op, itgraph.LoadOp):
            moved += tile_bytes(op.result) * _trips(op)
            smem += tile_bytes(op.result)
        elif isinstance(op, itgraph.StoreOp):
            moved += tile_bytes(op.value) * _trips(op)
        elif isinstance(op, tgraph.MatmulOp):
            k = evaluate(tgraph.tensor_type(op.lhs).shape[-1], {})
            flops += 2 * _numel(op.result) * k * _trips(op)
        elif isinstance(op, (itgraph.SequentialOp,)):
            accumulators += sum(_numel(r) * 4 for r in op.results)
            iterations += _trips(op) * evaluate(op.extent_dim, {})
    regs = accumulators + peak_live_bytes(par)
    block_s = max(moved / (HBM_BYTES_PER_S / SMS), flops / (TENSOR_FLOPS / SMS)) + iterations * ITERATION_S
    waves = math.ceil(grid / SMS)
    us = waves * block_s * 1e6
    reason = ""
    if smem > SMEM_BYTES:
        reason = f"loaded tiles need {smem // 1024} KiB of shared memory (limit {SMEM_BYTES // 1024} KiB)"
    elif regs > REGISTER_BYTES:
        reason = f"computed tiles need {regs // 1024} KiB of registers (limit {REGISTER_BYTES // 1024} KiB per SM)"
    return Estimate(us, moved * grid, flops * grid, grid, smem, regs, not reason, reason)
