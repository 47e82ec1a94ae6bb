"""passes/unit_reshapes.py: reshapes that only add or drop size-1 dims leave the inside of a graph
through elementwise ops; every rewritten graph computes what the input graph computes."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.ir import SSAValue

from cleave_ir.builder import GraphBuilder
from cleave_ir.dialects import tgraph
from cleave_ir.interpreter import max_relative_error, random_inputs, run_graph
from cleave_ir.passes.unit_reshapes import frame_map, interior, move_unit_reshapes, reframed

FRAMES = ([4, 8], [4, 1, 8], [1, 4, 8], [4, 1, 1, 8])  # the [4, 8] core with size-1 dims added
UNARY = ("silu", "tanh", "neg", "sigmoid", "square")


def _random_graph(seed: int) -> tgraph.GraphOp:
    """Elementwise ops, scales, scalar ops, broadcast biases and [4, 8] @ [8, 8] matmuls on the
    [4, 8] core in random frames, with the reshapes between them a front end would write."""
    rng = np.random.default_rng(seed)
    b = GraphBuilder(f"g{seed}", "f32")
    pool: list[SSAValue] = [b.input("x", [4, 8]), b.input("y", [4, 1, 8])]
    bias, w = b.input("bias", [1, 1, 8]), b.input("w", [8, 8])
    rank = lambda v: len(tgraph.tensor_type(v).shape)  # noqa: E731

    def to(v: SSAValue, shape: list[int]) -> SSAValue:
        return v if list(tgraph.tensor_type(v).shape) == shape else b.reshape(v, shape)

    for _ in range(int(rng.integers(4, 10))):
        v = pool[int(rng.integers(len(pool)))]
        kind = rng.choice(["unary", "reshape", "binary", "bias", "scale", "scalar", "matmul", "softmax"])
        if kind == "softmax":  # over the last dim (8), in whatever frame v has
            e = b.exp(b.scale(v, 0.25))
            v = b.div(e, b.reduce("sum", e, rank(v) - 1))
        elif kind == "unary":
            v = b.unary(str(rng.choice(UNARY)), v)
        elif kind == "reshape":
            v = b.reshape(v, FRAMES[int(rng.integers(len(FRAMES)))])
        elif kind == "binary":
            other = pool[int(rng.integers(len(pool)))]
            v = b.binary(str(rng.choice(["add", "mul", "sub", "max"])), v, to(other, list(tgraph.tensor_type(v).shape)))
        elif kind == "bias":  # broadcast along every dim but the last
            v = b.add(v, to(bias, [1] * (rank(v) - 1) + [8]))
        elif kind == "scale":
            v = b.scale(v, 0.5)
        elif kind == "scalar":
            v = b.scalar("rsub", v, 1.5)
        else:
            v = b.reshape(b.matmul(to(v, [4, 8]), w), FRAMES[int(rng.integers(len(FRAMES)))])
        pool.append(v)
    return b.build(pool[-1])


def _outputs(g: tgraph.GraphOp) -> list[np.ndarray]:
    """The output on normal, normal(0, 0.1), uniform(-1, 1) and shifted normal inputs."""
    rng = np.random.default_rng(1)
    sets = [random_inputs(g, 0), [0.1 * x for x in random_inputs(g, 1)]]
    sets.append([rng.uniform(-1, 1, x.shape) for x in sets[0]])
    sets.append([x - 1.5 for x in random_inputs(g, 2)])
    return [run_graph(g, xs)[0] for xs in sets]


def test_random_graphs_keep_their_values_and_lose_interior_reshapes() -> None:
    improved = 0
    for seed in range(120):
        g = _random_graph(seed)
        before, cost = _outputs(g), interior(g.block)
        text = str(g)
        changed = move_unit_reshapes(g)
        g.verify()
        after = interior(g.block)
        assert after <= cost and changed == (str(g) != text), (seed, text, str(g))
        assert [tuple(tgraph.tensor_type(a).shape) for a in g.inputs] == [(4, 8), (4, 1, 8), (1, 1, 8), (8, 8)]
        for r, o in zip(before, _outputs(g)):
            assert max_relative_error(r, o) < 1e-12, (seed, text, str(g))
        improved += after < cost
        assert not move_unit_reshapes(g)  # a fixed point
    assert improved >= 30, improved


def _decode_mlp(batch: int, residual: bool) -> tgraph.GraphOp:
    """silu(gate) * up -> down (+ x) with [B, 1, N] elementwise ops between [B, N] matmuls."""
    b = GraphBuilder("decode_mlp", "f32")
    g, x = b.input("g", [batch, 1, 32]), b.input("x", [batch, 1, 16])
    wu, wd = b.input("wu", [32, 16]), b.input("wd", [16, 32])
    xr = b.reshape(x, [batch, 16])
    m = b.mul(b.silu(g), b.reshape(b.matmul(xr, wu, transpose_b=True), [batch, 1, 32]))
    d = b.reshape(b.matmul(b.reshape(m, [batch, 32]), wd, transpose_b=True), [batch, 1, 16])
    return b.build(b.add(d, x) if residual else d)


@pytest.mark.parametrize("batch", [1, 4])
@pytest.mark.parametrize("residual", [False, True])
def test_decode_mlp_runs_on_rows(batch: int, residual: bool) -> None:
    g = _decode_mlp(batch, residual)
    before = _outputs(g)
    assert interior(g.block) == 2 + residual  # the view of d back to [B, 1, 16] is interior only under the add
    assert move_unit_reshapes(g)
    g.verify()
    assert interior(g.block) == 0
    ops = [op for op in g.block.ops if not isinstance(op, (tgraph.ReshapeOp, tgraph.OutputOp))]
    assert [op.name for op in ops] == ["tgraph.silu", "tgraph.matmul", "tgraph.mul", "tgraph.matmul", *(["tgraph.add"] if residual else [])]
    assert all(len(tgraph.tensor_type(op.results[0]).shape) == 2 for op in ops)  # everything on [B, N] rows
    assert tuple(tgraph.tensor_type(g.output_op.operands[0]).shape) == (batch, 1, 16)
    for r, o in zip(before, _outputs(g)):
        assert max_relative_error(r, o) < 1e-12


def test_reshapes_between_reductions_and_matmuls_stay() -> None:
    """A reshape between a reduction and a matmul, and one whose move would put a reshape on each of
    two matmuls, are kept."""
    b = GraphBuilder("kept", "f32")
    x, w, v, u = b.input("x", [4, 1, 8]), b.input("w", [1, 8, 8]), b.input("v", [1, 8]), b.input("u", [8, 4])
    s = b.matmul(b.reshape(b.reduce("sum", b.exp(x), 2), [4, 1]), v)
    p = b.mul(b.matmul(x, w), b.matmul(b.silu(x), w))
    g = b.build(b.matmul(b.reshape(p, [4, 8]), u), s)
    text = str(g)
    assert interior(g.block) == 2
    assert not move_unit_reshapes(g)
    assert str(g) == text


def test_a_reshape_read_broadcast_does_not_sink() -> None:
    """h [4, 8] + reshape(row sums [4, 1, 1] -> [4, 1]): the add cannot run in the sums' frame."""
    b = GraphBuilder("row_bias", "f32")
    x, h = b.input("x", [4, 1, 8]), b.input("h", [4, 8])
    g = b.build(b.add(h, b.reshape(b.reduce("sum", b.exp(x), 2), [4, 1])))
    text = str(g)
    assert interior(g.block) == 1 and not move_unit_reshapes(g) and str(g) == text


