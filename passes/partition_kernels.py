"""Cut a graph that no single kernel can schedule into a chain of kernels (intermediates in global memory).

The ops are taken in graph order and added to the current piece while the piece still schedules
(`can_schedule` says why not); the op that breaks it starts the next piece. At worst every op is its
own kernel; an op that cannot be scheduled even alone is reported with the reason.

A chain runs as the emitted module's `run()` does (and `interpreter_tilelang.run_kernels`,
`cleave_ir.interpreter.run_chain`): every value is named (the first kernel's inputs by the graph's
input names, a piece's results by its `cleave.output_names`); each kernel takes the previous
kernel's outputs, then the named values its `cleave.passthrough` lists. Piece 0 keeps the graph's
signature (and passthrough), the last piece returns the graph's outputs in order, and each piece
links to the next with `cleave.next`. Where an earlier piece computes some of the graph's outputs
and nothing runs after the last piece, the last piece returns only the outputs it computes (named
by its `cleave.output_names`) and its `cleave.results` names the graph's outputs in order, gathered
from the whole chain: copying an earlier output through the last kernel would make its tiles span
that output too (q, k and v projections of one x at widths 1024, 256, 256: 4 blocks of 16 rows).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, StringAttr, SymbolRefAttr
from xdsl.ir import Block, Operation, Region, SSAValue

from cleave_ir.dialects import cleave
from cleave_ir.dialects.cleave import Stage, StageAttr
from cleave_ir.dialects import tgraph
from cleave_ir.passes.tmap_propagation import Unschedulable, reduced_dims

# graph attributes a piece inherits from the graph it was cut from
_INHERITED = ("cleave.candidate_of", "cleave.note", "cleave.split_count", "bindings")


def successor(graph: tgraph.GraphOp) -> str | None:
    """The graph whose kernel runs right after `graph`'s: `cleave.next`, or a split graph's combine."""
    nxt = tgraph.referenced_symbol(graph, "cleave.next")
    if nxt is None and stage(graph) == Stage.SPLIT:
        nxt = tgraph.referenced_symbol(graph, "cleave.combine")
    return nxt


def stage(graph: tgraph.GraphOp) -> Stage | None:
    return cleave.stage(graph)


def chain_head(graph: tgraph.GraphOp) -> bool:
    """Whether a candidate's kernels start with `graph`'s (not a combine graph or a later piece)."""
    return stage(graph) not in (Stage.COMBINE, Stage.PART)


def chain(graph: tgraph.GraphOp, graphs: dict[str, tgraph.GraphOp]) -> list[tgraph.GraphOp] | None:
    """The graphs of the candidate starting at `graph`, in launch order (None when a link is missing)."""
    out = [graph]
    while (nxt := successor(out[-1])) is not None:
        if nxt not in graphs or len(out) > len(graphs):
            return None
        out.append(graphs[nxt])
    return out


def _numel(v: SSAValue) -> float:
    shape = tgraph.tensor_type(v).shape
    return math.prod(int(d) if d.is_Integer else math.inf for d in shape)


def _names(attr) -> list[str]:
    return [a.data for a in attr.data] if isinstance(attr, ArrayAttr) else []


class _Cutter:
    def __init__(self, graph: tgraph.GraphOp) -> None:
        self.graph = graph
        self.gather = successor(graph) is None  # no kernel reads the last piece's outputs by position
        self.ops = [op for op in graph.block.ops if not isinstance(op, tgraph.OutputOp)]
        self.taken = set(graph.input_names())
        self.name: dict[SSAValue, str] = dict(zip(graph.inputs, graph.input_names()))

    def value_name(self, v: SSAValue) -> str:
        if v not in self.name:
            base = "".join(c if c.isalnum() or c == "_" else "_" for c in (v.name_hint or "t"))
            if not base or base[0].isdigit():
                base = "t_" + base
            n, i = f"{base}_c", 1
            while n in self.taken:
                n, i = f"{base}_c{i}", i + 1
            self.taken.add(n)
            self.name[v] = n
        return self.name[v]

    def gathered(self, ops: Sequence[Operation], last: bool) -> bool:
        """Whether the last piece `ops` returns only the graph outputs it computes (`cleave.results`): some,
        not all of them."""
        defined = {r for op in ops for r in op.results}
        outs = self.graph.output_op.outputs
        return last and self.gather and any(o in defined for o in outs) and not all(o in defined for o in outs)

    def outputs(self, ops: Sequence[Operation], last: bool) -> list[SSAValue]:
        if self.gathered(ops, last):
            defined = {r for op in ops for r in op.results}
            return list(dict.fromkeys(o for o in self.graph.output_op.outputs if o in defined))
        if last:
            return list(self.graph.output_op.outputs)
        inside = set(ops)
        graph_outs = set(self.graph.output_op.outputs)
        outs = [
            r
            for op in ops
            for r in op.results
            if r in graph_outs or any(u.operation not in inside and not isinstance(u.operation, tgraph.OutputOp) for u in r.uses)
        ]
        # the most reduced result first: it sets the grid, the larger ones are computed whole along it
        return sorted(outs, key=_numel)

    def piece(self, index: int, ops: Sequence[Operation], prev: Sequence[SSAValue], last: bool) -> tgraph.GraphOp:
        """The graph of piece `index` (ops in graph order; `prev`: the previous piece's outputs)."""
        g = self.graph
        outs = self.outputs(ops, last)
        defined = {r for op in ops for r in op.results}
        if index == 0:
            leading, passthrough = list(g.inputs), []
        else:
            leading = list(prev)
            needed = [o for op in ops for o in op.operands] + (outs if last else [])
            passthrough = []
            for v in needed:
                if v not in defined and v not in leading and v not in passthrough:
                    passthrough.append(v)
        args = [*leading, *passthrough]
        block = Block(arg_types=[v.type for v in args])
        mapping: dict[SSAValue, SSAValue] = {}
        for old, new in zip(args, block.args):
            new.name_hint = self.value_name(old) if index > 0 else old.name_hint
            mapping[old] = new
        for op in ops:
            block.add_op(op.clone(value_mapper=mapping))
        block.add_op(tgraph.OutputOp([mapping[o] for o in outs]))
        name = g.sym_name.data if index == 0 else f"{g.sym_name.data}_p{index}"
        arg_attrs = g.arg_attrs
        if index > 0:  # a causal mask a later piece reads keeps its promise
            causal = {g.inputs[i]: g.arg_attrs.data[i].data["cleave.causal"] for i in g.causal_inputs()} if g.arg_attrs else {}
            attrs = [{"cleave.causal": causal[v]} if v in causal else {} for v in args]
            arg_attrs = ArrayAttr(DictionaryAttr(a) for a in attrs) if any(attrs) else None
        piece = tgraph.GraphOp(
            name,
            [tgraph.tensor_type(v) for v in args],
            [tgraph.tensor_type(v) for v in outs],
            Region(block),
            arg_attrs=arg_attrs,
        )
        for key in _INHERITED:
            if key in g.attributes:
                piece.attributes[key] = g.attributes[key]
        if index == 0:
            for key in ("cleave.passthrough", "cleave.split", "cleave.combine"):
                if key in g.attributes:
                    piece.attributes[key] = g.attributes[key]
            piece.attributes["cleave.stage"] = StageAttr(stage(g) or Stage.FIRST)
        else:
            piece.attributes["cleave.stage"] = StageAttr(Stage.PART)
            piece.attributes["cleave.passthrough"] = ArrayAttr(StringAttr(self.value_name(v)) for v in passthrough)
        gathered = self.gathered(ops, last)
        if not last or gathered:
            piece.attributes["cleave.output_names"] = ArrayAttr(StringAttr(self.value_name(v)) for v in outs)
        if gathered:
            piece.attributes["cleave.results"] = ArrayAttr(StringAttr(self.value_name(v)) for v in self.graph.output_op.outputs)
        return piece


_ELEMENTWISE = (tgraph.UnaryOp, tgraph.BinaryOp, tgraph.ScaleOp, tgraph.ReshapeOp)


def recompute_elementwise(graph: tgraph.GraphOp, max_growth: int = 4) -> tgraph.GraphOp:
    """A copy of `graph` where every elementwise op with several users has one copy per user, placed
    right before it: a piece then recomputes exp(x - m) from x and m instead of reading a whole
    intermediate back from global memory. `graph` itself when that would multiply the ops by more
    than `max_growth`."""
    copy = graph.clone()
    ops = [op for op in copy.block.ops if not isinstance(op, tgraph.OutputOp)]
    for op in reversed(ops):
        if not isinstance(op, _ELEMENTWISE):
            continue
        uses = [u for u in op.results[0].uses if not isinstance(u.operation, tgraph.OutputOp)]
        if len(uses) < 2 or len(uses) != len(list(op.results[0].uses)):
            continue
        for use in uses[1:]:
            twin = op.clone()
            twin.results[0].name_hint = op.results[0].name_hint
            copy.block.insert_op_before(twin, use.operation)
            use.operation.operands[use.index] = twin.results[0]
        op.detach()
        copy.block.insert_op_before(op, uses[0].operation)
        if len(copy.block.ops) > max_growth * (len(ops) + 1):
            return graph
    return copy


def partition(graph: tgraph.GraphOp, can_schedule: Callable[[tgraph.GraphOp], str | None], lookahead: int = 3) -> list[tgraph.GraphOp]:
    """The pieces of `graph`, each schedulable (`can_schedule` returns None, or why not), linked in order.

    Elementwise ops with several users are recomputed per user first (`recompute_elementwise`). A
    piece grows by the next op, or by up to `lookahead` ops at once (an exp(x - max) that only
    fits once its sum joins it). Piece 0 is named as `graph` (it replaces it), the others
    `<name>_p<i>`; the last piece takes over `graph`'s own `cleave.next` (or a split graph's link to
    its combine). Raises Unschedulable naming the op that cannot be scheduled even as a kernel of
    its own.
    """
    source = recompute_elementwise(graph)
    cut = _Cutter(source)
    n = len(cut.ops)
    groups: list[list[Operation]] = []
    current: list[Operation] = []
    prev: list[SSAValue] = []
    i = 0
    while i < n:
        grown = False
        for j in range(i + 1, min(n, i + lookahead) + 1) if current else ():
            trial = [*current, *cut.ops[i:j]]
            if can_schedule(cut.piece(len(groups), trial, prev, j == n)) is None:
                current, i, grown = trial, j, True
                break
        if grown:
            continue
        op = cut.ops[i]
        if current:
            groups.append(current)
            prev = cut.outputs(current, False)
        current = [op]
        alone = can_schedule(cut.piece(len(groups), current, prev, i == n - 1))
        if alone is not None:
            where = f" (result %{op.results[0].name_hint})" if op.results and op.results[0].name_hint else ""
            raise Unschedulable(f"{op.name}{where} cannot be scheduled even as a kernel of its own: {alone}")
        i += 1
    groups.append(current)
    pieces: list[tgraph.GraphOp] = []
    prev = []
    for k, ops in enumerate(groups):
        last = k == len(groups) - 1
        pieces.append(cut.piece(k, ops, prev, last))
        prev = cut.outputs(ops, last)
    return _linked(pieces, graph)


def partition_by_level(graph: tgraph.GraphOp, can_schedule: Callable[[tgraph.GraphOp], str | None]) -> list[tgraph.GraphOp] | None:
    """The pieces of `graph` by reduction level, or None where that gives one piece or a piece that
    does not schedule: piece k computes the reductions whose operands need k reductions before them,
    each element-wise op goes with its user (`recompute_elementwise`: read from the inputs and the
    earlier pieces' small results, not materialized), and the element-wise ops after the last
    reductions end the last one. Two softmaxes' statistics over the same rows (the KL divergence of
    two logit rows: both maxes, then the exp sums shifted by them) are two kernels this way, where
    `partition`'s greedy cut in graph order materializes shifted rows between three."""
    source = recompute_elementwise(graph)
    cut = _Cutter(source)
    level: dict[SSAValue, int] = {v: 0 for v in source.inputs}
    piece_of: dict[Operation, int] = {}
    for op in cut.ops:
        lv = max((level[o] for o in op.operands), default=0)
        piece_of[op] = lv
        for r in op.results:
            level[r] = lv + 1 if reduced_dims(op) else lv
    for op in reversed(cut.ops):  # an element-wise op is computed where its users need it
        users = [piece_of[u.operation] for r in op.results for u in r.uses if u.operation in piece_of]
        if not reduced_dims(op) and users:
            piece_of[op] = max(piece_of[op], min(users))
    top = max(piece_of.values(), default=0)
    if top and not any(reduced_dims(op) for op in cut.ops if piece_of[op] == top):
        piece_of = {op: min(k, top - 1) for op, k in piece_of.items()}
    groups = [g for k in range(top + 1) if (g := [op for op in cut.ops if piece_of[op] == k])]
    if len(groups) < 2:
        return None
    pieces: list[tgraph.GraphOp] = []
    prev: list[SSAValue] = []
    for k, ops in enumerate(groups):
        last = k == len(groups) - 1
        piece = cut.piece(k, ops, prev, last)
        if can_schedule(piece) is not None:
            return None
        pieces.append(piece)
        prev = cut.outputs(ops, last)
    return _linked(pieces, graph)


def _linked(pieces: list[tgraph.GraphOp], graph: tgraph.GraphOp) -> list[tgraph.GraphOp]:
    """`pieces` of `graph`, each linked to the next by `cleave.next`, the last to `graph`'s successor."""
    for a, b in zip(pieces, pieces[1:]):
        a.attributes["cleave.next"] = SymbolRefAttr(b.sym_name.data)
    if (tail := successor(graph)) is not None:
        pieces[-1].attributes["cleave.next"] = SymbolRefAttr(tail)
    return pieces


def split_off(graph: tgraph.GraphOp, first: set[Operation]) -> list[tgraph.GraphOp]:
    """`graph` as two kernels: the ops `first` (which read only `graph`'s inputs and each other), then
    the rest, reading their results from global memory; linked and named as `partition`'s pieces."""
    cut = _Cutter(graph)
    head = [op for op in cut.ops if op in first]
    rest = [op for op in cut.ops if op not in first]
    return _linked([cut.piece(0, head, [], False), cut.piece(1, rest, cut.outputs(head, False), True)], graph)
