"""An analytical cost model for itgraph kernels on the H200 (Welder/Roller style, paper appendix A).

Per threadblock: bytes moved from global memory (every load and store, times the sequential trips
around it) and tensor-core flops; a block takes the longer of the two at its share of the GPU
(4.3 TB/s and 790 TFLOP/s over 132 SMs), or their sum and a load latency where its loads cannot
overlap its compute (one pipelining stage, one block per SM, several waves: `overlaps`), plus a
fixed cost per sequential iteration (more on a GEMM loop left on two stages: `shallow_pipeline`),
and blocks run in waves of 132. Loaded tiles must fit in shared
memory (227 KiB) and computed fp32 tiles in the registers (64K x 32 bit per SM). Buffers are not
reused in this estimate, so footprints are upper bounds.

The constants are corrected by measurement: `Calibration` scales the memory and compute terms, sets
the cost of a sequential iteration and adds a fixed cost per kernel launch. The calibration in
`cost_model_calibration.json` beside this file (fitted from recorded GPU timings with
`python -m cleave_ir.calibrate`) is loaded at import; without it the constants below are used as
they are (`$CLEAVE_COST_CALIBRATION=off` ignores the file, `=PATH` loads another one).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from xdsl.dialects.builtin import BFloat16Type, Float16Type
from xdsl.ir import Operation, SSAValue

from cleave_ir.dialects import itgraph, tgraph
from cleave_ir.passes.causal import computed_in_users, diagonal_extent, mean_trips
from cleave_ir.shapes import evaluate

SMS = 132
HBM_BYTES_PER_S = 4.3e12
TENSOR_FLOPS = 790e12
SMEM_BYTES = 227 * 1024
REGISTER_BYTES = 64 * 1024 * 4
# what a sequential loop's accumulators may take of it: the rest holds the body's tiles, operand
# fragments and addresses (a 256x256 fp32 accumulator, the whole file, would spill)
ACCUMULATOR_BYTES = REGISTER_BYTES * 3 // 4
# a kernel without matmuls (a norm, a softmax, a Split-K combine) holds its tiles in at most 192 fp32
# registers of each of at most 256 threads (`cleave-place-memory` gives it the threads); more spills
# (an [8, 4096] fp32 row tile on 128 threads is 256 registers per thread)
TILE_BYTES_PER_THREAD = 768
# per block and sequential iteration: barrier and pipeline hand-off (measured on the H200 with
# bench/tile_sweep.py: 4096^3 matmul, 128x128 tiles, K tile 32 vs 64 at 3 stages: ~0.2 us per iteration)
ITERATION_S = 0.2e-6
# per block whose loads cannot overlap compute (`overlaps`): the wait for its first bytes, and for the
# block before it on its SM to finish (the H200: 7.2 us over 3 waves of rmsnorm_matmul T1's GEMV
# blocks alone on their SMs, against blocks two to an SM moving the same bytes)
EXPOSED_LOAD_S = 2.4e-6
# per sequential iteration of a loop of one matmul left on two pipelining stages (`shallow_pipeline`):
# step k + 2's tiles can only start loading when step k's are released, one step's compute before they
# are needed. H100 (bench/results/gemm_inflight_2026-12-06s43_H100.md), 128x256 tiles, K 128 on 2
# stages against K 64 on 3: 4096^3 216.1 / 205.7 us, 2048x6144x4096 163.2 / 154.4, 4096x14336x4096
# 846.2 / 760.9. With the calibrated hand-off of every iteration (~0.15 us), a 2-stage iteration
# costs 0.39-0.49 us: this much more.
SHALLOW_ITERATION_S = 0.25e-6


CALIBRATION_FILE = Path(__file__).with_name("cost_model_calibration.json")


@dataclass(frozen=True)
class Terms:
    """The roofline terms of one kernel, before calibration: per block, and how many blocks run."""

    memory_s: float  # global-memory traffic of one block at its share of the bandwidth
    compute_s: float  # tensor-core flops of one block at its share of the peak
    iterations: float  # sequential iterations of one block (a mean where a causal mask ends loops early)
    waves: int  # ceil(grid / SMs)
    # whether a block's loads overlap its compute (`overlaps`): else the two take turns
    overlapped: bool = True
    serial_s: float = 0.0  # one block's serial K steps of CUDA-core matmuls (`with_serial_steps`)
    shallow_iterations: float = 0.0  # of `iterations`, those on a too shallow pipeline (`with_pipeline_depth`)

    def unscaled_s(self) -> float:
        """One block's seconds that no calibration constant scales: CUDA-core serial steps and the
        two-stage charge (`Calibration.kernel_us` adds them as they are; `calibrate.fit` takes them out)."""
        return self.serial_s + SHALLOW_ITERATION_S * self.shallow_iterations

    def to_json(self) -> dict[str, float]:
        """A JSON-able dict (what measurement records hold)."""
        return asdict(self)

    def busy_s(self, memory_scale: float = 1.0, compute_scale: float = 1.0) -> float:
        """One block's memory and compute time: the longer of the two where they overlap, else their
        sum and the latency of its loads."""
        memory, compute = memory_scale * self.memory_s, compute_scale * self.compute_s
        return max(memory, compute) if self.overlapped else memory + compute + EXPOSED_LOAD_S


@dataclass(frozen=True)
class Calibration:
    """Corrections of the analytical constants, fitted from measured kernel times.

    A kernel takes `waves * (max(memory_scale * memory_s, compute_scale * compute_s) +
    iteration_s * iterations)` plus `launch_us`; the defaults are the uncorrected model (same floats).
    """

    memory_scale: float = 1.0
    compute_scale: float = 1.0
    iteration_s: float = ITERATION_S
    launch_us: float = 0.0
    fitted_on: dict[str, object] = field(default_factory=dict, compare=False)

    def kernel_us(self, t: Terms) -> float:
        """Calibrated microseconds of a kernel with terms `t`."""
        block_s = t.busy_s(self.memory_scale, self.compute_scale) + self.iteration_s * t.iterations + t.unscaled_s()
        return t.waves * block_s * 1e6 + self.launch_us

    def constants(self) -> dict[str, float]:
        """The fitted constants alone (what a cache key needs)."""
        return {"memory_scale": self.memory_scale, "compute_scale": self.compute_scale, "iteration_s": self.iteration_s, "launch_us": self.launch_us}

    def to_json(self) -> dict[str, object]:
        """The calibration file's contents."""
        return asdict(self)

    @staticmethod
    def from_json(data: dict[str, object]) -> Calibration:
        """Inverse of `to_json`; unknown keys are an error (a file of another version)."""
        names = {"memory_scale", "compute_scale", "iteration_s", "launch_us", "fitted_on"}
        extra = sorted(set(data) - names)
        if extra:
            raise ValueError(f"unknown calibration keys {extra}")
        values = {k: float(v) for k, v in data.items() if k != "fitted_on"}  # type: ignore[arg-type]
        if any(not math.isfinite(v) or v < 0 for v in values.values()):
            raise ValueError("calibration constants must be finite and >= 0")
        return Calibration(**values, fitted_on=dict(data.get("fitted_on", {})))  # type: ignore[arg-type]


