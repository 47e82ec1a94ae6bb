"""Partition a captured FX graph into regions that become tgraph graphs.

The rule (`RULE`, printed by `explain`):
1. A node is supported when the aten->tgraph table (`aten.ATEN`) converts it on its own.
2. Regions are maximal single-output cones of supported nodes: walking the graph backwards, a
   supported node joins the region of its users when all its users are in one region and the region
   stays within `max_ops` tgraph ops (reshapes, views and widening casts not counted; default 12, the search's budget) and
   `MAX_MATMULS` matmuls (2: attention, matmul chains, SwiGLU; what the scheduler fuses);
   otherwise it starts a region of its own (its root; the region's output). So does a wide hidden layer
   feeding a projection (`wide_hidden_layer`: an MLP's silu(gate) * up before its down projection): the
   up projections that read one input share a region, not the up and down projections of a chain;
   and so does the input of a region that has two projections already (a norm before gate and up: on
   Llama-3-8B's sizes the pipeline's best for the joined graph is estimated no faster than the norm's
   kernel plus the fused gate/up one). A region has one
   output, so a value used by two regions (e.g. a normalized input feeding q, k and v projections)
   ends a region; regions that each project that value are then also tried together, as one graph of
   several outputs (`groups.GROUP_RULE`). An attention over `repeat_kv`'d heads (`aten.grouped_attention`) roots a region
   that holds the repeat nodes and takes its query as an input (passed as a grouped view).
3. A region is worth compiling when it holds a matmul or a reduction; elementwise-only regions stay
   in PyTorch (PyTorch fuses or runs them near memory speed; nothing to gain). So does a region with
   an fp32 matmul while `torch.get_float32_matmul_precision()` is "highest" (PyTorch's default): our
   kernels compute it in TF32 (`tf32_refused`).
Parameters, buffers, placeholders and values of other regions or of PyTorch ops become graph inputs.
"""

from __future__ import annotations

import hashlib
import io
import weakref
from dataclasses import dataclass, field
from collections.abc import Sequence
from typing import Any, NamedTuple

import torch
from torch import fx

from xdsl.dialects.builtin import ArrayAttr, DenseArrayBase, DictionaryAttr, Float32Type, FunctionType, i64
from xdsl.ir import Operation
from xdsl.rewriter import Rewriter

from cleave_ir.builder import GraphBuilder
from cleave_ir.dialects import tgraph
from cleave_ir.dialects.cleave import BoundaryAttr
from cleave_ir.passes.padded_dims import padded_size
from cleave_ir.passes.unit_reshapes import frame_map, move_unit_reshapes
from cleave_ir.torch.aten import (
    SLICED_LINEAR, SPLITS, Emitter, Input, Transposed, Unsupported, awkward, bool_masked_attention, constant_scalar, convert, element_type, floor_softmax_fills, grouped_attention,
    ELEMENTWISE, VIEWS, is_mask_dtype, meta_val, op_name, unbounded_float_mask,
)
from cleave_ir.torch.capture import Captured
from cleave_ir.torch.structural import (
    JOINS, SPLIT_MATMUL_CUT, VIEW_OF_PYTORCH, VIEW_OF_REGION, StructuralRefused, folded, is_view, matmul_operands_after_joins, sources, users, view_tail,
)

MAX_OPS = 12
"""Default op budget of a region: `cleave compile`'s search budget (--max-ops)."""

MAX_MATMULS = 2
"""Most matmuls in one region (the benchmark subgraphs the pipeline fuses have at most two)."""

WIDE_HIDDEN = 1024
"""A hidden layer this wide between two projections (an MLP's up and down) ends a region: no kernel holds
a 128-row tile of it (1024 fp16 columns: 256 KiB, past shared memory), so the two projections gain nothing
from one region; the projections that read one input (gate and up) do, and take the region instead."""

PROJECTION_ARGS = {"aten.linear": (0, 1), "aten.mm": (0, 1), "aten.matmul": (0, 1), "aten.addmm": (1, 2)}
"""Where the activation and the weight are among a projection's arguments."""

RULE = (
    "regions are maximal single-output cones of supported aten ops (a node joins its users' region when all its users "
    "are in that one region and the region stays within {max_ops} tgraph ops, reshapes, views and widening casts not counted, and {max_matmuls} matmuls, "
    "and is neither a hidden layer at least {wide} wide between two projections nor the input of {max_matmuls} projections); a region is "
    "compiled when it has a matmul or a reduction (not an fp32 matmul while torch.get_float32_matmul_precision() is "
    "'highest': our kernels compute it in TF32); parameters and other values become inputs"
)


