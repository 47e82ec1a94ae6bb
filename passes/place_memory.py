"""`cleave-place-memory`: shared memory or registers for every tile, hoisting, threads and stages (paper §6.1).

Decisions, visible as attributes in the IR:
- `cleave.mem = #cleave<mem shared>` on loads (global -> shared copies feed the tensor cores), `fragment` on
  computed tiles (registers; matmul accumulators in fp32); a computed tile used as a matmul's right
  operand is placed in shared memory (T.gemm takes B from shared memory only); `global` on the
  weight of a one-row matmul (a decode projection): its GEMV reads it straight from global memory,
  K-contiguous rows of nn.Linear's [N, K] layout (`direct_gemv_split`) or N-contiguous columns of
  an [K, N] weight matrix (`direct_gemv_columns`);
- loads inside a sequential loop whose tmap does not depend on the loop variable are hoisted out of
  it (the Q tile of attention is loaded once per block, not once per KV tile); with
  `hoist-elementwise=true` so are the element-wise ops of values computed outside it (a rotary
  embedding of Q; off by default, see `hoist_invariant_ops`);
- in a sequential loop, a row reduction of a matmul's operand comes before that matmul and each
  load right before its first user (`order_loop_bodies`);
- ops before a sequential loop whose results only ops after it use (a GEMM epilogue's operand: a
  residual, silu(gate)) are moved after it; the shared tiles loaded after the last loop are not
  counted against its pipelining stages (they take the dead stages' bytes);
- on the kernel: `cleave.threads` (one warpgroup of 128 threads per 64 rows of the largest matmul
  tile, at most 256) and `cleave.stages` (pipelining of the sequential loop's loads: 3 stages when
  they fit and the loop has 3+ iterations and at most one matmul, 4 where the fourth costs no
  co-resident block and the loop has 4+ iterations, else 2 when the loaded tiles fit twice in
  shared memory; fewer where the rows of a few-row matmul, padded to a tensor-core tile
  (`lower_tilelang.row_padding`), fit beside fewer stages only),
  and `cleave.smem_bytes` after placement; `cleave.raster` names the parallel dim whose blocks launch
  next to each other (blockIdx.x) where that is not the grid's first: the dim along which blocks read
  the most bytes in common (attention's query blocks share their head's K and V; with the head dims
  first, the blocks running at once each read a different head's K and V, 128 MiB at B4 H32 S2048,
  more than the L2 holds),
A kernel whose shared tiles exceed the H200's 227 KiB is dropped with a warning naming it, or with
`strict=true` rejected with an error.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass

import sympy

from xdsl.context import Context
from xdsl.dialects.builtin import BFloat16Type, Float16Type, IntegerAttr, ModuleOp, StringAttr, i64
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import Rewriter

from cleave_ir.diagnostics import CleaveError
from cleave_ir.dialects import cleave
from cleave_ir.dialects.cleave import Memory, MemoryAttr
from cleave_ir.dialects import itgraph, tgraph
from cleave_ir.passes.cost_model import (
    SMEM_BYTES,
    SMS,
    TILE_BYTES_PER_THREAD,
    accumulator_bytes,
    block_trips,
    grid_blocks,
    layout_threads,
    longest_trips,
    loop_matmuls,
    peak_live_bytes,
    reduced_tiles,
    tile_bytes,
)
from cleave_ir.passes.options import CleavePass
from cleave_ir.shapes import evaluate, symbol


def hoist_invariant_ops(kernel: itgraph.KernelOp, elementwise: bool = False) -> int:
    """Move the ops of a sequential loop that do not depend on it before the loop: loads whose tile
    does not move with the loop's variable (attention's Q tile), and with `elementwise`, element-wise
    ops and views of values computed outside the loop (a rotary embedding of that Q tile), computed
    once, not once per iteration.

    `elementwise` is off by default: on the H200, a captured Llama-3 attention whose rotated Q tile
    was computed before the KV loop this way gave a relative error of 2.3e-2 under TileLang 0.1.15's
    (warp-specialized) pipeline, where the same kernel computing it in the loop was exact to 2.9e-4
    (bench/results/layers_2026-12-01f_H200.md); the lowering then turns warp specialization off for
    such a kernel, which is not yet verified on the GPU."""
    moved = 0
    for seq in [op for op in kernel.walk() if isinstance(op, itgraph.SequentialOp)]:
        var = symbol(seq.var_name)

        def invariant(op: Operation) -> bool:
            if isinstance(op, itgraph.LoadOp):
                return not any(var in off.free_symbols for off in op.tmap.offset_exprs)
            if elementwise and isinstance(op, (tgraph.ElementwiseOp, tgraph.ReshapeOp)):
                return not any(isinstance(v.owner, Operation) and seq.is_ancestor(v.owner) or v.owner is seq.body.block for v in op.operands)
            return False

        for op in list(seq.body.block.ops):
            if not invariant(op):
                continue
            op.detach()
            seq.parent_block().insert_op_before(op, seq)  # type: ignore[union-attr]
            moved += 1
    return moved


def sink_epilogue_ops(kernel: itgraph.KernelOp) -> int:
    """Move the ops before a sequential loop whose results only ops after it use to right after it.

    A GEMM's epilogue operand (silu(gate) multiplying an up projection, a residual added to a down
    projection) is then loaded and computed once the loop is done: no register tile held through
    the K loop beside the accumulator, and its shared tile takes the dead pipeline buffers' place.
    """
    moved = 0
    for seq in [op for op in kernel.walk() if isinstance(op, itgraph.SequentialOp)]:
        block = seq.parent_block()
        assert block is not None
        while True:
            order = {o: i for i, o in enumerate(block.ops)}
            here = order[seq]

            def after(user: Operation) -> bool:
                while user.parent_block() is not block:
                    user = user.parent_op()  # type: ignore[assignment]
                return order[user] > here

            sinkable = [
                o
                for o in list(block.ops)[:here]
                if isinstance(o, (itgraph.LoadOp, tgraph.ElementwiseOp, tgraph.ReshapeOp))
                and any(list(r.uses) for r in o.results)
                and all(after(u.operation) for r in o.results for u in r.uses)
            ]
            if not sinkable:
                break
            for o in reversed(sinkable):  # last first: each goes right after the loop, before its users
                o.detach()
                block.insert_op_after(o, seq)
                moved += 1
    return moved


def order_loop_bodies(kernel: itgraph.KernelOp) -> int:
    """Order each sequential loop's body as TileLang's attention examples do: a row reduction of a
    matmul's operand (the row sums of P) right before that matmul, not after it, and each load right
    before its first user (V's tile after the softmax, next to P @ V). Returns how many ops moved.

    On the H200 (`bench/probes/fa_order.py`, with the scale folded into exp2): S8192 D64 attention
    1433 -> 1334 us, S4096 D128 504 -> 497 us.
    """
    moved = 0
    for seq in [op for op in kernel.walk() if isinstance(op, itgraph.SequentialOp)]:
        block = seq.body.block
        for mm in [op for op in block.ops if isinstance(op, tgraph.MatmulOp)]:
            order = {o: i for i, o in enumerate(block.ops)}
            late = [
                u.operation for x in (mm.lhs, mm.rhs) for u in x.uses
                if isinstance(u.operation, tgraph.ReduceOp) and u.operation.parent_block() is block and order[u.operation] > order[mm]
            ]
            for r in dict.fromkeys(late):
                r.detach()
                block.insert_op_before(r, mm)
                moved += 1
        for load in [op for op in block.ops if isinstance(op, itgraph.LoadOp)]:
            order = {o: i for i, o in enumerate(block.ops)}
            users = [a for u in load.result.uses if (a := block.find_ancestor_op_in_block(u.operation)) is not None]
            first = min(users, key=lambda o: order[o], default=None)
            if first is not None and order[first] > order[load] + 1:
                load.detach()
                block.insert_op_before(load, first)
                moved += 1
    return moved


def after_last_loop(kernel: itgraph.KernelOp) -> list[Operation]:
    """The ops of `kernel`'s parallel body after its last sequential loop (none without a loop): its
    epilogue, whose shared tiles take the place of the loop's dead pipeline buffers."""
    par = kernel.body.block.first_op
    body = list(par.body.block.ops) if isinstance(par, itgraph.ParallelOp) else []
    loops = [i for i, o in enumerate(body) if isinstance(o, itgraph.SequentialOp)]
    return body[loops[-1] + 1 :] if loops else []


COMPUTED_IN_REGISTERS = (tgraph.SplitOp, tgraph.MatmulOp, tgraph.ReduceOp, tgraph.ElementwiseOp)


def tensor_core_shaped(op: Operation) -> bool:
    """A matmul whose tile the lowering may give to T.gemm (rows and depth multiples of 16, columns of 8)."""
    if not isinstance(op, tgraph.MatmulOp):
        return False
    out, lhs = tgraph.tensor_type(op.result).shape, tgraph.tensor_type(op.lhs).shape
    return out[-2] % 16 == 0 and out[-1] % 8 == 0 and lhs[-1] % 16 == 0


def gemm_warps_fit(m: int, n: int, threads: int, transpose_b: bool = True) -> bool:
    """Whether T.gemm can split an m x n tile over `threads` (TileLang's warp partition, sm_90).

    Each of the m_warp x n_warp warps owns a multiple of 16 rows and 8 columns; with 64+ rows and whole
    warpgroups TileLang picks wgmma, which also needs m_warp to be a multiple of 4, and a B operand
    whose rows are N-contiguous (not `transpose_b`) 16 columns wide or a multiple of that per warp column
    (x [1, 256] @ W [256, 8] padded to 64 rows failed TileLang 0.1.15's lowering: "WGMMA operand layout
    contiguity ... disagrees"; 80 columns over 2 warp columns: "Not a canonical GMMA_MN layout").
    """
    warps = threads // 32
    wgmma = m >= 64 and warps % 4 == 0
    # an N-contiguous B operand needs each warp column's n / n_warp columns to be a multiple of 16:
    # [64, 32] @ [32, 80] on 8 warps (2 columns of 40) failed "Not a canonical GMMA_MN layout", on 4 it lowers
    return any(
        warps % mw == 0 and m % (16 * mw) == 0 and n % (8 * (warps // mw)) == 0 and (not wgmma or mw % 4 == 0)
        and (not wgmma or transpose_b or (n // (warps // mw)) % 16 == 0)
        for mw in range(1, warps + 1)
    )


PAD_ROWS = 64  # a tensor-core tile of rows: one warpgroup's wgmma (`lower_tilelang.plan_row_padding`)
# the rows of an MMA tile (`lower_tilelang.row_padding`: kernels whose padded tiles no reduction reads)
MMA_PAD_ROWS = 16
GEMV_VECTOR_BYTES = 16  # one vector load per thread and step of a direct GEMV
# rows of weight per block: 4 (a warp each, on 128 threads) to 32 (a warp's 256 partial sums per
# row, 64 registers a thread). Few rows give small projections enough blocks to keep enough loads
# in flight (H200, x [1, 4096] @ W^T, W [4096, 4096]: 16 rows a block 14.5 us, F.linear 9.2 us;
# 4 rows 7.7 us, bench/results/gemv_idioms_2026-12-02_H200.md)
GEMV_MIN_ROWS = 4
ACCUMULATOR_BYTES_PER_THREAD = 512  # 128 fp32 registers of a thread's 255 for its loops' accumulators
GEMV_THREADS = 128  # the threads `place` gives a kernel whose largest matmul has one row
GEMV_MAX_ROWS = 32
GEMV_SMALL_TILES = (4, 8)  # the output tiles `cleave-schedule` offers a graph with a direct GEMV beside its usual ones


def direct_gemv_split(k: int, element_bits: int) -> int:
    """Elements of each weight row that one step of a direct GEMV reads: a warp's 32 threads (or
    16 or 8, whichever first divides k) times one 16-byte vector each; 0: none divides k.

    TileLang's examples/gemv form: each thread loads its 16 contiguous bytes of a row straight from
    global memory into registers, and the lanes of a row are summed by a warp reduction at the end.
    On the H200 (`bench/results/gemv_idioms_2026-12-02_H200.md`) that reads Llama-3-8B's gate weight
    at 3.9 TB/s (30.0 us, F.linear 30.5 us), where staging the block's whole 16-row slab in shared
    memory and reading it back took 47.8 us."""
    return direct_gemv_lanes(k, element_bits) * _vector(element_bits)


def direct_gemv_lanes(k: int, element_bits: int) -> int:
    """Threads per weight row of a direct GEMV: 32, 16 or 8, the most whose 16-byte vectors divide k; 0: none."""
    return next((lanes for lanes in (32, 16, 8) if k % (lanes * _vector(element_bits)) == 0), 0)


def _vector(element_bits: int) -> int:
    return GEMV_VECTOR_BYTES * 8 // element_bits


def _element_bits(t: tgraph.TensorType) -> int:
    return 16 if isinstance(t.element_type, (Float16Type, BFloat16Type)) else 32


def vector_elements(t: tgraph.TensorType) -> int:
    """Elements of `t` in one 16-byte vector (GEMV_VECTOR_BYTES)."""
    return _vector(t.element_type.bitwidth)  # type: ignore[attr-defined]


def direct_gemv_matmul(mm: tgraph.MatmulOp) -> bool:
    """Whether a matmul (of a graph or a kernel's tiles) has the direct GEMV's shape: one row and no
    batch, a K-contiguous right operand (`transpose_b`: nn.Linear's [N, K] weight), and a K that
    divides into whole steps (`direct_gemv_split`) but is too long for the lowering's other one-row
    form (its A operand padded to PAD_ROWS rows for T.gemm would not fit in shared memory: decode
    attention's query row against a KV tile keeps that form)."""
    out, rhs = tgraph.tensor_type(mm.result), tgraph.tensor_type(mm.rhs)
    if mm.transpose_b is None or any(not d.is_Integer or int(d) != 1 for d in [*out.shape[:-1], *rhs.shape[:-2]]):
        return False
    if not rhs.shape[-1].is_Integer:
        return False
    bits = _element_bits(rhs)
    k = int(rhs.shape[-1])
    return direct_gemv_split(k, bits) > 0 and PAD_ROWS * k * bits // 8 > SMEM_BYTES


def direct_gemv_operand(load: itgraph.LoadOp) -> bool:
    """Whether a loaded tile is the weight of a direct GEMV, read from global memory by a one-row
    matmul: loaded once per block (not in a loop) and used only as that matmul's right operand,
    either K-contiguous rows (`transpose_b`, `direct_gemv_rows_operand`) or N-contiguous columns
    of a weight matrix (`direct_gemv_columns_operand`)."""
    if isinstance(load.parent_op(), itgraph.SequentialOp) or load.causal_offset is not None:
        return False
    value = weight_view(load)
    uses = list(value.uses)
    if len(uses) != 1:
        return False
    mm = uses[0].operation
    if not isinstance(mm, tgraph.MatmulOp) or mm.rhs is not value:
        return False
    return direct_gemv_rows_operand(load, mm) if mm.transpose_b is not None else direct_gemv_columns_operand(load, mm)


def shared_view(op: Operation) -> bool:
    """Whether `op` is a view of a shared tile: a reshape (or a split that only adds size-1 dims) of
    one, which the lowering reads in place (`lower_tilelang`'s `reshape`) and which takes no shared
    bytes of its own. (Counting it twice, as a B operand's reshaped K tile of MLA decode was, left
    its loop one pipelining stage: 172 KiB counted, 104 KiB used.)"""
    if not isinstance(op, (tgraph.ReshapeOp, tgraph.SplitOp)):
        return False
    src, res = tgraph.tensor_type(op.operands[0]), tgraph.tensor_type(op.results[0])
    if [d for d in src.shape if d != 1] != [d for d in res.shape if d != 1]:
        return False
    owner = op.operands[0].owner
    return isinstance(owner, Operation) and cleave.memory(owner) == Memory.SHARED


def weight_load(value: SSAValue) -> itgraph.LoadOp | None:
    """The load a matmul operand comes from through unit reshapes (`weight_view`'s reverse), if any."""
    op = value.owner
    while isinstance(op, tgraph.ReshapeOp):
        op = op.operands[0].owner
    return op if isinstance(op, itgraph.LoadOp) else None


def weight_view(load: itgraph.LoadOp) -> SSAValue:
    """The loaded tile as its matmul reads it: through reshapes that only add leading size-1 dims (a
    Split-K kernel's [1, k, n] part of a [k, n] weight tile), which the direct GEMV reads in place."""
    value: SSAValue = load.result
    while len(uses := list(value.uses)) == 1 and isinstance(r := uses[0].operation, tgraph.ReshapeOp):
        src, res = tgraph.tensor_type(value).shape, tgraph.tensor_type(r.result).shape
        if len(src) < 2 or len(res) < 2 or tuple(src[-2:]) != tuple(res[-2:]) or any(d != 1 for d in [*src[:-2], *res[:-2]]):
            break
        value = r.result
    return value


def direct_gemv_rows_operand(load: itgraph.LoadOp, mm: tgraph.MatmulOp) -> bool:
    """A tile of weight rows ([N, K], nn.Linear's layout) of a matmul of the direct GEMV's shape
    (`direct_gemv_matmul`), with GEMV_MIN_ROWS to GEMV_MAX_ROWS rows and a 16-byte vector of a row
    for every thread (K = 2112 takes 8 lanes per row, so 16+ rows)."""
    if not direct_gemv_matmul(mm):
        return False
    rhs = tgraph.tensor_type(load.result)
    rows = int(rhs.shape[-2])
    # a lane per thread of the block's GEMV_THREADS: fewer lanes would split a thread's 16-byte vector
    return GEMV_MIN_ROWS <= rows <= GEMV_MAX_ROWS and rows * direct_gemv_lanes(int(rhs.shape[-1]), _element_bits(rhs)) >= GEMV_THREADS


GEMV_COLUMN_MAX_STEPS = 32


def direct_gemv_columns(n: int, k: int, element_bits: int, threads: int = GEMV_THREADS, max_steps: int | None = GEMV_COLUMN_MAX_STEPS) -> int:
    """Rows of a [k, n] weight tile that one step of a column GEMV reads: each of the block's
    `threads` loads one 16-byte vector of a row, n / vector threads per row; 0: no such step, or more
    than GEMV_COLUMN_MAX_STEPS of them. A block's loads are in flight one step at a time, so a long
    loop is latency-bound (H200, x [1, 4096] @ W [4096, 6144]: 32 steps a block under an 8-way Split-K
    11.2 us; 256 steps 25.5 us; the suite's rmsnorm_matmul T1 with 64 steps of 16 columns 35.9 us,
    its 16-way Split-K of 32 steps 16.5 us: `gemv_forms_2026-12-02_H200.md`, `gpu_suite_2026-12-02l`)."""
    vector = _vector(element_bits)
    if n % vector or threads % (n // vector):
        return 0
    rows = threads // (n // vector)
    return rows if k % rows == 0 and (max_steps is None or k // rows <= max_steps) else 0


def direct_gemv_columns_operand(load: itgraph.LoadOp, mm: tgraph.MatmulOp) -> bool:
    """A [k, n] tile of a weight matrix (x @ W with W [K, N]: GPT-2's Conv1D, the suite's rmsnorm_matmul
    and swiglu) under a one-row matmul in a kernel whose matmuls all have one row (`GEMV_THREADS`
    threads): each step the block reads a slab of whole 16-byte vectors of its rows straight from global
    memory into registers (`direct_gemv_columns`); partial sums per row of the slab are added up once at
    the end. Staging the tile in shared memory for a T.gemm padded to 64 rows only adds a round trip: on
    the H200 a Split-K GEMV of x [1, 4096] @ W [4096, 6144] this way takes 11.2 us, x @ W (cuBLAS) 14.8 us
    and the padded T.gemm form 20.5 us (`gemv_forms_2026-12-02_H200.md`).

    Only a rank-2 source (a weight matrix): decode attention's value tile (of a [B, H, L, D] cache) keeps
    the tensor-core form its kernels were tuned with."""
    out, rhs = tgraph.tensor_type(mm.result), tgraph.tensor_type(load.result)
    if len(tgraph.tensor_type(load.source).shape) != 2:
        return False
    if any(not d.is_Integer or int(d) != 1 for d in [*out.shape[:-1], *rhs.shape[:-2]]):
        return False
    if not (rhs.shape[-1].is_Integer and rhs.shape[-2].is_Integer):
        return False
    kernel = itgraph.enclosing_kernel(load)
    if kernel is None or any(
        isinstance(op, tgraph.MatmulOp) and tgraph.tensor_type(op.result).shape[-2] != 1 for op in kernel.walk()
    ):
        return False
    return direct_gemv_columns(int(rhs.shape[-1]), int(rhs.shape[-2]), _element_bits(rhs)) > 0


def direct_gemv_input_row(load: itgraph.LoadOp, grid_vars: set[str]) -> bool:
    """Whether `load` is the input row of a direct GEMV that every block reads alike (its offsets use
    none of the grid's variables): the cost model counts it from DRAM once and from L2 for the other
    blocks, so many blocks of few weight rows cost no more traffic.

    Only there: counting every grid-invariant tile once (a norm's weight, MQA's shared K/V) changed the
    model's picks for five of the twelve examples, which was not re-measured."""
    if any(set(map(str, off.free_symbols)) & grid_vars for off in load.tmap.offset_exprs):
        return False
    return any(
        isinstance(mm := u.operation, tgraph.MatmulOp) and mm.lhs is load.result
        and (direct_gemv_matmul(mm) or (isinstance(w := mm.rhs.owner, itgraph.LoadOp) and direct_gemv_operand(w)))
        for u in load.result.uses
    )


def shared_input_bytes(kernel: itgraph.KernelOp) -> dict[str, float]:
    """For every grid dim of `kernel` (its parallel dims of extent > 1): the bytes one block loads
    that its neighbours along that dim load too (its loads whose tile offsets do not move with it)."""
    par = kernel.body.block.first_op
    assert isinstance(par, itgraph.ParallelOp)
    dims = [v for v, e in zip(par.var_names, par.extent_dims) if e != 1]
    shared = dict.fromkeys(dims, 0.0)
    loops: dict[Operation, float] = {}
    for load in kernel.walk():
        if not isinstance(load, itgraph.LoadOp) or load.causal_offset is not None:
            continue
        try:
            size = tile_bytes(load.result) * block_trips(load, loops)
        except (TypeError, ValueError):  # a symbolic tile or loop: not ranked
            continue
        moves = {str(s) for o in load.tmap.offset_exprs for s in sympy.sympify(o).free_symbols}
        for v in dims:
            if v not in moves:
                shared[v] += size
    return shared


def gemm_threads(kernel: itgraph.KernelOp, threads: int) -> int:
    """`threads`, or fewer (down to one warp) where a tensor-core tile of at least 16 rows is too
    small to split over its warps (`gemm_warps_fit`: 16 x 16 on 4 warps): with fewer warps T.gemm
    takes it; with these it would become a CUDA-core loop (H200: x [16, 4096] @ W^T [1024, 4096] in
    16 x 16 tiles on 128 threads 79.5 us, estimated 15.2: bench/results/layers_decode_batches_2026-12-03_H200_run1_compile.log).
    Not where the kernel's tiles would then take more registers per thread than `TILE_BYTES_PER_THREAD`."""
    tiles = [
        (int(out[-2]), int(out[-1]), op.transpose_b is not None)
        for op in kernel.walk()
        if isinstance(op, tgraph.MatmulOp) and tensor_core_shaped(op)
        for out in [tgraph.tensor_type(op.result).shape]
        if all(d == 1 for d in out[:-2]) and int(out[-2]) >= 16
    ]
    if not tiles or all(gemm_warps_fit(m, n, threads, tt) for m, n, tt in tiles):
        return threads
    par = kernel.body.block.first_op
    assert isinstance(par, itgraph.ParallelOp)
    live = accumulator_bytes(kernel) + peak_live_bytes(par, where_used=False)
    fewer = threads // 2
    while fewer >= 32 and live <= fewer * TILE_BYTES_PER_THREAD:
        if all(gemm_warps_fit(m, n, fewer, tt) for m, n, tt in tiles):
            return fewer
        fewer //= 2
    return threads


def padded_tile_shapes(kernel: itgraph.KernelOp, threads: int) -> list[tuple[int, ...]] | None:
    """The shapes of the kernel's register tiles as the lowering lays them out on `threads` where it
    pads the rows of its few-row matmuls (`lower_tilelang.row_padding`), else None.

    Judged on the unpadded shapes, GQA decode with head dim 80 had a [4, 80] tile, which no 128
    threads lay out, and got 64 threads (32 for 6 heads a group): on the H200 its split kernel ran 14.2
    us where head dim 128's runs 9.7. Padded, the tile is [64, 80] and takes 128 threads."""
    from cleave_ir.passes.lower_tilelang import row_padding  # the lowering imports this module

    pad, rows = row_padding(kernel, threads)
    return register_tile_shapes(kernel, pad, rows) if pad else None


def row_padding_fits(kernel: itgraph.KernelOp, threads: int) -> bool:
    """Whether the lowering pads the few-row matmuls of the placed `kernel` (its stages and shared
    memory as annotated) to tensor-core tiles."""
    from cleave_ir.passes.lower_tilelang import row_padding  # the lowering imports this module

    return bool(row_padding(kernel, threads)[0])


def register_tile_shapes(kernel: itgraph.KernelOp, pad: dict[SSAValue, int] | None = None, rows: int = PAD_ROWS) -> list[tuple[int, ...]]:
    """The shapes of the kernel's tiles computed in registers, with the axis `pad` names (tile -> axis)
    at `rows`."""
    shapes = []
    for op in kernel.walk():
        if cleave.memory(op) == Memory.FRAGMENT or isinstance(op, COMPUTED_IN_REGISTERS):
            for r in op.results:
                shape = [int(d) for d in tgraph.tensor_type(r).shape]
                if pad and r in pad:
                    shape[pad[r]] = rows
                shapes.append(tuple(shape))
    return shapes


def raster_dim(kernel: itgraph.KernelOp) -> str | None:
    """The grid dim to launch fastest (blockIdx.x), if not the first: the one whose blocks share the
    most input bytes (`shared_input_bytes`); ties keep the first."""
    shared = shared_input_bytes(kernel)
    if len(shared) < 2:
        return None
    first = next(iter(shared))
    best = max(shared, key=lambda v: shared[v])
    return best if shared[best] > shared[first] else None


# A fourth stage where it costs no co-resident block: a block streaming its operands from global
# memory keeps one more tile in flight (gemm_probe_2026-12-03_H200: T=128 rows x [4096, 6144],
# 64x128x128 tiles, 96 blocks, 20.8 -> 18.6 us; 4096^3 with 128x256x64 tiles 216.1 -> 215.5 us)
DEEPEST_STAGES = 4
# A K loop of one matmul in a grid of at most one block per SM keeps its SM's loads in flight through
# its own stages only, and co-residency is moot: up to five where the shared memory and the loop's
# trips allow. H200 (bench/results/deep_stages_2026-12-04s22_H200.md): rmsnorm_matmul T=16's one
# kernel, 96 blocks of [16, 64] tiles (20 KiB a step), 16.1 us on 3 stages, 14.8 on 4, 14.5 on 5 and 6,
# 16.5 on 8. Loops without a matmul (an LM head's 4-block row statistics) did not gain (86.2 / 87.1 us).
ONE_WAVE_STAGES = 5


def co_resident(smem_bytes: int) -> int:
    """How many blocks of `smem_bytes` of shared memory one SM holds."""
    return SMEM_BYTES // max(1, smem_bytes)


def place(kernel: itgraph.KernelOp, hoist_elementwise: bool = False) -> None:
    """Annotate `kernel` (see the module docstring); raises CleaveError if it cannot fit."""
    hoist_invariant_ops(kernel, hoist_elementwise)
    sink_epilogue_ops(kernel)
    order_loop_bodies(kernel)
    largest_m = 1
    for op in kernel.walk():
        if isinstance(op, itgraph.LoadOp):  # a causal mask tile is computed in registers (from its indices)
            mem = Memory.FRAGMENT if op.causal_offset is not None else Memory.GLOBAL if direct_gemv_operand(op) else Memory.SHARED
            op.attributes["cleave.mem"] = MemoryAttr(mem)
        elif isinstance(op, tgraph.MatmulOp):
            op.attributes["cleave.mem"] = MemoryAttr(Memory.FRAGMENT)
            largest_m = max(largest_m, int(tgraph.tensor_type(op.result).shape[-2]))
            rhs = op.rhs.owner
            if isinstance(rhs, Operation) and not isinstance(rhs, itgraph.LoadOp):
                rhs.attributes["cleave.mem"] = MemoryAttr(Memory.SHARED)  # T.gemm's B operand
        elif isinstance(op, itgraph.SequentialOp) or (op.results and op.name.startswith("tgraph.")):
            op.attributes.setdefault("cleave.mem", MemoryAttr(Memory.FRAGMENT))
    # the shared tiles loaded after the kernel's last loop (an epilogue's residual) take the place of
    # its dead pipeline buffers (TileLang reuses shared memory by lifetime): the loop's stages are
    # chosen without them
    epilogue_ops = set(after_last_loop(kernel))
    shared = epilogue = 0
    for op in kernel.walk():
        if cleave.memory(op) == Memory.SHARED and not shared_view(op):
            size = sum(tile_bytes(r) for r in op.results)
            if op in epilogue_ops:
                epilogue += size
            else:
                shared += size
    if shared > SMEM_BYTES:
        raise CleaveError(
            f"error: cleave-place-memory: @{kernel.sym_name.data} needs {shared // 1024} KiB of shared memory "
            f"(limit {SMEM_BYTES // 1024} KiB)"
        )
    loop_loads = sum(
        tile_bytes(op.result)
        for seq in kernel.walk()
        if isinstance(seq, itgraph.SequentialOp)
        for op in seq.body.block.ops
        if isinstance(op, itgraph.LoadOp) and op.causal_offset is None
    )
    trips = longest_trips(kernel)
    # three stages where they fit and the loop is long enough to fill them (bench/tile_sweep.py: a
    # 4096^3 matmul with 128x128x64 tiles runs 290 us with 3 stages, 347 us with 2); a loop of
    # two or more matmuls (attention's back-to-back pair, an MLP's gate and up) two, as TileLang's
    # FlashAttention examples (lowering_probes_2026-12-01: S4096 D128 553 -> 521 us, S8192 D64
    # 1485 -> 1457 us; gpu_suite_2026-12-01j: swiglu T1 61.4 -> 55.5 us)
    matmuls_in_loop = loop_matmuls(kernel)
    stages = 1
    if loop_loads and shared + loop_loads <= SMEM_BYTES:
        deep = trips >= 3 and matmuls_in_loop < 2 and shared + 2 * loop_loads <= SMEM_BYTES
        stages = 3 if deep else 2
        if deep and trips >= DEEPEST_STAGES and co_resident(shared + 3 * loop_loads) == co_resident(shared + 2 * loop_loads):
            stages = DEEPEST_STAGES
        if deep and matmuls_in_loop == 1 and grid_blocks(kernel) <= SMS:
            stages = max(s for s in range(stages, ONE_WAVE_STAGES + 1) if s <= max(trips, stages) and shared + (s - 1) * loop_loads <= SMEM_BYTES)
    threads = min(256, 128 * max(1, math.ceil(largest_m / 64)))
    # a wide accumulator ([64, 512] fp32 of MLA's latent values) takes a second warpgroup, which the
    # gemms split along N, so that each thread holds at most 128 of its fp32 registers, not 256 (spills)
    while threads < 256 and accumulator_bytes(kernel) > threads * ACCUMULATOR_BYTES_PER_THREAD:
        threads *= 2
    if not any(isinstance(op, tgraph.MatmulOp) for op in kernel.walk()):
        # no matmul: a norm's or softmax's rows over 192 fp32 registers per thread take more threads
        par = kernel.body.block.first_op
        assert isinstance(par, itgraph.ParallelOp)
        live = accumulator_bytes(kernel) + peak_live_bytes(par, where_used=False)
        while threads < 256 and live > threads * TILE_BYTES_PER_THREAD:
            threads *= 2
    # TileLang lays a fragment out over the threads: one of more elements than threads needs a
    # multiple of them ("no available layout found" for a 16x12 tile on 128 threads); kernels whose
    # matmuls may become T.gemm keep their warps (the gemm's warp partition needs them)
    # (a split's parts are copied into a fragment first, wherever placement puts them, and so is
    # every computed tile: the lowering computes matmuls, reductions and element-wise ops in
    # registers and copies those placed in shared memory there: a [20, 8] product on 64 threads
    # failed TileLang's layout inference)
    sizes = register_tile_shapes(kernel)
    keep_warps = any(tensor_core_shaped(op) for op in kernel.walk())
    threads = gemm_threads(kernel, threads)
    padded = padded_tile_shapes(kernel, threads)
    pads = padded is not None and layout_threads(padded, threads) == threads
    if pads:
        sizes, keep_warps = padded, True  # its few-row matmuls become T.gemm on padded rows
    # (and its row reductions' warp collectives must have every lane: `reduces_on_whole_warps`)
    reduced = reduced_tiles(kernel)
    fitting = layout_threads(sizes, threads, reduced) if not keep_warps else threads if layout_threads(sizes, threads, reduced) == threads else 0
    fitting = fitting or (0 if keep_warps else layout_threads(sizes, reduced=reduced))  # fewer threads, else up to 256
    if not fitting:
        what = f"its computed tiles {sorted(set(sizes))}" + (f" and the reductions over {sorted(set(reduced))}" if reduced else "")
        raise CleaveError(
            f"error: cleave-place-memory: @{kernel.sym_name.data}: {what} "
            f"have no register layout over {'its ' + str(threads) if keep_warps else '32-256'} threads"
        )
    threads = fitting
    kernel.attributes["cleave.threads"] = IntegerAttr(threads, i64)
    kernel.attributes["cleave.stages"] = IntegerAttr(stages, i64)  # (its place among the attributes; `pipeline` settles it)
    if (raster := raster_dim(kernel)) is not None:
        kernel.attributes["cleave.raster"] = StringAttr(raster)
    after_loop = shared - loop_loads + epilogue
    if after_loop > SMEM_BYTES:
        raise CleaveError(
            f"error: cleave-place-memory: @{kernel.sym_name.data} needs {after_loop // 1024} KiB of shared memory "
            f"after its loop (limit {SMEM_BYTES // 1024} KiB)"
        )

    def pipeline(stages: int) -> None:
        kernel.attributes["cleave.stages"] = IntegerAttr(stages, i64)
        kernel.attributes["cleave.smem_bytes"] = IntegerAttr(max(shared + (stages - 1) * loop_loads, after_loop), i64)

    pipeline(stages)
    if pads and not row_padding_fits(kernel, threads):
        # the padded rows take shared memory beside the pipeline's buffers: fewer stages, not a
        # CUDA-core fold in the K loop (the threads were chosen for the padding)
        for fewer in range(stages - 1, 0, -1):
            pipeline(fewer)
            if row_padding_fits(kernel, threads):
                break
        else:
            pipeline(stages)


@dataclass(frozen=True)
class PlaceMemoryPass(CleavePass):
    """Annotate every itgraph kernel with memory spaces, hoisting, threads and stages."""

    name = "cleave-place-memory"

    strict: bool = False  # reject (error) instead of dropping a kernel that does not fit
    hoist_elementwise: bool = False  # also hoist loop-invariant element-wise ops (`hoist_invariant_ops`)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in [k for k in op.walk() if isinstance(k, itgraph.KernelOp)]:
            try:
                place(kernel, self.hoist_elementwise)
            except CleaveError as e:
                if self.strict:
                    raise
                print(f"warning: {str(e).removeprefix('error: ')}: kernel dropped", file=sys.stderr)
                Rewriter.erase_op(kernel)