def load_calibration(path: str | os.PathLike[str] | None = None) -> Calibration:
    """The calibration at `path` (default: `$CLEAVE_COST_CALIBRATION`, else `CALIBRATION_FILE`).

    `off`, or a missing default file, gives the uncorrected constants; a bad file is an error.
    """
    where = path if path is not None else os.environ.get("CLEAVE_COST_CALIBRATION") or CALIBRATION_FILE
    if str(where) == "off" or (path is None and where == CALIBRATION_FILE and not CALIBRATION_FILE.exists()):
        return Calibration()
    try:
        return Calibration.from_json(json.loads(Path(where).read_text()))
    except (OSError, ValueError, TypeError) as e:
        raise ValueError(f"cost model calibration {where}: {e}") from None


CALIBRATION = load_calibration()
"""The calibration `estimate` uses unless given another."""


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
    terms: Terms | None = None

    @property
    def footprint_bytes(self) -> int:
        return self.smem_bytes + self.register_bytes


def _numel(value) -> int:
    return math.prod(evaluate(d, {}) for d in tgraph.tensor_type(value).shape)


def _elt_bytes(value) -> int:
    return 2 if isinstance(tgraph.tensor_type(value).element_type, (Float16Type, BFloat16Type)) else 4


THREAD_COUNTS = (256, 128, 64, 32)


