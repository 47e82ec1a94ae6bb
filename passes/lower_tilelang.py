"""`cleave-lower-tilelang`: every itgraph kernel (after cleave-place-memory) becomes a `tilelang.kernel`.

Decisions, all visible in the resulting IR:
- tiles become buffers without their size-1 dims: loads are `tilelang.copy` from a global region
  into shared memory, computed tiles fp32 fragments; reshapes are views of the same buffer;
- matmuls whose tiles are 2-D multiples of 16 become `tilelang.gemm`, with computed operands
  staged as fp16 (A in a fragment for whole 64-row warpgroups, else in shared memory; B always in
  shared memory); matmuls of 1..15 rows become such gemms with their row axis padded to a 64-row
  tile (`plan_row_padding`, as TileLang's decode kernels); a one-row matmul whose weight rows
  placement left in global memory (`#cleave<mem global>`, a decode projection) reads them there, a
  warp of 16-byte vectors per row, the lanes summed by a warp reduction (`direct_gemv`, TileLang's
  examples/gemv); other one-row matmuls take TileLang's GEMV
  form (threads split K and N, partial sums added through shared memory); the rest are CUDA-core
  `serial` loops over the contracted dim around a `parallel` update, reading their operands from
  shared memory;
- row reductions of 2-D fragments with a power-of-two width of 8+ and 16+ rows use TileLang's warp
  reduction (`reduce_sum`/`reduce_max`; rows of a fragment that T.Parallel laid out reach the rest of
  the kernel through shared memory); other row reductions of 16+ rows (a width such as 768, or a
  tile in shared memory) fold every split-th element over `row_split` threads per row, then
  warp-reduce the partials; a long one-row vector reduced to one value is split over ~sqrt(k)
  threads, then their partials summed; any other reduction is a serial loop;
- a register tile broadcast into a larger element-wise loop that no gemm lays out (a norm's row
  values) is read through shared memory, so TileLang lays that loop out over all threads;
- sequential loops become `pipelined` loops (the kernel's `cleave.stages`) with fragment
  accumulators: sum, max, and the online-softmax rescaled sum: where the body's chunk max is used
  only as an exp shift, FlashAttention-2's form (the body shifts by the running max, a matmul part
  accumulates in place into its rescaled accumulator), else the chunk-max form (alpha/beta after the body);
  a loop-carried sum (max) of a chunk's row reduction is kept element-wise in a wide accumulator and
  reduced once after the loop (`_defers_reduction`);
- an element-wise op whose operand's register tile is dead after it writes its result into that
  tile (`reuse`): a chain such as scale, mask, subtract the max, exp updates one fragment in place,
  as TileLang's own attention kernels do, instead of holding a tile per step;
- exp is exp2 of x * log2(e) (one fast instruction on the GPU);
- an element-wise result whose users are element-wise ops over a tile of its shape is computed in
  their loop, not in a tile of its own (`inline`: normalize, weight and bias in one pass); a positive
  scale read by a row max is applied to the max (attention's exp(c s - max(c s)) is one pass,
  exp2(s * (c log2 e) - m * log2 e), one FMA per element);
- the grid keeps its non-1 dims, the `cleave.raster` dim of placement first (launched fastest), a
  dim along which a causal loop gets longer last and reversed (`_lengthening_vars`: the longest blocks
  first); past three, the leading ones are linearized into `bx` (`(bx floordiv s) mod e`, the first fastest);
- a causal mask tile whose users are element-wise is computed where they read it (`causal_keep`), and
  one added to scaled scores starts their accumulator (`fold_term`) instead of a pass after the gemm.
The kernel keeps the metadata the module printer records (`cleave.schedule_of`, `cleave.tiles`,
`cleave.estimated_us`, `cleave.smem_bytes`, `cleave.input_names`, `cleave.passthrough`).
Python names are chosen here (as SSA name hints) in the order the printer re-derives them.
"""

from __future__ import annotations

from math import prod
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property

