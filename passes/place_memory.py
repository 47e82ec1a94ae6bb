"""`cleave-place-memory`: shared memory or registers for every tile, hoisting, threads and stages (paper §6.1).

Decisions, visible as attributes in the IR:
- `cleave.mem = "shared"` on loads (global -> shared copies feed the tensor cores), `"fragment"` on
  computed tiles (registers; matmul accumulators in fp32); a computed tile used as a matmul's right
  operand is placed in shared memory (T.gemm takes B from shared memory only);
- loads inside a sequential loop whose tmap does not depend on the loop variable are hoisted out of
  it (the Q tile of attention is loaded once per block, not once per KV tile);
- matmuls with 2 to 15 rows (decode query rows, GQA head groups, T = 2..15 tokens) are padded
  to `cleave.pad_rows` = 64 rows (one warpgroup: wgmma's M, and the A operand can stay in
  registers): every tile that carries those rows gets `cleave.pad_axes` (per result, the padded
  dim or -1), found by following the rows through the kernel; the lowering allocates those tiles
  with 64 rows, loads and stores only the real ones, and uses T.gemm and warp reductions on them.
  Padding is only applied when no reduction, mask or contraction runs along the rows (so padded
  rows never mix into real ones) and every padded register tile stays within 64 x 128 values;
  otherwise the kernel keeps its CUDA-core loops;
- on the kernel: `cleave.threads` (one warpgroup of 128 threads per 64 rows of the largest matmul
  tile, at most 256) and `cleave.stages` (pipelining of the sequential loop's loads: 3 stages when
  they fit and the loop has 3+ iterations, else 2 when the loaded tiles fit twice in shared memory),
  and `cleave.smem_bytes` after placement.
A kernel whose shared tiles exceed the H200's 227 KiB is dropped with a warning naming it, or with
`strict=true` rejected with an error.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, ModuleOp, StringAttr, i64
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from cleave_ir.diagnostics import CleaveError
from cleave_ir.dialects import itgraph, tgraph
from cleave_ir.passes.cost_model import SMEM_BYTES, threads_for, tile_bytes
from cleave_ir.shapes import evaluate, symbol


def hoist_invariant_loads(kernel: itgraph.KernelOp) -> int:
    """Move loads that do not depend on their sequential loop's variable before the loop."""
    moved = 0
    for seq in [op for op in kernel.walk() if isinstance(op, itgraph.SequentialOp)]:
        var = symbol(seq.var_name)
        for load in [op for op in seq.body.block.ops if isinstance(op, itgraph.LoadOp)]:
            if any(var in off.free_symbols for off in load.tmap.offset_exprs):
                continue
            load.detach()
            seq.parent_block().insert_op_before(load, seq)  # type: ignore[union-attr]
            moved += 1
    return moved


PAD_ROWS = 64
# a padded register tile holds at most 64 x 128 fp32 values: 64 registers per thread of one warpgroup
# (the padded rows are computed too: wider tiles, e.g. a norm over 4096 features, would spill)
MAX_PADDED_ELEMENTS = 64 * 128
DEBUG_PADDING = False


class _NoPadding(Exception):
    """The rows of a small matmul meet an op that would mix padded rows into real ones."""


def _shape(value: SSAValue) -> tuple[int, ...]:
    return tuple(int(d) for d in tgraph.tensor_type(value).shape)


def _small_matmul(op: tgraph.MatmulOp) -> bool:
    """A matmul the tensor cores take once its M is padded: M < 16, N and K multiples of 16, no batch."""
    try:
        out, a, b = _shape(op.result), _shape(op.lhs), _shape(op.rhs)
    except TypeError:  # a symbolic tile shape
        return False
    batch_one = all(d == 1 for d in out[:-2] + a[:-2] + b[:-2])
    return batch_one and out[-2] < 16 and out[-1] > 1 and out[-1] % 16 == 0 and a[-1] % 16 == 0