@dataclass
class Region:
    """A region of supported nodes and its tgraph graph."""

    index: int
    nodes: list[fx.Node]
    graph: tgraph.GraphOp | None = None
    inputs: list[Input] = field(default_factory=list)
    worth: bool = False
    reason: str = ""
    output_like: int | None = None  # the graph's output is a grouped view of this tensor input's shape
    unsqueeze: tuple[int, ...] = ()  # size-1 dims of the root that the graph's output leaves out
    empty_rows: int | None = None  # this tensor input is an SDPA mask: the output's rows it masks whole are 0
    cut: str = ""  # why its root does not join its users' region (`cut_reason`)
    structural_refused: bool = False  # its transposes, slices or concats cannot leave it (`folded`)
    splits_matmul: bool = False  # ... because their concats, moved out, would split a matmul
    # where `cleave-fold-structural` moves the graph's transposes, slices and concats (`folded`): the
    # views its kernels read and the layout they write; the graph itself keeps them, so that what
    # `cleave compile` checks its candidates against is the region as written
    boundary: BoundaryAttr | None = None
    # a projection group (`groups.projection_groups`): the regions whose outputs it computes, in its
    # graph's output order; their nodes are its nodes
    members: list[Region] = field(default_factory=list)

    @property
    def outputs(self) -> list[fx.Node]:
        """The nodes whose values the region computes: its root, or each member's root in a group."""
        return [m.root for m in self.members] if self.members else [self.root]

    def zero_empty_rows(self, out: torch.Tensor, xs: Sequence[torch.Tensor]) -> torch.Tensor:
        """`out` (the root's value) with the query rows that the mask `xs[empty_rows]` masks (False or -inf)
        whole set to 0, as PyTorch's SDPA returns them (the kernel's fill gives their mean of V)."""
        if self.empty_rows is not None:
            out.masked_fill_(empty_rows_of(xs[self.empty_rows]), 0)
        return out

    def unview(self, out: torch.Tensor, xs: Sequence[torch.Tensor]) -> torch.Tensor:
        """The kernel's output `out` (for tensor inputs `xs`) in the shape of the region's root."""
        if self.output_like is not None:
            out = out.reshape(*xs[self.output_like].shape[:-1], out.shape[-1])
        for d in self.unsqueeze:
            out = out.unsqueeze(d)
        return out

    @property
    def root(self) -> fx.Node:
        return self.nodes[-1]

    @property
    def name(self) -> str:
        return f"sg{self.index}"

    def ops(self) -> list[str]:
        """The aten ops of the region, in graph order."""
        return [op_name(n) for n in self.nodes]

    def tgraph_ops(self) -> list[str]:
        if self.graph is None:
            return []
        return [op.name.split(".")[1] for op in self.graph.block.ops if not isinstance(op, tgraph.OutputOp)]

    def input_names(self) -> list[str]:
        return [i.node.name if i.node is not None else f"causal_mask<offset = {i.causal}> (made)" for i in self.inputs]

    def tensor_inputs(self) -> list[fx.Node]:
        """The FX nodes the region reads, in graph-input order (a causal mask it makes is none)."""
        return [i.node for i in self.inputs if i.node is not None]


@dataclass
class Plan:
    """Regions, and the reason every other compute node stays in PyTorch."""

    captured: Captured
    regions: list[Region]
    unsupported: dict[fx.Node, str]
    max_ops: int = MAX_OPS
    # a model captured in the graphs torch.compile cuts it into (`cleave_ir.torch.in_pieces`): every
    # graph's plan (this one the first), and why it was not captured whole
    pieces: list[Plan] = field(default_factory=list)
    note: str = ""
    # regions that project one input, also tried as one graph of their outputs (`groups.GROUP_RULE`)
    groups: list[Region] = field(default_factory=list)

    def __str__(self) -> str:
        return self.text()

    def __repr__(self) -> str:  # (the dataclass's would print every captured value: the model's weights)
        calls = sum(n.op == "call_function" for n in self.captured.module.graph.nodes)
        pieces = f", {len(self.pieces)} graphs" if self.pieces else ""
        return (f"<cleave_ir.torch.Plan: {calls} ops, {len(self.regions)} regions ({sum(r.worth for r in self.regions)} to compile), "
                f"{len(self.unsupported)} ops stay in PyTorch{pieces}; print() it for the regions>")

    def text(self) -> str:
        if self.pieces:
            return f"{self.note}\n" + "".join(f"graph {i}:\n{p.own_text()}" for i, p in enumerate(self.pieces))
        return self.own_text()

    def own_text(self) -> str:
        """The text of this graph's plan alone."""
        out = io.StringIO()
        calls = [n for n in self.captured.module.graph.nodes if n.op == "call_function"]
        todo = sum(r.worth for r in self.regions)
        print(f"cleave_ir.torch: {len(calls)} ops, {len(self.regions)} regions ({todo} to compile), {len(self.unsupported)} ops stay in PyTorch", file=out)
        print(f"rule: {RULE.format(max_ops=self.max_ops, max_matmuls=MAX_MATMULS, wide=WIDE_HIDDEN)}", file=out)
        for r in self.regions:
            decision = "compile" if r.worth else "PyTorch"
            print(f"region {r.index} [{decision}]: {', '.join(r.ops())}", file=out)
            print(f"  tgraph: {', '.join(r.tgraph_ops()) or '-'}; inputs: {', '.join(r.input_names())}; output: {r.root.name}", file=out)
            print(f"  why: {r.reason}", file=out)
            if r.cut:
                print(f"  ends here: {r.cut}", file=out)
        if self.groups:
            from cleave_ir.torch.groups import GROUP_RULE

            print(f"groups: {GROUP_RULE}", file=out)
        for g in self.groups:
            print(f"group {g.index} [try first]: {g.reason}", file=out)
            print(f"  tgraph: {', '.join(g.tgraph_ops())}; inputs: {', '.join(g.input_names())}; outputs: {', '.join(n.name for n in g.outputs)}", file=out)
        for n, why in self.unsupported.items():
            print(f"PyTorch: {n.name} ({op_name(n)}): {why}", file=out)
        return out.getvalue()