def test_sinking_meets_a_reduction() -> None:
    """reshape(p) + reshape(reduce(..)): both reshapes leave (the sum is added in the [4, 1, 8] frame)."""
    b = GraphBuilder("sunk", "f32")
    x, w = b.input("x", [4, 1, 8]), b.input("w", [1, 8, 8])
    s = b.reshape(b.reduce("sum", b.exp(x), 2), [4, 1])
    p = b.mul(b.matmul(x, w), b.matmul(b.silu(x), w))
    g = b.build(b.add(b.reshape(p, [4, 8]), s))
    before = _outputs(g)
    assert interior(g.block) == 2 and move_unit_reshapes(g) and interior(g.block) == 0
    assert [op.name for op in g.block.ops][-3:] == ["tgraph.add", "tgraph.reshape", "tgraph.output"]
    for r, o in zip(before, _outputs(g)):
        assert max_relative_error(r, o) < 1e-12


def test_a_softmax_between_reshapes_runs_in_one_frame() -> None:
    """Bloom's attention: logits [h, 1, n] raised to [1, h, 1, n] for a [1, 1, 1, n] mask, the softmax
    there and its probabilities viewed back to [h, 1, n] for P @ V. The reshape sinks through the sum
    (over dim 3, dim 2 of the logits' frame) and meets the one back: the mask alone is reshaped."""
    b = GraphBuilder("bloom", "f32")
    q, k, mask, v = b.input("q", [4, 1, 8]), b.input("k", [4, 16, 8]), b.input("mask", [1, 1, 1, 16]), b.input("v", [4, 16, 8])
    e = b.exp(b.add(b.reshape(b.matmul(q, k, transpose_b=True), [1, 4, 1, 16]), mask))
    p = b.div(e, b.reduce("sum", e, 3))
    g = b.build(b.matmul(b.reshape(p, [4, 1, 16]), v))
    before = _outputs(g)
    assert interior(g.block) == 2 and move_unit_reshapes(g) and interior(g.block) == 0
    g.verify()
    (reshape,) = [op for op in g.block.ops if isinstance(op, tgraph.ReshapeOp)]
    assert reshape.input is g.inputs[2]
    (red,) = [op for op in g.block.ops if isinstance(op, tgraph.ReduceOp)]
    assert red.axis == 2 and tuple(tgraph.tensor_type(red.result).shape) == (4, 1, 1)
    for r, o in zip(before, _outputs(g)):
        assert max_relative_error(r, o) < 1e-12


def test_frame_map() -> None:
    assert frame_map([4, 1, 8], [4, 8]) == [0, 2]
    assert frame_map([4, 8], [1, 4, 1, 8]) == [None, 0, None, 1]
    assert reframed([1, 1, 8], frame_map([4, 1, 8], [4, 8])) == [1, 8]  # a bias keeps broadcasting over the rows