def layout_threads(fragment_shapes: Sequence[Sequence[int]], most: int = 256, reduced: Sequence[Sequence[int]] = ()) -> int:
    """The most threads (a power of two from `most` down to a warp) over which TileLang lays out
    fragments of these shapes (`lays_out`) and reduces the `reduced` ones on whole warps
    (`reduces_on_whole_warps`), or 0."""
    return next(
        (t for t in THREAD_COUNTS if t <= most and all(lays_out(shape, t) for shape in fragment_shapes) and all(reduces_on_whole_warps(shape, t) for shape in reduced)),
        0,
    )


def reduces_on_whole_warps(shape: Sequence[int], threads: int) -> bool:
    """Whether TileLang 0.1.15 reduces a fragment of `shape` along a dim with every lane of its warp
    collective (`tl::AllReduce`) taking part: the fragment's n elements are at least the threads, or
    divide them (the layout then replicates it), or fill whole warps and more than half the threads.
    Otherwise the threads past n skip the collective, which can hang the GPU
    (`tilelang_check.partial_warp_collectives` refuses such a kernel): a [5, 8] row sum (a per-head
    RMSNorm over 5 tokens) on 64, 128 or 256 threads. Lowered for sm_90a on the CPU: [3, 8], [5, 4], [5, 8],
    [3, 16], [7, 8], [5, 16] and [7, 16] leave lanes idle on every count at or above their n, 96 elements
    ([3, 32], [6, 16], [12, 8]) on 256 but not on 128; [1, 16], [2, 8], [4, 8], [8, 8], [16, 8] and 160-224
    elements on 256 do not (`tests/test_compile_any_graph.py -k whole_warps`)."""
    n = math.prod(d for d in shape if d != 1)
    return n >= threads or threads % n == 0 or (n % 32 == 0 and 2 * n > threads)


def warp_reduced(dims: Sequence[int], axis: int) -> bool:
    """Whether the lowering reduces a tile of (squeezed) `dims` along (squeezed) `axis` with TileLang's warp
    reduction (`lower_tilelang._reduce`): rows of two dims, the last reduced, a power-of-two width of at
    least 8. (A single row, or a width such as 100, is folded by threads a row, then their partials
    reduced: a softmax's [1, 100] rows on 128 threads lower with every lane busy.)"""
    return len(dims) == 2 and axis == 1 and dims[1] >= 8 and dims[1] & (dims[1] - 1) == 0


def reduced_tiles(op: Operation) -> list[tuple[int, ...]]:
    """The shapes of the tiles whose rows `op`'s reductions reduce with TileLang's warp reduction (`warp_reduced`)."""
    out = []
    for r in op.walk():
        if isinstance(r, tgraph.ReduceOp):
            shape = tuple(evaluate(d, {}) for d in tgraph.tensor_type(r.input).shape)
            if warp_reduced([d for d in shape if d != 1], sum(1 for d in shape[: r.axis] if d != 1)) and shape[r.axis] != 1:
                out.append(shape)
    return out


