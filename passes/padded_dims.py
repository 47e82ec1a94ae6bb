"""Awkward static sizes are compiled as dynamic dims at a padded size.

A dim of 197 (ViT's tokens), 77 (CLIP's text), 300 or 4097 has no divisor that makes a good tile: no
16-row tile for the tensor cores, no 64-key FlashAttention loop, and the schedule falls back to
single rows on the CUDA cores (attention [12, 197, 64]: one query row per block, estimated 25.5 us
against 15.0 us for [12, 1024, 64]). Such a dim is declared `dynamic` and the graph is scheduled at
the size rounded up (`padded_size`); `cleave-dynamic-shapes` then makes every kernel serve the real
size (loads past the end read zeros, reductions mask the padding). The padded compile is kept only
when its candidates serve every size (`serves_every_size`); otherwise the graph is compiled as given.
"""

from __future__ import annotations

import sys
from typing import cast

from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, DenseArrayBase, DictionaryAttr, IntegerAttr, ModuleOp, i64
from xdsl.passes import ModulePass

from cleave_ir.diagnostics import one_line
from cleave_ir.dialects import itgraph, tgraph

PADDED = "cleave.padded"
STATIC_ONLY = "cleave.static_only"  # the attribute `cleave-dynamic-shapes` leaves on kernels that serve one size


LONG_ROW = 16384
"""A reduced dim longer than this is streamed in steps (a log-sum-exp over a vocabulary): it wants a
step of STREAM_STEPS that divides it, and is padded to a multiple of LONG_ROW_QUANTUM otherwise."""
STREAM_STEPS = range(1024, 2048 + 1, 64)
LONG_ROW_QUANTUM = 2048


def awkward(size: int, reduced: bool = False) -> bool:
    """A size with no good tile: over 16 and not a multiple of 16 (77, 197), or over 256 and not a
    multiple of 64 (a KV cache of 4096 plus the new token); with `reduced`, also a dim over LONG_ROW
    that no step of STREAM_STEPS divides (Llama-3's vocabulary, 128256 = 768 x 167: its row streamed
    in 768-wide steps took 34.7 us on the H100 for 2 rows, its Split-K chunks in 32-wide ones)."""
    if (size > 16 and size % 16 != 0) or (size > 256 and size % 64 != 0):
        return True
    return reduced and size > LONG_ROW and not any(size % step == 0 for step in STREAM_STEPS)