import sympy
from cleave_ir.dialects import cleave, itgraph, tgraph
from cleave_ir.dialects import tilelang as tl
from cleave_ir.dialects.itgraph import AccumulateKind
from xdsl.context import Context
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import (
    ArrayAttr,
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    UnitAttr,
    f16,
    f32,
    f64,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import VerifyException

from cleave_ir.diagnostics import CleaveError
from cleave_ir.passes.causal import computed_in_users, diagonal_extent
from cleave_ir.passes.cost_model import FOLD_FMAS_PER_S, SMEM_BYTES, SMS, Calibration, Estimate, block_trips, warp_reduced, with_serial_steps
from cleave_ir.passes.options import CleavePass
from cleave_ir.passes.emulate_exp2 import EXP2_ON_FMA_EVERY, emulate_exp2
from cleave_ir.passes.overlap_gemms import overlap_kernel
from cleave_ir.passes.whole_small_copies import copy_small_tiles_whole
from cleave_ir.passes.place_memory import MMA_PAD_ROWS, PAD_ROWS, after_last_loop, gemm_warps_fit, direct_gemv_columns, direct_gemv_matmul, direct_gemv_operand, direct_gemv_split, weight_load
from cleave_ir.shapes import Dim, evaluate, symbol

RESERVED_NAMES = ("T", "tilelang", "bx", "by", "bz", "kk", *(f"i{n}" for n in range(8)))


class LoweringError(CleaveError):
    """A kernel that TileLang cannot express as lowered here; the message names the op."""


def ident(name: str) -> str:
    """`name` as a Python identifier."""
    name = re.sub(r"\W", "_", name)
    return name if name and not name[0].isdigit() else f"v_{name}"


def fresh_name(taken: set[str], hint: str) -> str:
    """A Python identifier from `hint` not in `taken` (`s`, `s_1`, ...), added to `taken`."""
    base = ident(hint or "t")
    name, i = base, 1
    while name in taken:
        name, i = f"{base}_{i}", i + 1
    taken.add(name)
    return name


def _bits(t: Attribute) -> int:
    return {Float16Type: 16, BFloat16Type: 16, Float32Type: 32, Float64Type: 64}[type(t)]


def _static(value: SSAValue) -> tuple[int, ...]:
    shape = tgraph.tensor_type(value).shape
    if not all(d.is_Integer for d in shape):
        raise LoweringError(f"error: cleave-lower-tilelang: tile of symbolic shape [{', '.join(map(str, shape))}]: tiles must be static")
    return tuple(int(d) for d in shape)


def _insert_after(anchor: Operation, ops: Sequence[Operation]) -> None:
    """Insert `ops`, in order, right after `anchor` (where a tile they copy was made)."""
    block = anchor.parent_block()
    assert block is not None
    block.insert_ops_after(list(ops), anchor)


def _tile_nbytes(value: SSAValue) -> int:
    return prod(_static(value)) * _bits(tgraph.tensor_type(value).element_type) // 8


def _lengthening_vars(par: itgraph.ParallelOp) -> set[str]:
    """The parallel dims along which a causal loop gets longer (the query blocks of attention
    bounded at the diagonal, `causal.diagonal_extent`). The lowering launches them slowest and in
    reverse, the longest blocks first, so the short ones fill the last wave (largest-first
    scheduling, as FlashAttention-3's causal scheduler): on the H200, Llama-3 B1 H32 S2048 D128
    94.4 -> 77.9 us (cuDNN 86.1), GPT-2 S2048 37.0 -> 26.1 us (cuDNN 31.8) against the query blocks
    launched fastest in order (bench/results/causal_attention_2026-12-02b_H200.md)."""
    out: set[str] = set()
    extents = dict(zip(par.var_names, par.extent_dims))
    for seq in (op for op in par.walk() if isinstance(op, itgraph.SequentialOp)):
        bound = diagonal_extent(seq)
        if bound is None:
            continue
        zero = {symbol(v): 0 for v in extents}
        for v, e in extents.items():
            last = int(e) - 1 if sympy.sympify(e).is_Integer else 1 << 20  # a dynamic extent: any large block index
            if bound.has(symbol(v)) and bound.xreplace({**zero, symbol(v): last}) > bound.xreplace(zero):
                out.add(v)
    return out


def unstaged_dynamic_loops(kernel: tl.KernelOp) -> None:
    """Pipelined loops of a kernel without warp specialization whose trip count is not a constant (a
    causal bound, a dynamic length) run with one stage: TileLang 0.1.15's non-specialized pipeline
    needs a constant count for the cp.async waits of its last iterations, and otherwise fails in
    CUDA codegen ("Downcast from tirx.Sub to ir.IntImm failed")."""
    for loop in kernel.walk():
        if isinstance(loop, tl.PipelinedOp) and not sympy.sympify(loop.extent_expr).is_Integer:
            loop.num_stages = IntegerAttr(1, i64)


TMA_MAX_RANK = 5  # dims of a TMA tensor map (cuTensorMapEncodeTiled)


TMA_STRIDE_BYTES = 16  # a TMA tensor map's global strides are multiples of this


def tma_cannot_map(buf: tl.BufferType) -> bool:
    """Whether no TMA descriptor describes global tensor `buf` in its dense row-major layout: more
    than TMA_MAX_RANK dims, or rows whose bytes are not a multiple of TMA_STRIDE_BYTES (a [64, 777]
    f16 operand: 1554-byte rows). A dynamic last dim keeps TMA: the emitted module's `run` compiles
    the kernel without it for sizes whose rows TMA cannot map (`tma_maps` there)."""
    dims = list(buf.shape)
    while len(dims) > 1 and dims[-1] == 1:  # a trailing unit dim has no stride of its own
        dims.pop()
    row = sympy.sympify(dims[-1]) * (buf.element_type.bitwidth // 8)  # type: ignore[attr-defined]
    return buf.rank > TMA_MAX_RANK or (len(dims) > 1 and (row / TMA_STRIDE_BYTES).is_integer is False)


def thread_copies_where_tma_cannot(kernel: tl.KernelOp) -> None:
    """Copies to or from a global tensor that no TMA descriptor maps (`tma_cannot_map`) are thread
    copies (`no_tma`). TileLang 0.1.15 builds the descriptor anyway: past 5 dims it fails to compile
    ("desc.rank >= 1 && desc.rank <= 5": a Split-K part [S, B, Hkv, group, L, D] of sliding-window
    GQA attention); with unaligned rows the launch fails on the GPU (CU_TENSOR_MAP ... oobFill: a
    [333, 64] x [64, 777] x [777, 48] matmul chain, every candidate)."""
    for op in kernel.walk():
        if isinstance(op, tl.CopyOp) and op.no_tma is None and any(
            tl.buffer_type(v).scope_name == tl.Scope.GLOBAL and tma_cannot_map(tl.buffer_type(v)) for v in (op.src, op.dst)
        ):
            op.no_tma = UnitAttr()


HOIST_SLACK_BYTES = 8 * 1024  # shared memory a hoisted copy may add to the kernel's peak


def _peak_shared_bytes(order: Sequence[Operation], sizes: dict[SSAValue, int]) -> int:
    """The most shared bytes live at once when the statements run in `order` (a tile lives from its
    first statement to its last: TileLang packs tiles whose lifetimes do not overlap)."""
    first: dict[SSAValue, int] = {}
    last: dict[SSAValue, int] = {}
    for i, op in enumerate(order):
        for inner in op.walk():
            for v in inner.operands:
                if v in sizes:
                    first.setdefault(v, i)
                    last[v] = i
    return max((sum(sizes[v] for v in first if first[v] <= i <= last[v]) for i in range(len(order))), default=0)


def hoist_input_loads(kernel: tl.KernelOp) -> None:
    """Copies of input tiles into shared memory move to the start of a kernel with no pipelined loop
    (a Split-K combine, a norm): every thread then issues all its global loads before the first
    barrier, so their latencies overlap instead of adding up (a combine read its parts' maxima, then
    their outputs, then their sums, one round trip after another; two bulk copies in a row share one
    wait). A copy moves only where the kernel's peak of live shared bytes grows by at most
    `HOIST_SLACK_BYTES`: a tile loaded after another's last use shared its bytes, and hoisted it no
    longer does (swiglu's T=16 Split-K part, its second weight tile hoisted above the first's gemm:
    72 KiB at once, fewer blocks per SM, 71.4 -> 87.5 us on the H200, gpu_suite_2026-12-03w_H200.md)."""
    block = kernel.body.block
    if any(isinstance(op, tl.PipelinedOp) for op in kernel.walk()):
        return
    sizes = {a.result: tl.buffer_type(a.result).nbytes for a in block.ops if isinstance(a, tl.AllocSharedOp)}
    inputs = set(block.args[: len(block.args) - kernel.num_outputs.value.data])
    statements = [op for op in block.ops if not isinstance(op, (tl.AllocSharedOp, tl.AllocFragmentOp))]
    # the prologue's clears of padded tiles (which the copies fill) stay first
    lead = next((i for i, op in enumerate(statements) if not isinstance(op, tl.ClearOp)), len(statements))
    seen: set[SSAValue] = set()  # buffers an earlier statement touches
    candidates: list[Operation] = []
    for op in statements[lead:]:
        if (
            isinstance(op, tl.CopyOp) and op.src in inputs and op.dst not in seen
            and tl.buffer_type(op.dst).scope_name == tl.Scope.SHARED
        ):
            candidates.append(op)
        seen.update(v for inner in op.walk() for v in inner.operands)

    def order(moved: list[Operation]) -> list[Operation]:
        return statements[:lead] + moved + [op for op in statements[lead:] if op not in moved]

    budget = _peak_shared_bytes(statements, sizes) + HOIST_SLACK_BYTES
    moved: list[Operation] = []
    for op in candidates:
        if _peak_shared_bytes(order([*moved, op]), sizes) <= budget:
            moved.append(op)
    if not moved or order(moved) == statements:
        return
    for op in moved:
        op.detach()
    rest = [op for op in statements[lead:] if op not in moved]
    if rest:
        block.insert_ops_before(moved, rest[0])
    else:
        block.add_ops(moved)


def _squeezed(shape: Sequence[int]) -> tuple[int, ...]:
    return tuple(d for d in shape if d != 1) or (1,)


@dataclass
class _Buf:
    """A TileLang buffer seen through a tile's full shape (with its size-1 dims)."""

    value: SSAValue
    name: str  # the Python name the printer will give it
    shape: tuple[int, ...]  # symbolic only for global tensors
    # a tile read in place from a global tensor (`#cleave<mem global>`): its offset there, per dim
    origin: tuple[Dim, ...] | None = None

    @property
    def type(self) -> tl.BufferType:
        return tl.buffer_type(self.value)

    @property
    def scope(self) -> tl.Scope:
        return self.type.scope_name

    def at(self, full_vars: Sequence[str | None]) -> list[Dim]:
        """Element index for the result-space loop variables (None where the result dim is 1)."""
        idx = [symbol(v) for v, d in zip(full_vars, self.shape) if d != 1 and v is not None]
        return idx or [sympy.Integer(0)]


class _Statements:
    """Builds the scalar ops of one T.Parallel body."""

    def __init__(self) -> None:
        self.ops: list[Operation] = []

    def add(self, op: Operation) -> SSAValue:
        self.ops.append(op)
        return op.results[0]

    def load(self, buf: _Buf, full_vars: Sequence[str | None]) -> SSAValue:
        return self.add(tl.LoadOp(buf.value, buf.at(full_vars)))

    def cast(self, x: SSAValue, t: Attribute) -> SSAValue:
        if x.type == t:
            return x
        if _bits(x.type) == _bits(t):  # f16 <-> bf16 goes through f32
            x = self.add(arith.ExtFOp(x, f32))
        if _bits(x.type) < _bits(t):
            return self.add(arith.ExtFOp(x, t))
        return self.add(arith.TruncFOp(x, t))

    def widened(self, x: SSAValue) -> SSAValue:
        """`x` in fp32 if it is an fp16 or bf16 element: fp16's own x * x overflows past |x| = 256 (a
        norm's squares) and leaves its normal range under 8e-3, where the fp32 result need not. A
        matmul's products on CUDA cores take it too, as a tensor core's are exact in its fp32 sums:
        rounded to fp16 each, products of 1e3-scale inputs were off by 0.5 apiece (tanh(x @ W) wrong
        by 0.5 where the sum cancels) and of 1e6 overflowed to inf - inf = nan."""
        return self.cast(x, f32) if isinstance(x.type, (Float16Type, BFloat16Type)) else x

    def const(self, value: float, t: Attribute) -> SSAValue:
        """A Python float literal: an f64 constant that TileLang narrows to the other operand's type."""
        return self.cast(self.add(arith.ConstantOp(FloatAttr(value, f64))), t)

    def binary(self, cls: type[Operation], a: SSAValue, b: SSAValue) -> SSAValue:
        if a.type != b.type:  # TVM's promotion: both sides to the wider float
            wide = a.type if _bits(a.type) > _bits(b.type) else b.type if _bits(b.type) > _bits(a.type) else f32
            a, b = self.cast(a, wide), self.cast(b, wide)
        return self.add(cls(a, b))  # type: ignore[call-arg]

    def store(self, x: SSAValue, buf: _Buf, full_vars: Sequence[str | None], accumulate: bool = False) -> None:
        self.ops.append(tl.StoreOp(self.cast(x, buf.type.element_type), buf.value, buf.at(full_vars), accumulate))


@dataclass
class _RunningMax:
    """An online softmax lowered in FlashAttention-2's form (see `_KernelLowering._plan_running_max`)."""

    chunk_max: SSAValue  # the body's max over the chunk (its buffer then holds the running max)
    m_acc: _Buf  # the running max accumulator
    alpha: _Buf  # exp(old running max - new running max), per row
    in_place: dict[SSAValue, _Buf]  # matmul parts accumulated straight into their rescaled accumulator
    updated: dict[SSAValue, _Buf]  # other rescaled parts -> their accumulator, `acc * alpha + part` right after the part
    alpha_ready: bool = False  # alpha is computed (right after the chunk max)


@dataclass
class _LaneSoftmax:
    """An online softmax over a few long rows lowered lane by lane (see `_KernelLowering._plan_lanes`):
    every element position of the chunk keeps its own running max and rescaled sums, and the rows are
    reduced once after the loop."""

    chunk_max: SSAValue  # the body's max over the chunk (its buffer then holds the lanes' references)
    axis: int  # the reduced axis of the chunk tile
    shape: tuple[int, ...]  # the chunk tile's shape
    m_lanes: _Buf  # each lane's running max
    alpha: _Buf  # exp(a lane's old running max - its new reference)
    ref: _Buf  # each lane's new running max, 0 where it is -inf
    sums: dict[SSAValue, _Buf]  # the body's rescaled row sums -> their lanes' accumulators


class _KernelLowering:
    def __init__(self, kernel: itgraph.KernelOp, passthrough: Sequence[str], transposed: Sequence[str] = ()) -> None:
        self.kernel = kernel
        self.passthrough = list(passthrough)
        self.transposed_names = set(transposed)
        # tiles loaded from an input stored transposed (`stored_transposed`): their buffers hold the tile
        # with its last two dims swapped, which the gemm reading them takes with transpose_A / transpose_B
        self.transposed_tiles: set[SSAValue] = set()
        self.allocs: list[Operation] = []
        self.block_stack: list[Block] = []
        self.bufs: dict[SSAValue, _Buf] = {}
        self.names: set[str] = set(RESERVED_NAMES)
        self.subst: dict[sympy.Symbol, Dim] = {}  # itgraph loop variable -> TileLang expression
        # a dynamic dim L of quantum q: loops and offsets run over L rounded up to q (the padding is
        # read as zeros by safe memory access and masked where a reduction would see it)
        self.padded: dict[sympy.Symbol, Dim] = {
            symbol(n): sympy.ceiling(symbol(n) / q) * q if q > 1 else symbol(n)
            for n, q in itgraph.dynamic_quanta(kernel).items()
        }
        threads = kernel.attributes.get("cleave.threads")
        self.threads = threads.value.data if threads is not None else 128  # type: ignore[attr-defined]
        # (rows, cols) of gemm results whose warps all split the columns (16 rows, 2+ warps):
        # TileLang cannot reduce the rows of a fragment of that layout (nor of the same-shape
        # fragments computed from it) across warps
        self.cols_split: set[tuple[int, int]] = set()
        # fragments laid out by a T.gemm (its result and what elementwise ops compute from it): TileLang
        # infers a warp reduction's layout from its source, and one over a fragment computed from shared
        # memory alone may not agree with the gemm rows it later meets ("no available layout found")
        self.gemm_laid: set[SSAValue] = set()
        stages = kernel.attributes.get("cleave.stages")
        self.stages = stages.value.data if stages is not None else 2  # type: ignore[attr-defined]
        self.running_max: _RunningMax | None = None
        self.lanes: _LaneSoftmax | None = None
        # matmul products a sequential loop sums: T.gemm accumulates into the loop's accumulator
        # (no cleared product tile, no second fp32 tile, no add pass), as TileLang's GEMM does
        self.sum_in_place: dict[SSAValue, _Buf] = {}
        # loop-carried row reductions kept element-wise: the chunk's reduce value -> its wide accumulator
        self.deferred: dict[SSAValue, _Buf] = {}
        self.unbounded: dict[SSAValue, bool] = {}  # `_unbounded`, per value (element-wise DAGs share operands)
        self.pad, self.pad_rows = row_padding(kernel, self.threads)
        self.prologue: list[Operation] = []  # clears of padded shared tiles, before the first statement
        # each loaded shared tile's copy op and the loop depth it sits at; register copies of those
        # read inside a deeper pipelined loop (`_invariant_operand`)
        self.loaded_at: dict[SSAValue, tuple[Operation, int]] = {}
        self.register_copies: dict[SSAValue, _Buf] = {}
        # tiles computed element-wise from tiles a loop loads (a GEMM operand's prologue): TileLang's
        # warp-specialized pipeline computes wrong results when such a tile feeds a T.gemm (H200,
        # rmsnorm -> matmul cut: 0.24-1.1 relative error at T=16 and 1024; without warp
        # specialization, or without TMA for the load, 6e-4), so such a kernel goes without it
        self.from_loop_loads: set[SSAValue] = set()
        self.index_tiles: dict[SSAValue, itgraph.LoadOp] = {}  # causal mask tiles their users compute
        self.folded_terms: dict[SSAValue, tgraph.ScaleOp] = {}  # `c s + t` whose s began at t / c (`fold_term`)
        self.no_warp_specialization = False
        # each element-wise result's T.Parallel and the loop depth it sits at; the fp16 gemm operand
        # made of one computed before a loop is made there, once (`_operand_fp16`)
        self.computed_at: dict[SSAValue, tuple[Operation, int]] = {}
        self.fp16_operands: dict[tuple[SSAValue, tl.Scope], SSAValue] = {}
        # element-wise results computed inside their users' loops, not in a tile of their own (`inline`)
        self.inlined: dict[SSAValue, tgraph.ElementwiseOp] = {}
        # row reductions whose inlined input `_reduce_rows_inlined` folds, and the threads a row it splits them over
        self.rows_folded: dict[SSAValue, int] = {}

    # ------------------------------------------------------------------ helpers
    def fresh(self, hint: str) -> str:
        return fresh_name(self.names, hint)

    def emit(self, op: Operation) -> Operation:
        self.block_stack[-1].add_op(op)
        return op

    def alloc(self, shape: Sequence[int], hint: str, scope: tl.Scope, element_type: Attribute = f32) -> _Buf:
        name = self.fresh(hint)
        t = tl.BufferType(_squeezed(shape), element_type, scope)
        op = tl.AllocSharedOp(t) if scope == tl.Scope.SHARED else tl.AllocFragmentOp(t)
        op.result.name_hint = name
        self.allocs.append(op)
        return _Buf(op.result, name, tuple(shape))

    def stage_store(self, op: itgraph.StoreOp) -> bool:
        """Whether the kernel's final store of a register tile goes through shared memory.

        A fragment written straight to global memory leaves each thread writing its few scattered
        elements; staged, the rows go out as wide coalesced copies (on the H200, a 4096^3 GEMM: 221.5
        -> 201.5 us, cuBLAS 200.4). Only for a 2-D tile of 16+ rows written after every loop, and only
        where shared memory holds it: beside what the kernel uses, or in place of its pipelined
        buffers, which are dead by then (TileLang reuses their memory).
        """
        src = self.bufs[op.value]
        if src.type.scope_name != tl.Scope.FRAGMENT or len(self.block_stack) > 1:
            return False
        dims = [d for d in src.shape if d != 1]
        width = _bits(tgraph.tensor_type(op.dest).element_type) // 8
        if len(dims) < 2 or dims[-2] < STAGED_STORE_MIN_ROWS or dims[-1] * width % 16:
            return False
        staged = prod(dims) * width
        smem = self.kernel.attributes.get("cleave.smem_bytes")
        used = smem.value.data if isinstance(smem, IntegerAttr) else SMEM_BYTES  # type: ignore[attr-defined]
        return used + staged <= SMEM_BYTES or staged + self.epilogue_bytes <= self.pipelined_bytes

    def _store_through_shared(self, op: itgraph.StoreOp, src_region: tl.RegionAttr | None = None, no_tma: bool = False) -> None:
        """`op`'s tile copied into a shared tile of the destination's type, then to global memory."""
        src = self.bufs[op.value]
        staged = self.alloc(src.shape, src.name + "_s", tl.Scope.SHARED, tgraph.tensor_type(op.dest).element_type)
        self.emit(tl.CopyOp(src.value, staged.value))
        self.emit(tl.CopyOp(staged.value, self.bufs[op.dest].value, src_region=src_region, dst_region=self.region(op.tmap), no_tma=no_tma))

    @cached_property
    def pipelined_bytes(self) -> int:
        """Shared bytes of the tiles the kernel's loops load, over all pipelining stages."""
        return self.stages * sum(
            _tile_nbytes(o.result)
            for loop in self.kernel.walk()
            if isinstance(loop, itgraph.SequentialOp)
            for o in loop.walk()
            if isinstance(o, itgraph.LoadOp)
        )

    @cached_property
    def epilogue_bytes(self) -> int:
        """Shared bytes of the tiles loaded after the kernel's last loop (in the dead stages' place)."""
        return sum(
            _tile_nbytes(o.result)
            for o in after_last_loop(self.kernel)
            if isinstance(o, itgraph.LoadOp) and o.causal_offset is None
        )

    def shape(self, value: SSAValue) -> tuple[int, ...]:
        """The static tile shape of `value` as allocated: its row axis padded where `self.pad` says."""
        shape = list(_static(value))
        if value in self.pad:
            shape[self.pad[value]] = self.pad_rows
        return tuple(shape)

    def real_region(self, value: SSAValue) -> tl.RegionAttr:
        """The rows of a padded tile that hold data (its unpadded extent), in the buffer's dims (a
        padded size-1 row axis is a dim of the buffer, of extent 1 here)."""
        real = [r for r, d in zip(_static(value), self.shape(value)) if d != 1] or [1]
        return tl.RegionAttr([sympy.Integer(0)] * len(real), real)

    def reads_as_gemm_operand(self, arg: SSAValue) -> bool:
        """Whether every read of kernel input `arg` is a load of a whole tile (not padded, not in place)
        that only tensor-core gemms read, in its type (no cast): such an input can be stored transposed
        (`stored_transposed`), its tiles loaded from the storage and the gemms told (transpose_A/_B).
        So can an input the kernel does not read (no copy of it is made for nothing)."""
        uses = list(arg.uses)  # (an input the kernel does not read, passed on to a later one, is taken as stored)
        for use in uses:
            load = use.operation
            if not isinstance(load, itgraph.LoadOp) or load.source is not arg or load.causal_offset is not None:
                return False
            if cleave.memory(load) == cleave.Memory.GLOBAL or load.result in self.pad:
                return False
            views, reads = [load.result], []
            while views:  # the tile and its reshapes (views of its buffer), each with its two dims last
                v = views.pop()
                shape = self.shape(v)
                if len(shape) < 2 or _squeezed(shape) != tuple(shape[-2:]):
                    return False
                for use in v.uses:
                    if isinstance(use.operation, tgraph.ReshapeOp):
                        views.append(use.operation.result)
                    else:
                        reads.append(use.operation)
            for mm in reads:
                # (16-bit operands only: Hopper's WGMMA reads an MN-major tile only for them, not TF32's)
                half = tgraph.tensor_type(load.result).element_type
                if not isinstance(mm, tgraph.MatmulOp) or mm.lhs is mm.rhs or tensor_core_type(mm) != half or not isinstance(half, (Float16Type, BFloat16Type)):
                    return False
                lhs, rhs, out = (list(self.shape(v)) for v in (mm.lhs, mm.rhs, mm.result))
                if not tensor_core_tile(out, lhs, rhs, self.threads, mm.transpose_b is not None):
                    return False
        return True

    def alloc_for(self, value: SSAValue, hint: str, scope: tl.Scope, element_type: Attribute = f32) -> _Buf:
        buf = self.alloc(self.shape(value), hint, scope, element_type)
        self.bufs[value] = buf
        return buf

    def expr(self, e: Dim) -> Dim:
        """An itgraph offset or extent as TileLang sees it (loop variables, padded dynamic dims)."""
        subst = {**self.padded, **self.subst}
        return sympy.expand(e.xreplace(subst)) if subst else e

    def padded_extent(self, e: Dim) -> Dim:
        """A grid extent counting blocks of the padded size of its dynamic dims, for a substitution
        of a grid variable (`expr` substitutes once, so not the dynamic dims inside it)."""
        return sympy.sympify(e).xreplace(self.padded)

    def region(self, tmap: itgraph.TmapAttr) -> tl.RegionAttr:
        return tl.RegionAttr([self.expr(o) for o in tmap.offset_exprs], list(tmap.tile_shape))

    def parallel(self, shape: Sequence[int], stmts: _Statements) -> Operation:
        dims = [d for d in shape if d != 1] or [1]
        return self.emit(tl.ParallelOp([f"i{n}" for n in range(len(dims))], dims, Region(Block(stmts.ops))))

    @staticmethod
    def loop_vars(shape: Sequence[int]) -> list[str | None]:
        """The T.Parallel variable of every dim of `shape` (None for size-1 dims)."""
        if all(d == 1 for d in shape):
            return [None] * len(shape)
        it = iter(f"i{n}" for n in range(len(shape)))
        return [next(it) if d != 1 else None for d in shape]

    # ------------------------------------------------------------------ kernel
    def lower(self) -> tl.KernelOp:
        k = self.kernel
        par = k.body.block.first_op
        assert isinstance(par, itgraph.ParallelOp)
        # global shapes and the grid may be symbolic (dynamic dims); tiles are static
        self.stored_transposed = {a for a, i in zip(k.body.block.args, k.inputs) if i.name_hint in self.transposed_names and self.reads_as_gemm_operand(a)}
        shapes = [_swapped(tgraph.tensor_type(a).shape) if a in self.stored_transposed else tgraph.tensor_type(a).shape for a in k.body.block.args]
        block = Block(arg_types=[tl.BufferType(shape, tgraph.tensor_type(a).element_type, tl.Scope.GLOBAL) for a, shape in zip(k.body.block.args, shapes)])
        for arg, new, shape in zip(k.body.block.args, block.args, shapes):
            name = self.fresh(arg.name_hint or "arg")
            new.name_hint = name
            self.bufs[arg] = _Buf(new, name, tuple(shape))  # type: ignore[arg-type]
        grid = [(v, e) for v, e in zip(par.var_names, par.extent_dims) if e != 1]
        if (raster := cleave.get(k, "cleave.raster", StringAttr)) is not None:  # launched fastest: bx
            grid.sort(key=lambda ve: ve[0] != raster.data)
        longest_first = _lengthening_vars(par)
        grid.sort(key=lambda ve: ve[0] in longest_first)  # launched slowest, and reversed (below)
        bx, by, bz = (symbol(v) for v in tl.GRID_VARS)
        if len(grid) > 3:  # T.Kernel has three grid dims: the leading ones share bx, the first fastest
            merged, grid = grid[: len(grid) - 2], grid[len(grid) - 2 :]
            stride = 1
            for v, e in merged:
                e = self.padded_extent(e)
                self.subst[symbol(v)] = sympy.Mod(sympy.floor(bx / stride) if stride != 1 else bx, e)  # stride may be symbolic
                stride *= e
            grid = [("_merged", stride), *grid]
        for (v, e), var in zip(grid, (bx, by, bz)):
            self.subst.setdefault(symbol(v), self.padded_extent(e) - 1 - var if v in longest_first else var)
        for v, e in zip(par.var_names, par.extent_dims):
            if e == 1:
                self.subst[symbol(v)] = sympy.Integer(0)
        self.block_stack.append(block)
        self.body(par.body.block.ops)
        self.block_stack.pop()
        if block.first_op is not None:
            block.insert_ops_before([*self.allocs, *self.prologue], block.first_op)
        else:
            block.add_ops([*self.allocs, *self.prologue])
        new = tl.KernelOp(k.sym_name.data, [self.expr(e) for _, e in grid] or [1], self.threads, len(k.outputs), Region(block))
        new.attributes |= {n: a for n, a in k.attributes.items() if n not in ("cleave.threads", "cleave.stages", "cleave.raster")}
        new.attributes["cleave.input_names"] = ArrayAttr(StringAttr(a.name_hint or f"arg{i}") for i, a in enumerate(k.inputs))
        if self.stored_transposed:
            new.attributes[tl.TRANSPOSED_INPUTS] = ArrayAttr(
                IntegerAttr(i, i64) for i, a in enumerate(k.body.block.args) if a in self.stored_transposed
            )
        new.attributes["cleave.passthrough"] = ArrayAttr(StringAttr(n) for n in self.passthrough)
        extents = [sympy.sympify(e) for _, e in grid]
        if self.sum_in_place and len(extents) == 2 and all(e.is_Integer for e in extents) and extents[0] * extents[1] >= 2 * SMS:
            # a GEMM grid of several waves: blocks in panels of SWIZZLE_PANEL rows share their A and B
            # tiles in L2 (TileLang's GEMM example's rasterization)
            new.attributes["cleave.swizzle_panel"] = IntegerAttr(SWIZZLE_PANEL, i64)
        # nvcc --use_fast_math (approximate exp2/rsqrt/division, as TileLang's attention examples): on the
        # H200 FlashAttention 553 -> 520 us at S4096 D128; every kernel is checked against float64 anyway
        new.attributes["cleave.fast_math"] = UnitAttr()
        hoist_input_loads(new)
        thread_copies_where_tma_cannot(new)
        # (after the thread copies are final: `tl.released_before_read` judges them)
        if self.no_warp_specialization or tl.released_before_read(new):
            new.attributes[tl.NO_WARP_SPECIALIZATION] = UnitAttr()
            unstaged_dynamic_loops(new)
        return new

    def body(self, ops) -> None:
        for op in ops:
            if isinstance(op, itgraph.LoadOp) and op.causal_offset is not None and computed_in_users(op):
                self.index_tiles[op.result] = op  # no tile: each user computes it (`causal_keep`)
            elif isinstance(op, itgraph.LoadOp) and op.causal_offset is not None:
                self.causal_tile(op)
            elif isinstance(op, itgraph.LoadOp) and cleave.memory(op) == cleave.Memory.GLOBAL:
                if not direct_gemv_operand(op):  # (hand-written IR) any other reader would need a copy
                    raise LoweringError(
                        "error: cleave-lower-tilelang: itgraph.load: #cleave<mem global> is only for the weight "
                        "of a one-row matmul's direct GEMV (place_memory.direct_gemv_operand)"
                    )
                src = self.bufs[op.source]  # no copy: the one consumer (a direct GEMV) reads it in place
                self.bufs[op.result] = _Buf(src.value, src.name, _static(op.result), tuple(self.region(op.tmap).offset_exprs))
            elif isinstance(op, itgraph.LoadOp) and op.source in self.stored_transposed:
                # the tile of an input stored transposed: its storage's tile, last two dims swapped
                # (`reads_as_gemm_operand`), one copy (TMA where the pipeline takes it)
                buf = self.alloc(_swapped(self.shape(op.result)), op.result.name_hint or "tile", tl.Scope.SHARED, tgraph.tensor_type(op.result).element_type)
                self.bufs[op.result] = buf
                self.transposed_tiles.add(buf.value)
                region = self.region(op.tmap)
                region = tl.RegionAttr(_swapped(region.offset_exprs), _swapped(region.size_exprs))
                no_tma = isinstance(op.parent_op(), itgraph.SequentialOp) and thread_copied_in_loop(op)
                copy = self.emit(tl.CopyOp(self.bufs[op.source].value, buf.value, src_region=region, no_tma=no_tma))
                self.loaded_at[buf.value] = (copy, len(self.block_stack))
            elif isinstance(op, itgraph.LoadOp):
                buf = self.alloc_for(op.result, op.result.name_hint or "tile", tl.Scope.SHARED, tgraph.tensor_type(op.result).element_type)
                real = self.real_region(op.result) if op.result in self.pad else None
                region = self.region(op.tmap)
                if real is not None and isinstance(op.parent_op(), itgraph.SequentialOp):
                    # in a pipelined loop (each stage a buffer of its own, which no clear before the
                    # loop reaches): the whole padded tile from the input, its rows past the tile's
                    # the input's next rows (zeros past its end), which stay in the padded rows.
                    # Several readers: a TMA copy (which zero-fills rows past the end), so that the
                    # warp-specialized pipeline releases it after its last reader (a thread copy was
                    # released after the first: swiglu T=7 wrong on the H200). One matmul its only
                    # reader: a thread copy, faster there (rmsnorm_matmul T=5, N=3000: 20.9 us
                    # against 26.7 by TMA)
                    sizes = list(region.size_exprs)
                    sizes[self.pad[op.result]] = sympy.Integer(self.pad_rows)
                    region = tl.RegionAttr(list(region.offset_exprs), sizes)
                    copy = self.emit(tl.CopyOp(self.bufs[op.source].value, buf.value, src_region=region, no_tma=thread_copied_in_loop(op)))
                    self.loaded_at[buf.value] = (copy, len(self.block_stack))
                    continue
                if real is not None:  # the real rows into a zeroed padded tile
                    self.prologue.append(tl.ClearOp(buf.value))
                if real is None and self.copy_by_slices(buf):
                    self.copy_slices(self.bufs[op.source].value, buf, region)
                    continue
                copy = self.emit(tl.CopyOp(self.bufs[op.source].value, buf.value, src_region=region, dst_region=real, no_tma=real is not None))
                self.loaded_at[buf.value] = (copy, len(self.block_stack))
            elif isinstance(op, itgraph.StoreOp):
                src = self.bufs[op.value]
                if op.value in self.pad:  # the real rows only, through shared memory (as TileLang's decode kernels)
                    self._store_through_shared(op, src_region=self.real_region(op.value), no_tma=True)
                elif self.stage_store(op):  # coalesced: fragment -> shared -> global (TileLang's GEMM epilogue)
                    self._store_through_shared(op)
                else:
                    self.emit(tl.CopyOp(src.value, self.bufs[op.dest].value, dst_region=self.region(op.tmap)))
            elif isinstance(op, itgraph.SequentialOp):
                self.sequential(op)
            elif isinstance(op, itgraph.YieldOp):
                continue
            elif isinstance(op, tgraph.MatmulOp):
                self.matmul(op)
            elif isinstance(op, tgraph.ReduceOp) and self.lanes is not None and op.result is self.lanes.chunk_max:
                self._lane_max(op)
            elif isinstance(op, tgraph.ReduceOp) and self.lanes is not None and op.result in self.lanes.sums:
                self._lane_sum(op)
            elif isinstance(op, tgraph.ReduceOp):
                self.reduce(op)
            elif isinstance(op, tgraph.ElementwiseOp):
                self.elementwise(op)
            elif isinstance(op, tgraph.SplitOp) and _squeezed(_static(op.input)) != _squeezed(_static(op.result)):
                self.split(op)
            elif isinstance(op, (tgraph.ReshapeOp, tgraph.SplitOp)):
                self.reshape(op)
            elif isinstance(op, itgraph.MaskOp):
                self.mask(op)
            else:
                raise LoweringError(f"error: cleave-lower-tilelang: {op.name}: no TileLang lowering")
            if (rm := self.running_max) is not None:
                if rm.chunk_max in op.results:
                    self._update_running_max(rm)
                    rm.alpha_ready = True
                for r in op.results:
                    if r in rm.updated and rm.alpha_ready:  # as TileLang's examples: the row sum's update next to it
                        self._rescaled_update(rm.updated.pop(r), self.bufs[r], rm.alpha)

    def reshape(self, op: Operation) -> None:
        src, res = op.operands[0], op.results[0]
        if _squeezed(_static(src)) != _squeezed(_static(res)):
            raise LoweringError(f"error: cleave-lower-tilelang: {op.name}: only adds or drops size-1 dims in a kernel")
        b = self.bufs[src]
        if b.origin is not None:  # a direct GEMV's weight read in place: its last two dims stay (`place_memory.weight_view`)
            self.bufs[res] = b
            return
        shape = self.shape(res)
        self.bufs[res] = _Buf(b.value, b.name, tuple(_swapped(shape)) if b.value in self.transposed_tiles else shape)  # same buffer, other view

    def split(self, op: tgraph.SplitOp) -> None:
        """A tile holding several parts of a split (a Split-K split inside a kernel chain): the parts
        are not a view of the source tile, so they are copied, part p's element q from p * piece + q."""
        src = self._shared(self.bufs[op.input])
        out = self.alloc_for(op.result, op.result.name_hint or "parts", tl.Scope.FRAGMENT, src.type.element_type)
        full = self.loop_vars(out.shape)
        k, piece = op.axis, out.shape[op.axis + 1]
        at = [symbol(v) if v is not None else sympy.Integer(0) for v in full]
        idx = [at[0] * piece + at[k + 1] if j == k else at[j + 1] for j in range(len(src.shape))]
        s = _Statements()
        x = s.add(tl.LoadOp(src.value, [e for e, d in zip(idx, src.shape) if d != 1] or [sympy.Integer(0)]))
        s.store(x, out, full)
        self.parallel(out.shape, s)

    def elementwise(self, op: tgraph.ElementwiseOp) -> None:
        res = op.results[0]
        if (scale := self.folded_terms.get(res)) is not None:  # `c s + t`: s's accumulator began at t / c
            self.inlined[res] = scale
            return
        if self.inline(op):
            self.inlined[res] = op
            return
        leaves = self.leaves(op.operands)
        # a cast's result is stored in its own type (the rounding it asks for); others compute in fp32
        elt = tgraph.tensor_type(res).element_type if isinstance(op, tgraph.CastOp) else f32
        out = self.reuse(op, elt, leaves) or self.alloc_for(res, res.name_hint or op.short_name(), tl.Scope.FRAGMENT, elt)
        full = self.loop_vars(out.shape)
        s = _Statements()
        laid = any(self.bufs[o].value in self.gemm_laid and self.bufs[o].shape == out.shape for o in leaves)

        def read(value: SSAValue) -> SSAValue:
            if (causal := self.index_tiles.get(value)) is not None:
                return self.causal_keep(s, causal, full)
            buf = self.bufs[value]
            x = s.load(self._invariant_operand(buf if laid else self._broadcast_operand(buf, out), out), full)
            return s.widened(x) if elt == f32 else x  # an fp16 tile's elements widened before an fp32 op

        if isinstance(op, tgraph.ExpOp) and op.input in self.inlined:
            s.store(s.add(math.Exp2Op(self._times(s, op.input, tgraph.LOG2E, read))), out, full)
        else:
            s.store(op.semantics().tilelang(s, *(self._value(s, o, read) for o in op.operands)), out, full)
        self.computed_at[out.value] = (self.parallel(out.shape, s), len(self.block_stack))
        if laid:
            self.gemm_laid.add(out.value)
        if any(self.bufs[o].value in self.from_loop_loads or self._loaded_in_this_loop(self.bufs[o]) for o in leaves):
            self.from_loop_loads.add(out.value)

    def inline(self, op: tgraph.ElementwiseOp) -> bool:
        """Whether `op`'s result is better computed inside its users' loops than in a tile of its own.

        So it is where every user is an element-wise op of this block over a tile of the same shape
        and `op` is either their only input from it or cheap (a multiply by a constant; one instruction
        again per user), or where a positive scale's user is a row max, which is then taken of the
        unscaled tile and scaled after (max(c x) = c max(x) for c > 0, exactly: rounding is monotone).
        Attention's `exp(c s - max(c s))` then is one pass over the score tile, `exp2(s * (c log2 e)
        - m * log2 e)`, one FMA per element, instead of three passes (H200, `bench/probes/fa_order.py`:
        S4096 D128 544 -> 504 us, S8192 D64 1584 -> 1433 us).
        """
        if computed_where_used(op):
            return True
        res = op.results[0]
        if (isinstance(op, tgraph.CastOp) and not _widening(op)) or not res.uses:
            return False
        users = [u.operation for u in res.uses]
        cheap = isinstance(op, tgraph.ScaleOp)
        if not cheap and len(users) > 1:
            return False
        for user in users:
            if user.parent_block() is not op.parent_block():
                return False
            if isinstance(user, tgraph.ElementwiseOp) and self.shape(user.results[0]) == self.shape(res):
                continue
            if isinstance(user, tgraph.ReduceOp) and self._serial_reduction(user) and not self._reads_index_tile(op):
                continue  # computed in the reduction's loop (`_reduce_inlined`)
            if (
                isinstance(user, tgraph.ReduceOp) and user.result not in self.deferred and (split := self._row_split(user)) > 1
                and not self._reads_index_tile(op)
            ):
                self.rows_folded[user.result] = split  # computed in the split rows' fold (`_reduce_rows_inlined`)
                continue
            if (
                cheap and isinstance(user, tgraph.ReduceOp) and user.kind.data == tgraph.ReduceKind.MAX
                and user.result not in self.deferred and op.value > 0 and op.input not in self.inlined
            ):
                continue
            return False
        return True

    def leaves(self, values: Sequence[SSAValue]) -> list[SSAValue]:
        """The values with a tile of their own that `values` are computed from (through inlined ops)."""
        out: list[SSAValue] = []
        for v in values:
            if v not in self.index_tiles:  # (a causal mask tile its users compute has none)
                out += self.leaves(self.inlined[v].operands) if v in self.inlined else [v]
        return out

    def _value(self, s: _Statements, value: SSAValue, read) -> SSAValue:
        """`value` at the loop's index: a load of its tile, or its inlined op's expression."""
        op = self.inlined.get(value)
        if op is None:
            return read(value)
        if isinstance(op, tgraph.CastOp):  # (a widening cast: exact, and its users compute in its type)
            return s.cast(self._value(s, op.input, read), tgraph.tensor_type(value).element_type)
        return op.semantics().tilelang(s, *(self._value(s, o, read) for o in op.operands))

    def _reads_index_tile(self, op: tgraph.ElementwiseOp) -> bool:
        """Whether `op` reads (through inlined ops) a causal tile its users compute (`causal_keep`)."""
        return any(o in self.index_tiles or (o in self.inlined and self._reads_index_tile(self.inlined[o])) for o in op.operands)

    def _serial_reduction(self, op: tgraph.ReduceOp) -> bool:
        """Whether `_reduce` lowers `op` as a serial loop over the reduced dim: it reduces any dim of
        its tile but the last (a Split-K combine's sum over the parts)."""
        shape = self.shape(op.input)
        dims = _squeezed(shape)
        return shape[op.axis] != 1 and sum(1 for d in shape[: op.axis] if d != 1) < len(dims) - 1

    def _times(self, s: _Statements, value: SSAValue, factor: float, read) -> SSAValue:
        """`value * factor`, the factor distributed over inlined sums, differences and scales, so that
        exp2's argument `(c s - m) * log2 e` is one FMA, `s * (c log2 e) - m * log2 e`. Not over a
        term that may be near fp32's limits (`_unbounded`): finfo(float32).min * log2 e overflows, and
        a row masked whole with it would be -inf + inf = NaN instead of uniform."""
        op = self.inlined.get(value)
        if isinstance(op, tgraph.ScaleOp):
            return s.binary(arith.MulfOp, self._value(s, op.input, read), s.const(op.value * factor, f32))
        if isinstance(op, (tgraph.SubOp, tgraph.AddOp)) and not any(self._unbounded(o) for o in op.operands):
            cls = arith.SubfOp if isinstance(op, tgraph.SubOp) else arith.AddfOp
            rhs = self._times(s, op.rhs, factor, self._shift_reader(s, read)) if isinstance(op, tgraph.SubOp) else self._times(s, op.rhs, factor, read)
            return s.binary(cls, self._times(s, op.lhs, factor, read), rhs)
        if isinstance(op, tgraph.SubOp):
            return s.binary(arith.MulfOp, s.binary(arith.SubfOp, self._value(s, op.lhs, read), self._value(s, op.rhs, self._shift_reader(s, read))), s.const(factor, f32))
        return s.binary(arith.MulfOp, self._value(s, value, read), s.const(factor, f32))

    def _shift_reader(self, s: _Statements, read):  # noqa: ANN001, ANN202 - a reader, as `_value` takes
        """`read`, except that a row max subtracted before an exp reads as 0 where it is -inf
        (`itgraph.rescale_reference`): its row is -inf throughout, so each exp is 0, not
        exp(-inf + inf) = NaN. A Split-K part whose keys are all masked (a left-padded batch) then adds
        nothing to the combine, as in the graph it came from. (An online softmax's running max holds
        that reference already.)"""
        def shifted(value: SSAValue) -> SSAValue:
            x = read(value)
            owner = value.owner
            running = (self.running_max is not None and value is self.running_max.chunk_max) or (
                self.lanes is not None and value is self.lanes.chunk_max
            )
            if not isinstance(owner, tgraph.ReduceOp) or owner.kind.data != tgraph.ReduceKind.MAX or running:
                return x
            return _rescale_reference(s, x)
        return shifted

    def _unbounded(self, value: SSAValue) -> bool:
        """Whether `value` may hold magnitudes near fp32's limits: it is computed (through element-wise
        ops) from a loaded tile or a constant term that is not f16 (f16's range is 65504), like a float
        mask input holding finfo(float32).min. Matmul results, reductions and causal 0/1 tiles are not."""
        if value in self.index_tiles or isinstance(tgraph.tensor_type(value).element_type, Float16Type):
            return False
        if (known := self.unbounded.get(value)) is not None:
            return known
        self.unbounded[value] = result = self._unbounded_uncached(value)
        return result

    def _unbounded_uncached(self, value: SSAValue) -> bool:
        op = value.owner
        while isinstance(op, (itgraph.MaskOp, tgraph.ReshapeOp)):  # (a dynamic kernel's mask fills -inf, which exp2 takes)
            op = op.input.owner
        if isinstance(op, itgraph.LoadOp):
            return True
        if isinstance(op, (tgraph.ScalarOp, tgraph.ScaleOp)) and abs(op.value) > 1.0e30:
            return True
        if isinstance(op, tgraph.ElementwiseOp):
            return any(self._unbounded(o) for o in op.operands)
        return False

    def _loaded_in_this_loop(self, buf: _Buf) -> bool:
        """Whether `buf` is a tile that the loop being lowered loads (not one loaded outside it)."""
        where = self.loaded_at.get(buf.value)
        return len(self.block_stack) > 1 and where is not None and where[1] == len(self.block_stack)

    def _broadcast_operand(self, buf: _Buf, out: _Buf) -> _Buf:
        """`buf` as an operand of a loop over `out` whose layout no gemm fixes: a register tile broadcast
        into a larger one (a norm's row values) is read through shared memory. Read from registers,
        TileLang lays the loop out after the small tile, giving each thread whole rows of `out`
        (GPT-2's layer_norm [16, 768]: `float sub[768]` per thread, spilled, each row computed 8 times)."""
        n = prod(_squeezed(buf.shape))
        # one value: every thread holds it; and the small tile must be laid out on its own: replicated
        # (n <= threads) or spread evenly (GPT-2 MLP's [192] bias over 128 threads has no layout alone)
        if buf.scope == tl.Scope.FRAGMENT and 1 < n < prod(_squeezed(out.shape)) and (n <= self.threads or n % self.threads == 0):
            return self._shared(buf)
        return buf

    def _invariant_operand(self, buf: _Buf, out: _Buf) -> _Buf:
        """`buf` as an operand of a loop over `out` inside a pipelined loop: a smaller tile loaded before
        that loop (a norm's row scales) is read from a register copy made once after its load.

        Read from shared memory inside TileLang's warp-specialized pipeline, such a tile gave wrong
        results on the H200 (rmsnorm -> matmul cut at T=128: 2 to 37 elements off by up to 7%,
        varying between runs; read from registers: exact)."""
        where = self.loaded_at.get(buf.value)
        if where is None or where[1] >= len(self.block_stack) or prod(_squeezed(buf.shape)) >= prod(_squeezed(out.shape)):
            return buf
        if buf.value not in self.register_copies:
            frag = self.alloc(buf.shape, buf.name + "_r", tl.Scope.FRAGMENT, buf.type.element_type)
            _insert_after(where[0], [tl.CopyOp(buf.value, frag.value)])
            self.register_copies[buf.value] = frag
        return self.register_copies[buf.value]

    def reuse(self, op: Operation, element_type: Attribute, operands: Sequence[SSAValue] | None = None) -> _Buf | None:
        """An operand's fragment that `op` may overwrite with its element-wise result, else None.

        A chain of element-wise ops then updates one register tile in place (as TileLang's own
        kernels do) instead of holding a tile per step: fewer live registers, no spills. The operand
        must be dead after `op`: every value viewing its buffer is used only by ops of this block at
        or before `op` (never by a later op, the loop's yield, or an op inside a loop, which runs
        again), and the tile has the result's shape and element type.
        """
        block = op.parent_block()
        assert block is not None
        position = {o: i for i, o in enumerate(block.ops)}
        here = position[op]

        def done(user: Operation) -> bool:  # the use is `op` or before it, in this block (or a loop there)
            while user not in position:
                if (parent := user.parent_op()) is None:
                    return False
                user = parent
            return position[user] <= here

        res = op.results[0]
        for operand in op.operands if operands is None else operands:
            buf = self.bufs[operand]
            if buf.scope != tl.Scope.FRAGMENT or buf.type.element_type != element_type or buf.shape != self.shape(res):
                continue
            views = [v for v, b in self.bufs.items() if b.value == buf.value]
            # (an inlined op reads its inputs where its users are lowered: those must be done too)
            readers = [v for v in self.inlined if any(self.bufs[x].value == buf.value for x in self.leaves([v]))]
            if all(done(use.operation) for v in views + readers for use in v.uses):
                self.bufs[res] = buf
                return buf
        return None

    def causal_tile(self, op: itgraph.LoadOp) -> None:
        """A tile of a causal mask input, computed from its indices instead of read (the input is
        never loaded)."""
        out = self.alloc_for(op.result, op.result.name_hint or "keep", tl.Scope.FRAGMENT)
        full = self.loop_vars(out.shape)
        s = _Statements()
        s.store(self.causal_keep(s, op, full), out, full)
        self.parallel(out.shape, s)

    def causal_keep(self, s: _Statements, op: itgraph.LoadOp, full: Sequence[str | None]) -> SSAValue:
        """The causal mask tile `op`'s element at the loop indices `full`, from its indices alone:
        T.if_then_else(key < query + offset + 1, 1, 0)."""
        assert op.causal_offset is not None
        offsets = [self.expr(o) for o in op.tmap.offset_exprs]
        row, col = (offsets[a] + (symbol(full[a]) if full[a] is not None else 0) for a in (-2, -1))
        keep = s.add(tl.IndexBelowOp(col, row + op.causal_offset + 1))
        return s.add(arith.SelectOp(keep, s.const(1.0, f32), s.const(0.0, f32)))

    def mask(self, op: itgraph.MaskOp) -> None:
        """Elements at or past the dynamic bound become the fill: T.if_then_else(pos < L, x, fill)."""
        res = op.result
        out = self.reuse(op, f32) or self.alloc_for(res, res.name_hint or "masked", tl.Scope.FRAGMENT)
        full = self.loop_vars(out.shape)
        axis = op.axis.value.data
        position = self.expr(op.offset_expr) + (symbol(full[axis]) if full[axis] is not None else 0)
        s = _Statements()
        x = s.load(self.bufs[op.input], full)
        inside = s.add(tl.IndexBelowOp(position, op.bound_dim))
        fill = s.const(itgraph.MASK_FILLS[op.fill.data], x.type)
        s.store(s.add(arith.SelectOp(inside, x, fill)), out, full)
        self.parallel(out.shape, s)
        if self.bufs[op.input].value in self.gemm_laid:
            self.gemm_laid.add(out.value)

    def reduce(self, op: tgraph.ReduceOp) -> None:
        if op.input in self.inlined and self._serial_reduction(op):
            self._reduce_inlined(op)
            return
        if op.input in self.inlined and op.result in self.rows_folded:
            self._reduce_rows_inlined(op, self.rows_folded[op.result])
            return
        if (scale := self.inlined.get(op.input)) is not None:  # the max of c x is c times the max of x (`inline`)
            assert isinstance(scale, tgraph.ScaleOp)
            self._reduce(self.bufs[scale.input], op.axis, False, op.result)
            out = self.bufs[op.result]
            staged = self._write_target(out, (op.result.name_hint or "red") + "_scaled")
            full = self.loop_vars(out.shape)
            s = _Statements()
            s.store(s.binary(arith.MulfOp, s.load(out, full), s.const(scale.value, f32)), staged, full)
            self.parallel(out.shape, s)
            self._copy_back(staged, out)
            return
        src = self.bufs[op.input]
        is_sum = op.kind.data == tgraph.ReduceKind.SUM
        if (wide := self.deferred.get(op.result)) is not None:
            # a loop-carried reduction: this chunk joins the wide accumulator element by element
            full = self.loop_vars(wide.shape)
            s = _Statements()
            s.store(s.binary(_fold(is_sum), s.load(wide, full), s.load(src, full)), wide, full)
            self.parallel(wide.shape, s)
            self.bufs[op.result] = wide
            return
        self._reduce(src, op.axis, is_sum, op.result)

    def _reduce(self, src: _Buf, src_axis: int, is_sum: bool, result: SSAValue) -> None:
        """`result` = the sum or max of tile `src` along `src_axis`."""
        name = result.name_hint or "red"
        axis = sum(1 for d in src.shape[:src_axis] if d != 1)
        if _squeezed(src.shape) == (1,) or src.shape[src_axis] == 1:
            raise LoweringError(f"error: cleave-lower-tilelang: tgraph.reduce: nothing to reduce in a tile of {list(src.shape)}")
        dims = [d for d in src.shape if d != 1]
        width = dims[-1]
        warp_op = tl.ReduceSumOp if is_sum else tl.ReduceMaxOp
        if (
            warp_reduced(dims, axis) and src.scope == tl.Scope.FRAGMENT and tuple(dims) not in self.cols_split
        ):  # rows of a register tile: TileLang's warp reduction (needs a power-of-two width)
            if src.value in self.gemm_laid:
                out = self.alloc_for(result, name, tl.Scope.FRAGMENT)
                self.emit(warp_op(src.value, out.value, axis, True))
                return
            # a fragment laid out by its own T.Parallel loop: its row values reach the rest of the
            # kernel through shared memory, where no gemm's fragment layout has to agree with theirs
            rows = self.alloc(self.shape(result), name + "_w", tl.Scope.FRAGMENT)
            self.emit(warp_op(src.value, rows.value, axis, True))
            self.bufs[result] = self._shared(rows)
            return
        if len(dims) == 1 and width >= LONG_VECTOR and width % self.threads == 0:
            # a long vector (a row stream's step of 640-2048 columns) reduced to one value: every
            # thread folds its elements in registers, then one reduction across the block (TileLang's
            # all-reduce), not split-th folds of a shared copy by `vector_split` threads, then a pass
            # over their partials (the LM head's row statistics: 32 of 64 threads busy, twice a step)
            if src.scope != tl.Scope.FRAGMENT or src.type.element_type != f32:  # (summed in fp32)
                held = self.alloc(src.shape, name + "_f", tl.Scope.FRAGMENT)
                self.emit(tl.CopyOp(src.value, held.value))
                src = held
            one = self.alloc(self.shape(result), name + "_w", tl.Scope.FRAGMENT)
            self.emit(warp_op(src.value, one.value, 0, True))
            self.bufs[result] = self._shared(one)
            return
        combine = _fold(is_sum)
        init = 0.0 if is_sum else float("-inf")
        split = self._split_rows(dims, axis)
        if split > 1:
            shared = self._shared(src)
            self._fold_rows(dims[0], width, split, is_sum, result, lambda st: st.add(tl.LoadOp(shared.value, [symbol("i0"), symbol("kk")])))
            return
        out = self.alloc_for(result, name, tl.Scope.FRAGMENT)
        # any other axis: a serial loop over the reduced dim around a parallel update
        src = self._shared(src)
        split = vector_split(dims[0], self.threads) if len(dims) == 1 else 1
        if split > 1:
            # one row reduced to one value: `split` threads each take every split-th element, then
            # one pass over their partials (through shared memory), not one thread's serial loop
            part = self.alloc((split,), out.name + "_part", tl.Scope.FRAGMENT)
            self.emit(tl.FillOp(part.value, init))
            st = _Statements()
            x = st.add(tl.LoadOp(src.value, [symbol("kk") * split + symbol("i0")]))
            st.store(st.binary(combine, st.load(part, ["i0"]), x), part, ["i0"])
            self.serial("kk", dims[0] // split, lambda: self.parallel(part.shape, st))
            part = self._shared(part)
            self.bufs[result] = self._serial_fold(out, is_sum, split, lambda s, full: s.load(part, ["kk"]))
            return
        self.bufs[result] = self._serial_fold(out, is_sum, src.shape[src_axis], lambda s, full: s.load(src, _at_kk(full, src_axis)))

    def _reduce_inlined(self, op: tgraph.ReduceOp) -> None:
        """A reduction over a leading dim of an element-wise expression (`inline`), computed in the
        serial loop from the expression's leaves: a combine's `sum_s(cast(part_s) * rescale_s)` reads
        each part once, with no fp32 tile of the products staged through shared memory."""
        out = self.alloc_for(op.result, op.result.name_hint or "red", tl.Scope.FRAGMENT)
        shared: dict[SSAValue, _Buf] = {}  # each leaf's shared copy, made before the loop

        def element(s: _Statements, full: list[str | None]) -> SSAValue:
            def read(value: SSAValue) -> SSAValue:
                if value not in shared:
                    shared[value] = self._shared(self.bufs[value])
                return s.widened(s.load(shared[value], _at_kk(full, op.axis)))  # a column's squares in fp32

            return self._value(s, op.input, read)

        self.bufs[op.result] = self._serial_fold(out, op.kind.data == tgraph.ReduceKind.SUM, self.shape(op.input)[op.axis], element)

    def _split_rows(self, dims: Sequence[int], axis: int) -> int:
        """The threads a row that `_reduce` splits the rows of a tile of (squeezed) `dims` reduced along
        (squeezed) `axis` over (`row_split`; 1: none)."""
        if len(dims) != 2 or axis != 1 or tuple(dims) in self.cols_split:
            return 1
        return row_split(dims[0], dims[1], self.threads)

    def _row_split(self, op: tgraph.ReduceOp) -> int:
        """`_split_rows` of `op`'s input tile, where TileLang's warp reduction does not take the rows
        whole (a width not a power of two)."""
        shape = self.shape(op.input)
        dims = [d for d in shape if d != 1]
        if shape[op.axis] == 1 or (dims[-1] >= 8 and dims[-1] & (dims[-1] - 1) == 0):
            return 1
        return self._split_rows(dims, sum(1 for d in shape[: op.axis] if d != 1))

    def _reduce_rows_inlined(self, op: tgraph.ReduceOp, split: int) -> None:
        """A row reduction of an element-wise expression (`inline`) split over `split` threads a row,
        each folding the expression computed from its leaves' shared tiles: a norm's sum of squares
        of [4, 5120] reads x once, with no fp32 tile of the squares (80 KiB of shared memory, one
        block an SM) staged between them."""
        shape = self.shape(op.input)
        rows, width = (d for d in shape if d != 1)
        full = _at_kk(self.loop_vars(shape), op.axis)
        shared: dict[SSAValue, _Buf] = {}  # each leaf's shared copy, made before the loop

        def element(st: _Statements) -> SSAValue:
            def read(value: SSAValue) -> SSAValue:
                if value not in shared:
                    shared[value] = self._shared(self.bufs[value])
                return st.widened(st.load(shared[value], full))  # summed in fp32 from fp32 elements

            return self._value(st, op.input, read)

        self._fold_rows(rows, width, split, op.kind.data == tgraph.ReduceKind.SUM, op.result, element)

    def _fold_rows(self, rows: int, width: int, split: int, is_sum: bool, result: SSAValue, element) -> None:  # noqa: ANN001 - statements -> the element at (i0, kk)
        """`result` = the row sums (else maxima) of a `rows` x `width` tile whose element at row `i0`,
        column `kk` `element` computes: rows too wide for one warp reduction (a width such as 768),
        `split` threads a row each folding every split-th element, then a warp reduction of their
        partials. A serial loop with one thread a row left most threads idle, and its row values,
        read by the tile's other loops, made TileLang give each thread whole rows of those tiles
        (GPT-2's layer_norm [16, 768]: 1536 floats a thread, 0.02x PyTorch)."""
        name = result.name_hint or "red"
        part = self.alloc((rows, split), name + "_part", tl.Scope.FRAGMENT)
        self.emit(tl.FillOp(part.value, 0.0 if is_sum else float("-inf")))
        st = _Statements()
        x = element(st)
        _substitute_kk(st.ops, symbol("kk") * split + symbol("i1"))
        st.store(st.binary(_fold(is_sum), st.load(part, ["i0", "i1"]), x), part, ["i0", "i1"])
        self.serial("kk", width // split, lambda: self.parallel(part.shape, st))
        out = self.alloc(self.shape(result), name + "_w", tl.Scope.FRAGMENT)
        self.emit((tl.ReduceSumOp if is_sum else tl.ReduceMaxOp)(part.value, out.value, 1, True))
        self.bufs[result] = self._shared(out)

    def _serial_fold(self, out: _Buf, is_sum: bool, extent: int, element) -> _Buf:  # noqa: ANN001 - (statements, out's loop variables) -> the value at kk
        """`out` = the sum (else the max) over a serial `kk` of `extent` of `element`, the value at kk
        for each element of `out` (its loop variables `full`); returns the buffer its readers read.

        Where `out` has fewer elements than the block has threads, `fold_lanes` threads share each
        element: lane j folds steps kk * lanes + j, then one reduction adds up the lanes (a Split-K
        combine's [16] row maxima over 32 parts on 256 threads were 32 dependent steps on 16 threads).
        The reduction lays `out` out, so its readers then read a shared copy (as `direct_gemv`'s)."""
        init = 0.0 if is_sum else float("-inf")
        lanes = fold_lanes(prod(out.shape), extent, self.threads)
        if lanes == 1:
            self.emit(tl.FillOp(out.value, init))
            full = self.loop_vars(out.shape)
            s = _Statements()
            acc = s.load(out, full)
            s.store(s.binary(_fold(is_sum), acc, element(s, full)), out, full)
            self.serial("kk", extent, lambda: self.parallel(out.shape, s))
            return out
        part = self.alloc((*out.shape, lanes), out.name + "_part", tl.Scope.FRAGMENT)
        self.emit(tl.FillOp(part.value, init))
        pv = self.loop_vars(part.shape)
        s = _Statements()
        acc = s.load(part, pv)
        x = element(s, pv[:-1])
        s.store(s.binary(_fold(is_sum), acc, x), part, pv)
        _substitute_kk(s.ops, symbol("kk") * lanes + symbol(pv[-1]))
        self.serial("kk", extent // lanes, lambda: self.parallel(part.shape, s))
        self.emit((tl.ReduceSumOp if is_sum else tl.ReduceMaxOp)(part.value, out.value, len(part.type.shape) - 1, True))
        return self._shared(out)

    @staticmethod
    def copy_by_slices(buf: _Buf) -> bool:
        """Whether a copy into `buf` goes one slice of its first dim at a time: TileLang 0.1.15 fails
        to lay out one copy of a tile of 3+ dims whose next-to-last dim is not a power of two ("Mapped
        indices are not independent": a Split-K combine's [16, 3, 16] parts of a T=3 projection, its
        [4, 96, 16] parts of a matmul chain), and lowers the 2-D copy of each slice."""
        shape = buf.type.shape
        rows = shape[-2] if len(shape) >= 3 else None
        return rows is not None and rows.is_Integer and int(rows) & (int(rows) - 1) != 0

    def copy_slices(self, src: SSAValue, buf: _Buf, region: tl.RegionAttr) -> None:
        """`buf` = `region` of `src`, by a serial loop over the buffer's first dim (`copy_by_slices`)."""
        full = list(buf.shape)
        first = next(i for i, d in enumerate(full) if d != 1)  # the buffer's first dim, in the tile's shape
        offsets, sizes = list(region.offset_exprs), list(region.size_exprs)
        kk = symbol("kk")
        offsets[first] = offsets[first] + kk
        sizes[first] = 1
        dims = buf.type.shape

        def body() -> None:
            self.emit(tl.CopyOp(src, buf.value, src_region=tl.RegionAttr(offsets, sizes),
                                dst_region=tl.RegionAttr([kk, *[0] * (len(dims) - 1)], [1, *dims[1:]]), no_tma=True))

        # unrolled plain loads: every slice's global loads are in flight at once (a TMA copy per
        # slice would wait for each in turn)
        self.serial("kk", int(full[first]), body, unroll=True)

    def serial(self, var: str, extent: int, body, unroll: bool = False) -> None:
        loop = tl.SerialOp(var, extent, unroll=unroll)
        self.emit(loop)
        self.block_stack.append(loop.body.block)
        body()
        self.block_stack.pop()

    def matmul(self, op: tgraph.MatmulOp) -> None:
        a, b = self.bufs[op.lhs], self.bufs[op.rhs]
        rm = self.running_max
        if rm is not None and op.result in rm.in_place:
            # acc = acc * alpha, then the product accumulates into it (no clear, no second tile)
            out = rm.in_place[op.result]
            self.bufs[op.result] = out
            full = self.loop_vars(out.shape)
            s = _Statements()
            s.store(s.binary(arith.MulfOp, s.load(out, full), s.load(rm.alpha, full)), out, full)
            self.parallel(out.shape, s)
            clear = False
        elif op.result in self.sum_in_place:
            out = self.sum_in_place[op.result]
            self.bufs[op.result] = out
            clear = False
        else:
            out = self.alloc_for(op.result, op.result.name_hint or "acc", tl.Scope.FRAGMENT)
            clear = True
        ta, b_stored = a.value in self.transposed_tiles, b.value in self.transposed_tiles
        tt = (op.transpose_b is not None) != b_stored  # B loaded from its storage: [N, K] <-> [K, N]
        a_shape = tuple(_swapped(a.shape)) if ta else a.shape
        b_shape = tuple(_swapped(b.shape)) if b_stored else b.shape
        m, n, k = out.shape[-2], out.shape[-1], a_shape[-1]
        batch_one = all(d == 1 for d in out.shape[:-2] + a_shape[:-2] + b_shape[:-2])
        if b.origin is not None:  # placement left the weight in global memory
            self.direct_gemv(op, a, b, out, clear)
            return
        if ta or b_stored:
            # (`reads_as_gemm_operand` chose these tiles for tensor-core gemms only)
            assert tensor_core_tile(out.shape, a_shape, b_shape, self.threads, tt), "a tile stored transposed reaches a CUDA-core matmul"
        if tensor_core_tile(out.shape, a_shape, b_shape, self.threads, tt):
            # a computed A operand stays in registers (cast to fp16) when the gemm has a whole
            # warpgroup of 64 rows per 128 threads (wgmma takes A from a fragment); below that (fewer
            # rows, or warpgroups that split the columns: MLA's [64, 512] tile on 256 threads), TileLang
            # cannot give the fragment both the producer's and this gemm's layout: stage it in shared memory.
            # So too with several warpgroups of more than 64 rows each: a gemm result gives warpgroup w
            # rows [w m/g, (w + 1) m/g), an A operand rows 64 w + 64 g j ("Layout infer conflict":
            # attention's [256, 64] tile on 256 threads)
            if {a.value, b.value} & self.from_loop_loads:
                self.no_warp_specialization = True
            groups = max(self.threads // 128, 1)
            half = tensor_core_type(op)
            # (TF32 takes its A operand from shared memory: TileLang lowers an fp32 gemm to mma.sync)
            in_registers = m % 64 == 0 and m // 64 >= groups and (groups == 1 or m == 64 * groups) and half != f32 and not ta
            a_op = self._operand_fp16(a, tl.Scope.FRAGMENT if in_registers else tl.Scope.SHARED, half)
            b_op = self._operand_fp16(b, tl.Scope.SHARED, half)
            if clear and not self.fold_term(op, out):
                self.emit(tl.ClearOp(out.value))
            self._copy_last(b_op)
            self.emit(tl.GemmOp(a_op, b_op, out.value, tt, transpose_a=ta))
            self.gemm_laid.add(out.value)
            if m == 16 and self.threads > 32:  # one warp of rows: every warp holds a slice of the columns
                self.cols_split.add((m, n))
            return
        # CUDA-core matmul: C[.., m, n] += A[.., m, kk] * B[.., kk, n] over a serial kk; operands
        # are read from shared memory (a fragment can only be indexed by its owning threads)
        a, b = self._shared(a), self._shared(b)
        split = gemv_split(m, n, k, self.threads) if batch_one else 1
        if split > 1:
            vector = 128 // _bits(b.type.element_type)
            if tt:
                # B's rows are K-contiguous: each thread takes a 16-byte run of a row (one vector
                # load from shared memory; eight threads read a row's 128 bytes without bank conflicts)
                split *= vector if k % (split * vector) == 0 else 1
            else:
                split = gemv_rows_per_step(split, k, vector)
            self.gemv(a, b, out, tt, split, clear)
            return
        def product(s: _Statements, full: list[str | None]) -> SSAValue:
            lhs_vars = _align(full[:-2], a.shape, full[-2], "kk" if a.shape[-1] != 1 else None)
            if tt:
                rhs_vars = _align(full[:-2], b.shape, full[-1], "kk" if b.shape[-1] != 1 else None)
            else:
                rhs_vars = _align(full[:-2], b.shape, "kk" if b.shape[-2] != 1 else None, full[-1])
            return s.binary(arith.MulfOp, s.widened(s.load(a, lhs_vars)), s.widened(s.load(b, rhs_vars)))

        if clear:  # a fresh accumulator: a fold (threads share its elements where it has few)
            self.bufs[op.result] = self._serial_fold(out, True, k, product)
            return
        full = self.loop_vars(out.shape)
        s = _Statements()
        s.store(product(s, full), out, full, accumulate=True)
        self.serial("kk", k, lambda: self.parallel(out.shape, s))

    def fold_term(self, op: tgraph.MatmulOp, out: _Buf) -> bool:
        """Start the accumulator of `s = op` at `t / c` instead of 0 where its only use is `c s + t`
        (c > 0) and `t` is a causal mask's penalty, computed from indices before the gemm (TileLang's
        causal example starts its score accumulator at 0 or -inf the same way). The sum is then
        `c * acc`: the scale stays inlined (its row max taken unscaled, exp2's one FMA) and no pass
        after the gemm adds the mask. Where the mask keeps an element t = 0, so the value is exactly
        c s; a masked one is c s + t up to rounding of t (-3e4 and below: exp gives 0 either way)."""
        uses = list(op.result.uses)
        if len(uses) != 1 or not isinstance(scale := uses[0].operation, tgraph.ScaleOp) or scale.value <= 0:
            return False
        adds = list(scale.result.uses)
        if len(adds) != 1 or not isinstance(add := adds[0].operation, tgraph.AddOp):
            return False
        term = add.rhs if add.lhs is scale.result else add.lhs
        if term is scale.result or self.shape(term) != self.shape(add.result) or not isinstance(term.owner, Operation):
            return False
        if not computed_in_users(term.owner):
            return False  # (from indices alone: computed here, wherever its ops stand)
        for user in (u.operation for u in add.result.uses):
            same = isinstance(user, tgraph.ElementwiseOp) and self.shape(user.results[0]) == self.shape(add.result)
            row_max = isinstance(user, tgraph.ReduceOp) and user.kind.data == tgraph.ReduceKind.MAX and user.result not in self.deferred
            if user.parent_block() is not add.parent_block() or not (same or row_max):
                return False
        full = self.loop_vars(out.shape)
        s = _Statements()

        def value(v: SSAValue) -> SSAValue:
            if isinstance(v.owner, itgraph.LoadOp):
                return self.causal_keep(s, v.owner, full)
            assert isinstance(v.owner, tgraph.ElementwiseOp)
            return v.owner.semantics().tilelang(s, *(value(o) for o in v.owner.operands))

        s.store(s.binary(arith.MulfOp, value(term), s.const(1.0 / scale.value, f32)), out, full)
        self.parallel(out.shape, s)
        self.folded_terms[add.result] = scale
        return True

    def _copy_last(self, tile: SSAValue) -> None:
        """Move the copy that loads `tile` in the block being lowered to its end, right before the gemm
        that reads it (after P's rescale and cast: TileLang's attention examples' order, which the
        H200 ran 1-3% faster, `bench/results/fa_order_2026-12-02_H200.md`)."""
        where = self.loaded_at.get(tile)
        block = self.block_stack[-1]
        if where is None or where[0].parent_block() is not block or where[0] is block.last_op:
            return
        copy = where[0]
        later = list(block.ops)[list(block.ops).index(copy) + 1 :]
        if any(tile in o.operands for op in later for o in op.walk()):  # read before this gemm (MLA's K is its V)
            return
        copy.detach()
        block.add_op(copy)

    def gemv(self, a: _Buf, b: _Buf, out: _Buf, tt: bool, split: int, clear: bool) -> None:
        """A one-row matmul C[n] (+)= sum_k A[k] B[k, n] with the threads splitting both K and N (as
        TileLang's GEMV example): `split` partial sums per column, partial (s, n) adding up
        k = kk * split + s over a serial kk (a warp reads consecutive rows of B), then the partials
        summed through shared memory. The contiguous dim of B (n, or k when transposed) is the
        innermost parallel dim; `split` may exceed the threads per column (several partials per
        thread, which TileLang vectorizes along that dim)."""
        n, k = out.shape[-1], a.shape[-1]
        part_shape = (n, split) if tt else (split, n)
        part = self.alloc(part_shape, out.name + "_part", tl.Scope.FRAGMENT)
        self.emit(tl.ClearOp(part.value))
        pv = self.loop_vars(part_shape)
        s_var, n_var = (pv[1], pv[0]) if tt else (pv[0], pv[1])
        kexpr = symbol("kk") * split + symbol(s_var)
        ncol = symbol(n_var) if n_var is not None else sympy.Integer(0)

        st = _Statements()
        x = st.widened(st.add(tl.LoadOp(a.value, _operand_index(a, {-1: kexpr}))))
        y = st.widened(st.add(tl.LoadOp(b.value, _operand_index(b, {-2: ncol, -1: kexpr} if tt else {-2: kexpr, -1: ncol}))))
        st.store(st.binary(arith.MulfOp, x, y), part, pv, accumulate=True)
        self.serial("kk", k // split, lambda: self.parallel(part_shape, st))
        if split >= GEMV_BLOCK_REDUCE:
            # many partials a column: one reduction across the block (TileLang's all-reduce), not
            # `split` dependent steps through shared memory (a norm's sum of squares as x @ x^T:
            # 1024 partials folded by one thread)
            kept = [i for i, d in enumerate(part_shape) if d != 1]
            sums = self.alloc(out.shape, out.name + "_sums", tl.Scope.FRAGMENT)
            self.emit(tl.ReduceSumOp(part.value, sums.value, kept.index(1 if tt else 0), True))
            sums = self._shared(sums)
            if clear:
                self.emit(tl.ClearOp(out.value))
            full = self.loop_vars(out.shape)
            st = _Statements()
            st.store(st.load(sums, full), out, full, accumulate=True)
            self.parallel(out.shape, st)
            return
        part_s = self._shared(part)
        if clear:
            self.emit(tl.ClearOp(out.value))
        full = self.loop_vars(out.shape)
        st = _Statements()
        col = [v for v, d in zip(full, out.shape) if d != 1]
        part_idx = [symbol(col[0]) if col else sympy.Integer(0), symbol("kk")] if tt else [symbol("kk"), symbol(col[0]) if col else sympy.Integer(0)]
        y = st.add(tl.LoadOp(part_s.value, [e for e, d in zip(part_idx, part_shape) if d != 1] or [sympy.Integer(0)]))
        st.store(y, out, full, accumulate=True)
        self.serial("kk", split, lambda: self.parallel(out.shape, st))

    def direct_gemv(self, op: tgraph.MatmulOp, a: _Buf, b: _Buf, out: _Buf, clear: bool) -> None:
        """C[n] (+)= sum_k A[k] W(k, n) with W's tile read straight from global memory (TileLang's
        examples/gemv form): each step every thread loads one 16-byte vector of a weight row
        (TileLang vectorizes the loads along the row) into fp32 partial sums, which one reduction
        adds up at the end.
        - Rows (nn.Linear's [N, K], `transpose_b`; `place_memory.direct_gemv_split`): partial (n, s)
          sums k = kk * split + s, `split` a warp's lanes times one vector each; a warp reduction
          over s. The K loop is unrolled: each thread then has the loads of several steps in flight
          (H200, W [4096, 14336]: 33.8 -> 28.8 us; `gemv_forms_2026-12-02_H200.md`).
        - Columns ([K, N]; `place_memory.direct_gemv_columns`): partial (r, n) sums k = kk * rows + r,
          a slab of `rows` whole rows per step; a reduction over r. Not unrolled: its loops are short
          (Split-K parts), where unrolling lost (`gemv_forms_2026-12-02_H200.md`)."""
        n, k = out.shape[-1], a.shape[-1]
        bits = _bits(b.type.element_type)
        rows_of_w = op.transpose_b is not None
        step = direct_gemv_split(k, bits) if rows_of_w else direct_gemv_columns(n, k, bits, self.threads, max_steps=None)
        if not step:
            raise LoweringError(f"error: cleave-lower-tilelang: no direct GEMV step of {self.threads} threads divides a weight tile of {k} x {n}")
        a = self._shared(a)
        part = self.alloc((n, step) if rows_of_w else (step, n), out.name + "_part", tl.Scope.FRAGMENT)
        self.emit(tl.ClearOp(part.value))
        kexpr = symbol("kk") * step + symbol("i1" if rows_of_w else "i0")
        st = _Statements()
        # products in fp32, as TileLang's example (two fp16 operands would multiply in fp16)
        x = st.cast(st.add(tl.LoadOp(a.value, _operand_index(a, {-1: kexpr}))), f32)
        w_at = {-2: symbol("i0"), -1: kexpr} if rows_of_w else {-2: kexpr, -1: symbol("i1")}
        y = st.cast(st.add(tl.LoadOp(b.value, _operand_index(b, w_at))), f32)
        st.store(st.binary(arith.MulfOp, x, y), part, ["i0", "i1"], accumulate=True)
        self.serial("kk", k // step, lambda: self.parallel(part.shape, st), unroll=rows_of_w)
        self.emit(tl.ReduceSumOp(part.value, out.value, 1 if rows_of_w else 0, clear))
        if clear:  # the reduction lays the row values out; the rest of the kernel reads them from shared memory
            self.bufs[op.result] = self._shared(out)

    def _write_target(self, buf: _Buf, name: str) -> _Buf:
        """Where a parallel loop that reads `buf` stores its new value: `buf` if it is a fragment, else a
        fragment that `_copy_back` then copies into it. A shared tile of fewer elements than threads (the
        row maxima a fold leaves there, `_serial_fold`) has several threads an element, and one thread's
        store would race with another's load (`tl.replicated_shared_updates`)."""
        return self.alloc(buf.shape, name, tl.Scope.FRAGMENT) if buf.scope == tl.Scope.SHARED else buf

    def _copy_back(self, staged: _Buf, buf: _Buf) -> None:
        """After the loop that `_write_target` gave `staged` to: its values into `buf`."""
        if staged is not buf:
            self.emit(tl.CopyOp(staged.value, buf.value))

    def _shared(self, buf: _Buf) -> _Buf:
        """`buf` itself if it is in shared memory, else a shared copy of it."""
        if buf.scope == tl.Scope.SHARED:
            return buf
        copy = self.alloc(buf.shape, buf.name + "_s", tl.Scope.SHARED, buf.type.element_type)
        self.emit(tl.CopyOp(buf.value, copy.value))
        return copy

    def _operand_fp16(self, buf: _Buf, scope: tl.Scope, half_type: Attribute = f16) -> SSAValue:
        """`buf` as a gemm operand in `half_type` (`tensor_core_type`: fp16, bf16 or fp32), in `scope`.
        A tile computed before the loop being lowered (a rotary embedding of attention's Q) is
        converted once, right after it is computed, and the kernel goes without warp specialization."""
        half = buf.type.element_type == half_type
        if half and (buf.scope == tl.Scope.SHARED or (scope == tl.Scope.FRAGMENT and buf.scope == tl.Scope.FRAGMENT)):
            return buf.value  # a loaded tile (or a view of one) feeds the tensor cores as it is
        if (buf.value, scope) in self.fp16_operands:
            return self.fp16_operands[buf.value, scope]
        copies: list[Operation] = []
        src = buf
        if scope == tl.Scope.SHARED and buf.scope == tl.Scope.FRAGMENT and buf.shape[-2] == 16 and self.threads > 32:
            # 16 rows over several warps: the fragment is replicated across threads, and written
            # straight into the gemm's (swizzled) operand by one replica under an `if` on threadIdx it
            # makes TileLang hoist a barrier out of that `if` ("[ThreadSync] ... the race remains");
            # through a plain shared tile first (16 rows: little shared memory)
            src = self.alloc(buf.shape, buf.name + "_hs", tl.Scope.SHARED, half_type)
            copies.append(tl.CopyOp(buf.value, src.value))
        cast = self.alloc(buf.shape, buf.name + "_h", scope, half_type)
        copies.append(tl.CopyOp(src.value, cast.value))
        where = self.computed_at.get(buf.value)
        if where is not None and where[1] < len(self.block_stack):
            # a gemm operand computed before its pipelined loop: 2.3e-2 error on the H200 under
            # TileLang's warp-specialized pipeline (`place_memory.hoist_invariant_ops`)
            self.no_warp_specialization = True
            _insert_after(where[0], copies)
            self.fp16_operands[buf.value, scope] = cast.value
        else:
            for c in copies:
                self.emit(c)
        return cast.value

    def sequential(self, op: itgraph.SequentialOp) -> None:
        kinds = op.accumulate_kinds
        term = op.body.block.last_op
        assert isinstance(term, itgraph.YieldOp)
        rescaled = AccumulateKind.RESCALED_SUM in kinds
        lanes = self._plan_lanes(op, term) if rescaled else None
        deferred = {  # (in a lane-wise loop, its plain sums: the others are the lanes')
            i: self.alloc(self.shape(value.owner.input), (value.name_hint or "red") + "_wide", tl.Scope.FRAGMENT)
            for i, (kind, value) in enumerate(zip(kinds, term.values))
            if (not rescaled or (lanes is not None and kind == AccumulateKind.SUM)) and self._defers_reduction(op, kind, value)
        }
        in_lanes = {} if lanes is None else {
            i: lanes.sums.get(v, lanes.m_lanes) for i, (k, v) in enumerate(zip(kinds, term.values)) if k != AccumulateKind.SUM
        }
        accs = [
            deferred[i] if i in deferred else in_lanes[i] if i in in_lanes else self.alloc_for(r, (r.name_hint or "acc") + "_acc", tl.Scope.FRAGMENT)
            for i, r in enumerate(op.results)
        ]
        self.deferred.update((term.values[i], wide) for i, wide in deferred.items())
        for buf, kind in zip(accs, kinds):
            self.emit(tl.FillOp(buf.value, float("-inf")) if kind == AccumulateKind.MAX else tl.ClearOp(buf.value))
        var = self.fresh(op.var_name)
        self.subst[symbol(op.var_name)] = symbol(var)
        # a causal mask's KV loop stops at the diagonal block (passes/causal.py proves it exact)
        bound = diagonal_extent(op)
        loop = tl.PipelinedOp(var, self.expr(op.extent_dim if bound is None else bound), self.stages)
        self.emit(loop)
        self.block_stack.append(loop.body.block)
        online = self._plan_running_max(op, term, accs) if rescaled and lanes is None else None
        self.lanes = lanes
        summed = {
            value: acc
            for acc, kind, value in zip(accs, kinds, term.values)
            if kind == AccumulateKind.SUM and isinstance(value.owner, tgraph.MatmulOp) and value.owner.parent_block() is op.body.block
            and value.has_one_use() and _squeezed(self.shape(value)) == _squeezed(acc.shape)
        }
        self.sum_in_place.update(summed)
        self.body(op.body.block.ops)
        parts = [self.bufs[v] for v in term.values]
        if rescaled and online is None and lanes is None:
            self._rescale_after(accs, parts, kinds)
        for acc, part, kind, value in zip(accs, parts, kinds, term.values):
            if kind == AccumulateKind.RESCALED_SUM and online is not None:
                if value in online.updated:  # not updated in the body yet: acc * alpha + part
                    self._rescaled_update(online.updated.pop(value), part, online.alpha)
                continue
            if kind == AccumulateKind.RESCALED_SUM or (kind == AccumulateKind.MAX and rescaled) or value in summed or value in self.deferred:
                continue  # (a lane-wise loop's accumulators are updated in its body too)
            full = self.loop_vars(acc.shape)
            s = _Statements()
            update = s.binary(_fold(kind == AccumulateKind.SUM), s.load(acc, full), s.load(part, full))
            s.store(update, acc, full)
            self.parallel(acc.shape, s)
        self.block_stack.pop()
        del self.subst[symbol(op.var_name)]
        self.running_max = None
        self.lanes = None
        for i, wide in deferred.items():
            reduce = term.values[i].owner
            assert isinstance(reduce, tgraph.ReduceOp)
            self._reduce(wide, reduce.axis, kinds[i] == AccumulateKind.SUM, op.results[i])
        if lanes is not None:
            self._reduce_lanes(op, term, lanes)

    def _plan_lanes(self, op: itgraph.SequentialOp, term: itgraph.YieldOp) -> _LaneSoftmax | None:
        """The lane-wise form of an online softmax loop without matmuls over a grid of fewer blocks than
        SMs (a log-sum-exp or a softmax's statistics over a vocabulary, a few rows a block): each
        iteration's chunk max and rescaled sums are rows of the chunk's tile, and reducing them across
        threads takes barriers in every iteration of a loop that is bound by its latency. Each element
        position (lane) keeps its own running max and rescaled sums instead, for two exps an element
        rather than one; the rows are reduced once after the loop (`_reduce_lanes`). None where the
        loop is not of that form (`SequentialOp.running_max_form`, every rescaled sum a row sum over the
        chunk max's axis of a tile shaped like its, read by the yield only)."""
        if not op.running_max_form() or any(isinstance(o, tgraph.MatmulOp) for o in op.body.walk()):
            return None
        par = self.kernel.body.block.first_op
        assert isinstance(par, itgraph.ParallelOp)
        try:  # a dynamic grid at the sizes the kernel was scheduled at (the lanes are right at any size)
            blocks = prod(evaluate(e, itgraph.representative_sizes(self.kernel)) for e in par.extent_dims)
        except ValueError:  # (an extent the representative sizes do not fix)
            return None
        if blocks >= SMS:
            return None
        kinds = op.accumulate_kinds
        chunk_max = term.values[kinds.index(AccumulateKind.MAX)]
        m_op = chunk_max.owner
        assert isinstance(m_op, tgraph.ReduceOp)
        shape = self.shape(m_op.input)
        sums = [v for v, k in zip(term.values, kinds) if k == AccumulateKind.RESCALED_SUM]
        for v in sums:
            r = v.owner
            if not (
                isinstance(r, tgraph.ReduceOp) and r.kind.data == tgraph.ReduceKind.SUM and r.axis == m_op.axis
                and r.parent_block() is op.body.block and self.shape(r.input) == shape and v.has_one_use()
            ):
                return None
        if any(use.operation is not term and self.shape(use.operation.operands[0]) != shape for use in chunk_max.uses):
            return None  # a shift of a tile other than the chunk's own
        elements = prod(_squeezed(shape))
        if elements % self.threads or (elements // self.threads) * (len(sums) + 3) > 2 * DEFERRED_REDUCTION_REGS:
            return None
        lanes = [self.alloc(shape, h, tl.Scope.FRAGMENT) for h in ("m_lanes", "alpha_lanes", "ref_lanes")]
        return _LaneSoftmax(
            chunk_max, m_op.axis, shape, *lanes,
            {v: self.alloc(shape, (v.name_hint or "sum") + "_lanes", tl.Scope.FRAGMENT) for v in sums},
        )

    def _lane_reader(self, s: _Statements, out: _Buf):  # noqa: ANN202 - a reader, as `_value` takes
        def read(value: SSAValue) -> SSAValue:
            buf = self.bufs[value]
            return s.widened(s.load(self._invariant_operand(self._broadcast_operand(buf, out), out), self.loop_vars(out.shape)))
        return read

    def _lane_max(self, op: tgraph.ReduceOp) -> None:
        """A lane-wise loop's chunk max: each lane's running max, its rescale and its new reference,
        which the body's shifts read in place of the row's max."""
        ln = self.lanes
        assert ln is not None
        full = self.loop_vars(ln.shape)
        s = _Statements()
        x = self._value(s, op.input, self._lane_reader(s, ln.m_lanes))
        old = s.load(ln.m_lanes, full)
        new = s.binary(arith.MaximumfOp, old, s.widened(x))
        ref = _rescale_reference(s, new)
        s.store(tgraph.tl_exp(s, s.binary(arith.SubfOp, old, ref)), ln.alpha, full)
        s.store(ref, ln.ref, full)
        s.store(new, ln.m_lanes, full)
        self.parallel(ln.shape, s)
        self.bufs[op.result] = ln.ref

    def _lane_sum(self, op: tgraph.ReduceOp) -> None:
        """A lane-wise loop's rescaled row sum: acc = acc * alpha + the chunk's element, per lane."""
        ln = self.lanes
        assert ln is not None
        acc = ln.sums[op.result]
        full = self.loop_vars(ln.shape)
        s = _Statements()
        x = s.widened(self._value(s, op.input, self._lane_reader(s, acc)))
        s.store(s.binary(arith.AddfOp, s.binary(arith.MulfOp, s.load(acc, full), s.load(ln.alpha, full)), x), acc, full)
        self.parallel(ln.shape, s)
        self.bufs[op.result] = acc

    def _reduce_lanes(self, op: itgraph.SequentialOp, term: itgraph.YieldOp, ln: _LaneSoftmax) -> None:
        """After a lane-wise loop: the row max M of the lanes' maxima, each lane's sums rescaled by
        exp(its max - M) (0 where M is -inf), then the rows' sums."""
        kinds = op.accumulate_kinds
        mi = kinds.index(AccumulateKind.MAX)
        self._reduce(ln.m_lanes, ln.axis, False, op.results[mi])
        row_max = self._broadcast_operand(self.bufs[op.results[mi]], ln.m_lanes)
        full = self.loop_vars(ln.shape)
        for value, result in zip(term.values, op.results):
            acc = ln.sums.get(value)
            if acc is None:
                continue
            s = _Statements()
            scale = tgraph.tl_exp(s, s.binary(arith.SubfOp, s.load(ln.m_lanes, full), _rescale_reference(s, s.load(row_max, full))))
            s.store(s.binary(arith.MulfOp, s.load(acc, full), scale), acc, full)
            self.parallel(ln.shape, s)
            self._reduce(acc, ln.axis, True, result)

    def _defers_reduction(self, op: itgraph.SequentialOp, kind: AccumulateKind, value: SSAValue) -> bool:
        """Whether the loop's sum (or max) of a chunk's row reduction is better kept element-wise.

        The sum over chunks of each chunk's reduction along an axis is the reduction of the
        element-wise sum of the chunks: a wide fp32 accumulator of the chunk's shape then takes one
        add (or max) per element and iteration, and the rows are reduced once after the loop, not
        in every iteration (a warp shuffle and a barrier inside a pipelined gemm loop).
        """
        reduce = value.owner
        if not (isinstance(reduce, tgraph.ReduceOp) and reduce.parent_block() is op.body.block and value.has_one_use()):
            return False
        expected = {tgraph.ReduceKind.SUM: AccumulateKind.SUM, tgraph.ReduceKind.MAX: AccumulateKind.MAX}
        if expected.get(reduce.kind.data) != kind:
            return False
        elements = prod(self.shape(reduce.input))
        return elements % self.threads == 0 and elements // self.threads <= DEFERRED_REDUCTION_REGS

    def _plan_running_max(self, op: itgraph.SequentialOp, term: itgraph.YieldOp, accs: list[_Buf]) -> _RunningMax | None:
        """FlashAttention-2's form of an online softmax, where it applies (`SequentialOp.running_max_form`):
        the accumulators need only `acc * alpha + part`, and its matmul parts accumulate in place
        (`SequentialOp.in_place_products`). Otherwise None (the chunk-max form, alpha/beta after the body).
        """
        if not op.running_max_form():
            return None
        mi = op.accumulate_kinds.index(AccumulateKind.MAX)
        m_part = term.values[mi]
        m_acc = accs[mi]
        alpha = self.alloc(m_acc.shape, "alpha", tl.Scope.FRAGMENT)
        in_place = {value: accs[i] for value, i in op.in_place_products().items()}
        updated = {
            value: acc for acc, kind, value in zip(accs, op.accumulate_kinds, term.values)
            if kind == AccumulateKind.RESCALED_SUM and value not in in_place
        }
        self.running_max = _RunningMax(m_part, m_acc, alpha, in_place, updated)
        return self.running_max

    def _update_running_max(self, rm: _RunningMax) -> None:
        """Right after the chunk max: m = max(m_acc, chunk max), alpha; the body shifts by m (0 where -inf)."""
        part = self.bufs[rm.chunk_max]
        m_new = self.alloc(rm.m_acc.shape, "m_new", tl.Scope.FRAGMENT)
        full = self.loop_vars(rm.m_acc.shape)
        s = _Statements()
        ref = _new_max(s, rm.m_acc, part, m_new, rm.alpha, full)
        staged = self._write_target(part, "ref")
        s.store(ref, staged, full)
        s.store(s.load(m_new, full), rm.m_acc, full)
        self.parallel(rm.m_acc.shape, s)
        self._copy_back(staged, part)

    def _rescaled_update(self, acc: _Buf, part: _Buf, alpha: _Buf) -> None:
        """acc = acc * alpha + part: a rescaled sum's part, already relative to the running max."""
        full = self.loop_vars(acc.shape)
        s = _Statements()
        old = s.binary(arith.MulfOp, s.load(acc, full), s.load(alpha, full))
        s.store(s.binary(arith.AddfOp, old, s.load(part, full)), acc, full)
        self.parallel(acc.shape, s)

    def _rescale_after(self, accs: list[_Buf], parts: list[_Buf], kinds: Sequence[AccumulateKind]) -> None:
        """The chunk-max form: m = max(m_acc, chunk max), acc = acc * exp(m_acc - m) + part * exp(chunk max - m)."""
        mi = kinds.index(AccumulateKind.MAX)
        m_acc, m_part = accs[mi], parts[mi]
        m_new, alpha, beta = (self.alloc(m_acc.shape, h, tl.Scope.FRAGMENT) for h in ("m_new", "alpha", "beta"))
        full = self.loop_vars(m_acc.shape)
        s = _Statements()
        ref = _new_max(s, m_acc, m_part, m_new, alpha, full)
        s.store(tgraph.tl_exp(s, s.binary(arith.SubfOp, s.load(m_part, full), ref)), beta, full)
        s.store(s.load(m_new, full), m_acc, full)
        self.parallel(m_acc.shape, s)
        for acc, part, kind in zip(accs, parts, kinds):
            if kind != AccumulateKind.RESCALED_SUM:
                continue
            full = self.loop_vars(acc.shape)
            s = _Statements()
            old = s.binary(arith.MulfOp, s.load(acc, full), s.load(alpha, full))
            new = s.binary(arith.MulfOp, s.load(part, full), s.load(beta, full))
            s.store(s.binary(arith.AddfOp, old, new), acc, full)
            self.parallel(acc.shape, s)


def _new_max(s: _Statements, m_acc: _Buf, m_part: _Buf, m_new: _Buf, alpha: _Buf, full: Sequence[str | None]) -> SSAValue:
    """m_new = max(m_acc, m_part) and alpha = exp(m_acc - ref); returns ref = m_new, or 0 where it is -inf
    (`itgraph.rescale_reference`). The FMA form x * log2 e - ref * log2 e then never meets -inf + inf,
    which a floor such as -3e38 did (-3e38 * log2 e overflows), and a row of finfo(float32).min stays
    uniform.

    Rescaling against ref rather than m_new: a row with nothing yet (m = -inf, e.g. a chunk that is all
    padding) gets exp(-inf) = 0 instead of exp(-inf + inf) = NaN.
    """
    s.store(s.binary(arith.MaximumfOp, s.load(m_acc, full), s.load(m_part, full)), m_new, full)
    ref = _rescale_reference(s, s.load(m_new, full))
    s.store(tgraph.tl_exp(s, s.binary(arith.SubfOp, s.load(m_acc, full), ref)), alpha, full)
    return ref


def _rescale_reference(s: _Statements, m: SSAValue) -> SSAValue:
    """`itgraph.rescale_reference` of a row max: m, or 0 where it is -inf."""
    seen = s.add(arith.CmpfOp(m, s.const(float("-inf"), m.type), "une"))
    return s.add(arith.SelectOp(seen, m, s.const(0.0, m.type)))


def _at_kk(full: Sequence[str | None], axis: int) -> list[str | None]:
    """The loop variables `full` with the serial `kk` at `axis` (the reduced dim)."""
    out = list(full)
    out[axis] = "kk"
    return out


def tensor_core_type(op: tgraph.MatmulOp) -> Attribute:
    """The one type the tensor cores take `op`'s operands in: fp32 (TF32) where either is fp32, else
    bf16 where either is, else fp16. An fp32 graph's operands were cast to fp16 and overflowed to inf
    past 65504 (a chain of two fp32 matmuls of inputs around 100: inf from every candidate, in the
    TileLang interpreter); bf16 kept the range but lost precision (3e-3 against fp32's references).
    TF32 keeps fp32's range and fp16's 10 mantissa bits."""
    types = {tgraph.tensor_type(v).element_type for v in (op.lhs, op.rhs)}
    if any(isinstance(t, (Float32Type, Float64Type)) for t in types):
        return f32
    return BFloat16Type() if BFloat16Type() in types else f16


def computed_where_used(op: tgraph.ElementwiseOp) -> bool:
    """Whether the lowering computes `op` in the loops of its users and gives it no tile (the first case
    of `LowerTileLang.inline`): every user is an element-wise op of its block over a tile of the same
    shape, and `op` is their only input from it or cheap (a scale), and not a narrowing cast. The cost
    model's register estimate (`cost_model.peak_live_bytes`) leaves such tiles out."""
    res = op.results[0]
    if (isinstance(op, tgraph.CastOp) and not _widening(op)) or not res.uses:
        return False
    users = [u.operation for u in res.uses]
    if len(users) > 1 and not isinstance(op, tgraph.ScaleOp):
        return False
    shape = tgraph.tensor_type(res).shape
    return all(
        user.parent_block() is op.parent_block() and isinstance(user, tgraph.ElementwiseOp)
        and tgraph.tensor_type(user.results[0]).shape == shape
        for user in users
    )


def _widening(op: tgraph.CastOp) -> bool:
    """Whether `op` converts to a float type that holds every value of its input exactly."""
    src, dst = tgraph.tensor_type(op.input).element_type, tgraph.tensor_type(op.result).element_type
    floats = (Float16Type, BFloat16Type, Float32Type, Float64Type)
    return isinstance(src, floats) and isinstance(dst, floats) and _bits(dst) > _bits(src)


def _fold(is_sum: bool) -> type[arith.AddfOp] | type[arith.MaximumfOp]:
    """The scalar op a sum (else a max) folds with."""
    return arith.AddfOp if is_sum else arith.MaximumfOp


# per-thread fp32 registers a deferred row reduction's wide accumulator may take: 64 covers a
# 128 x 128 chunk on 256 threads. With 32 that chunk took the other path (a warp reduction and a
# shared-memory staging in every iteration of the pipelined loop), and gemma_rmsnorm_matmul's
# rescaled form lowered that way computed wrong results on the H200 (6.9e-2, rejected by the GPU
# check; correct in the tilelang interpreter): bench/results/models_2026-12-01b_H200.md. Whether
# this form now runs correctly there is not measured yet.
DEFERRED_REDUCTION_REGS = 64
SWIZZLE_PANEL = 10  # blocks per rasterization panel (TileLang's GEMM example)
STAGED_STORE_MIN_ROWS = 16  # fewer rows: the store is too small for staging to pay
WARP_SIZE = 32
# the most bytes per thread of one padded one-row fragment (128 fp32 registers of the 255 a thread
# may hold: a 64 x 512 fp32 tile over 128 threads, 256 registers each, would spill)
PAD_FRAGMENT_BYTES = 128 * 4


def loop_matmuls(loop: itgraph.SequentialOp) -> int:
    """The matmuls in `loop`'s body."""
    return sum(isinstance(o, tgraph.MatmulOp) for o in loop.walk())


def thread_copied_in_loop(load: itgraph.LoadOp) -> bool:
    """Whether the lowering reads a padded tile that `load` brings into a K loop by a thread copy (a
    loop of one matmul, the tile's only reader), not by TMA (a loop of several, or a tile read again
    after its matmul: `_KernelLowering`). TileLang's warp-specialized pipeline hands a thread-copied
    tile back to its producer after its first reader (`tl.released_before_read`): rmsnorm_matmul
    T=5's one kernel, whose sum of squares reads x after the matmul, raced (8 racecheck errors), and
    without warp specialization ran 60.7 us against 19.2 (bench/results/split_loops_2026-12-04_H200.md).
    The one reader is the matmul itself or through reshapes of the tile. A tile read by anything else (a
    Split-K combine's partials, read by their sum; residual_rmsnorm_matmul's x and r, by their add) goes by TMA: thread-
    copied, sigmoid_glu_t5's combine loaded them one bounds-checked element at a time outside the
    pipeline (H200: 237.6 us, 80.3 by TMA; bench/results/pending_checks_2026-12-05s25_H200.md)."""
    loop = load.parent_op()
    if not isinstance(loop, itgraph.SequentialOp) or loop_matmuls(loop) != 1:
        return False
    value: SSAValue = load.result
    while len(readers := {u.operation for u in value.uses}) == 1 and isinstance(reader := next(iter(readers)), tgraph.ReshapeOp):
        value = reader.result  # a view of the tile (the lowering reads the same buffer)
    return len(readers) == 1 and isinstance(next(iter(readers)), tgraph.MatmulOp)


def row_padding(kernel: itgraph.KernelOp, threads: int) -> tuple[dict[SSAValue, int], int]:
    """`plan_row_padding`'s tiles and the rows they are padded to: MMA_PAD_ROWS (an MMA tile) where no
    reduction reads a padded tile, none is thread-copied in a K loop and each has 2..15 rows, else
    PAD_ROWS (a wgmma tile, as TileLang's decode kernels). The first also where PAD_ROWS rows would
    not fit in shared memory beside the pipeline's stages (swiglu T=3's Split-K kernel: its two
    [64, 256] weight tiles in 2 stages, its outputs staged as [64, 256]).

    Measured on the H200 (bench/results/pad_rows_2026-12-04_H200.md): the few-row projections of
    swiglu and rmsnorm_matmul (a matmul, element-wise ops, a store) ran faster on 16 rows (swiglu T=3
    33.2 -> 27.1 us, T=7 49.3 -> 43.2, rmsnorm_matmul T=3's Split-K form 13.1 -> 12.1); decode attention,
    whose softmax reduces the padded rows, ran slower (GQA group 2 10.3 -> 12.1, head dim 96 29.7 ->
    39.3). A K loop of one matmul that thread-copies the padded rows raced on 16 rows (racecheck:
    rmsnorm_matmul T=5's projection, clean on 64), so such kernels keep 64 too."""
    def mma_tile(pad: dict[SSAValue, int]) -> bool:
        reduced = any(isinstance(op, tgraph.ReduceOp) and op.input in pad for op in kernel.walk())
        thread_copied = any(isinstance(op, itgraph.LoadOp) and op.result in pad and thread_copied_in_loop(op) for op in kernel.walk())
        return bool(pad) and not reduced and not thread_copied and all(_static(v)[axis] > 1 for v, axis in pad.items())  # one row: not measured

    pad = plan_row_padding(kernel, threads)
    if not pad or mma_tile(pad):  # (where 64 rows do not fit in shared memory, 16 may)
        small = plan_row_padding(kernel, threads, MMA_PAD_ROWS)
        if mma_tile(small):
            return small, MMA_PAD_ROWS
    return pad, PAD_ROWS


def plan_row_padding(kernel: itgraph.KernelOp, threads: int, rows: int = PAD_ROWS) -> dict[SSAValue, int]:
    """Tiles whose row axis is padded to `rows` so that matmuls of 1..15 rows run on the tensor cores.

    Decode attention multiplies a few query rows (the heads of a GQA group, or the one query row of a
    head) by a KV tile; as a CUDA-core loop that leaves most threads idle. TileLang's own decode kernels
    pad those rows to a 64-row tile (block_H, block_M) and use T.gemm; so does this. A one-row tile's
    row axis is a size-1 dim of its full shape (dropped from the buffer until padded). The padding
    spreads from each such matmul's A operand and result to every tile with that row axis (elementwise
    ops, reductions along other axes, reshapes that only add or drop size-1 dims, loop-carried
    accumulators). Padded loads fill only the real rows of a zeroed shared tile, padded stores write
    only the real rows; every op on the padded rows is per-row (no reduction along the row axis, never
    a B operand), so whatever they compute (inf or NaN included, e.g. rsqrt of a zero row) never
    reaches a real row. Returns {tile: axis} (axis of the tile's full shape), or {} where the rule does
    not hold everywhere in the kernel (then nothing is padded).
    """
    pad: dict[SSAValue, int] = {}
    work: list[SSAValue] = []

    def want(v: SSAValue, axis: int) -> bool:
        if pad.get(v, axis) != axis:
            return False
        if v not in pad:
            pad[v] = axis
            work.append(v)
        return True

    def gemm_ok(op: tgraph.MatmulOp) -> bool:
        # judged on the padded operands: a one-row A (or result) is 2-D only once padded
        out, a, b = _static(op.result), _static(op.lhs), _static(op.rhs)
        out_p, a_p = (*out[:-2], rows, out[-1]), (*a[:-2], rows, a[-1])
        rhs = weight_load(op.rhs)
        if rhs is not None and cleave.memory(rhs) == cleave.Memory.GLOBAL:
            return False  # placement gave it the direct GEMV form
        return (
            len(_squeezed(out_p)) == 2 and len(_squeezed(a_p)) == 2 and len(_squeezed(b)) == 2
            and all(d == 1 for d in out[:-2] + a[:-2] + b[:-2])
            and a[-1] % 16 == 0 and gemm_warps_fit(rows, out[-1], threads, op.transpose_b is not None)
        )

    for op in kernel.walk():
        if isinstance(op, tgraph.MatmulOp) and 1 <= _static(op.result)[-2] < 16 and gemm_ok(op):
            want(op.lhs, len(_static(op.lhs)) - 2)
            want(op.result, len(_static(op.result)) - 2)
    if not pad:
        return {}

    def same_axis(values: Sequence[SSAValue], axis: int, extent: int) -> bool:
        for x in values:
            shape = _static(x)
            if len(shape) <= axis:
                return False
            if shape[axis] == extent and not want(x, axis):
                return False
            if shape[axis] not in (1, extent):
                return False
        return True

    def spread(v: SSAValue, axis: int, op: Operation) -> bool:
        extent = _static(v)[axis]
        if isinstance(op, (tgraph.ReshapeOp, tgraph.SplitOp)):
            src, res = _static(op.operands[0]), _static(op.results[0])
            if _squeezed(src) != _squeezed(res):
                return False
            mine, other = (src, op.results[0]) if v is op.operands[0] else (res, op.operands[0])
            k = sum(1 for d in mine[:axis] if d != 1)
            if extent > 1:
                return want(other, [i for i, d in enumerate(_static(other)) if d != 1][k])
            # a one-row axis: a size-1 dim of the other side with as many non-1 dims before it (the
            # same buffer dim once padded); the last such dim, or the one already padded
            fits = [i for i, d in enumerate(_static(other)) if d == 1 and sum(1 for e in _static(other)[:i] if e != 1) == k]
            return other in pad and pad[other] in fits or other not in pad and bool(fits) and want(other, fits[-1])
        if isinstance(op, itgraph.MaskOp):
            return op.axis.value.data != axis and same_axis([op.input, op.result], axis, extent)
        if isinstance(op, tgraph.ReduceOp):
            return op.axis != axis and want(op.input, axis) and want(op.result, axis)
        if isinstance(op, tgraph.ElementwiseOp):
            return same_axis([*op.operands, *op.results], axis, extent)
        if isinstance(op, tgraph.MatmulOp):
            rank = len(_static(op.result))
            return v is not op.rhs and axis == rank - 2 and gemm_ok(op) and want(op.lhs, axis) and want(op.result, axis)
        if isinstance(op, itgraph.YieldOp):
            seq = op.parent_op()
            return isinstance(seq, itgraph.SequentialOp) and all(
                want(r, axis) for r, y in zip(seq.results, op.operands) if y is v
            )
        if isinstance(op, itgraph.SequentialOp):
            term = op.body.block.last_op
            return isinstance(term, itgraph.YieldOp) and all(
                want(y, axis) for r, y in zip(op.results, term.operands) if r is v
            )
        if isinstance(op, itgraph.LoadOp):
            # hoisted: the real rows into a zeroed tile; in a loop, the input's next rows fill the
            # padded ones (`_KernelLowering`): either way, every op on them is per-row, and stores
            # write the real rows only. In a loop of several matmuls (swiglu) only tiles of 2..15
            # rows: H200, one row as a CUDA-core GEMV 54.4 us, padded 60.4 (swiglu T=1, N=14336)
            loop = op.parent_op()
            return not isinstance(loop, itgraph.SequentialOp) or loop_matmuls(loop) == 1 or _static(v)[axis] > 1
        return isinstance(op, itgraph.StoreOp) and v is op.value

    while work:
        v = work.pop()
        axis = pad[v]
        users = [u.operation for u in v.uses]
        owner = v.owner if isinstance(v.owner, Operation) else None
        if not all(spread(v, axis, op) for op in [*users, *([owner] if owner is not None else [])]):
            return {}
    # the padded loads and the staging tiles of padded stores must still fit in shared memory
    def nbytes(v: SSAValue, t: Attribute) -> int:
        shape = list(_static(v))
        if v in pad:
            shape[pad[v]] = rows
        return prod(shape) * _bits(t) // 8

    stages = kernel.attributes.get("cleave.stages")
    copies = stages.value.data if isinstance(stages, IntegerAttr) else 1

    def buffers(load: itgraph.LoadOp) -> int:  # a pipelined loop's copy has one buffer per stage
        return copies if isinstance(load.parent_op(), itgraph.SequentialOp) else 1

    extra = sum(
        (nbytes(op.result, tgraph.tensor_type(op.result).element_type) - nbytes_unpadded) * buffers(op)
        for op in kernel.walk()
        if isinstance(op, itgraph.LoadOp) and op.result in pad
        for nbytes_unpadded in [prod(_static(op.result)) * _bits(tgraph.tensor_type(op.result).element_type) // 8]
    ) + sum(
        nbytes(op.value, tgraph.tensor_type(op.dest).element_type)
        for op in kernel.walk()
        if isinstance(op, itgraph.StoreOp) and op.value in pad
    )
    # a one-row tile grows `rows`-fold: each of its computed (fp32 fragment) tiles must still fit in
    # a thread's registers, and its serial row reductions stage the padded source in shared memory
    one_row = [v for v, axis in pad.items() if _static(v)[axis] == 1 and not isinstance(v.owner, itgraph.LoadOp)]
    if any(nbytes(v, f32) > PAD_FRAGMENT_BYTES * threads for v in one_row):
        return {}

    def warp_reduced(op: tgraph.ReduceOp) -> bool:  # as `_KernelLowering._reduce` will lower it
        shape = [rows if i == pad[op.input] else d for i, d in enumerate(_static(op.input))]
        kept = [i for i, d in enumerate(shape) if d != 1]
        width = shape[kept[-1]]
        in_registers = isinstance(op.input.owner, Operation) and cleave.memory(op.input.owner) == cleave.Memory.FRAGMENT
        return len(kept) == 2 and op.axis == kept[1] and width >= 8 and width & (width - 1) == 0 and in_registers

    extra += sum(
        nbytes(op.input, f32)
        for op in kernel.walk()
        if isinstance(op, tgraph.ReduceOp) and op.input in one_row and not warp_reduced(op)
    )
    smem = kernel.attributes.get("cleave.smem_bytes")
    used = smem.value.data if isinstance(smem, IntegerAttr) else 0
    return pad if used + extra <= SMEM_BYTES else {}


def _swapped(shape: Sequence) -> list:
    """`shape` (or a region's offsets or sizes) with its last two entries swapped."""
    out = list(shape)
    out[-2], out[-1] = out[-1], out[-2]
    return out


def tensor_core_tile(out: Sequence[int], a: Sequence[int], b: Sequence[int], threads: int, transpose_b: bool) -> bool:
    """Whether the lowering gives a matmul of these tile shapes (rows padded where `row_padding` pads
    them) to T.gemm on `threads`; else it runs on the CUDA cores (`cuda_core_steps`)."""
    batch_one = all(d == 1 for d in [*out[:-2], *a[:-2], *b[:-2]])
    return batch_one and len(_squeezed(a)) == 2 and len(_squeezed(b)) == 2 and a[-1] % 16 == 0 and gemm_warps_fit(out[-2], out[-1], threads, transpose_b)


def cuda_core_steps(kernel: itgraph.KernelOp, threads: int) -> int:
    """Serial K steps one block of the placed `kernel` takes, on `threads`, in the matmuls of 2..15
    rows the lowering folds on the CUDA cores (`_serial_fold`: rows no tensor-core tile takes, K over
    `fold_lanes`), those in a loop once per iteration. Each step waits for the last. Outside a loop
    the block's loads are all in before, nothing hides them; in one, the steps may overlap the next
    tile's loads, but counted as a sum they still rank GQA decode B64's 8 heads a block (4-row logits
    on the CUDA cores, 160 steps in each of 64 iterations; measured 4630 us where estimated 227) after
    one head a block on T.gemm (bench/results/gpu_suite_2026-12-04s18_H200.md). One-row GEMVs and
    many-row folds are not counted: not measured."""
    steps = 0
    trips: dict[Operation, float] = {}
    for op, out, a in _cuda_core_matmuls(kernel, threads):
        if 1 < out[-2] < 16:  # measured there (a one-row GEMV splits K over its threads instead)
            steps += a[-1] // fold_lanes(prod(out), a[-1], threads) * block_trips(op, trips)
    return int(steps)


def many_row_fold_s(kernel: itgraph.KernelOp, threads: int) -> float:
    """Seconds one block of the placed `kernel` spends in the matmuls of 16 or more rows that the
    lowering folds on the CUDA cores (no tensor-core tile takes them: a batch of heads in one tile),
    at `cost_model.FOLD_FMAS_PER_S` a block; the cost model otherwise counts their flops at the tensor
    cores' rate. Mistral's sliding-window attention tiled [4 heads, 32 rows, 128 keys] was ranked
    first that way (estimated 716 us against 833 for one head on T.gemm); its batched logits and
    products are 5.2 MFLOP an iteration on the CUDA cores (its launch failed, so it was never timed)."""
    seconds = 0.0
    trips: dict[Operation, float] = {}
    for op, out, a in _cuda_core_matmuls(kernel, threads):
        if out[-2] >= 16:
            seconds += prod(out) * a[-1] / FOLD_FMAS_PER_S * block_trips(op, trips)
    return seconds


def _cuda_core_matmuls(kernel: itgraph.KernelOp, threads: int) -> Iterator[tuple[tgraph.MatmulOp, list[int], list[int]]]:
    """The placed `kernel`'s matmuls the lowering runs on the CUDA cores (no direct GEMV, no T.gemm
    tile), with their result and A operand shapes, rows padded where `row_padding` pads them."""
    pad, rows = row_padding(kernel, threads)
    for op in kernel.walk():
        if not isinstance(op, tgraph.MatmulOp) or direct_gemv_matmul(op):
            continue
        out, a, b = (list(_static(v)) for v in (op.result, op.lhs, op.rhs))
        for shape, v in ((out, op.result), (a, op.lhs)):
            if v in pad:
                shape[pad[v]] = rows
        if not tensor_core_tile(out, a, b, threads, op.transpose_b is not None):
            yield op, out, a


def with_cuda_core_time(est: Estimate, kernel: itgraph.KernelOp, threads: int, calibration: Calibration | None = None) -> Estimate:
    """`est` with the placed `kernel`'s CUDA-core matmul time on `threads` added: its few-row serial
    steps (`cuda_core_steps`) and many-row folds (`many_row_fold_s`)."""
    steps, fold_s = cuda_core_steps(kernel, threads), many_row_fold_s(kernel, threads)
    return with_serial_steps(est, steps, calibration, fold_s) if steps or fold_s else est


GEMV_BLOCK_REDUCE = 64  # partials a column from which `gemv` adds them up by one block-wide reduction

GEMV_MAX_STEPS = 64
"""A one-row CUDA-core matmul over a staged [k, n] slab takes at most this many serial steps where
more partial rows a column make it so (`gemv_rows_per_step`)."""


def gemv_rows_per_step(split: int, k: int, vector: int) -> int:
    """Partial sums a column of a one-row matmul over a staged [k, n] slab (n contiguous): `split`
    (one a thread, `gemv_split`), times up to `vector` where its k / split serial steps exceed
    GEMV_MAX_STEPS. Each thread then adds several rows a step, independent of each other, instead
    of one dependent add a step: GPT-2's decode down projection (a cut piece, [1, 3072] @ [3072, 16]
    slabs, 8 partials a column) took 384 steps of one add, now 48 of eight, then one block-wide sum."""
    u = 1
    while u < vector and k // (split * u) > GEMV_MAX_STEPS and k % (split * u * 2) == 0:
        u *= 2
    return split * u


def gemv_split(m: int, n: int, k: int, threads: int) -> int:
    """How many threads share a column of a one-row CUDA-core matmul (`gemv`): the most (a power of
    two dividing k) that, with one thread per partial sum, still fit in the block; 1 = no GEMV form
    (also where the partials would not divide the threads evenly: TileLang lays a fragment out over them)."""
    if m != 1:
        return 1
    split = 1
    while split * 2 * n <= threads and k % (split * 2) == 0:
        split *= 2
    return split if threads % (split * n) == 0 else 1


def fold_lanes(elements: int, extent: int, threads: int) -> int:
    """How many threads share each element of a tile of `elements` folded over a serial loop of
    `extent` steps (`_serial_fold`): the most (a power of two dividing `extent`, at most a warp, so
    one warp reduction adds them up) with the tile's elements times that still within the block;
    1 = none (the tile keeps half the threads busy, or the loop is shorter than 8 steps).

    The partials must fill whole warps or divide the block's threads: TileLang spreads a tile of fewer
    elements than threads over the block by copies where their count divides it, else it runs the tile
    on the first threads under an `if`, and where that `if` splits a warp the lanes' warp reduction
    inside it waits on lanes that never come (an [18, 4] tile on 128 threads hung a decode attention
    kernel; `tilelang_check.partial_warp_collectives`)."""
    lanes = 1
    if extent < 8:
        return lanes
    while lanes * 2 <= WARP_SIZE and extent % (lanes * 2) == 0 and elements * lanes * 2 <= threads:
        lanes *= 2
    while lanes > 1 and threads % (elements * lanes) and elements * lanes % WARP_SIZE:
        lanes //= 2
    return lanes


def _substitute_kk(ops: Sequence[Operation], kk: Dim) -> None:
    """Re-index a T.Parallel body's element reads: the serial loop variable `kk` becomes `kk` (an expression)."""
    old = symbol("kk")

    def sub(e: Attribute) -> Attribute:
        if isinstance(e, cleave.ExprAttr) and old in e.data.free_symbols:
            return cleave.ExprAttr(sympy.expand(e.data.xreplace({old: kk})))
        return e

    for op in ops:
        for name, attr in list(op.properties.items()):
            new = ArrayAttr(sub(e) for e in attr.data) if isinstance(attr, ArrayAttr) else sub(attr)
            if new != attr:
                op.properties[name] = new


LONG_VECTOR = 512
"""The shortest 1-D tile `_reduce` reduces with one block-wide reduction from registers."""


def vector_split(k: int, threads: int) -> int:
    """How many threads share the reduction of a k-vector to one value: about sqrt(k) (k/split steps
    each, then split steps over the partials), a power of two dividing k, at most `threads`; 1 = none
    (also below 256 elements: a short serial loop is not worth the partials' round trip)."""
    split = 1
    if k < 256:
        return split
    while split * 2 <= threads and k % (split * 2) == 0 and (split * 2) ** 2 <= k:
        split *= 2
    return split


def row_split(rows: int, width: int, threads: int) -> int:
    """How many threads share each row of a `rows` x `width` tile reduced along its rows when no warp
    reduction takes the rows whole: the fewest (a power of two, 8 or more, below and dividing `width`)
    whose partials give every thread the same number of them; 1 = none."""
    split = 8
    while split < width and width % split == 0:
        if rows * split % threads == 0:
            return split
        split *= 2
    return 1


def _operand_index(buf: _Buf, dims: dict[int, Dim]) -> list[Dim]:
    """The element of `buf` at `dims` (negative dim -> index; other dims 0): squeezed for a tile, in
    all dims from its offset for one read in place from a global tensor."""
    rank = len(buf.shape)
    idx = [dims.get(i - rank, sympy.Integer(0)) for i in range(rank)]
    if buf.origin is not None:
        return [o + e for o, e in zip(buf.origin, idx)]
    return [e for e, d in zip(idx, buf.shape) if d != 1] or [sympy.Integer(0)]


def _align(batch: Sequence[str | None], shape: Sequence[int], row: str | None, col: str | None) -> list[str | None]:
    """Index variables for a matmul operand of `shape` (batch dims right-aligned with the result's)."""
    nb = len(shape) - 2
    b = list(batch)[-nb:] if nb else []
    return [*b, row, col]


def lower_kernel(kernel: itgraph.KernelOp, passthrough: Sequence[str] = (), transposed: Sequence[str] = ()) -> tl.KernelOp:
    """The `tilelang.kernel` of one itgraph kernel (not inserted anywhere); LoweringError if impossible.
    `transposed`: names of inputs given as transposed views (`stored_transposed`), which the kernel reads
    from their storage where only gemms read them (`tilelang.TRANSPOSED_INPUTS` lists those)."""
    return _KernelLowering(kernel, passthrough, transposed).lower()


def stored_transposed(graphs: Sequence[tgraph.GraphOp]) -> list[str]:
    """The inputs of the folded graphs that their `cleave.boundary` makes views of a graph input with its
    last two dims swapped (`phi(k)^T @ v` read as `(v^T phi(k))^T`: v^T): stored row-major, such a view
    is a transposed tensor, which no TMA copy reads and `run` would copy (125 us for a 33.5 MB v on an
    H100), so the kernels that only multiply it read its storage instead."""
    names: list[str] = []
    for g in graphs:
        boundary = g.attributes.get("cleave.boundary")
        if not isinstance(boundary, cleave.BoundaryAttr):
            continue
        for name, view in zip(g.input_names(), boundary.inputs.data):
            perm = view.permutation if isinstance(view, cleave.ViewAttr) else ()
            if len(perm) >= 2 and list(perm[-2:]) == [len(perm) - 1, len(perm) - 2] and name not in names:
                names.append(name)
    return names


def wait_prior_grids(kernel: tl.KernelOp) -> None:
    """Put `tilelang.wait_prior_grids` first after `kernel`'s allocations (once): the kernel's launch
    then overlaps the end of the kernel before it. Measured on the H200 (bench/results/
    launch_overlap_2026-12-03_H200.md), candidates of two kernels: gqa_decode B1 L4096 10.45 ->
    10.13 us, mla_decode B1 14.82 -> 14.20, matmul_matmul S1024 6.50 -> 6.08, matmul_rowsum S1024
    6.09 -> 5.76, rmsnorm_matmul T1 16.75 -> 16.23.

    Not in a kernel that loads elements of a global buffer itself (a GEMV reading its weight from
    global memory): TileLang then drops `__restrict__` from the kernel's parameters (nvcc could move
    a read-only load above the wait), and its loads lose the read-only cache path. Llama-3-8B's
    decode projections, which read their weights so, ran 0.3-1.1 us slower with the wait
    (bench/results/layers_llama3-8b_decode_2026-12-03aa_H200.md)."""
    ops = list(kernel.body.block.ops)
    if any(isinstance(op, tl.WaitPriorGridsOp) for op in ops):
        return
    if any(isinstance(op, tl.LoadOp) and tl.buffer_type(op.buffer).scope_name == tl.Scope.GLOBAL for op in kernel.walk()):
        return
    first = next((op for op in ops if not isinstance(op, (tl.AllocSharedOp, tl.AllocFragmentOp))), None)
    wait = tl.WaitPriorGridsOp()
    if first is None:
        kernel.body.block.add_op(wait)
    else:
        kernel.body.block.insert_op_before(wait, first)


def launch_dependents_early(kernel: tl.KernelOp) -> None:
    """Where `kernel` carries `cleave.launch_dependents`, put `tilelang.launch_dependents` right after its
    last top-level pipelined loop (else serial loop): the next kernel's blocks launch while this one
    stores its results. The next kernel's `tilelang.wait_prior_grids` still waits for those stores,
    so only the timing changes. A kernel without such a loop is left as it is (its trigger would come
    as late as its exit)."""
    if tl.LAUNCH_DEPENDENTS not in kernel.attributes:
        return
    if any(isinstance(op, tl.LaunchDependentsOp) for op in kernel.body.block.ops):
        return
    for kind in (tl.PipelinedOp, tl.SerialOp):
        loops = [op for op in kernel.body.block.ops if isinstance(op, kind)]
        if loops:
            kernel.body.block.insert_op_after(tl.LaunchDependentsOp(), loops[-1])
            return


def finished_kernel(
    kernel: itgraph.KernelOp, passthrough: Sequence[str] = (), overlap_gemms: bool = True, overlap_launches: bool = True,
    whole_small_copies: bool = True, transposed: Sequence[str] = (), exp2_on_fma_every: int = EXP2_ON_FMA_EVERY,
) -> tl.KernelOp:
    """`lower_kernel`, then the rewrites `lower_module` applies (see there)."""
    lowered = lower_kernel(kernel, passthrough, transposed)
    if whole_small_copies:
        copy_small_tiles_whole(lowered)
    if overlap_gemms:
        overlap_kernel(lowered)
    emulate_exp2(lowered, exp2_on_fma_every)
    if overlap_launches:
        wait_prior_grids(lowered)
        launch_dependents_early(lowered)
    try:  # a kernel the dialect rejects (a race its verifier knows) never reaches TileLang
        lowered.verify()
    except VerifyException as e:
        raise LoweringError(f"error: cleave-lower-tilelang: {e}") from None
    return lowered


def lower_module(
    module: ModuleOp, overlap_gemms: bool = True, overlap_launches: bool = True, whole_small_copies: bool = True,
    exp2_on_fma_every: int = EXP2_ON_FMA_EVERY,
) -> None:
    """Replace every itgraph kernel of `module` by its tilelang kernel, in place; with
    `whole_small_copies`, a loop's per-step copies too small for cp.async are done once before it
    (`cleave-whole-small-copies`); with `overlap_gemms`, a loop's second gemm then overlaps the next
    iteration's work (`cleave-overlap-gemms`); with `overlap_launches`, each kernel's launch overlaps
    the end of the one before it (`wait_prior_grids`); with `exp2_on_fma_every` k > 0, FlashAttention score
    tiles take one block of 8 keys in k of their exp2 on the FMA pipes (`cleave-emulate-exp2`)."""
    graphs = {g.sym_name.data: g for g in module.walk() if isinstance(g, tgraph.GraphOp)}
    transposed = stored_transposed(list(graphs.values()))
    for kernel in [op for op in module.walk() if isinstance(op, itgraph.KernelOp)]:
        graph = graphs.get(tgraph.referenced_symbol(kernel, "cleave.schedule_of") or "")
        attr = graph.attributes.get("cleave.passthrough") if graph is not None else None
        passthrough = [a.data for a in attr.data] if isinstance(attr, ArrayAttr) else []  # type: ignore[union-attr]
        Rewriter.replace_op(
            kernel, finished_kernel(kernel, passthrough, overlap_gemms, overlap_launches, whole_small_copies, transposed, exp2_on_fma_every)
        )


@dataclass(frozen=True)
class LowerTileLangPass(CleavePass):
    """Every itgraph kernel becomes a tilelang kernel (one `T.prim_func` each); `overlap-gemms=false`
    leaves each loop's gemms synchronous, in the order the itgraph kernel has them;
    `overlap-launches=false` leaves out `tilelang.wait_prior_grids` (each kernel then launches after
    the one before it has finished); `whole-small-copies=false` keeps every copy in its loop;
    `exp2-on-fma-every=k`: FlashAttention score tiles take one block of 8 keys in k of their exp2 on the
    FMA pipes (`cleave-emulate-exp2`; 0: all on the MUFU)."""

    name = "cleave-lower-tilelang"

    overlap_gemms: bool = True
    overlap_launches: bool = True
    whole_small_copies: bool = True
    exp2_on_fma_every: int = EXP2_ON_FMA_EVERY

    def check_options(self) -> None:
        if self.exp2_on_fma_every < 0:
            raise CleaveError("error: cleave-lower-tilelang: exp2-on-fma-every must be at least 0")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        lower_module(op, self.overlap_gemms, self.overlap_launches, self.whole_small_copies, self.exp2_on_fma_every)