def lays_out(shape: Sequence[int], threads: int) -> bool:
    """Whether TileLang 0.1.15 lays a fragment of `shape` (size-1 dims dropped, as its loops drop
    them) out over `threads`, as measured by lowering for sm_90a a T.Parallel loop that fills it and
    a copy of it, over 828 shapes [a, b, c] (a 2-8, b 1-24, c 8-64) on 32-128 threads in f16 and f32
    (`tests/test_compile_any_graph.py::test_lays_out_matches_tilelang` re-checks a sample):

    - its n elements, and from rank 3 on its last two dims' n elements, need n <= threads or a
      multiple of them ("no available layout found" for 200 elements on 32 or 128 threads, 48 on 32);
    - from rank 3 on with b = shape[-2] not a power of two, the loop partition's thread index must
      not cut into b: with v the vector TileLang picks (the largest power of two of at most 16 bytes
      that divides c and leaves n a multiple of threads * v), the v-element chunks fit the threads,
      or one chunk is a whole row (c == v), or a row of b * c / v chunks is a multiple of threads.
      [4, 75, 32] on 32 threads (a Split-K candidate's parts) fails; [3, 75, 32] and [4, 64, 32] lower.
    The fragment's element type is not known here (the lowering computes most tiles in fp32), so
    both vector widths (8 lanes of 16 bits, 4 of 32) must pass.
    """
    dims = [d for d in shape if d != 1]
    n = math.prod(dims)
    if not (n <= threads or n % threads == 0):
        return False
    if len(dims) < 3:
        return True
    b, c = dims[-2], dims[-1]
    if not (b * c <= threads or b * c % threads == 0):
        return False
    if b & (b - 1) == 0:
        return True
    for lanes in (8, 4):
        v = lanes
        while v > 1 and (c % v or n % (threads * v)):
            v //= 2
        if not (n // v <= threads or c == v or (b * c // v) % threads == 0):
            return False
    return True


def accumulator_bytes(op: Operation) -> int:
    """fp32 bytes of the accumulators of the sequential loops in `op` (registers for the whole loop)."""
    return sum(_numel(r) * 4 for seq in op.walk() if isinstance(seq, itgraph.SequentialOp) for r in seq.results)


def tile_bytes(value) -> int:
    """Bytes of a (concrete) tile at its element type: 2 for f16/bf16, 4 otherwise."""
    return _numel(value) * _elt_bytes(value)


def loop_trips(loop: itgraph.SequentialOp) -> float:
    """Iterations of one block's run of `loop`: its extent, or where a causal mask ends it at the
    diagonal (`passes/causal.py`), the mean over the grid of the iterations left (about half)."""
    bound = diagonal_extent(loop)
    return evaluate(loop.extent_dim, {}) if bound is None else mean_trips(loop, bound)


def block_trips(op: Operation, loops: dict[Operation, float]) -> float:
    """How often one block runs `op`: the product of its enclosing loops' `loop_trips` (cached in `loops`)."""
    n: float = 1
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, itgraph.ParallelOp):
        if isinstance(parent, itgraph.SequentialOp):
            if parent not in loops:
                loops[parent] = loop_trips(parent)
            n *= loops[parent]
        parent = parent.parent_op()
    return n


def _same_shape(a: SSAValue, b: SSAValue) -> bool:
    return tgraph.tensor_type(a).shape == tgraph.tensor_type(b).shape