class Cost(NamedTuple):
    """What a supported node converts to."""

    ops: int  # tgraph ops, reshapes and structural ops not counted
    matmuls: int
    structural: bool  # it emits a transpose, slice or concat


def _try(captured: Captured, node: fx.Node) -> str | Cost:
    """What `node` converts to, else the reason it does not."""
    val = meta_val(node)
    try:
        elt = element_type(val.dtype) if hasattr(val, "dtype") and not isinstance(val, (list, tuple)) else "f16"
        cx = Emitter(GraphBuilder("probe", elt), captured.sizes)
        convert(cx, node)
    except Unsupported as e:
        return str(e)
    ops = list(cx.builder.block.ops)
    structural = any(isinstance(op, tgraph.StructuralOp) for op in ops)
    counted = sum(not _uncounted(op) for op in ops)
    return Cost(counted, sum(isinstance(op, tgraph.MatmulOp) for op in ops), structural)


def _uncounted(op: Operation) -> bool:
    """Ops the region's op budget leaves out: reshapes, views (transposes, slices, concats: they leave for
    its boundary) and widening casts. A norm's `x.float()` cut off its region is a wide copy PyTorch writes
    and the kernel reads (3x the bytes of reading x and widening it in registers: Qwen3's query norm and
    rotary embedding over [2048, 64, 128] read 64 MiB of f32, read twice, beside PyTorch's cast)."""
    if isinstance(op, tgraph.CastOp):
        src, dst = (tgraph.tensor_type(v).element_type for v in (op.input, op.result))
        return getattr(dst, "bitwidth", 0) > getattr(src, "bitwidth", 0)
    return isinstance(op, (tgraph.ReshapeOp, tgraph.StructuralOp))


def support(captured: Captured) -> dict[fx.Node, str | Cost]:
    """For every call node: its `Cost` when supported, else the one-line reason."""
    nodes = [n for n in captured.module.graph.nodes if n.op == "call_function"]
    return {n: _try(captured, n) for n in nodes}


def _parameter(node: Any) -> bool:
    """Whether `node` is a parameter or buffer (a `get_attr`), seen through views and casts."""
    while isinstance(node, fx.Node) and op_name(node) in VIEWS:
        node = node.args[0]
    return isinstance(node, fx.Node) and node.op == "get_attr"


def projection_input(node: fx.Node) -> fx.Node | None:
    """The activation a projection (a matmul by a parameter: linear, addmm, mm, a chunk's piece) reads, else None."""
    if SLICED_LINEAR in node.meta:
        x = node.meta[SLICED_LINEAR][0]
        return x if isinstance(x, fx.Node) else None
    name, args = op_name(node), node.args
    x, w = PROJECTION_ARGS.get(name, (None, None))
    if x is None or len(args) <= max(x, w) or not isinstance(args[x], fx.Node) or not _parameter(args[w]):
        return None
    return args[x]


def wide_hidden_layer(node: fx.Node) -> bool:
    """Whether `node` is a hidden layer between projections: at least WIDE_HIDDEN wide and computed from
    projections' outputs by element-wise ops and views alone (an MLP's silu(gate) * up, gelu(fc)); a norm of
    a projection's output is not (its row statistics are reductions)."""
    val = meta_val(node)
    if not hasattr(val, "shape") or len(val.shape) == 0 or not isinstance(val.shape[-1], int) or val.shape[-1] < WIDE_HIDDEN:
        return False
    known: dict[fx.Node, bool] = {}

    def hidden(n: fx.Node) -> bool:
        """n is a projection, or element-wise of such values and values from outside the graph's ops."""
        if n not in known:
            known[n] = False  # (no cycles in an FX graph; this only bounds the walk)
            if projection_input(n) is not None:
                known[n] = True
            elif op_name(n) in ELEMENTWISE or op_name(n) in VIEWS:
                computed = [a for a in n.all_input_nodes if a.op == "call_function"]
                known[n] = bool(computed) and all(hidden(a) for a in computed)
        return known[n]

    return hidden(node)


