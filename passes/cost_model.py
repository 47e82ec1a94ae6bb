"""An analytical cost model for itgraph kernels on the H200 (Welder/Roller style, paper appendix A).

Per threadblock: bytes moved from global memory (every load and store, times the sequential trips
around it) and tensor-core flops; a block takes the longer of the two at its share of the GPU
(4.3 TB/s and 790 TFLOP/s over 132 SMs) plus a fixed cost per sequential iteration, and blocks run
in waves of 132. Loaded tiles must fit in shared memory (227 KiB); the computed fp32 tiles live at
the same time (a tile lives from its op to its last use, a whole loop if used inside one; the fp16
copy of a computed matmul operand counted too) must fit in the registers of the block's threads (one
warpgroup of 128 per 64 rows of the largest matmul, at most 256), at most REGS_PER_THREAD each.
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
# tile registers per thread, below the 255 a thread can have: the rest holds addresses, indices and
# the softmax statistics (bench/tile_sweep.py: FlashAttention 128x64 tiles on 256 threads, ~176 per
# thread by this count, run 745 us against 907 us for the 64-row tiles)
REGS_PER_THREAD = 200


def threads_for(rows: int) -> int:
    """Threads of a block whose largest matmul tile has `rows` rows: a warpgroup per 64, 128..256."""
    return min(256, 128 * max(1, math.ceil(rows / 64)))


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


def _is_view_of_load(value) -> bool:
    owner = value.owner
    while isinstance(owner, (tgraph.ReshapeOp, tgraph.SplitOp)):
        owner = owner.operands[0].owner
    return isinstance(owner, itgraph.LoadOp)


def live_register_bytes(par: itgraph.ParallelOp) -> int:
    """The most bytes of computed fp32 tiles alive at once in the block (see the module docstring)."""
    order: dict[Operation, int] = {}
    end: dict[Operation, int] = {}

    def number(op: Operation) -> None:
        order[op] = len(order)
        for region in op.regions:
            for inner in region.block.ops:
                number(inner)
        end[op] = len(order) - 1

    for op in par.body.block.ops:
        number(op)
    events: list[tuple[int, int]] = []  # (position, +bytes / -bytes)
    for op in order:
        for value in op.results:
            if isinstance(op, (itgraph.LoadOp, tgraph.ReshapeOp, tgraph.SplitOp)) and _is_view_of_load(value):
                continue  # shared memory, or a view of a tile already counted
            if isinstance(op, (tgraph.ReshapeOp, tgraph.SplitOp)):
                continue
            last = order[op]
            for use in value.uses:
                user = use.operation
                while user.parent_block() is not op.parent_block() and user.parent_op() is not None:
                    user = user.parent_op()  # type: ignore[assignment]
                last = max(last, end.get(user, order[op]))
            size = _numel(value) * 4
            events += [(order[op], size), (last + 1, -size)]
        if isinstance(op, tgraph.MatmulOp) and not _is_view_of_load(op.lhs):
            size = _numel(op.lhs) * 2  # the fp16 copy of a computed A operand, alive at the matmul
            events += [(order[op], size), (order[op] + 1, -size)]
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
    moved = flops = smem = 0
    rows = 1
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
            rows = max(rows, evaluate(tgraph.tensor_type(op.result).shape[-2], {}))
        elif isinstance(op, (itgraph.SequentialOp,)):
            iterations += _trips(op) * evaluate(op.extent_dim, {})
    regs = live_register_bytes(par)
    reg_limit = min(REGISTER_BYTES, threads_for(rows) * REGS_PER_THREAD * 4)
    block_s = max(moved / (HBM_BYTES_PER_S / SMS), flops / (TENSOR_FLOPS / SMS)) + iterations * ITERATION_S
    waves = math.ceil(grid / SMS)
    us = waves * block_s * 1e6
    reason = ""
    if smem > SMEM_BYTES:
        reason = f"loaded tiles need {smem // 1024} KiB of shared memory (limit {SMEM_BYTES // 1024} KiB)"
    elif regs > reg_limit:
        reason = f"computed tiles need {regs // 1024} KiB of registers (limit {reg_limit // 1024} KiB for {threads_for(rows)} threads)"
    return Estimate(us, moved * grid, flops * grid, grid, smem, regs, not reason, reason)