def peak_live_bytes(par: itgraph.ParallelOp, where_used: bool = True) -> int:
    """The most fp32 bytes of computed tiles alive at once in one block (registers, before reuse).

    A tile lives from its op to its last use; one used inside a sequential loop it was not defined
    in lives to the loop's end. Loads and reshapes of them (shared memory; a causal mask tile computed
    from its indices is counted unless its users compute it, `causal.computed_in_users`), the loop's accumulators and the matmul products a `T.gemm` accumulates into them
    (`SequentialOp.in_place_products`) are not counted here, nor an element-wise op's result that
    overwrites an accumulator at its last use, nor one the lowering computes where its users read it
    (`lower_tilelang.computed_where_used`: a masked attention's `select(mask, s * c, mask - 1e4)` holds
    one [rows, keys] tile, not three; its inputs live until those users). `where_used=False` counts
    those too: the estimate of a kernel without matmuls does (see `estimate`), and `cleave-place-memory`
    gives such kernels their threads by that count (the thread counts of the norms and Split-K combines
    measured on the H200 were chosen by it; counting only the tiles held would halve some of them).
    The compiler keeps a T.Parallel tile in registers and reuses dead ones, so the peak, not the sum,
    is what has to fit (bench/tile_sweep.py: 128-row FlashAttention tiles fit and run faster).
    """
    from cleave_ir.passes.lower_tilelang import computed_where_used  # the lowering imports this module

    def inlined(op: Operation) -> bool:
        return where_used and isinstance(op, tgraph.ElementwiseOp) and computed_where_used(op)

    def readers(v: SSAValue) -> list[Operation]:
        """The ops that read `v`: its users, through those computed where they are used."""
        return [r for use in v.uses for r in (readers(use.operation.results[0]) if inlined(use.operation) else [use.operation])]

    order = {op: i for i, op in enumerate(par.walk())}
    in_place = {v for seq in order if isinstance(seq, itgraph.SequentialOp) for v in seq.in_place_products()}
    accumulated = {r for seq in order if isinstance(seq, itgraph.SequentialOp) for r in seq.results}
    loaded: set[SSAValue] = set()
    end = {op: max((order[o] for o in op.walk()), default=order[op]) for op in order if isinstance(op, itgraph.SequentialOp)}
    events: list[tuple[int, int]] = []
    for op, i in order.items():
        if isinstance(op, (itgraph.ParallelOp, itgraph.SequentialOp, itgraph.KernelOp)) or not op.results:
            continue
        if isinstance(op, itgraph.LoadOp) and op.causal_offset is None:  # a causal mask tile is a register tile
            loaded.add(op.results[0])
            continue
        overwrites = isinstance(op, tgraph.ElementwiseOp) and any(
            v in accumulated and _same_shape(v, op.results[0]) and all(order.get(u.operation, i) <= i for u in v.uses)
            for v in op.operands
        )  # an accumulator at its last use, as the lowering's `reuse` does (the epilogue's divide); a cast
        # to f16 gets its own tile, but each element replaces the f32 one it is computed from
        if computed_in_users(op) or inlined(op):  # ... unless its users compute it, as the ops of it alone
            if overwrites:  # (what its users compute from it overwrites the accumulator in turn)
                accumulated.add(op.results[0])
            continue
        if isinstance(op, tgraph.ReshapeOp) and op.operands[0] in loaded:  # a view of the shared tile
            loaded.add(op.results[0])
            continue
        if op.results[0] in in_place:  # a T.gemm into its loop's accumulator
            continue
        if overwrites:
            accumulated.add(op.results[0])
            continue
        last = i
        for user in readers(op.results[0]):
            j = order.get(user, i)
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


def overlaps(placed: itgraph.KernelOp) -> bool:
    """Whether a placed kernel's (`cleave-place-memory`) loads overlap compute: they do where its loop
    has two or more pipelining stages, where a second block fits in the SM's shared memory, or where
    the grid is one wave. Otherwise each block, alone on its SM, waits for its loads before it
    computes, and the next block's loads wait for it to finish (rmsnorm_matmul T1's Split-K GEMV on
    the H200: [512, 128] weight tiles of 128 KiB in 3 waves 24.3 us, [512, 64] tiles two to an SM
    17.1 us). In one wave, one stage did not cost more than it saved (MLA decode's Split-K part:
    K tiles of 64 rows on one stage 14.2 us, of 32 rows on two stages 15.7-17.0 us). A matmul
    without a K loop never overlaps them (`unlooped_matmul`)."""
    stages = placed.attributes.get("cleave.stages")
    smem = placed.attributes.get("cleave.smem_bytes")
    if unlooped_matmul(placed):
        return False
    if stages is None or smem is None or stages.value.data > 1 or 2 * smem.value.data <= SMEM_BYTES:  # type: ignore[attr-defined]
        return True
    par = placed.body.block.first_op
    assert isinstance(par, itgraph.ParallelOp)
    return math.prod(evaluate(e, {}) for e in par.extent_dims) <= SMS


# the shortest matmul depth `unlooped_matmul` counts: two 64-wide K steps of a loop
LOOPABLE_DEPTH = 128