def cones(
    captured: Captured, cost: dict[fx.Node, Cost], max_ops: int = MAX_OPS, forced: dict[fx.Node, str] | None = None
) -> list[tuple[list[fx.Node], str]]:
    """Regions by the cone rule over the supported nodes (`cost`: their op and matmul counts), in graph
    order, each with why its root did not join its users' region (`cut_reason`, or `forced`: nodes
    that root a region of their own, and why)."""
    forced = forced or {}
    order = list(captured.module.graph.nodes)
    region_of: dict[fx.Node, int] = {}
    members: list[list[fx.Node]] = []
    cuts: list[str] = []
    size: list[list[int]] = []
    grouped_queries = {n.args[0] for n in cost if grouped_attention(n) is not None}
    masks = {m for n in cost if (m := unbounded_float_mask(n, cost)) is not None}  # region inputs
    for n in reversed(order):
        if n not in cost or n in region_of:
            continue
        ops, mms, _ = cost[n]
        owners = {region_of.get(u) for u in users(n)}
        r = next(iter(owners)) if len(owners) == 1 else None
        grouped = grouped_attention(n)
        cut = forced.get(n) or cut_reason(n, owners, size[r] if r is not None else None, ops, mms, max_ops, grouped is not None or n in grouped_queries, n in masks)
        if cut:
            r = len(members)
            members.append([])
            cuts.append(cut)
            size.append([0, 0])
        assert r is not None
        region_of[n] = r
        members[r].append(n)
        for x in reversed(grouped.repeat_nodes if grouped is not None else []):
            region_of[x] = r
            members[r].append(x)
        size[r][0] += ops
        size[r][1] += mms
    regions = [(list(reversed(m)), c) for m, c in zip(members, cuts)]
    regions.sort(key=lambda mc: order.index(mc[0][-1]))
    return regions


def cut_reason(
    n: fx.Node, owners: set[int | None], size: list[int] | None, ops: int, mms: int, max_ops: int, grouped: bool, mask: bool
) -> str:
    """Why the supported node `n` starts a region of its own (`RULE`), or "" where it joins its users'
    region (`owners`: their regions, None for a user outside every region; `size`: that region's tgraph
    ops and matmuls so far)."""
    if all(u.op == "output" for u in n.users):
        return "the graph's output"
    if size is None:
        return "its value is also read outside any region (in PyTorch, or as an output)" if None in owners else "its value is used by several regions"
    if size[0] + ops > max_ops:
        return f"its users' region would pass {max_ops} tgraph ops"
    if size[1] + mms > MAX_MATMULS:
        return f"its users' region would pass {MAX_MATMULS} matmuls"
    if ops and size[1] >= MAX_MATMULS and any(projection_input(u) is n for u in n.users):  # (a view of the input joins)
        # Llama-3-8B's RMSNorm joined to gate and up: the search finds no candidate; the pipeline's best
        # is one kernel per matmul at prefill (est 1174 us against 11.1 + 1112.2 cut here) and the
        # graph as written at decode (est 49.8 us against 4.8 + 47.1, inside the cost model's error;
        # bench/probes/unseen/llama3_norm_gate_up_decode.mlir, not timed)
        return f"the input of a region of {MAX_MATMULS} projections (joined, the pipeline's best is estimated no faster)"
    if grouped:
        return "a grouped attention and its query are regions of their own"
    if bool_masked_attention(n):
        return "an attention with a boolean mask roots a region"
    if mask:
        return "a float attention mask enters its attention's region as an input"
    if any(projection_input(u) is n for u in n.users) and wide_hidden_layer(n):
        return f"a hidden layer at least {WIDE_HIDDEN} wide between two projections"
    return ""


def emit(captured: Captured, index: int, nodes: list[fx.Node], cut: str = "", max_ops: int = MAX_OPS) -> Region:
    """The region's tgraph graph (or the reason there is none) and whether it is worth compiling."""
    region = Region(index, nodes, cut=cut)
    val = meta_val(region.root)
    cx = Emitter(GraphBuilder("region", element_type(val.dtype)), captured.sizes)  # renamed by content below
    grouped = grouped_attention(region.root)
    skip = set(grouped.repeat_nodes) if grouped is not None else set()
    try:
        for n in nodes:
            if n not in skip:
                convert(cx, n)
        out = cx.env[region.root]
        if isinstance(out, Transposed):
            raise Unsupported("the region's output is a transpose (tgraph has only matmul transpose_b)")
        if out in cx.builder.block.args:
            raise Unsupported("the region computes nothing (views of its input only)")
        floor_softmax_fills(list(cx.builder.block.ops), cx.masks)
        graph = cx.builder.build(out)
        move_unit_reshapes(graph)  # [B, 1, N] elementwise ops between [B, N] matmuls: all in the [B, N] frame
        _squeeze_inputs(graph, cx.inputs)
        region.unsqueeze = _unsqueeze_output(graph)
        graph.verify()
        if any(isinstance(op, tgraph.StructuralOp) for op in graph.block.ops):
            region.boundary = folded(graph, max_ops).attributes.get("cleave.boundary")
        region.graph = named_by_content(_padded(graph))
    except StructuralRefused as e:
        region.reason = f"PyTorch: {e}"
        region.structural_refused, region.splits_matmul = True, e.splits_matmul
        return region
    except Unsupported as e:
        region.reason = f"PyTorch: {e}"
        return region
    except Exception as e:  # a verifier refused the assembled graph
        region.reason = f"PyTorch: graph does not verify: {str(e).strip().splitlines()[-1] if str(e).strip() else type(e).__name__}"
        return region
    region.inputs = cx.inputs
    if cx.output_like is not None:
        region.output_like = region.tensor_inputs().index(cx.output_like)
    if cx.empty_rows is not None:
        region.empty_rows = region.tensor_inputs().index(cx.empty_rows)
    kinds = set(region.tgraph_ops())
    found = [k for k in ("matmul", "reduce") if k in kinds]
    region.worth = bool(found)
    region.reason = f"has a {' and a '.join(found)}" if found else "no matmul or reduction: nothing to gain over PyTorch"
    if tf32_refused(region.graph):
        region.worth = False
        region.reason = TF32_REFUSED
    return region