def padded_size(size: int) -> int:
    """`size` rounded up to a quantum tiles divide: 32 up to 32, 64 up to 512, 128 up to 2048, 256 up to
    LONG_ROW, then LONG_ROW_QUANTUM (whose multiples, and their halves down to 64ths, have 2048 or
    another step of STREAM_STEPS for a divisor)."""
    q = LONG_ROW_QUANTUM if size > LONG_ROW else 256 if size > 2048 else 128 if size > 512 else 64 if size > 32 else 32
    return -(-size // q) * q


def awkward_dims(graph: tgraph.GraphOp, unreduced: bool = False) -> dict[int, list[int]]:
    """Input index -> its static awkward dims that are not already declared dynamic (with `unreduced`,
    only those no output element depends on whole: `reduced_dims.eventually_reduced`)."""
    from cleave_ir.passes.reduced_dims import eventually_reduced

    reduced = eventually_reduced(graph)
    out: dict[int, list[int]] = {}
    for i, a in enumerate(graph.inputs):
        declared = set(graph.input_annotation(i, "dynamic")) | (reduced[i] if unreduced else set())
        dims = [
            d for d, n in enumerate(tgraph.tensor_type(a).shape)
            if d not in declared and n.is_Integer and awkward(int(n), reduced=d in reduced[i])
        ]
        if dims:
            out[i] = dims
    return out


def padded_graph(graph: tgraph.GraphOp, unreduced: bool = False) -> tgraph.GraphOp | None:
    """`graph` with its awkward dims declared dynamic and set to their padded sizes (the dims the
    graph ties to them follow); None when it has none, or holds a `reduce mean` over a dim its declared
    dynamic dims vary (refused where it is compiled as given). Its other means are first written as
    sums scaled by the real sizes (`cleave-decompose`): a padded
    graph runs at its real sizes only, and the padding its kernels read is masked to zero before a
    sum (a LayerNorm over 3000-wide rows: one kernel, where unpadded it was cut into three). A causal
    mask pads like any other input: the padded keys lie in every real query's future. With
    `unreduced`, only the awkward dims no reduction runs over are padded (`apply_padded`'s fallback)."""
    from cleave_ir.passes.decompose import decompose_graph
    from cleave_ir.passes.dynamic_shapes import _dim_names, at_sizes, dynamic_inputs, varying_means

    awk = awkward_dims(graph, unreduced)
    if not awk or varying_means(graph):  # (decomposed, such a mean would divide by one size at all)
        return None
    marked = graph.clone()
    decompose_graph(marked)
    attrs = list(marked.arg_attrs.data) if marked.arg_attrs is not None else [DictionaryAttr({})] * len(marked.inputs)
    for i, dims in awk.items():
        entries = dict(attrs[i].data)
        entries["dynamic"] = DenseArrayBase.from_list(i64, sorted({*graph.input_annotation(i, "dynamic"), *dims}))
        attrs[i] = DictionaryAttr(entries)
    marked.arg_attrs = ArrayAttr(attrs)
    names = _dim_names(marked, dynamic_inputs(marked))
    real: dict[str, int] = {}  # dynamic dim name -> its size in `graph` (dims the graph ties share a name)
    for i, dims in awk.items():
        for d in dims:
            name = names[marked.inputs[i].name_hint or f"arg{i}"][d]
            assert name is not None
            real[name] = max(real.get(name, 0), int(tgraph.tensor_type(graph.inputs[i]).shape[d]))
    out = at_sizes(marked, {name: padded_size(n) for name, n in real.items()})
    out.attributes[PADDED] = DictionaryAttr({name: IntegerAttr(n, i64) for name, n in sorted(real.items())})
    return out


def is_padded(graph: tgraph.GraphOp) -> bool:
    """Whether `graph` is a `padded_graph` (its schedule keeps a loop over the padded dims)."""
    return PADDED in graph.attributes


def serves_every_size(module: ModuleOp) -> bool:
    """Whether no kernel the pipeline kept serves only its representative size."""
    return not any(STATIC_ONLY in k.attributes for k in module.walk() if isinstance(k, itgraph.KernelOp))


def apply_padded(pipeline: ModulePass, module: ModuleOp) -> tuple[str, bool] | None:
    """Run `pipeline` on the `padded_graph` of `module`'s graph; when every kept kernel serves the real
    sizes, `module` takes the result. Where none does, the awkward dims no reduction runs over are
    padded alone (a LayerNorm of 37 rows of 3000: its whole-row tile cannot serve another width, but
    64 rows of 3000 schedule as one kernel; unpadded, 37 rows were cut into three). Returns None when
    nothing is awkward (or no padded form exists: a note on stderr), else (what was padded, as
    "77 -> 128", and whether `module` took it); when it did not, the caller runs `pipeline` on the
    graph as given."""
    graph = next(op for op in module.body.block.ops if isinstance(op, tgraph.GraphOp))
    done = _apply_padded(pipeline, module, graph, unreduced=False)
    if done is not None and not done[1] and awkward_dims(graph, unreduced=True) not in ({}, awkward_dims(graph)):
        print(f"cleave-padded-dims: padded sizes ({done[0]}): no candidate serves the real sizes; the dims no reduction runs over padded alone", file=sys.stderr)
        return _apply_padded(pipeline, module, graph, unreduced=True) or done
    return done


def _apply_padded(pipeline: ModulePass, module: ModuleOp, graph: tgraph.GraphOp, unreduced: bool) -> tuple[str, bool] | None:
    """`apply_padded` with the dims `padded_graph(graph, unreduced)` pads."""
    try:
        padded = padded_graph(graph, unreduced)
    except Exception as e:  # noqa: BLE001 - an optimization: the graph as given is compiled instead
        print(f"cleave-padded-dims: no padded form: {one_line(str(e)) or type(e).__name__}", file=sys.stderr)
        return None
    if padded is None:
        return None
    sizes = sorted({cast(IntegerAttr, n).value.data for n in cast(DictionaryAttr, padded.attributes[PADDED]).data.values()})
    said = ", ".join(f"{n} -> {padded_size(n)}" for n in sizes)
    trial = ModuleOp([padded])
    try:
        pipeline.apply(Context(), trial)
        ok = serves_every_size(trial)
    except Exception as e:  # noqa: BLE001 - an optimization: the graph as given is compiled instead
        print(f"cleave-padded-dims: padded sizes ({said}) dropped: {one_line(str(e)) or type(e).__name__}", file=sys.stderr)
        ok = False
    if ok:
        for op in list(module.body.block.ops):
            module.body.block.erase_op(op)
        for op in list(trial.body.block.ops):
            op.detach()
            module.body.block.add_op(op)
    return said, ok