def padded_row_axes(kernel: itgraph.KernelOp) -> dict[SSAValue, int]:
    """The tiles of `kernel` that carry the rows of its small matmuls, and the dim of those rows.

    Empty when there are none or when padding is unsafe (see the module docstring).
    """
    seeds = [op for op in kernel.walk() if isinstance(op, tgraph.MatmulOp) and _small_matmul(op)]
    if not seeds or len({_shape(op.result)[-2] for op in seeds}) != 1:
        return {}
    m = _shape(seeds[0].result)[-2]
    axes: dict[SSAValue, int] = {}

    def mark(value: SSAValue, axis: int) -> bool:
        if axes.get(value, axis) != axis:
            raise _NoPadding(f"{value.name_hint}: rows in dims {axes[value]} and {axis}")
        if value in axes:
            return False
        if not 0 <= axis < len(_shape(value)) or _shape(value)[axis] != m:
            raise _NoPadding(f"{value.name_hint} {_shape(value)}: no rows in dim {axis}")
        axes[value] = axis
        return True

    def loaded(value: SSAValue) -> bool:
        owner = value.owner
        while isinstance(owner, (tgraph.ReshapeOp, tgraph.SplitOp)):
            owner = owner.operands[0].owner
        return isinstance(owner, itgraph.LoadOp)

    def step(op: Operation) -> bool:
        changed = False
        if isinstance(op, tgraph.MatmulOp):
            rows = len(_shape(op.result)) - 2
            if op.rhs in axes or (op not in seeds and (op.lhs in axes or op.result in axes)):
                raise _NoPadding("rows reach a matmul's right operand or a large matmul")
            if op in seeds:
                changed |= mark(op.lhs, len(_shape(op.lhs)) - 2) | mark(op.result, rows)
        elif isinstance(op, tgraph.ReduceOp):
            for a, b in ((op.input, op.result), (op.result, op.input)):
                if a in axes:
                    if axes[a] == op.axis:
                        raise _NoPadding("a reduction along the rows")
                    changed |= mark(b, axes[a])
        elif isinstance(op, (tgraph.ReshapeOp, tgraph.SplitOp)):
            src, res = op.operands[0], op.results[0]
            for a, b in ((src, res), (res, src)):
                if a in axes:  # size-1 dims added or dropped on the left: the rows keep their place from the right
                    changed |= mark(b, axes[a] - len(_shape(a)) + len(_shape(b)))
        elif isinstance(op, itgraph.SequentialOp):
            term = op.body.block.last_op
            assert isinstance(term, itgraph.YieldOp)
            for r, y in zip(op.results, term.values):
                for a, b in ((r, y), (y, r)):
                    if a in axes:
                        changed |= mark(b, axes[a])
        elif isinstance(op, (tgraph.UnaryOp, tgraph.BinaryOp, tgraph.ScaleOp, itgraph.MaskOp)):
            res = op.results[0]
            if isinstance(op, itgraph.MaskOp) and axes.get(res, axes.get(op.input)) == op.axis.value.data:
                raise _NoPadding("a mask along the rows")
            for x in op.operands:
                shift = len(_shape(res)) - len(_shape(x))
                if x in axes:
                    changed |= mark(res, axes[x] + shift)
                # an operand of one row is read broadcast; a loaded one (M = 1) stays unpadded (weights)
                elif res in axes and 0 <= axes[res] - shift and _shape(x)[axes[res] - shift] == m and not (m == 1 and loaded(x)):
                    changed |= mark(x, axes[res] - shift)
        return changed

    try:
        if m == 1:  # one row: the tiles along it have no row dim to pad (GEMV shapes), see cleave-lower-tilelang
            raise _NoPadding("a single row")
        while any([step(op) for op in kernel.walk()]):
            pass
        big = [v for v in axes if not isinstance(v.owner, itgraph.LoadOp) and math.prod(_shape(v)) * PAD_ROWS // m > MAX_PADDED_ELEMENTS]
        if big:
            raise _NoPadding(f"{big[0].name_hint} {_shape(big[0])} would need {math.prod(_shape(big[0])) * PAD_ROWS // m} registers")
    except _NoPadding as e:
        if DEBUG_PADDING:
            print(f"cleave-place-memory: @{kernel.sym_name.data}: not padded: {e}", file=sys.stderr)
        return {}
    return axes


def pad_small_rows(kernel: itgraph.KernelOp) -> None:
    """Annotate `cleave.pad_rows` on `kernel` and `cleave.pad_axes` on its ops when padding applies."""
    axes = padded_row_axes(kernel)
    if not axes:
        return
    kernel.attributes["cleave.pad_rows"] = IntegerAttr(PAD_ROWS, i64)
    for op in kernel.walk():  # a sequential loop's results take the rows of the values it yields
        if any(r in axes for r in op.results) and not isinstance(op, itgraph.SequentialOp):
            op.attributes["cleave.pad_axes"] = ArrayAttr(IntegerAttr(axes.get(r, -1), i64) for r in op.results)


def padded_bytes(op: Operation, index: int) -> int:
    """Bytes of result `index` of `op` as allocated: with its padded rows (`cleave.pad_axes`)."""
    value = op.results[index]
    axes = op.attributes.get("cleave.pad_axes")
    pad = op.parent_op()
    while pad is not None and not isinstance(pad, itgraph.KernelOp):
        pad = pad.parent_op()
    if not isinstance(axes, ArrayAttr) or pad is None or axes.data[index].value.data < 0:  # type: ignore[attr-defined]
        return tile_bytes(value)
    rows = _shape(value)[axes.data[index].value.data]  # type: ignore[attr-defined]
    return tile_bytes(value) * pad.attributes["cleave.pad_rows"].value.data // rows  # type: ignore[attr-defined]


def place(kernel: itgraph.KernelOp) -> None:
    """Annotate `kernel` (see the module docstring); raises CleaveError if it cannot fit."""
    hoist_invariant_loads(kernel)
    pad_small_rows(kernel)
    pad = kernel.attributes.get("cleave.pad_rows")
    largest_m = pad.value.data if isinstance(pad, IntegerAttr) else 1
    for op in kernel.walk():
        if isinstance(op, itgraph.LoadOp):
            op.attributes["cleave.mem"] = StringAttr("shared")
        elif isinstance(op, tgraph.MatmulOp):
            op.attributes["cleave.mem"] = StringAttr("fragment")
            largest_m = max(largest_m, int(tgraph.tensor_type(op.result).shape[-2]))
            rhs = op.rhs.owner
            if isinstance(rhs, Operation) and not isinstance(rhs, itgraph.LoadOp):
                rhs.attributes["cleave.mem"] = StringAttr("shared")  # T.gemm's B operand
        elif isinstance(op, itgraph.SequentialOp) or (op.results and op.name.startswith("tgraph.")):
            op.attributes.setdefault("cleave.mem", StringAttr("fragment"))
    shared = sum(
        sum(padded_bytes(op, i) for i in range(len(op.results)))
        for op in kernel.walk()
        if op.attributes.get("cleave.mem") == StringAttr("shared")
    )
    if shared > SMEM_BYTES:
        raise CleaveError(
            f"error: cleave-place-memory: @{kernel.sym_name.data} needs {shared // 1024} KiB of shared memory "
            f"(limit {SMEM_BYTES // 1024} KiB)"
        )
    loop_loads = sum(
        padded_bytes(op, 0)
        for seq in kernel.walk()
        if isinstance(seq, itgraph.SequentialOp)
        for op in seq.body.block.ops
        if isinstance(op, itgraph.LoadOp)
    )
    trips = max((evaluate(seq.extent_dim, {}) for seq in kernel.walk() if isinstance(seq, itgraph.SequentialOp)), default=0)
    # three stages where they fit and the loop is long enough to fill them (bench/tile_sweep.py: a
    # 4096^3 matmul with 128x128x64 tiles runs 290 us with 3 stages, 347 us with 2)
    stages = 1
    if loop_loads and shared + loop_loads <= SMEM_BYTES:
        stages = 3 if trips >= 3 and shared + 2 * loop_loads <= SMEM_BYTES else 2
    threads = threads_for(largest_m)
    kernel.attributes["cleave.threads"] = IntegerAttr(threads, i64)
    kernel.attributes["cleave.stages"] = IntegerAttr(stages, i64)
    kernel.attributes["cleave.smem_bytes"] = IntegerAttr(shared + (stages - 1) * loop_loads, i64)


@dataclass(frozen=True)
class PlaceMemoryPass(ModulePass):
    """Annotate every itgraph kernel with memory spaces, hoisting, threads and stages."""

    name = "cleave-place-memory"

    strict: bool = False  # reject (error) instead of dropping a kernel that does not fit

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in [k for k in op.walk() if isinstance(k, itgraph.KernelOp)]:
            try:
                place(kernel)
            except CleaveError as e:
                if self.strict:
                    raise
                print(f"warning: {str(e).removeprefix('error: ')}: kernel dropped", file=sys.stderr)
                Rewriter.erase_op(kernel)