TF32_REFUSED = (
    "an fp32 matmul, which our kernels compute in TF32, while torch.get_float32_matmul_precision() is 'highest' "
    "(PyTorch's default: full fp32); torch.set_float32_matmul_precision('high') allows TF32 here as in PyTorch"
)


def tf32_refused(graph: tgraph.GraphOp) -> bool:
    """Whether `graph` has a matmul of fp32 operands (the lowering runs it on the tensor cores in TF32,
    `lower_tilelang.tensor_core_type`) while PyTorch is set to compute fp32 matmuls in full fp32:
    the kernel would be about 1e3 times less precise than the PyTorch it replaces, and faster for it."""
    return torch.get_float32_matmul_precision() == "highest" and has_fp32_matmul(graph)


def has_fp32_matmul(graph: tgraph.GraphOp) -> bool:
    """Whether `graph` has a matmul of fp32 operands (which the kernels compute in TF32)."""
    return any(
        isinstance(tgraph.tensor_type(v).element_type, Float32Type)
        for op in graph.walk()
        if isinstance(op, tgraph.MatmulOp)
        for v in (op.lhs, op.rhs)
    )


def _set_signature(graph: tgraph.GraphOp) -> None:
    """The graph's function type from its block arguments and output operands."""
    graph.function_type = FunctionType.from_lists(list(graph.block.arg_types), [o.type for o in graph.output_op.operands])


def _squeeze_inputs(graph: tgraph.GraphOp, inputs: Sequence[Input]) -> None:
    """Each input read only through reshapes to one shape that adds or drops size-1 dims takes that
    shape: the node's value is passed as that view of it (`Input.layout`).
    Decode's `[B, 1, K]` activations enter as `[B, K]` rows; a prefill linear's `[N, K]` weight,
    broadcast over the batch as `[1, N, K]`, enters as that view (the search rebuilds no input reshape)."""
    attrs = [dict(graph.arg_attrs.data[i].data) if graph.arg_attrs is not None else {} for i in range(len(inputs))]
    for i, slot in enumerate(inputs):
        arg = graph.inputs[i]
        uses = [u.operation for u in arg.uses]
        shapes = {tuple(tgraph.tensor_type(u.results[0]).shape) for u in uses}
        old = tuple(tgraph.tensor_type(arg).shape)
        if not uses or slot.group != 1 or not all(isinstance(u, tgraph.ReshapeOp) for u in uses) or len(shapes) != 1:
            continue
        [shape] = shapes
        if shape == old or [d for d in shape if d != 1] != [d for d in old if d != 1]:
            continue  # not a view that only adds or drops size-1 dims
        layout: list[int | None] = frame_map(old, shape)
        if slot.layout is not None:  # already a view of the node's value (a 0-d tensor's [1]): compose
            layout = [slot.layout[j] if j is not None else None for j in layout]
        new = Rewriter.replace_value_with_new_type(arg, tgraph.tensor_type(arg).with_shape(list(shape)))
        for u in uses:
            u.results[0].replace_all_uses_with(new)
            Rewriter.erase_op(u)
        dynamic = set(graph.input_annotation(i, "dynamic"))
        kept = [j for j, d in enumerate(layout) if d is not None and d in dynamic]
        attrs[i].pop("dynamic", None)
        if kept:
            attrs[i]["dynamic"] = DenseArrayBase.from_list(i64, kept)
        slot.shape = tuple(int(d) for d in shape)
        slot.layout = tuple(layout)
    if any(attrs):
        graph.arg_attrs = ArrayAttr(DictionaryAttr(a) for a in attrs)
    _set_signature(graph)


