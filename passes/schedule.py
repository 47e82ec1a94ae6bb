"""`cleave-schedule`: tgraph graphs -> itgraph kernels, ranked by a cost model (paper §5).

For one tile configuration (output tile sizes, reduction tile size):
1. inter-threadblock: the outputs are cut into tiles, one parallel iteration per tile; tmaps are
   propagated backwards through every op (tmap_propagation); two different tiles of one value reject
   the configuration;
2. intra-threadblock: the last-wave iterable reductions (no other iterable reduction downstream)
   that share upstream nodes are grouped (horizontal fusion); each group and its upstream ops move
   into a sequential loop over the reduction dim, tiles recomputed with that dim cut to the reduction
   tile; the loop accumulates (sum, max) into the reductions' results;
3. when a loop accumulates sums of exp(x) that the kernel only uses as a ratio of two accumulators
   (attention's P.V over the row sum), they become rescaled sums with a running max (online softmax):
   exp never overflows, whatever the logits. The explicit form of a stabilized Split-K graph,
   sums of exp(x - max_a(x)) with max_a(x) itself an output (`cleave-stabilize-split-k`), becomes the
   same loop with that max as the running max: one pass over the reduced dim, and the loop's results
   are exactly the graph's sums and max.

One level of iterative tiling is done (reductions inside a loop are computed whole per tile).
Configurations are enumerated (tiles of 16..256 on the last two output dims, reduction tiles
32..128; a few long rows in steps of 512..2048 columns where a kernel without matmuls would leave SMs
idle, `row_streams`) and ranked by `cost_model.estimate`; those that do not fit are dropped with the reason.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from itertools import product

import sympy
from xdsl.context import Context
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, ModuleOp, StringAttr, SymbolRefAttr, f64, i64
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.rewriter import Rewriter
from xdsl.traits import SymbolTable

from cleave_ir.diagnostics import CleaveError
from cleave_ir.dialects import itgraph, tgraph
from cleave_ir.dialects.itgraph import AccumulateKind as Acc
from cleave_ir.dialects.cleave import CausalMaskAttr, Stage, TileConfigAttr
from cleave_ir.passes import cost_model, partition_kernels, place_memory
from cleave_ir.passes.homogeneity import depends_on, linear_sum
from cleave_ir.passes.lower_tilelang import with_cuda_core_time
from cleave_ir.passes.options import CleavePass
from cleave_ir.passes.padded_dims import is_padded
from cleave_ir.passes.stabilize_exp import shifted_for_cut, stabilize_kernel
from cleave_ir.passes.symbolize import reduces_dynamic_dim
from cleave_ir.passes.tmap_propagation import Tile, Unschedulable, concrete, operand_tiles, reduced_dims
from cleave_ir.shapes import symbol

@dataclass(frozen=True)
class Config:
    out_tile: tuple[int, ...]  # tile size per dim of the first output (clipped to each dim)
    reduce_tile: int | None  # the reduction tile; None: no iterative tiling
    fusion: bool = True  # horizontal fusion of last-wave reductions sharing upstream nodes

    def attr(self) -> TileConfigAttr:
        return TileConfigAttr(self.out_tile, self.reduce_tile, self.fusion)

    @staticmethod
    def of(attr: TileConfigAttr) -> Config:
        return Config(attr.out_tile, attr.reduce_tile, attr.fused)

    def describe(self) -> str:
        return self.attr().describe()


@dataclass
class Loop:
    var: str
    extent: int
    members: list[Operation]
    inside: list[Operation]  # members and their upstream ops, in graph order
    tiles: dict[SSAValue, Tile] = field(default_factory=dict)
    rescaled: Operation | None = None  # the exp op whose max is tracked
    running_max: Operation | None = None  # the explicit max_a(x) of exp(x - max_a(x)), a member


def _ops(graph: tgraph.GraphOp) -> list[Operation]:
    return [op for op in graph.block.ops if not isinstance(op, tgraph.OutputOp)]


def _ancestors(op: Operation, ops: set[Operation]) -> set[Operation]:
    out: set[Operation] = set()
    stack = [o.owner for o in op.operands]
    while stack:
        x = stack.pop()
        if isinstance(x, Operation) and x in ops and x not in out:
            out.add(x)
            stack.extend(o.owner for o in x.operands)
    return out


def _descendants(op: Operation) -> set[Operation]:
    out: set[Operation] = set()
    stack = [u.operation for r in op.results for u in r.uses]
    while stack:
        x = stack.pop()
        if x not in out and not isinstance(x, tgraph.OutputOp):
            out.add(x)
            stack.extend(u.operation for r in x.results for u in r.uses)
    return out


def _propagate(ops: Sequence[Operation], tiles: dict[SSAValue, Tile], stop: set[Operation] = frozenset()) -> None:  # type: ignore[assignment]
    """Fill `tiles` backwards from the results that already have one; conflicts raise."""
    for op in reversed(ops):
        if op in stop or op.results[0] not in tiles:
            continue
        for operand, tile in zip(op.operands, operand_tiles(op, tiles[op.results[0]])):
            _merge(tiles, operand, tile, op)


def _merge(tiles: dict[SSAValue, Tile], value: SSAValue, tile: Tile, user: Operation) -> None:
    old = tiles.get(value)
    if old is not None and (old.shape != tile.shape or any(sympy.simplify(a - b) != 0 for a, b in zip(old.offsets, tile.offsets))):
        name = value.name_hint or "value"
        raise Unschedulable(f"{user.name}: two paths need different tiles of %{name}")
    tiles[value] = tile


@dataclass
class Plan:
    """A scheduled configuration: parallel grid, tiles and loops."""

    graph: tgraph.GraphOp
    config: Config
    grid: list[tuple[str, int]]
    tiles: dict[SSAValue, Tile]
    loops: list[Loop]


def proportional_tile(size: int, first: int, tile: int, dim: int, static: bool = True, least: int = 1) -> int:
    """The tile of an output's `dim` of `size` where the first output's dim of `first` is cut into
    tiles of `tile`: as many tiles (the grid is shared), each `size / (first / tile)` wide. q, k and v
    projections at grouped-query widths (1024, 256, 256 columns) then share one grid, 32-column tiles
    of q beside 8-column tiles of k and v, and one kernel reads their input once.

    Only in a `static` graph (`all_static`): where a dim is dynamic, the grid of another size may cut
    dims the representative size leaves whole, and the kernel would serve that size only (a Split-K
    part's copies of x [s, T, 1024] and W [s, 1024, 6144]: at T = 384, 1024 rows in 3 tiles).

    A tile narrower than `least` (the caller's: a 16-byte vector of the contiguous dim) is refused: its rows
    are read and written a few bytes at a time. On the H100 (session 51), a [K, N] weight's projection in
    1-column tiles beside 128-column ones (a LoRA down projection, rank 16, beside its 2048-wide linear)
    made the one kernel of both 57.4 us and its Split-K form 13.0, where the two projections' own kernels
    took 10.6; q/k/v of one token in 16- and 4-column tiles 39.6 us, in 32- and 8-column ones 22.8."""
    if size == first:
        return tile
    if not static:
        raise Unschedulable(f"outputs differ in dim {dim} ({size} vs {first}) of a graph with dynamic dims: no common grid")
    count = first // tile
    if size % count:
        raise Unschedulable(f"outputs differ in dim {dim} ({size} vs {first}): {count} tiles of the first do not divide the other")
    if count > 1 and size // count < least:  # (one tile is the whole dim, of any width)
        raise Unschedulable(
            f"outputs differ in dim {dim} ({size} vs {first}): {count} tiles of the first leave {size // count} of the other, "
            f"under {least} (a 16-byte vector)"
        )
    return size // count


def all_static(graph: tgraph.GraphOp) -> bool:
    """Whether neither `graph` nor the input graph it is a candidate (or a piece of one) of declares a
    dynamic dim; False where `graph` names an input graph that is not beside it in a module (a piece
    that `partition_kernels` tries before inserting it)."""
    def declares(g: tgraph.GraphOp) -> bool:
        return any(g.input_annotation(i, "dynamic") for i in range(len(g.inputs)))

    if declares(graph):
        return False
    name = tgraph.referenced_symbol(graph, "cleave.candidate_of")
    if name is None:
        return True
    module = graph.parent_op()
    root = SymbolTable.lookup_symbol(module, name) if module is not None else None
    return isinstance(root, tgraph.GraphOp) and not declares(root)


def plan(graph: tgraph.GraphOp, config: Config) -> Plan:
    """Schedule `graph` for `config` (raises Unschedulable with the reason)."""
    outputs = list(graph.output_op.outputs)
    first = concrete(outputs[0])
    if len(config.out_tile) != len(first):
        raise Unschedulable(f"output tile {list(config.out_tile)} has {len(config.out_tile)} dims, the output {len(first)}")
    grid: list[tuple[str, int]] = []
    var_of_dim: dict[int, tuple[str, int]] = {}
    for d, (size, t) in enumerate(zip(first, config.out_tile)):
        t = min(t, size)
        if size % t:
            raise Unschedulable(f"output tile {t} does not divide dim {d} of size {size}")
        if size // t > 1:
            var_of_dim[d] = (f"p{d}", t)
            grid.append((f"p{d}", size // t))
    tiles: dict[SSAValue, Tile] = {}
    static: bool | None = None  # `all_static(graph)`, once needed
    for i, out in enumerate(outputs):
        shape = concrete(out)
        if len(shape) != len(first):
            raise Unschedulable("outputs of different ranks cannot share one grid")
        offs, tshape = [], []
        for d, size in enumerate(shape):
            if size == 1 and d in var_of_dim:
                raise Unschedulable(
                    f"output {i} has size 1 in dim {d}, which the grid tiles: several blocks would write it"
                )
            if size == 1:
                offs.append(sympy.Integer(0))
                tshape.append(1)
            elif d in var_of_dim:
                var, t = var_of_dim[d]
                if size != first[d] and static is None:
                    static = all_static(graph)
                last = d == len(shape) - 1  # the contiguous dim: a tile of it under 16 bytes reads a few bytes a row
                least = place_memory.vector_elements(tgraph.tensor_type(out)) if last else 1
                t = proportional_tile(size, first[d], t, d, static=bool(static), least=least)
                offs.append(symbol(var) * t)
                tshape.append(t)
            else:
                offs.append(sympy.Integer(0))
                tshape.append(size)
        _merge(tiles, out, Tile(tuple(offs), tuple(tshape)), graph.output_op)
    ops = _ops(graph)
    _propagate(ops, tiles)
    loops = _loops(graph, ops, tiles, config) if config.reduce_tile is not None else []
    return Plan(graph, config, grid, tiles, loops)


def _loops(graph: tgraph.GraphOp, ops: list[Operation], tiles: dict[SSAValue, Tile], config: Config) -> list[Loop]:
    b = config.reduce_tile
    assert b is not None
    iterable = []
    for op in ops:
        dims = reduced_dims(op)
        if not dims or op.results[0] not in tiles:
            continue
        i, d = dims[0]
        extent = tiles[op.operands[i]].shape[d]
        if extent > b and extent % b == 0:
            iterable.append(op)
    explicit = _explicit_maxes(graph, ops)

    def downstream(op: Operation) -> set[Operation]:
        if op in explicit:  # an explicit max feeds its sums through exp(x - max): their peer
            return _descendants(op) - _descendants(explicit[op]) - {explicit[op]}
        return _descendants(op)

    last_wave = [op for op in iterable if not (downstream(op) & set(iterable))]
    opset = set(ops)
    groups: list[list[Operation]] = []
    for op in last_wave:
        up = _ancestors(op, opset) | {op}
        inputs_used = {o for x in up for o in x.operands if o in graph.inputs}
        joined = []
        for g in groups if config.fusion else []:
            g_up = set().union(*(_ancestors(m, opset) | {m} for m in g))
            g_inputs = {o for x in g_up for o in x.operands if o in graph.inputs}
            if (up & g_up) or (inputs_used & g_inputs):
                joined.append(g)
        if joined:  # a reduction sharing with several groups joins them all (KL's sum of p q beside p's and q's sums)
            for g in joined[1:]:
                joined[0].extend(g)
                groups.remove(g)
            joined[0].append(op)
        else:
            groups.append([op])
    loops = []
    for gi, members in enumerate(groups):
        inside_set = set(members).union(*(_ancestors(m, opset) for m in members))
        inside = [op for op in ops if op in inside_set]
        for op in inside:
            for r in op.results:
                for use in r.uses:
                    if use.operation not in inside_set and op not in members:
                        raise Unschedulable(
                            f"{op.name}: its result is needed outside the reduction loop as well"
                        )
        running = [m for m in members if m in explicit]
        if running:  # the running max goes last, as the implicit form's
            members = [m for m in members if m not in running] + running
        var = f"r{gi}"
        first_dims = reduced_dims(members[0])
        extent_full = tiles[members[0].operands[first_dims[0][0]]].shape[first_dims[0][1]]
        loop = Loop(var, extent_full // b, members, inside)
        for m in members:
            loop.tiles[m.results[0]] = tiles[m.results[0]]  # a partial of the same tile each trip
            for i, d in reduced_dims(m):
                t = tiles[m.operands[i]]
                if t.shape[d] != extent_full:
                    raise Unschedulable(f"{m.name}: reduces {t.shape[d]} elements, its group {extent_full}: cannot fuse")
                _merge(loop.tiles, m.operands[i], t.with_dim(d, symbol(var) * b, b), m)
            for i, operand in enumerate(m.operands):
                if i not in [x for x, _ in reduced_dims(m)]:
                    _merge(loop.tiles, operand, tiles[operand], m)
        _propagate([op for op in inside if op not in members], loop.tiles)
        loop.rescaled = _rescalable(loop, graph)
        if running:
            loop.running_max, loop.rescaled = _running_max(loop, running, explicit)
        loops.append(loop)
    return loops


def _explicit_maxes(graph: tgraph.GraphOp, ops: list[Operation]) -> dict[Operation, Operation]:
    """Each `max_a(x)` that feeds exp(x - max_a(x)), itself only summed over a, and is read after the
    loop of those sums as well (a graph output, or an op computed from the sums: logsumexp's
    `log(sum exp(x - m)) + m`): max -> exp."""
    out: dict[Operation, Operation] = {}
    for op in ops:
        if not (isinstance(op, tgraph.ReduceOp) and op.kind.data == tgraph.ReduceKind.MAX):
            continue
        users = [u.operation for u in op.result.uses]
        subs = [u for u in users if isinstance(u, tgraph.SubOp) and u.lhs is op.input and u.rhs is op.result]
        if len(subs) != 1 or len(users) == 1:
            continue
        (sub,) = subs
        exps = [u.operation for u in sub.result.uses]
        if not (len(exps) == 1 and isinstance(exps[0], tgraph.ExpOp) and _sums_over(exps[0], op.axis)):
            continue
        after = set().union(*(_descendants(u.operation) | {u.operation} for u in exps[0].results[0].uses))
        if all(isinstance(u, tgraph.OutputOp) or _stored_cast(u) or u in after for u in users if u is not sub):
            out[op] = exps[0]
    return out


def _stored_cast(op: Operation) -> bool:
    """A cast whose only users are the graph's output (a split graph's partial stored in f32)."""
    return isinstance(op, tgraph.CastOp) and all(isinstance(u.operation, tgraph.OutputOp) for u in op.result.uses)


def _exp_sums(e: Operation) -> set[Operation]:
    """The ops that sum `e` (an exp): its users, except that a product `e * y` summed
    (`homogeneity.linear_sum`: the entropy's sum of p x) stands for that sum."""
    return {linear_sum(e.results[0], u.operation, u.index) or u.operation for u in e.results[0].uses}


def _sums_over(e: Operation, axis: int) -> bool:
    """Whether every use of `e` sums it over `axis` (`_exp_sums`): a reduce sum, or a matmul with `e`
    on the left only."""
    users = _exp_sums(e)
    for m in users:
        if isinstance(m, tgraph.MatmulOp):
            if m.lhs is not e.results[0] or m.rhs is e.results[0]:
                return False
        elif not (isinstance(m, tgraph.ReduceOp) and m.kind.data == tgraph.ReduceKind.SUM):
            return False
        if reduced_dims(m)[0][1] != axis:
            return False
    return bool(users)


def _running_max(loop: Loop, running: list[Operation], explicit: dict[Operation, Operation]) -> tuple[Operation, Operation]:
    """(max, exp) of a loop holding an explicit max: its sums must be exactly that exp's sums."""
    if len(running) != 1:
        raise Unschedulable("tgraph.reduce: two running maxes in one reduction loop")
    (mx,) = running
    assert isinstance(mx, tgraph.ReduceOp)
    e = explicit[mx]
    sums = {m for m in loop.members if m is not mx}
    of_e = _exp_sums(e)  # each a sum of e over mx's axis (_sums_over)
    if not of_e <= sums or any(not _plain_sum(m, mx) for m in sums - of_e):
        raise Unschedulable(
            "tgraph.reduce: the max of exp(x - max x) is a running max only for a loop of that exp's sums "
            "and of sums that do not read the max"
        )
    return mx, e


def _plain_sum(op: Operation, mx: Operation) -> bool:
    """Whether `op` is a sum computed without `mx` (a loop's plain `sum` beside its rescaled sums: a
    cross-entropy's sum of x times a one-hot target)."""
    return isinstance(op, tgraph.ReduceOp) and op.kind.data == tgraph.ReduceKind.SUM and not depends_on(op.input, mx.results[0])


def _rescalable(loop: Loop, graph: tgraph.GraphOp) -> Operation | None:
    """The exp whose running max makes this loop's sums rescaled sums, if the kernel allows it."""
    exps = [op for op in loop.inside if isinstance(op, tgraph.ExpOp)]
    if len(exps) != 1:
        return None
    e = exps[0]
    if not all(isinstance(m, tgraph.MatmulOp) or (isinstance(m, tgraph.ReduceOp) and m.kind.data == tgraph.ReduceKind.SUM) for m in loop.members):
        return None
    # every member must read exp's result as the reduced operand (rows scale alike), directly or
    # cast (an fp32 softmax's exp cast to f16 for P @ V, CodeGen's: a cast commutes with the rescale)
    read = e.results[0]
    while read.uses.get_length() == 1 and isinstance(cast := next(iter(read.uses)).operation, tgraph.CastOp):
        read = cast.results[0]
    for m in loop.members:
        if m.operands[0] is not read:
            return None
    # outside the loop, the accumulators may only meet in one division (a ratio: the scale cancels)
    results = {m.results[0] for m in loop.members}
    users = {u.operation for r in results for u in r.uses}
    if len(users) != 1:
        return None
    (user,) = users
    if not isinstance(user, tgraph.DivOp) or {user.lhs, user.rhs} != results:
        return None
    return e


def _tile_type(value: SSAValue, tile: Tile) -> tgraph.TensorType:
    return tgraph.tensor_type(value).with_shape(tile.shape)


def _tmap(tile: Tile) -> itgraph.TmapAttr:
    return itgraph.TmapAttr(tile.offsets, tile.shape)


def build_kernel(p: Plan, name: str) -> itgraph.KernelOp:
    """The itgraph kernel of a plan."""
    graph = p.graph
    inputs = [tgraph.tensor_type(a) for a in graph.inputs]
    outs = [tgraph.tensor_type(o) for o in graph.output_op.outputs]
    kblock = Block(arg_types=[*inputs, *outs])
    for a, src in zip(kblock.args, graph.inputs):
        a.name_hint = src.name_hint
    for i, a in enumerate(kblock.args[len(inputs):]):
        a.name_hint = f"out{i}"
    globals_ = dict(zip(graph.inputs, kblock.args))
    causal = {graph.inputs[i]: offset for i, offset in graph.causal_inputs().items()}
    body = Block()
    in_loop = {op: loop for loop in p.loops for op in loop.inside}
    outer: dict[SSAValue, SSAValue] = {}

    loaded: dict[SSAValue, Tile] = {}  # tile each load reads

    def operand(block: Block, env: dict[SSAValue, SSAValue], tiles: dict[SSAValue, Tile], v: SSAValue) -> SSAValue:
        if v in env and (v not in globals_ or loaded[env[v]] == tiles[v]):
            return env[v]
        if v in globals_:  # an input tile: loaded where it is used (again where the tile differs)
            ld = itgraph.LoadOp(globals_[v], _tmap(tiles[v]))
            if v in causal:  # its tiles are computed from their indices (cleave-lower-tilelang)
                ld.attributes["cleave.causal"] = CausalMaskAttr(causal[v])
            ld.result.name_hint = v.name_hint
            block.add_op(ld)
            env[v] = ld.result
            loaded[ld.result] = tiles[v]
            return ld.result
        raise Unschedulable(f"value %{v.name_hint} used before it is computed")

    def emit(block: Block, env: dict[SSAValue, SSAValue], tiles: dict[SSAValue, Tile], op: Operation, rescale: tuple | None = None) -> None:
        xs = [operand(block, env, tiles, v) for v in op.operands]
        if rescale is not None and op is rescale[0]:
            # online softmax: exp(x - rowmax(x)); the max is yielded as the loop's running max
            axis = rescale[1]
            m = tgraph.ReduceOp(tgraph.ReduceKind.MAX, xs[0], axis)
            sub = tgraph.SubOp(xs[0], m.result)
            block.add_op(m)
            block.add_op(sub)
            rescale[2].append(m.result)
            xs = [sub.result]
        new = _rebuild(op, xs, _tile_type(op.results[0], tiles[op.results[0]]))
        new.results[0].name_hint = op.results[0].name_hint
        new.verify()
        block.add_op(new)
        env[op.results[0]] = new.results[0]

    placed: set[int] = set()
    for op in _ops(graph):
        loop = in_loop.get(op)
        if loop is None:
            emit(body, outer, p.tiles, op)
            continue
        if id(loop) in placed:
            continue
        placed.add(id(loop))
        lblock = Block()
        env = dict(outer)
        maxes: list[SSAValue] = []
        rescale = None
        if loop.rescaled is not None and loop.running_max is None:
            m0 = loop.members[0]
            axis = reduced_dims(m0)[0][1]
            rescale = (loop.rescaled, axis, maxes)
        for x in loop.inside:
            emit(lblock, env, loop.tiles, x, rescale)
        yielded = [env[m.results[0]] for m in loop.members]
        kinds = [Acc.MAX if isinstance(m, tgraph.ReduceOp) and m.kind.data == tgraph.ReduceKind.MAX else Acc.SUM for m in loop.members]
        if rescale is not None:
            kinds = [Acc.RESCALED_SUM] * len(kinds) + [Acc.MAX]
            yielded.append(maxes[0])
        elif loop.running_max is not None:  # explicit exp(x - max): that max is the running max
            assert loop.rescaled is not None
            of_exp = _exp_sums(loop.rescaled)
            kinds = [Acc.MAX if m is loop.running_max else Acc.RESCALED_SUM if m in of_exp else Acc.SUM for m in loop.members]
        lblock.add_op(itgraph.YieldOp(yielded))
        seq = itgraph.SequentialOp(loop.var, loop.extent, kinds, [tgraph.tensor_type(v) for v in yielded], Region(lblock))
        body.add_op(seq)
        for m, r in zip(loop.members, seq.results):
            r.name_hint = m.results[0].name_hint
            outer[m.results[0]] = r
    for out, dest in zip(graph.output_op.outputs, kblock.args[len(inputs):]):
        body.add_op(itgraph.StoreOp(operand(body, outer, p.tiles, out), dest, _tmap(p.tiles[out])))
    par = itgraph.ParallelOp([v for v, _ in p.grid] or ["p"], [e for _, e in p.grid] or [1], Region(body))
    kblock.add_op(par)
    return stabilize_kernel(itgraph.KernelOp(name, inputs, outs, Region(kblock)))  # exp of whole rows: x - max x


def _rebuild(op: Operation, xs: list[SSAValue], result_type: tgraph.TensorType) -> Operation:
    if isinstance(op, tgraph.MatmulOp):
        return tgraph.MatmulOp(xs[0], xs[1], result_type, op.transpose_b is not None)
    if isinstance(op, tgraph.BinaryOp):
        return type(op)(xs[0], xs[1])
    if isinstance(op, tgraph.ElementwiseOp):  # the same op (and properties) on tiles
        return type(op).create(operands=xs, result_types=[result_type], properties=dict(op.properties))
    if isinstance(op, tgraph.ReduceOp):
        if tgraph.tensor_type(xs[0]).shape[op.axis] == 1:  # of one element: that element (a view of the tile)
            return tgraph.ReshapeOp(xs[0], result_type)
        if op.reduction().combine is None:
            raise Unschedulable(f"tgraph.reduce {op.kind.data}: decompose it first (cleave-decompose)")
        return tgraph.ReduceOp(op.kind.data, xs[0], op.axis)
    if isinstance(op, tgraph.ReshapeOp):
        return tgraph.ReshapeOp(xs[0], result_type)
    if isinstance(op, tgraph.SplitOp):
        if result_type.shape[0] == 1:  # one part per tile: the slice itself, with a leading 1
            return tgraph.ReshapeOp(xs[0], result_type)
        return tgraph.SplitOp(xs[0], op.axis, result_type.shape[0])
    raise Unschedulable(f"{op.name}: cannot be scheduled")


# Output tiles the last dim is also offered under tensor-core rows (64 or more; a one-row GEMV's
# column tiles stay powers of two, which its 16-byte vectors divide), at most
# WIDE_LAST_MAX_ELEMENTS (128 x 256) per tile:
# 192 columns make 2 full waves of 8 x 32 tiles where 128 x 256 tiles leave a wave 45% full (1024 x
# 6144 outputs on 132 SMs); a 512-wide value tile computes an attention's scores once, not once per
# 256-column half (MLA decode's 512-wide latent values, as TileLang's deepseek_mla example tiles them)
WIDE_LAST_TILES = (192, 512)
WIDE_LAST_MAX_ELEMENTS = 128 * 256
WIDE_FEW_ROWS = (1, 2, 4, 8)
"""Row tiles of the last fallback, when no `wide` tile of 16 or more rows fits: a norm or softmax over
rows too wide for 16 of them in registers (4096 columns) then runs in one kernel, not only as a
Split-K pair that reads x twice."""
FEW_ROWS_BESIDE_WIDE = True
"""Whether a kernel without matmuls whose tiles span whole rows is also offered `WIDE_FEW_ROWS` of them a
block beside 16 or more, which leave most SMs idle on few rows (BERT's LayerNorm over 128 rows of 768 took 16
a block, 8 blocks; one row a block, 128 blocks, ranks first). With matmuls, few rows stay the fallback."""


def configs(
    graph: tgraph.GraphOp, iterative: bool = True, fusion: bool = True, wide: bool = False, few_rows: bool = False,
    narrow: bool = False,
) -> list[Config]:
    """Tile-size candidates (Roller-style: powers of two on the last two output dims, and
    `WIDE_LAST_TILES` columns under 64+ rows).

    `wide`: only tiles that span a whole dim over 256 (a row that a reduction needs whole), the
    fallback when no ordinary configuration schedules; with `few_rows`, whole rows `WIDE_FEW_ROWS` at a
    time, the fallback when no `wide` tile fits either; with `narrow`, `WIDE_FEW_ROWS` rows (or 1) of any
    width, the last fallback: rows of 33 or 100 columns, which no 8 or 16 of them lay out in registers
    (264 elements have no layout over 32-256 threads), or a prime row count (33) that only 1 divides.
    """
    shape = concrete(graph.output_op.outputs[0])
    # the last two dims; where one of them is 1 (decode's [B, 1, N]), also the last two dims over 1
    last = set(range(max(len(shape) - 2, 0), len(shape)))
    big = {d for d, size in enumerate(shape) if size > 1}
    dim_sets = [last] + ([set(sorted(big)[-2:])] if big & last != last else [])
    # a decode projection read straight from global memory wants few weight rows per block
    small = place_memory.GEMV_SMALL_TILES if any(
        isinstance(op, tgraph.MatmulOp) and place_memory.direct_gemv_matmul(op) for op in graph.body.walk()
    ) else ()
    reduced = {concrete(op.input)[op.axis] for op in graph.body.walk() if isinstance(op, tgraph.ReduceOp)}
    tiles: list[tuple[int, ...]] = []
    for dims in dim_sets:
        choices: list[list[int]] = []
        for d, size in enumerate(shape):
            if d in dims and size > 1 and few_rows:  # a few whole rows per block: 16 rows of 4096 are 256 KiB in fp32
                choices.append([t for t in WIDE_FEW_ROWS if t < size and size % t == 0] + ([size] if size > 256 else []))
            elif d in dims and size > 1 and narrow and d < max(dims):
                choices.append([t for t in WIDE_FEW_ROWS if t < size and size % t == 0])
            elif d in dims and size > 1:
                opts = [t for t in (*small, 16, 32, 64, 128, 256) if t < size and size % t == 0]
                if not opts:
                    # no power of two from 16 divides it (200 or 1000 columns): its largest power-of-two
                    # divisor and its largest divisor up to 256, which TileLang can lay out in registers
                    # (`cost_model.layout_threads`) where the whole dim may not be
                    opts = sorted({size & -size, max(t for t in range(1, 257) if size % t == 0)} - {1, size})
                if size <= 256 or wide or not opts:
                    opts.append(size)
                choices.append(opts)
            else:
                choices.append([1])
        tiles += [t for t in product(*choices) if t not in tiles]
        # (a whole row that a reduction needs stays the `wide` fallback's)
        n = shape[-1]
        extra = [t for t in WIDE_LAST_TILES if n % t == 0 and t not in choices[-1] and (t < n or n not in reduced)]
        if extra and not (wide or few_rows) and len(shape) > 1:
            tiles += [
                (*t, cols) for t in product(*choices[:-1]) for cols in extra
                if t[-1] >= 64 and math.prod(t) * cols <= WIDE_LAST_MAX_ELEMENTS and (*t, cols) not in tiles
            ]
    reduce_tiles: list[int | None] = [None, 32, 64, 128] if iterative else [None]
    out = [Config(tuple(t), r, fusion) for t in tiles for r in reduce_tiles]
    if wide or few_rows:
        out = [c for c in out if any(t == s > 256 for t, s in zip(c.out_tile, shape))]
    if wide and FEW_ROWS_BESIDE_WIDE and not any(isinstance(op, tgraph.MatmulOp) for op in graph.body.walk()):
        out += [c for c in configs(graph, iterative, fusion, few_rows=True) if c not in out]
    elif iterative and not narrow and not (wide or few_rows):
        out += [c for c in row_streams(graph, shape, tiles, fusion) if c not in out]
    return out


STREAM_REDUCE_TILES = (512, 2048)
STREAM_MAX_ELEMENTS = 8 * 1024
"""Reduction tiles of `row_streams`: the divisors of the reduced length in this range that are
multiples of 64 (512, 1024, 2048 for 32768 columns; 640, 1280 and 1600 for Llama's 32000-word vocabulary),
at most STREAM_MAX_ELEMENTS elements a step (16 KiB of fp16)."""
STREAM_STEP_FACTOR = 256
"""The power of two `row_streams` wants its steps to have as a factor, where one does (1: any step): a
step's tiles lay out over at most that many threads (`place_memory`). 1600 columns of Llama's
32000-word vocabulary lay out over 64 threads, two warps an SM whose loop waits on their instruction
latency; 1280 over 128. H100 (bench/results/stream_steps_2026-12-05s32_H100.md): the KL divergence of
two logit rows 37.6 -> 19.2 us (4 rows) and 39.1 -> 21.1 us (128 rows), a z-loss over 50000 6.3 -> 4.8,
one-kernel logsumexp and entropy over 32000 10.5-10.8 -> 8.4-8.5. Such a lone block on 256 threads, not
128, was slower (KL 25.3 us; a 1792-column bf16 stream 6.2 -> 6.9; an RMSNorm's sums 32.4 -> 40.9)."""
STREAM_MIN_SPEEDUP = 1.25
"""How much faster than the best ordinary configuration (`configs`' tiles of 16 or more rows) a row
stream must be estimated to be ranked at all. Where the kernel is bound by its launch and latency,
not by the SMs it leaves idle, the estimates of the two forms differ by a percent, and such a tie
decided which Split-K candidate `matmul_rowsum` kept (W [80, 3000] reduced in a 16-split kernel ran
4.0 us on the H200 in the ordinary form, and the stream form displaced it from the kept three)."""


def is_row_stream(cfg: Config) -> bool:
    """Whether `cfg` is one of `row_streams`' (their reduction steps are wider than any other tile's)."""
    return cfg.reduce_tile is not None and cfg.reduce_tile >= STREAM_REDUCE_TILES[0]


def row_streams(graph: tgraph.GraphOp, shape: Sequence[int], tiles: Sequence[tuple[int, ...]], fusion: bool) -> list[Config]:
    """Configurations that stream a few long rows per block, for a kernel without matmuls whose
    ordinary tiles (16 or more rows) leave SMs idle: the row statistics of a log-softmax over a
    vocabulary ([512, 32768] logits: 32 blocks of 16 rows) read their bytes through a quarter of the
    GPU. Rows of `WIDE_FEW_ROWS` (the smallest ordinary tile's tiled dims cut down) and reduction
    steps of `STREAM_REDUCE_TILES` columns, so each step still moves kilobytes. `schedule_graph` ranks
    them only where they are estimated `STREAM_MIN_SPEEDUP` times faster than every other tile."""
    if any(isinstance(op, tgraph.MatmulOp) for op in graph.body.walk()):
        return []
    reductions = [op for op in graph.body.walk() if isinstance(op, tgraph.ReduceOp)]
    lengths = [concrete(op.input)[op.axis] for op in reductions]
    low, high = STREAM_REDUCE_TILES
    steps = sorted({r for n in lengths for r in range(low, min(high, n // 2) + 1, 64) if n % r == 0})
    if not tiles or not steps:
        return []
    even = min(STREAM_STEP_FACTOR, max(r & -r for r in steps))
    steps = [r for r in steps if r & -r >= even]
    if max(math.prod(-(-s // x) for s, x in zip(shape, t)) for t in tiles) >= cost_model.SMS:  # the most blocks
        return []
    smallest = min(tiles, key=math.prod)
    choices = [[r for r in WIDE_FEW_ROWS if size % r == 0] if t > 1 else [t] for t, size in zip(smallest, shape)]
    out: list[Config] = []
    for t in product(*choices):
        for r in steps:
            if math.prod(t) * r <= STREAM_MAX_ELEMENTS:
                out.append(Config(tuple(t), r, fusion))
    return out


FALLBACKS = ((False, False, False), (True, False, False), (False, True, False), (False, False, True))
"""(wide, few_rows, narrow) of `configs`, in the order `schedule_graph` tries them until one schedules."""


@dataclass
class Scheduled:
    kernel: itgraph.KernelOp
    estimate: cost_model.Estimate
    config: Config


def _attempt(graph: tgraph.GraphOp, cfg: Config) -> Scheduled | str:
    """The kernel of one configuration, or why it cannot be used (it must also pass memory placement)."""
    try:
        p = plan(graph, cfg)
    except Unschedulable as e:
        return str(e)
    return _attempt_plan(p)


def _plan_key(p: Plan) -> tuple:
    """Everything of a plan that `build_kernel` reads, in its order: configurations with equal keys build
    the same kernel (a reduction tile that tiles nothing, an output tile clipped to its dim). Values and
    ops are keyed by identity, so keys compare within one graph only."""
    loops = tuple(
        (lp.var, lp.extent, tuple(lp.members), tuple(lp.inside), tuple(lp.tiles.items()), lp.rescaled, lp.running_max)
        for lp in p.loops
    )
    return (tuple(p.grid), tuple(p.tiles.items()), loops)


def _attempt_plan(p: Plan) -> Scheduled | str:
    """`_attempt` once its plan is made."""
    graph, cfg = p.graph, p.config
    try:
        kernel = build_kernel(p, f"{graph.sym_name.data}_k")
        est = cost_model.estimate(kernel)
    except Unschedulable as e:
        return str(e)
    if not est.fits:
        return est.reason
    placed = kernel.clone()
    try:  # placement stages computed tiles too (a gemm's B operand): it must fit as well
        place_memory.place(placed)
    except CleaveError as e:
        return str(e).removeprefix("error: cleave-place-memory: ")
    if not cost_model.overlaps(placed):  # one stage, one block per SM, several waves
        est = cost_model.serialized(est)
    est = cost_model.with_pipeline_depth(est, placed)
    est = with_cuda_core_time(est, placed, placed.attributes["cleave.threads"].value.data)  # type: ignore[attr-defined]
    return Scheduled(kernel, est, cfg)


def schedule_graph(
    graph: tgraph.GraphOp, top_k: int = 3, iterative: bool = True, fusion: bool = True, loop_too: bool = False
) -> tuple[list[Scheduled], list[tuple[Config, str]]]:
    """The top-k kernels of `graph` by estimated time, and the other configurations with why each was dropped.

    Tiles spanning a whole dim over 256 are tried only when no other configuration schedules, a few
    such rows at a time only when no tile of 16 or more of them does (`FALLBACKS`). With `loop_too`,
    the best configuration that loops over its reduction is kept as well when none of the top-k does:
    a padded or dynamic dim that is reduced over needs the loop (a tile holding the whole dim serves one
    size; attention padded from 197 to 256 keys ranks its one-tile form first, and so does Falcon's
    multi-query decode attention over 256 cached keys).
    """
    ranked: list[Scheduled] = []
    dropped: list[tuple[Config, str]] = []
    # a reduction tile that tiles nothing repeats a configuration: such twins have the same estimate,
    # and only kernels of equal estimates are printed to compare them (printing each was a tenth of
    # a schedule's time)
    twins: dict[float, list[Scheduled]] = {}
    texts: dict[int, str] = {}  # id of a ranked kernel -> its text, printed at most once
    # plans already built (`_plan_key`): mha builds 2522 kernels for its 3248 plans
    attempted: dict[tuple, Scheduled | str] = {}

    def text(s: Scheduled) -> str:
        if id(s.kernel) not in texts:
            texts[id(s.kernel)] = str(s.kernel)
        return texts[id(s.kernel)]

    for fallback in FALLBACKS:
        if ranked:
            break
        for cfg in configs(graph, iterative, fusion, *fallback):
            try:
                p = plan(graph, cfg)
            except Unschedulable as e:
                dropped.append((cfg, str(e)))
                continue
            key = _plan_key(p)
            if key in attempted:  # the same kernel again: the same reason, or a twin of a ranked kernel
                if isinstance(attempted[key], str):
                    dropped.append((cfg, attempted[key]))  # type: ignore[arg-type]
                continue
            got = attempted[key] = _attempt_plan(p)
            if isinstance(got, str):
                dropped.append((cfg, got))
                continue
            same = twins.setdefault(got.estimate.microseconds, [])
            if any(text(other) == text(got) for other in same):
                continue
            same.append(got)
            ranked.append(got)
    ordinary = [s.estimate.microseconds for s in ranked if not is_row_stream(s.config)]
    if ordinary:
        ranked = [s for s in ranked if not is_row_stream(s.config) or s.estimate.microseconds * STREAM_MIN_SPEEDUP <= min(ordinary)]
    # equal estimates of a kernel without matmuls (launch-bound): fewer waves of larger tiles, not
    # thousands of tiny blocks; with matmuls the configuration order decides, as before
    ranked.sort(key=lambda s: (round(s.estimate.microseconds, 3), 0 if s.estimate.flops else s.estimate.terms.waves))
    if ranked and not any(isinstance(o, (tgraph.MatmulOp, tgraph.ReduceOp)) for o in graph.block.ops):
        # element-wise alone (a prologue cut off its matmul): every tile moves the same bytes, and the
        # estimates differ by the last wave's share (16 x 16 tiles: 19.1 us in 249 waves, 128 x 128:
        # 19.5 us in 4), and 16 x 16 tiles give 2 elements a thread: Llama's rotary prologue (49 MB)
        # and its attention measured 104.3 us on the H200, where that attention alone ran 77.9 us
        best = ranked[0].estimate.microseconds
        ranked.sort(key=lambda s: (s.estimate.microseconds > 1.05 * best, s.estimate.terms.waves, s.estimate.microseconds))
    kept = ranked[:top_k]
    if loop_too and not any(s.config.reduce_tile is not None for s in kept):
        kept += [s for s in ranked[top_k:] if s.config.reduce_tile is not None][:1]
    return kept, dropped


def unschedulable(graph: tgraph.GraphOp, iterative: bool = True, fusion: bool = True) -> str | None:
    """None when some configuration of `graph` schedules (stops at the first), else the reasons."""
    reasons: list[str] = []
    try:
        for fallback in FALLBACKS:
            for cfg in configs(graph, iterative, fusion, *fallback):
                got = _attempt(graph, cfg)
                if not isinstance(got, str):
                    return None
                reasons.append(got)
    except Unschedulable as e:
        return str(e)
    return "; ".join(sorted(set(reasons))[:3]) or "no configuration"


def _erase_pieces(module: ModuleOp, pieces: list[tgraph.GraphOp], failures: dict[str, str]) -> None:
    """Remove a cut candidate whose pieces did not all schedule, with the kernels of those that did."""
    names = {piece.sym_name.data for piece in pieces}
    for k in [k for k in module.body.block.ops if isinstance(k, itgraph.KernelOp) and tgraph.referenced_symbol(k, "cleave.schedule_of") in names]:
        Rewriter.erase_op(k)
    for piece in pieces:
        failures.pop(piece.sym_name.data, None)
        Rewriter.erase_op(piece)


@dataclass(frozen=True)
class SchedulePass(CleavePass):
    """Add the top-k itgraph kernels of every concrete tgraph graph next to it."""

    name = "cleave-schedule"

    top_k: int = 3
    iterative_tiling: bool = True
    horizontal_fusion: bool = True
    # also schedule each input graph with a chain of matmuls, or a reduction feeding a matmul, cut
    # into one kernel per matmul (`<graph>_mm`, a candidate of the graph), a reduction that feeds a
    # matmul in a kernel before it: cuBLAS's form, where fusing the chain recomputes or re-reads a
    # product for every output tile (gpt2's MLP), or sums a norm's rows inside the GEMM loop
    per_matmul_cut: bool = False
    # keep the best configuration that loops over a reduction beside the top-k (`schedule_graph`'s
    # `loop_too`) for a graph that reduces over a dim it declares dynamic, too (padded graphs always):
    # `cleave-pipeline`'s schedule at rounded sizes, where a one-tile form ranked first serves one size
    loop_dynamic: bool = False

    def check_options(self) -> None:
        if self.top_k < 1:
            raise CleaveError("error: cleave-schedule: top-k must be at least 1")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        self.check_options()
        failures: dict[str, str] = {}  # graph -> why no configuration schedules
        for graph in [g for g in op.body.block.ops if isinstance(g, tgraph.GraphOp)]:
            self._schedule(op, graph, failures)
        # a Split-K half that no single kernel fits is cut into a chain of kernels in its place
        for graph in [g for g in op.body.block.ops if isinstance(g, tgraph.GraphOp)]:
            if graph.sym_name.data in failures and partition_kernels.stage(graph) in (Stage.SPLIT, Stage.COMBINE):
                try:
                    pieces = partition_kernels.partition(shifted_for_cut(graph), self._unschedulable)
                except Unschedulable as e:
                    print(f"warning: cleave-schedule: @{graph.sym_name.data} cannot be cut into kernels: {e}", file=sys.stderr)
                    continue
                Rewriter.replace_op(graph, pieces, [])
                for piece in pieces:
                    self._schedule(op, piece, failures)
        graphs = {g.sym_name.data: g for g in op.body.block.ops if isinstance(g, tgraph.GraphOp)}
        kernels_of: dict[str, list[itgraph.KernelOp]] = {}
        for k in op.body.block.ops:
            if isinstance(k, itgraph.KernelOp):
                kernels_of.setdefault(tgraph.referenced_symbol(k, "cleave.schedule_of") or "", []).append(k)

        def complete(head: tgraph.GraphOp) -> bool:
            c = partition_kernels.chain(head, graphs)
            return c is not None and all(g.sym_name.data in kernels_of for g in c)

        # kernels of a candidate that misses one of its kernels are of no use: never a split kernel alone
        for head in graphs.values():
            if partition_kernels.chain_head(head) and not complete(head):
                for g in partition_kernels.chain(head, graphs) or [head]:
                    for k in kernels_of.pop(g.sym_name.data, []):
                        Rewriter.erase_op(k)
        # an input graph that no single kernel schedules is cut into kernels of its own ops: the only
        # candidate when no rewrite of it is complete, and one more when every complete one is a
        # Split-K pair (gpt2's log-softmax of x @ W_lm over 32768 columns: its Split-K forms re-read
        # the logits in a combine cut into three kernels; the cut of the graph itself is a GEMM, then
        # the row statistics, then the output)
        families: dict[str, bool] = {}
        own_form: set[str] = set()  # families with a complete one-kernel candidate or cut chain
        for g in graphs.values():
            family = tgraph.referenced_symbol(g, "cleave.candidate_of") or g.sym_name.data
            whole = partition_kernels.chain_head(g) and complete(g)
            families[family] = families.get(family, False) or whole
            if whole and partition_kernels.stage(g) in (None, Stage.FIRST):
                own_form.add(family)
        for family, ok in families.items():
            if family not in graphs or (ok and (family not in failures or family in own_form)):
                continue
            root = graphs[family]
            source = shifted_for_cut(root).clone()
            source.sym_name = StringAttr(f"{family}_lv")
            by_level = partition_kernels.partition_by_level(source, self._unschedulable)
            greedy = self._cut_greedy(op, root, failures, needed=not ok and by_level is None)
            if by_level is None or (greedy is not None and _same_cut(greedy, by_level)):
                continue
            _insert_candidate(op, root, by_level, f"cut by reduction level into {len(by_level)} kernels (no single kernel schedules)")
            if all([self._schedule(op, piece, failures) for piece in by_level]):
                print(f"cleave-schedule @{family}: also cut by reduction level into {len(by_level)} kernels", file=sys.stderr)
            elif not ok and greedy is None:
                bad = next(p.sym_name.data for p in by_level if p.sym_name.data in failures)
                raise CleaveError(f"error: cleave-schedule: @{family} cannot be compiled: @{bad}: {failures[bad]}", op=root)
            else:
                _erase_pieces(op, by_level, failures)

        # a matmul chain whose matmul reads an operand computed element-wise from the inputs alone
        # (attention's Q after its rotary embedding) also gets that prologue in a kernel of its own:
        # in the chain's one kernel it is recomputed in every iteration of the loop that reads it
        cut_prologues: set[Hashable] = set()
        for g in list(graphs.values()):
            family = tgraph.referenced_symbol(g, "cleave.candidate_of") or g.sym_name.data
            if partition_kernels.stage(g) is not None or not complete(g) or not matmul_chain(g):
                continue
            if operand_prologue(g) and (key := structure(g)) not in cut_prologues:
                cut_prologues.add(key)
                self._cut_prologue(op, g.clone(), graphs[family], failures)

        if not self.per_matmul_cut:
            return
        # an input graph, and a norm's rewritten forms (its scale moved past the matmul: the cut's
        # GEMM then rescales in its epilogue); a chain's forms cut alike, and cost as much to schedule
        cut: set[Hashable] = set()  # the structures already cut: two rewrites can give the same one
        for g in graphs.values():
            family = tgraph.referenced_symbol(g, "cleave.candidate_of") or g.sym_name.data
            wanted = g.sym_name.data == family if matmul_chain(g) or outputs_apart(g) else reduction_beside_matmul(g)
            if families.get(family) and partition_kernels.stage(g) is None and wanted:
                source = matmul_results_last(shifted_for_cut(g))
                if (key := structure(source)) not in cut:
                    cut.add(key)
                    self._cut_per_matmul(op, source, graphs[family], failures)

    def _cut_greedy(self, module: ModuleOp, root: tgraph.GraphOp, failures: dict[str, str], needed: bool) -> list[tgraph.GraphOp] | None:
        """Add the candidate of the input graph `root` cut in graph order (`partition_kernels.partition`)
        and return its pieces; None where it does not cut or schedule. `needed`: it is the graph's only
        way to compile, so that failure is the graph's error."""
        family = root.sym_name.data
        try:
            pieces = partition_kernels.partition(shifted_for_cut(root), self._unschedulable)
        except Unschedulable as e:
            if needed:
                raise CleaveError(f"error: cleave-schedule: @{family} cannot be compiled: {e}", op=root) from None
            return None
        pieces[0].sym_name = StringAttr(f"{family}_p0")
        _insert_candidate(module, root, pieces, f"cut into {len(pieces)} kernels (no single kernel schedules)")
        scheduled = [self._schedule(module, piece, failures) for piece in pieces]
        if not all(scheduled):
            if needed:
                bad = pieces[scheduled.index(False)].sym_name.data
                raise CleaveError(f"error: cleave-schedule: @{family} cannot be compiled: @{bad}: {failures[bad]}", op=root)
            _erase_pieces(module, pieces, failures)
            return None
        print(f"cleave-schedule @{family}: no single kernel schedules; cut into {len(pieces)} kernels", file=sys.stderr)
        return pieces

    def _unschedulable(self, graph: tgraph.GraphOp) -> str | None:
        return unschedulable(graph, self.iterative_tiling, self.horizontal_fusion)

    def _one_matmul(self, graph: tgraph.GraphOp) -> str | None:
        n = sum(isinstance(o, tgraph.MatmulOp) for o in graph.block.ops)
        if n > 1:
            return f"{n} matmuls (a piece of the per-matmul cut holds one)"
        if n and reduction_beside_matmul(graph):
            return "a reduction of its inputs beside its matmul (the per-matmul cut computes it in a kernel before)"
        return self._unschedulable(graph)

    def _cut_per_matmul(self, module: ModuleOp, source: tgraph.GraphOp, root: tgraph.GraphOp, failures: dict[str, str]) -> None:
        """Add the candidate `<source>_mm` of the input graph `root`: `source` (`root` or one of its
        candidates, a copy to consume) cut into a chain of kernels of one matmul each."""
        family = source.sym_name.data
        source.sym_name = StringAttr(f"{family}_mm")
        try:
            pieces = partition_kernels.partition(source, self._one_matmul)
        except Unschedulable as e:
            print(f"warning: cleave-schedule: @{family}: no per-matmul cut: {e}", file=sys.stderr)
            return
        _insert_candidate(module, root, pieces, f"one kernel per matmul ({len(pieces)} kernels, intermediates in global memory)")
        if not all([self._schedule(module, piece, failures) for piece in pieces]):
            _erase_pieces(module, pieces, failures)

    def _cut_prologue(self, module: ModuleOp, source: tgraph.GraphOp, root: tgraph.GraphOp, failures: dict[str, str]) -> None:
        """Add the candidate `<source>_pro` of the input graph `root`: `source` (a copy to consume)
        with its `operand_prologue` computed in a kernel before the rest."""
        source.sym_name = StringAttr(f"{source.sym_name.data}_pro")
        pieces = partition_kernels.split_off(source, operand_prologue(source))
        _insert_candidate(module, root, pieces, "the element-wise prologue of a matmul operand in a kernel of its own (2 kernels)")
        if not all([self._schedule(module, piece, failures) for piece in pieces]):
            _erase_pieces(module, pieces, failures)

    def _schedule(self, module: ModuleOp, graph: tgraph.GraphOp, failures: dict[str, str]) -> bool:
        """Insert the top-k kernels of `graph` after it; False (and the reason in `failures`) when none."""
        name = tgraph.referenced_symbol(graph, "cleave.candidate_of")
        root = (SymbolTable.lookup_symbol(module, name) if name is not None else None) or graph
        try:
            loop_too = is_padded(root) or (self.loop_dynamic and reduces_dynamic_dim(root))
            best, dropped = schedule_graph(graph, self.top_k, self.iterative_tiling, self.horizontal_fusion, loop_too=loop_too)
            why = {reason for _, reason in dropped}
        except Unschedulable as e:
            best, dropped, why = [], [], {str(e)}
        if not best:
            reasons = "; ".join(sorted(why)[:3])
            failures[graph.sym_name.data] = reasons
            print(f"warning: cleave-schedule: skipped @{graph.sym_name.data}: {reasons}", file=sys.stderr)
            return False
        failures.pop(graph.sym_name.data, None)
        anchor: Operation = graph
        for i, s in enumerate(best):
            s.kernel.sym_name = StringAttr(f"{graph.sym_name.data}_k{i}")
            s.kernel.attributes["cleave.schedule_of"] = SymbolRefAttr(graph.sym_name.data)
            s.kernel.attributes["cleave.tiles"] = s.config.attr()
            s.kernel.attributes["cleave.estimated_us"] = FloatAttr(round(s.estimate.microseconds, 3), f64)
            s.kernel.attributes["cleave.smem_bytes"] = IntegerAttr(s.estimate.footprint_bytes, i64)
            for key in ("cleave.output_names", "cleave.results"):
                if key in graph.attributes:
                    s.kernel.attributes[key] = graph.attributes[key]
            module.body.block.insert_op_after(s.kernel, anchor)
            anchor = s.kernel
        print(
            f"cleave-schedule @{graph.sym_name.data}: {len(best)} kernels kept, {len(dropped)} "
            f"configurations dropped; best {best[0].config.describe()} ~{best[0].estimate.microseconds:.1f} us",
            file=sys.stderr,
        )
        return True


def operand_prologue(graph: tgraph.GraphOp) -> set[Operation]:
    """The element-wise ops of `graph` computed from its inputs alone that reach a matmul's operand
    through such ops only (a rotary embedding of attention's Q: `q * cos + rotate_half(q) * sin`).
    A mask's ops, which reach the matmul's result, not an operand, are not among them."""
    alone: dict[Operation, bool] = {}

    def from_inputs(v: SSAValue) -> bool:
        op = v.owner
        if not isinstance(op, Operation):
            return True
        if op not in alone:
            alone[op] = isinstance(op, tgraph.ElementwiseOp) and all(from_inputs(x) for x in op.operands)
        return alone[op]

    out: set[Operation] = set()

    def take(v: SSAValue) -> None:
        if isinstance(v.owner, Operation) and v.owner not in out and from_inputs(v):
            out.add(v.owner)
            for x in v.owner.operands:
                take(x)

    for mm in (o for o in graph.block.ops if isinstance(o, tgraph.MatmulOp)):
        for operand in mm.operands:
            take(operand)
    return out


def matmul_chain(graph: tgraph.GraphOp) -> bool:
    """Whether an operand of some matmul of `graph` is computed from another matmul's result."""
    after: set[SSAValue] = set()
    for o in graph.block.ops:
        fed = any(v in after for v in o.operands)
        if isinstance(o, tgraph.MatmulOp) and fed:
            return True
        if fed or isinstance(o, tgraph.MatmulOp):
            after.update(o.results)
    return False


def outputs_apart(graph: tgraph.GraphOp) -> bool:
    """Whether `graph` has two matmuls or more and outputs of different shapes: no grid tiles them all
    alike (a kernel's blocks then span every column of the narrower outputs), so it is cut per matmul too
    (q, k and v projections of one x at grouped-query widths: one kernel, estimated 82 us, at T64)."""
    shapes = {tuple(tgraph.tensor_type(v).shape) for v in graph.output_op.outputs}
    return len(shapes) > 1 and sum(isinstance(o, tgraph.MatmulOp) for o in graph.block.ops) > 1


def _from_matmuls(graph: tgraph.GraphOp) -> set[Operation]:
    """The matmuls of `graph` and every op computed from one of their results."""
    after: set[Operation] = set()
    for o in graph.block.ops:
        if isinstance(o, tgraph.MatmulOp) or any(isinstance(v.owner, Operation) and v.owner in after for v in o.operands):
            after.add(o)
    return after


def reduction_beside_matmul(graph: tgraph.GraphOp) -> bool:
    """Whether `graph` has a matmul and a (non-matmul) reduction that reads no matmul's result: a
    norm's statistics, feeding the matmul's operand or rescaling its result, which the per-matmul
    cut computes in a kernel before the matmul's (not inside its K loop)."""
    after = _from_matmuls(graph)
    return bool(after) and any(isinstance(o, tgraph.ReduceOp) and o not in after for o in graph.block.ops)


def matmul_results_last(graph: tgraph.GraphOp) -> tgraph.GraphOp:
    """A copy of `graph` with the ops computed from no matmul first (each group in graph order), so
    that cutting it in order puts a norm's statistics before the matmul whose result they rescale."""
    copy = graph.clone()
    after = _from_matmuls(copy)
    output = copy.block.last_op
    for o in [o for o in copy.block.ops if o in after and o is not output]:
        o.detach()
        copy.block.insert_op_before(o, output)
    return copy


def structure(graph: tgraph.GraphOp) -> Hashable:
    """`graph`'s ops, their attributes, result types and operands (by position), names left out."""
    index: dict[SSAValue, int] = {v: i for i, v in enumerate(graph.inputs)}
    out = []
    for o in graph.block.ops:
        operands = tuple(index[v] for v in o.operands)
        for r in o.results:
            index[r] = len(index)
        out.append((o.name, operands, str(o.properties), str(o.attributes), tuple(str(r.type) for r in o.results)))
    return tuple(out)


def _same_cut(a: list[tgraph.GraphOp], b: list[tgraph.GraphOp]) -> bool:
    """Whether two cuts of one graph have the same pieces (ops and signatures; names left out)."""

    def ops(g: tgraph.GraphOp) -> tuple[Hashable, ...]:
        return (tuple(str(t) for t in g.function_type.inputs), tuple(o.name for o in g.block.ops))

    return len(a) == len(b) and all(ops(x) == ops(y) for x, y in zip(a, b))


def _insert_candidate(module: ModuleOp, root: tgraph.GraphOp, pieces: list[tgraph.GraphOp], note: str) -> None:
    """Insert the chain `pieces` after `root` as a candidate of it, with `note`."""
    anchor: Operation = root
    for piece in pieces:
        piece.attributes["cleave.candidate_of"] = SymbolRefAttr(root.sym_name.data)
        piece.attributes["cleave.note"] = StringAttr(note)
        module.body.block.insert_op_after(piece, anchor)
        anchor = piece