def unlooped_matmul(kernel: itgraph.KernelOp) -> bool:
    """Whether `kernel` has no K loop and a matmul over LOOPABLE_DEPTH or more, of 2-15 rows (the lowering
    pads them to a tensor-core tile) or tensor-core shaped (`place_memory.tensor_core_shaped`), whose
    operands it loads into shared memory. Each block loads its whole K chunk, then computes,
    with no load in flight meanwhile: in one wave too, where `overlaps` otherwise lets it pass.

    On the H200 (bench/results/split_loops_2026-12-04_H200.md), for every split count of rmsnorm_matmul
    T=5 N=3000 and T=3 N=1000, the fastest Split-K kernel with a loop of 128-wide steps beat the fastest
    without one, by 1.1-3.3x: T=5, 16 splits of 256 (the schedule's choice) 21.5-25.3 us unlooped,
    16.0-23.2 looped; 8 splits 22.7-33.5 against 13.4-18.1; 32 splits of 128 ran 20.3-26.6 us
    unlooped. It held for 2-15 rows only until the H100 (bench/results/unlooped_rows_2026-12-07s50_H100.md):
    q/k/v projections at T64 in 16-row tiles, one wave of 128 blocks, 12.4 us unlooped against 7.0 looped;
    32-row tiles 10.5 against 7.0; matmul_matmul S1024's and S4096's Split-K winners 6.2 -> 5.2 and
    8.3 -> 7.7 us looped. Not a CUDA-core fold of 16+ rows (a row sum as a product with a [K, 1] column):
    matmul_rowsum's such kernel ran 5.1 us unlooped, 7.3 looped. Shallower matmuls (decode attention's head dim at test sizes) have nothing to
    pipeline. Direct GEMVs (one row, weights read from global memory) stream by their own rule."""
    from cleave_ir.passes.place_memory import direct_gemv_matmul, tensor_core_shaped, weight_load  # placement imports this module

    if any(isinstance(op, itgraph.SequentialOp) for op in kernel.walk()):
        return False
    return any(
        isinstance(op, tgraph.MatmulOp) and not direct_gemv_matmul(op)
        and (1 < int(tgraph.tensor_type(op.result).shape[-2]) < 16 or tensor_core_shaped(op))
        and int(tgraph.tensor_type(op.lhs).shape[-1]) >= LOOPABLE_DEPTH
        and all(weight_load(v) is not None for v in (op.lhs, op.rhs))
        for op in kernel.walk()
    )


# one step of a CUDA-core matmul's serial K loop (`lower_tilelang.cuda_core_steps`): on the H200 the
# one-kernel rmsnorm_matmul T=3 and T=4 (N=1000), which fold K=4096 in 2048 steps, ran 26.3-31.0 us
# where the model, without this term, estimated 7.9-8.1 (bench/results/split_loops_2026-12-04_H200.md, run 6)
SERIAL_STEP_S = 14e-9


# a block's multiply-adds in a CUDA-core fold of a many-row matmul (`lower_tilelang.many_row_fold_s`):
# each reads both operands from shared memory (the T.Parallel fold keeps nothing in registers), and an
# SM's shared memory serves 128 bytes a clock, 16 such FMAs of 4-byte words, at the H200's 1.98 GHz
# boost clock (the datasheet's; not measured here)
FOLD_FMAS_PER_S = 16 * 1.98e9


def with_serial_steps(est: Estimate, steps: int, calibration: Calibration | None = None, fold_s: float = 0.0) -> Estimate:
    """`est` for a kernel whose blocks also take `steps` serial CUDA-core matmul steps, and `fold_s`
    seconds in many-row CUDA-core folds."""
    assert est.terms is not None
    terms = replace(est.terms, serial_s=steps * SERIAL_STEP_S + fold_s)
    return replace(est, microseconds=(calibration or CALIBRATION).kernel_us(terms), terms=terms)


def serialized(est: Estimate, calibration: Calibration | None = None) -> Estimate:
    """`est` for a kernel whose loads wait for its compute (`overlaps` false), from its terms."""
    assert est.terms is not None
    terms = replace(est.terms, overlapped=False)
    return replace(est, microseconds=(calibration or CALIBRATION).kernel_us(terms), terms=terms)


def _matmuls_by_loop(kernel: itgraph.KernelOp) -> list[list[tgraph.MatmulOp]]:
    """The matmuls inside each sequential loop of `kernel`."""
    return [[o for o in seq.walk() if isinstance(o, tgraph.MatmulOp)] for seq in kernel.walk() if isinstance(seq, itgraph.SequentialOp)]


def loop_matmuls(kernel: itgraph.KernelOp) -> int:
    """The most matmuls in one sequential loop of `kernel` (0 without a loop)."""
    return max(map(len, _matmuls_by_loop(kernel)), default=0)