def _unsqueeze_output(graph: tgraph.GraphOp) -> tuple[int, ...]:
    """Drop a final reshape that only inserts size-1 dims from the graph's output; where it inserted them.

    Decode's linears compute `[B, N]` and view it as `[B, 1, N]`; as the graph's output that view would
    make the scheduler tile `[1, N]` per batch row (the weight read once per row), so it is applied in
    PyTorch instead (`Region.unview`)."""
    out = graph.output_op.operands[0]
    op = out.owner
    if not isinstance(op, tgraph.ReshapeOp) or out.uses.get_length() != 1 or not isinstance(op.input.owner, Operation):
        return ()
    src, res = tgraph.tensor_type(op.input).shape, tgraph.tensor_type(out).shape
    inserted: list[int] = []
    j = 0
    for i, d in enumerate(res):
        if j < len(src) and str(src[j]) == str(d):
            j += 1
        elif str(d) == "1":
            inserted.append(i)
        else:
            return ()
    if j != len(src) or not inserted:
        return ()
    out.replace_all_uses_with(op.input)
    Rewriter.erase_op(op)
    _set_signature(graph)
    return tuple(inserted)


def _padded(graph: tgraph.GraphOp) -> tgraph.GraphOp:
    """`graph` with its awkward dynamic dims (`aten.awkward`: 4097) at their padded sizes, where
    tiles divide them; the kernels serve the real size (dynamic dims)."""
    from cleave_ir.passes.dynamic_shapes import _dim_names, at_sizes, dynamic_inputs

    names = _dim_names(graph, dynamic_inputs(graph))
    sizes = {
        name: padded_size(n)
        for a in graph.inputs
        for name, n in zip(names.get(a.name_hint or "", []), tgraph.tensor_type(a).shape)
        if name is not None and awkward(int(n))
    }
    if not sizes:
        return graph
    return at_sizes(graph, sizes)


def named_by_content(graph: tgraph.GraphOp) -> tgraph.GraphOp:
    """The graph renamed `r_<digest of its text>`: equal regions (q/k/v projections, the two norms of a
    layer, the same layer in another model run) get equal graphs, so `cleave compile`'s cache serves them."""
    from xdsl.dialects.builtin import StringAttr

    from cleave_ir.compile import graph_text

    digest = hashlib.sha256(graph_text(graph).encode()).hexdigest()[:12]
    graph.sym_name = StringAttr(f"r_{digest}")
    return graph


def partition(captured: Captured, max_ops: int = MAX_OPS) -> Plan:
    """Supported nodes, cut into regions by `RULE`, each with its tgraph graph.

    Transposes and slices of values PyTorch computes, and of a region's result, stay in PyTorch (views
    there; the region reads them, or its kernel writes them, in place); a region whose concat would
    split a matmul is cut before that matmul's operand where the concat's side then has something to
    compile (Qwen3's key norm and rotary embedding), and a region whose transposes, slices and concats
    still cannot all leave it (`folded`) leaves them in PyTorch and is cut again."""
    reasons: dict[fx.Node, Any] = dict(support(captured))
    for n in reasons:  # (in graph order: a view of such a view is one too)
        if is_view(n, reasons) and not any(isinstance(reasons.get(a), Cost) for a in sources(n)):
            reasons[n] = VIEW_OF_PYTORCH
    forced: dict[fx.Node, str] = {}  # cuts before a matmul whose operand is made with a concat
    refusals: dict[fx.Node, str] = {}  # why each was cut: the refused region's reason
    tried: set[fx.Node] = set()
    while True:
        cost = {n: c for n, c in reasons.items() if not isinstance(c, str)}
        regions = [emit(captured, i, nodes, cut, max_ops) for i, (nodes, cut) in enumerate(cones(captured, cost, max_ops, forced))]
        excluded: dict[fx.Node, str] = {}
        cuts: dict[fx.Node, str] = {}
        reverted = False
        for r in regions:
            for n in view_tail(r, reasons):
                excluded[n] = VIEW_OF_REGION
            if r.root in forced and not r.worth and not r.structural_refused:
                # cut off, the concat's side has nothing to compile (a rotary embedding without its norm):
                # it joins the matmul's region again, as before, and its concats stay in PyTorch
                del forced[r.root]
                excluded.update({n: refusals[r.root] for n in r.nodes if op_name(n) in JOINS})
                reverted = True
                continue
            if not r.structural_refused:
                continue
            why = f"in region {r.index}, {r.reason.removeprefix('PyTorch: ')}"
            # a concat that would split a matmul (a rotary embedding's, sunk into attention): the region is
            # cut before the matmul, so the concat's region (with a norm before it, say) ends at its operand
            before = [n for n in matmul_operands_after_joins(r, cost) if n not in tried] if r.splits_matmul else []
            if before:
                cuts.update({n: SPLIT_MATMUL_CUT for n in before})
                refusals.update({n: why for n in before})
                tried.update(before)
                continue
            moved = [n for n in r.nodes if isinstance(c := reasons.get(n), Cost) and c.structural]
            # its concats first (what splits matmuls), then the rest
            cats = [n for n in moved if op_name(n) in JOINS]
            excluded.update({n: why for n in cats or moved})
        if not excluded and not cuts and not reverted:
            break
        if cuts:  # the regions are cut again: their views at roots are decided then
            excluded = {n: why for n, why in excluded.items() if why != VIEW_OF_REGION}
        reasons.update(excluded)
        forced.update(cuts)
    unsupported = {n: why for n, why in reasons.items() if isinstance(why, str)}
    from cleave_ir.torch.groups import projection_groups  # (it builds on this module's regions)

    return Plan(captured, regions, unsupported, max_ops, groups=projection_groups(regions, len(regions)))


