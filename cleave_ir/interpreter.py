"""Reference interpreter for `tgraph` graphs: numpy on whole tensors, through xDSL's interpreter.

Two numeric modes:
- `float64`: every op in float64 (the reference every pass is compared against);
- `declared`: every op computed in float32 (matmuls accumulate in fp32) and its result rounded
  to the element type its type declares (f16, bf16, f32), which is what a kernel would store.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np
from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type, ModuleOp
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    ReturnedValues,
    TerminatorValue,
    impl,
    impl_callable,
    impl_terminator,
    register_impls,
)
from xdsl.ir import Attribute, SSAValue

from cleave_ir.dialects import tgraph
from cleave_ir.dialects.cleave import causal_mask
from cleave_ir.shapes import evaluate_shape

Mode = Literal["float64", "declared"]


class InterpretationError(Exception):
    """A graph could not be run on the given inputs (wrong shapes, unbound symbols)."""


def round_to(x: np.ndarray, element_type: Attribute) -> np.ndarray:
    """Round `x` to `element_type` and return it as float32 (the compute type of `declared` mode)."""
    if isinstance(element_type, Float16Type):
        return x.astype(np.float16).astype(np.float32)
    if isinstance(element_type, BFloat16Type):
        bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
        rounded = (bits + np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))) & np.uint32(
            0xFFFF0000
        )
        return np.where(np.isnan(x), np.float32(np.nan), rounded.view(np.float32))
    if isinstance(element_type, Float32Type):
        return x.astype(np.float32)
    return x.astype(np.float64)


def concrete_shape(t: tgraph.TensorType, bindings: Mapping[str, int]) -> tuple[int, ...]:
    """The integer shape of `t` under `bindings`; raises InterpretationError if a symbol is unbound."""
    try:
        return evaluate_shape(t.shape, bindings)
    except ValueError as e:
        raise InterpretationError(str(e)) from None


class TGraphFunctions(InterpreterFunctions):
    """numpy implementations of the tgraph ops (whole tensors, never scalars)."""

    def __init__(self, mode: Mode = "float64", bindings: Mapping[str, int] | None = None):
        self.mode = mode
        self.bindings = dict(bindings or {})

    def _finish(self, op_result: SSAValue, value: np.ndarray) -> np.ndarray:
        t = tgraph.tensor_type(op_result)
        if self.mode == "declared":
            return round_to(value, t.element_type)
        return value

    @impl_callable(tgraph.GraphOp)
    def call_graph(self, interpreter: Interpreter, op: tgraph.GraphOp, args: tuple[Any, ...]):
        return interpreter.run_ssacfg_region(op.body, args, op.sym_name.data)

    @impl_terminator(tgraph.OutputOp)
    def run_output(
        self, interpreter: Interpreter, op: tgraph.OutputOp, args: tuple[Any, ...]
    ) -> tuple[TerminatorValue, tuple[Any, ...]]:
        return ReturnedValues(args), ()

    @impl(tgraph.MatmulOp)
    def run_matmul(self, interpreter: Interpreter, op: tgraph.MatmulOp, args: tuple[Any, ...]):
        a, b = args
        if op.transpose_b is not None:
            b = np.swapaxes(b, -1, -2)
        return (self._finish(op.result, np.matmul(a, b)),)

    @impl(tgraph.ReduceOp)
    def run_reduce(self, interpreter: Interpreter, op: tgraph.ReduceOp, args: tuple[Any, ...]):
        (x,) = args
        return (self._finish(op.result, op.reduction().numpy(x, op.axis)),)

    def run_structural(self, interpreter: Interpreter, op: tgraph.StructuralOp, args: tuple[Any, ...]):
        try:
            return (op.numpy(args, concrete_shape(tgraph.tensor_type(op.results[0]), self.bindings)),)
        except ValueError as e:
            raise InterpretationError(str(e)) from None

    @impl(tgraph.ReshapeOp)
    def run_reshape(self, interpreter: Interpreter, op: tgraph.ReshapeOp, args: tuple[Any, ...]):
        (x,) = args
        return (x.reshape(concrete_shape(tgraph.tensor_type(op.result), self.bindings)),)

    @impl(tgraph.SplitOp)
    def run_split(self, interpreter: Interpreter, op: tgraph.SplitOp, args: tuple[Any, ...]):
        (x,) = args
        parts = concrete_shape(tgraph.tensor_type(op.result), self.bindings)[0]
        axis = op.axis
        if x.shape[axis] % parts:
            raise InterpretationError(
                f"tgraph.split: {parts} parts do not divide dim {axis} of size {x.shape[axis]}"
            )
        # [.., k, ..] -> [.., s, k/s, ..] -> move s to the front
        shape = (*x.shape[:axis], parts, x.shape[axis] // parts, *x.shape[axis + 1 :])
        return (np.moveaxis(x.reshape(shape), axis, 0),)


def _run_elementwise(self: TGraphFunctions, interpreter: Interpreter, op: Any, args: tuple[Any, ...]):
    # inf/nan are legitimate results (e.g. exp of large logits); the caller compares them
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        return (self._finish(op.result, op.semantics().numpy(*args)),)


for _op_type in tgraph.ELEMENTWISE_OPS:
    setattr(TGraphFunctions, f"run_{_op_type.short_name()}", impl(_op_type)(_run_elementwise))
for _op_type in tgraph.STRUCTURAL_OPS:
    setattr(TGraphFunctions, f"run_{_op_type.name.split('.')[1]}", impl(_op_type)(TGraphFunctions.run_structural))
TGraphFunctions = register_impls(TGraphFunctions)


def graph_bindings(graph: tgraph.GraphOp, bindings: Mapping[str, int] | None) -> dict[str, int]:
    """The graph's own `bindings` overridden by the caller's."""
    return {**graph.binding_values(), **(bindings or {})}


def input_shapes(
    graph: tgraph.GraphOp, bindings: Mapping[str, int] | None = None
) -> list[tuple[int, ...]]:
    b = graph_bindings(graph, bindings)
    return [concrete_shape(tgraph.tensor_type(a), b) for a in graph.inputs]


def with_causal_masks(graph: tgraph.GraphOp, inputs: Sequence[Any], shapes: Sequence[Sequence[int]]) -> list[Any]:
    """`inputs` with each `cleave.causal` input replaced by the mask it promises (`causal_mask`)."""
    out = list(inputs)
    for i, offset in graph.causal_inputs().items():
        out[i] = causal_mask(shapes[i], offset)
    return out


def random_inputs(
    graph: tgraph.GraphOp,
    seed: int = 0,
    bindings: Mapping[str, int] | None = None,
) -> list[np.ndarray]:
    """Standard-normal float64 inputs for `graph`, one per input, reproducible from `seed`.

    Inputs are drawn per position in order, so graphs with the same signature get the same inputs.
    """
    rng = np.random.default_rng(seed)
    shapes = input_shapes(graph, bindings)
    return with_causal_masks(graph, [rng.standard_normal(shape) for shape in shapes], shapes)


def run_graph(
    graph: tgraph.GraphOp,
    inputs: Sequence[np.ndarray],
    *,
    mode: Mode = "float64",
    bindings: Mapping[str, int] | None = None,
) -> tuple[np.ndarray, ...]:
    """Run `graph` on `inputs` (one array per graph input) and return its outputs.

    In `declared` mode inputs are first rounded to their declared element types. Input and output
    shapes are checked against the graph's types under `bindings` (plus the graph's own). A
    `cleave.causal` input is not read: it holds the causal mask it promises.
    """
    b = graph_bindings(graph, bindings)
    if len(inputs) != len(graph.inputs):
        raise InterpretationError(
            f"@{graph.sym_name.data} takes {len(graph.inputs)} inputs, got {len(inputs)}"
        )
    values: list[np.ndarray] = []
    causal = graph.causal_inputs()
    for i, (name, arg, x) in enumerate(zip(graph.input_names(), graph.inputs, inputs)):
        t = tgraph.tensor_type(arg)
        expected = concrete_shape(t, b)
        x = np.asarray(x)
        if x.shape != expected:
            raise InterpretationError(
                f"@{graph.sym_name.data}: input %{name} has shape {x.shape}, expected {expected}"
            )
        if i in causal:
            x = causal_mask(expected, causal[i])
        values.append(round_to(x, t.element_type) if mode == "declared" else np.asarray(x, dtype=np.float64))
    module = graph.parent_op()
    interpreter = Interpreter(module if isinstance(module, ModuleOp) else ModuleOp([]))
    interpreter.register_implementations(TGraphFunctions(mode, b))
    outputs = interpreter.call_op(graph, tuple(values))
    for i, (value, out_t) in enumerate(zip(outputs, graph.function_type.outputs.data)):
        expected = concrete_shape(tgraph.tensor_type(out_t), b)
        if value.shape != expected:
            raise InterpretationError(
                f"@{graph.sym_name.data}: output {i} has shape {value.shape}, its type says {expected}"
            )
    return tuple(outputs)


def max_relative_error(reference: np.ndarray, value: np.ndarray) -> float:
    """max |value - reference| / max |reference| (0 when both are zero)."""
    reference = np.asarray(reference, dtype=np.float64)
    value = np.asarray(value, dtype=np.float64)
    if reference.shape != value.shape:
        return float("inf")
    if not reference.size:
        return 0.0
    # identical entries (including inf == inf, or nan in both) count as no error
    same = (reference == value) | (np.isnan(reference) & np.isnan(value))
    if not np.all(np.isfinite(reference) | same):
        return float("inf")
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.where(same, 0.0, np.abs(value - reference))
    err = float(np.max(diff))
    finite = np.abs(reference[np.isfinite(reference)])
    scale = float(np.max(finite)) if finite.size else 0.0
    if not np.isfinite(err):
        return float("inf")
    return err / scale if scale > 0 else err


def run_split_k(
    split: tgraph.GraphOp,
    combine: tgraph.GraphOp,
    inputs: Sequence[np.ndarray],
    *,
    mode: Mode = "float64",
    bindings: Mapping[str, int] | None = None,
) -> tuple[np.ndarray, ...]:
    """Run a split graph then its combine graph (the two kernels of a Split-K candidate).

    The combine graph takes the split graph's outputs, then the original inputs it names in its
    `cleave.passthrough` attribute.
    """
    return run_chain([split, combine], inputs, mode=mode, bindings=bindings)


def run_chain(
    graphs: Sequence[tgraph.GraphOp],
    inputs: Sequence[np.ndarray],
    *,
    mode: Mode = "float64",
    bindings: Mapping[str, int] | None = None,
) -> tuple[np.ndarray, ...]:
    """Run the graphs of a multi-kernel candidate in order, as their kernels run.

    Each graph takes the previous one's outputs, then the named values its `cleave.passthrough`
    lists: the first graph's inputs by name, or earlier graphs' results (`cleave.output_names`).
    Returns the last graph's outputs, or the values its `cleave.results` names.
    """
    values: list[np.ndarray] = list(inputs)
    env = dict(zip(graphs[0].input_names(), inputs))
    for g in graphs:
        names = [n.data for n in getattr(g.attributes.get("cleave.passthrough"), "data", ())]  # type: ignore[attr-defined]
        extra = [env[n] for n in names]
        args = values[: len(g.inputs) - len(extra)] + extra
        env.update(zip(g.input_names(), args))
        values = list(run_graph(g, args, mode=mode, bindings=bindings))
        env.update(zip((n.data for n in getattr(g.attributes.get("cleave.output_names"), "data", ())), values))  # type: ignore[attr-defined]
    results = [n.data for n in getattr(graphs[-1].attributes.get("cleave.results"), "data", ())] if graphs else []  # type: ignore[attr-defined]
    return tuple(env[n] for n in results) if results else tuple(values)