def longest_trips(kernel: itgraph.KernelOp) -> int:
    """The most trips of one sequential loop of `kernel` (concrete shapes; 0 without a loop)."""
    return max((evaluate(seq.extent_dim, {}) for seq in kernel.walk() if isinstance(seq, itgraph.SequentialOp)), default=0)


# the fewest rows of a matmul `shallow_pipeline` counts: a WGMMA tile's, unpadded
SHALLOW_MIN_ROWS = 64


def shallow_pipeline(placed: itgraph.KernelOp) -> bool:
    """Whether a placed kernel's loop of one matmul of SHALLOW_MIN_ROWS or more rows runs three or more
    trips on two pipelining stages (`cleave-place-memory` gives such a loop three or more where they fit
    its shared memory). A few-row matmul is left out: its rows padded to a tensor-core tile take the
    shared memory of a third stage, and two stages of `T.gemm` beat three of a CUDA-core fold
    (`place_memory.row_padding_fits`)."""
    stages = placed.attributes.get("cleave.stages")
    if stages is None or stages.value.data != 2 or loop_matmuls(placed) != 1 or longest_trips(placed) < 3:  # type: ignore[attr-defined]
        return False
    rows = [evaluate(tgraph.tensor_type(op.result).shape[-2], {}) for loop in _matmuls_by_loop(placed) for op in loop]
    return min(rows) >= SHALLOW_MIN_ROWS


def with_pipeline_depth(est: Estimate, placed: itgraph.KernelOp, calibration: Calibration | None = None) -> Estimate:
    """`est` for the placed kernel at its stages: a `shallow_pipeline` pays SHALLOW_ITERATION_S an iteration."""
    if est.terms is None or not shallow_pipeline(placed):
        return est
    terms = replace(est.terms, shallow_iterations=est.terms.iterations)
    return replace(est, microseconds=(calibration or CALIBRATION).kernel_us(terms), terms=terms)


# the most rows of a matmul's input tile that `few_row_sharers` counts from DRAM once: a decode or small-batch
# projection's input rows
SHARED_INPUT_ROWS = 16


def few_row_sharers(load: itgraph.LoadOp, par: itgraph.ParallelOp) -> int:
    """How many blocks read the same tile of `load`, where it is the input rows (at most SHARED_INPUT_ROWS) of
    a matmul: the product of the extents of the grid variables that the other operand's offsets use and its
    own do not (1 otherwise). The first block reads it from DRAM, the others from L2. Counted in full, a kernel per
    projection of one x (q/k/v at T64, MLA's down projections at T32, a linear and its LoRA down projection)
    was estimated at twice what it measured (H100: 21.7 us against 10.9, 52.3 against 28.1, 19.5 against
    10.7), and ranked below one kernel of all of them that ran 1.7x slower (MLA's: 47.3 us against 28.1;
    bench/results/proportional_tiles_2026-12-07s50_H100.md)."""
    used = {str(s) for off in load.tmap.offset_exprs for s in off.free_symbols}
    weights = [
        w for u in load.result.uses
        if isinstance(mm := u.operation, tgraph.MatmulOp) and mm.lhs is load.result
        and int(tgraph.tensor_type(mm.result).shape[-2]) <= SHARED_INPUT_ROWS and isinstance(w := mm.rhs.owner, itgraph.LoadOp)
    ]
    theirs = {str(s) for w in weights for off in w.tmap.offset_exprs for s in off.free_symbols}
    return math.prod(evaluate(e, {}) for v, e in zip(par.var_names, par.extent_dims) if v in theirs - used)


def grid_blocks(kernel: itgraph.KernelOp) -> int:
    """The blocks `kernel` launches (concrete shapes)."""
    par = kernel.body.block.first_op
    assert isinstance(par, itgraph.ParallelOp)
    return math.prod(evaluate(e, {}) for e in par.extent_dims)