def region_module(region: Region, float64: bool = False) -> fx.GraphModule:
    """PyTorch's version of the region: a GraphModule taking its tensor inputs, returning its output
    (a group's: a tuple of its members' outputs).

    `float64`: the version the gate's reference runs on float64 inputs: the region's conversions
    between floating types (`.float()`, `.to(x.dtype)`, softmax's dtype) keep float64 instead."""
    g = fx.Graph()
    env: dict[fx.Node, fx.Node] = {}
    for i, n in enumerate(region.tensor_inputs()):
        p = g.placeholder(f"in{i}")
        p.meta = dict(n.meta)
        env[n] = p
    def arg(a: fx.Node) -> fx.Node:
        c = constant_scalar(a) if a not in env else None
        if c is not None:  # a 0-d constant the region reads as a scalar, made here
            val = meta_val(a)
            env[a] = g.call_function(torch.ops.aten.full.default, ([], c), {"dtype": val.dtype, "device": val.device})
            env[a].meta = dict(a.meta)
        elif a not in env and op_name(a) in SPLITS:  # the pieces' list a getitem of the region reads
            env[a] = g.node_copy(a, arg)
        elif a not in env and isinstance(meta_val(a), torch.SymInt):  # a dynamic size (a view's shape)
            env[a] = _size_of(g, a, env)
        elif a not in env:  # a tensor the region reads no element of: an empty piece of a concat
            env[a] = _no_elements(g, a)
        return env[a]

    for n in region.nodes:
        if float64 and float_conversion(n):
            env[n] = env[n.args[0]]
            continue
        if float64 and mask_conversion(n):  # a mask's 0/1 in float64, the type of the other operands
            env[n] = g.call_function(torch.ops.aten._to_copy.default, (env[n.args[0]],), {"dtype": torch.float64})
            continue
        if SLICED_LINEAR in n.meta:  # a chunked projection's piece: linear over the weight's rows
            x, ws, bs = n.meta[SLICED_LINEAR]
            env[n] = g.call_function(torch.ops.aten.linear.default, (arg(x), arg(ws), arg(bs) if bs is not None else None))
            env[n].meta = dict(n.meta)
            continue
        if op_name(n) == "aten.type_as" and n.args[1] not in env:  # `y` read for its dtype only
            env[n] = g.call_function(torch.ops.aten._to_copy.default, (env[n.args[0]],), {"dtype": meta_val(n).dtype})
            env[n].meta = dict(n.meta)
            continue
        env[n] = g.node_copy(n, arg)
        if float64 and op_name(n) in ("aten.softmax", "aten._softmax") and len(n.args) > 2:
            env[n].args = (*env[n].args[:2], None if op_name(n) == "aten.softmax" else False)
    g.output(tuple(env[n] for n in region.outputs) if region.members else env[region.root])
    return fx.GraphModule(torch.nn.Module(), g)


def _size_of(g: fx.Graph, a: fx.Node, env: dict[fx.Node, fx.Node]) -> fx.Node:
    """A dynamic size the region reads as a number (GPT-2's `view(b, s, heads, d)`), measured on a
    region input that has it as a dim."""
    expr = meta_val(a).node.expr
    for node, mine in env.items():
        val = meta_val(node)
        if mine.op != "placeholder" or not isinstance(val, torch.Tensor):
            continue
        for d, n in enumerate(val.shape):
            if isinstance(n, torch.SymInt) and n.node.expr == expr:
                size = g.call_function(torch.ops.aten.sym_size.int, (mine, d))
                size.meta = dict(a.meta)
                return size
    raise KeyError(f"region_module: {a.name}, a size, is read by the region but no input of it has that size")


def _no_elements(g: fx.Graph, a: fx.Node) -> fx.Node:
    """A fresh tensor like `a`, which the region reads no element of (a concat's empty piece: Phi-3's
    pass-through part of the head dim at a full rotary width); not its input (`Input`s hold data)."""
    val = meta_val(a)
    if not isinstance(val, torch.Tensor) or 0 not in [d for d in val.shape if isinstance(d, int)]:
        raise KeyError(f"region_module: {a.name} is read by the region but is not one of its inputs")
    # at a dynamic size, a 1-D empty tensor, which a concat skips (its other dims cannot be fixed here)
    shape = list(val.shape) if all(isinstance(d, int) for d in val.shape) else [0]
    node = g.call_function(torch.ops.aten.empty.memory_format, (shape,), {"dtype": val.dtype, "device": val.device})
    node.meta = dict(a.meta)
    return node


def float_conversion(node: fx.Node) -> bool:
    """A node that converts one floating dtype to another (`aten._to_copy`, `aten.to`, `aten.type_as`)."""
    if op_name(node) not in ("aten._to_copy", "aten.to", "aten.type_as"):
        return False
    src, dst = meta_val(node.args[0]), meta_val(node)
    return all(getattr(v, "dtype", None) is not None and v.dtype.is_floating_point for v in (src, dst))


def mask_conversion(node: fx.Node) -> bool:
    """A node that converts a boolean or integer tensor (a mask) to a floating dtype."""
    if op_name(node) not in ("aten._to_copy", "aten.to"):
        return False
    src, dst = meta_val(node.args[0]), meta_val(node)
    return getattr(src, "dtype", None) is not None and is_mask_dtype(src.dtype) and getattr(dst, "dtype", torch.bool).is_floating_point


_LAST_EMPTY: list[Any] = [None, None, None]  # the last mask (weakly), its version, its empty rows


def empty_rows_of(mask: torch.Tensor) -> torch.Tensor:
    """The query rows a boolean (False) or additive (-inf) attention mask masks whole, as a [..., q, 1]
    boolean tensor. The last mask's answer is kept while it is the same tensor, unchanged: a model builds
    its mask once per forward and every layer's attention reads it (two launches saved a layer)."""

    def compute() -> torch.Tensor:
        return ~mask.any(-1, keepdim=True) if mask.dtype == torch.bool else (mask == float("-inf")).all(-1, keepdim=True)

    # not while tracing (fake tensors) or capturing a CUDA graph (a captured op has not run yet)
    if torch.compiler.is_compiling() or (mask.is_cuda and torch.cuda.is_current_stream_capturing()):
        return compute()
    try:
        version = mask._version
    except RuntimeError:  # an inference-mode tensor keeps no version counter: nothing tells a change
        return compute()
    ref, last_version, empty = _LAST_EMPTY
    if ref is not None and ref() is mask and last_version == version:
        return empty
    empty = compute()
    try:
        _LAST_EMPTY[:] = [weakref.ref(mask), version, empty]
    except TypeError:  # a tensor subclass without weak references: not kept
        _LAST_EMPTY[:] = [None, None, None]
    return empty


def example_inputs(captured: Captured, region: Region) -> list[Any]:
    """The region's tensor inputs in the example run."""
    return [captured.values[n] for n in region.tensor_inputs()]


def _hint(expr: Any, symbol: Any, size: int) -> int | None:
    """The integer value of `symbol` that makes `expr` (in that symbol alone) equal `size`, if one."""
    import sympy

    if expr.free_symbols != {symbol}:
        return None
    roots = [r for r in sympy.solve(sympy.Eq(expr, size), symbol) if r.is_integer and r >= 0]
    return int(roots[0]) if len(roots) == 1 else None


def other_shapes(captured: Captured, region: Region) -> list[tuple[int, ...]] | None:
    """Shapes of the region's tensor inputs with every dynamic size moved off its example value
    (halved, plus one: odd, so a kernel that only serves whole tiles is caught; an example of 2 takes 3, not
    itself: a kernel that serves only the example's size was accepted at a batch of 2 and raised at 4); None
    without dynamic dims.
    A symbol seen only inside an expression (a decode step's `past + 1`) takes the value that gives the
    example's size. Raises ValueError where no other sizes can be formed: the gate could not check them."""
    import sympy

    from cleave_ir.torch.aten import is_symbolic

    nodes = region.tensor_inputs()
    example: dict[sympy.Symbol, int] = {}
    compound: list[tuple[sympy.Expr, int]] = []  # a decode step's cache length + 1, a concat's sum
    for n in nodes:
        for d, size in zip(meta_val(n).shape, captured.sizes(n)):
            if is_symbolic(d):
                expr = d.node.expr
                if isinstance(expr, sympy.Symbol):
                    example[expr] = size
                else:
                    compound.append((expr, size))
    for expr, size in compound:  # a symbol seen only inside an expression: its value in the example run
        for s in expr.free_symbols - example.keys():
            hint = _hint(expr, s, size)
            if hint is None:
                raise ValueError(f"its dynamic size {expr} = {size} cannot be varied: a kernel serving it would go unchecked at other sizes")
            example[s] = hint
    if not example and not compound:
        return None
    new = {s: v // 2 + 1 if v // 2 + 1 != v else v + 1 for s, v in example.items()}
    try:
        return [tuple(int(d.node.expr.subs(new)) if is_symbolic(d) else int(d) for d in meta_val(n).shape) for n in nodes]
    except (TypeError, ValueError) as e:  # a size that is not a function of the input symbols alone
        raise ValueError(f"its dynamic sizes cannot be varied ({e}): a kernel serving them would go unchecked at other sizes") from e