def estimate(kernel: itgraph.KernelOp, calibration: Calibration | None = None) -> Estimate:
    """Estimated time and footprint of `kernel` (concrete shapes), with `calibration` (default
    `CALIBRATION`), its loads overlapping its compute (else `serialized`)."""
    par = kernel.body.block.first_op
    assert isinstance(par, itgraph.ParallelOp)
    from cleave_ir.passes.place_memory import direct_gemv_input_row, direct_gemv_operand  # placement imports this module

    grid = grid_blocks(kernel)
    grid_vars = {v for v, e in zip(par.var_names, par.extent_dims) if e != 1}
    moved = flops = smem = 0
    iterations: float = 0
    loops: dict[Operation, float] = {}
    for op in par.walk():
        if isinstance(op, itgraph.LoadOp) and op.causal_offset is not None:
            continue  # a causal mask tile is computed from its indices: no traffic, no shared memory
        if isinstance(op, itgraph.LoadOp):
            moved += tile_bytes(op.result) * block_trips(op, loops) / (grid if direct_gemv_input_row(op, grid_vars) else few_row_sharers(op, par))
            if not direct_gemv_operand(op):  # read from global memory by its GEMV, never staged
                smem += tile_bytes(op.result)
        elif isinstance(op, itgraph.StoreOp):
            moved += tile_bytes(op.value) * block_trips(op, loops)
        elif isinstance(op, tgraph.MatmulOp):
            k = evaluate(tgraph.tensor_type(op.lhs).shape[-1], {})
            flops += 2 * _numel(op.result) * k * block_trips(op, loops)
        elif isinstance(op, (itgraph.SequentialOp,)):
            if op not in loops:
                loops[op] = loop_trips(op)
            iterations += block_trips(op, loops) * loops[op]
    accumulators = accumulator_bytes(par)
    # with matmuls, the register bound decides the tensor-core tiles, and it counts what the lowering
    # holds; without, every tile is counted (`peak_live_bytes`): a norm's rows then fit as before, and
    # on the H200 the larger row tiles the exact count lets in ran slower (Llama's RMSNorm [8, 4096]
    # rows 20.1 us against [4, 4096] 18.7; ViT's LayerNorm [32, 768] 33.2 against [16, 768] 30.7)
    regs = accumulators + peak_live_bytes(par, where_used=flops > 0)
    terms = Terms(moved / (HBM_BYTES_PER_S / SMS), flops / (TENSOR_FLOPS / SMS), iterations, math.ceil(grid / SMS))
    us = (calibration or CALIBRATION).kernel_us(terms)
    reason = ""
    computed = [
        tuple(evaluate(d, {}) for d in tgraph.tensor_type(r).shape)
        for op in par.walk()
        if isinstance(op, itgraph.SequentialOp) or (op.results and op.name.startswith("tgraph."))
        for r in op.results
    ]
    if smem > SMEM_BYTES:
        reason = f"loaded tiles need {smem // 1024} KiB of shared memory (limit {SMEM_BYTES // 1024} KiB)"
    elif not layout_threads(computed):
        odd = sorted({s for s in computed if not layout_threads([s])})
        reason = f"computed tiles {odd} have no register layout over {THREAD_COUNTS[-1]}-{THREAD_COUNTS[0]} threads"
    elif not layout_threads(computed, reduced=(reduced := reduced_tiles(par))):
        odd = sorted({s for s in reduced if not layout_threads(computed, reduced=[s])})
        reason = f"reductions over tiles {odd} leave lanes of a warp collective idle on every thread count their layout allows"
    elif regs > REGISTER_BYTES:
        reason = f"computed tiles need {regs // 1024} KiB of registers (limit {REGISTER_BYTES // 1024} KiB per SM)"
    elif not flops and regs > (laid := layout_threads(computed)) * TILE_BYTES_PER_THREAD:
        # the threads are those TileLang lays the tiles out over: [4, 3000] tiles only over 32, where
        # a LayerNorm's took 255 registers and spilled 7 KB a thread (ptxas for sm_90a)
        reason = (
            f"computed tiles need {regs // 1024} KiB of registers (limit {laid * TILE_BYTES_PER_THREAD // 1024} KiB "
            f"without matmuls: {TILE_BYTES_PER_THREAD // 4} per thread of the {laid} their layout allows)"
        )
    elif accumulators > ACCUMULATOR_BYTES:
        reason = f"accumulators need {accumulators // 1024} KiB of registers (limit {ACCUMULATOR_BYTES // 1024} KiB per SM)"
    return Estimate(us, moved * grid, flops * grid, grid, smem, regs, not reason, reason, terms)
