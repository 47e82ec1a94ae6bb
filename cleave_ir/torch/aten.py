"""The aten -> tgraph table: one entry per aten op, a small function that emits tgraph ops.

`ATEN` maps an aten op's packet name (`"aten.linear"`) to a converter `f(cx, node) -> value`. A
converter reads the node's arguments through the `Emitter` (`cx.value(arg)` gives the tgraph value
of an FX node; a node outside the region being emitted becomes a graph input on first use) and
returns the tgraph value of the node's result, or raises `Unsupported` with a one-line reason. A new
tgraph op is supported by adding one line to `ATEN` (and, where needed, a converter).

Decompositions: mean -> reduce sum + scale, softmax -> exp / sum / div (the scheduler turns exp sums
used as a ratio into rescaled sums with a running max: online softmax, stable for any logits),
layer_norm and rms_norm -> reductions, rsqrt and muls, linear -> matmul transpose_b, SDPA -> matmul
transpose_b, scale, softmax, matmul (`is_causal=True` adds a `#cleave.causal` mask input the region
makes itself, `Emitter.causal_input`). A transpose of the last two dims read only as matmuls'
second operand becomes their transpose_b; other transposes and permutes, step-1 slices, `narrow`,
`select`, the pieces of `split`/`chunk`/`unbind` (`getitem`), `cat` and `stack` become `tgraph.transpose` /
`slice` / `concat` (not along a dynamic dim), which `cleave-fold-structural` moves to the region's
boundary (`structural.folded` keeps them in a region only where it can); view/reshape/unsqueeze/squeeze
only where they add or drop size-1 dims. A scalar operand of add/sub/max becomes `tgraph.scalar` (the constant stays in the
graph: were it an input, the GPU check would fill it with random values, e.g. a negative norm eps);
mul/div by a scalar become `scale`.
"""

from __future__ import annotations

import math
import operator
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from xdsl.dialects.builtin import Float64Type, FloatAttr
from xdsl.ir import SSAValue

from cleave_ir.builder import GraphBuilder
from cleave_ir.dialects import tgraph
from cleave_ir.passes import padded_dims

if TYPE_CHECKING:  # pragma: no cover
    import torch
    from torch import fx


class Unsupported(Exception):
    """This node cannot become tgraph ops; the message is the one-line reason."""


@dataclass(frozen=True)
class Transposed:
    """A value whose last two dims are swapped; only a matmul's second operand may use it (transpose_b)."""

    value: SSAValue


ELEMENT_TYPES = {"torch.float16": "f16", "torch.bfloat16": "bf16", "torch.float32": "f32"}
# added to the logits a boolean attention mask drops: exp of it underflows to 0 in fp32 after any
# max shift, and it stays inside fp16's range (PyTorch uses -inf; a row it masks whole is NaN there)
MASKED_LOGIT = -30000.0
# the most negative finite logit our softmax takes: the kernels compute exp(x - max) as
# exp2(x * log2(e) - max * log2(e)), where a finite x below -FLT_MAX / log2(e) (finfo(float32).min,
# Hugging Face's mask value) overflows to -inf, so a row of them is NaN (-inf + inf) where PyTorch's
# is uniform; at this value such a row is uniform and a masked logit's exp still underflows to 0
LOGIT_FLOOR = -1e38


def torch_dtype(elt: str) -> Any:
    """The torch dtype of a tgraph element type (`f16`, `bf16`, `f32`)."""
    import torch

    return {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}[elt]


def element_type(dtype: Any) -> str:
    """The tgraph element type of a torch dtype; Unsupported for others."""
    name = ELEMENT_TYPES.get(str(dtype))
    if name is None:
        raise Unsupported(f"dtype {dtype} (tgraph has f16, bf16, f32)")
    return name


def is_mask_dtype(dtype: Any) -> bool:
    """A boolean or integer dtype: such a tensor enters a graph only as a mask (`Input.cast`)."""
    return not dtype.is_floating_point and not dtype.is_complex


SLICED_LINEAR = "cleave.sliced_linear"
"""Meta key of a `getitem` of a chunked projection: (x, weight rows, bias rows or None) it equals
`linear` of (`capture.slice_chunked_projections`)."""

CHUNKED = "cleave.chunked_projection"
"""Meta key of the fused projection whose pieces are marked `SLICED_LINEAR`: it stays in PyTorch
(for pieces no region takes) and is dropped where every piece's region took it."""


def meta_val(node: fx.Node) -> Any:
    return node.meta.get("val")


def is_symbolic(d: Any) -> bool:
    import torch

    return isinstance(d, torch.SymInt) and not isinstance(d.node.maybe_as_int(), int)


# the causal masks `Input.mask` made, most recent last: (shape, dtype, offset, device) -> tensor. A few:
# over a symbolic length every prompt length makes its own (2000 tokens: 8 MB in fp16)
_MASKS: OrderedDict[tuple[Any, ...], Any] = OrderedDict()
MASKS_KEPT = 8


@dataclass
class Input:
    """One input of an emitted graph: an FX node's value, or (`causal`) a mask the region makes itself."""

    node: fx.Node | None
    shape: tuple[int, ...] = ()
    dtype: Any = None
    group: int = 1  # > 1: the node's [b, h, s, d] value is passed as [b, h/group, group*s, d] (a view)
    heads_dim: bool = False  # with group > 1: as [b, h/group, group, s, d] instead (the group a dim of its own)
    layout: tuple[int | None, ...] | None = None  # the node's value viewed with these of its dims (None: a size-1 dim)
    cast: Any = None  # a torch dtype: the node's (boolean) value is passed as 0/1 of this float type
    causal: int | None = None  # no node: the causal 0/1 mask of this offset (`#cleave.causal`), made by `mask`
    # a causal mask's dims of a symbolic sequence length: (tensor input, dim) whose size they take per call
    lengths: tuple[tuple[int, int] | None, ...] = ()

    def mask(self, device: Any, xs: Sequence[torch.Tensor] = ()) -> torch.Tensor:
        """The causal mask a `causal` input holds for the region's tensor inputs `xs`, in its dtype on
        `device` (made once per device and size)."""
        import torch

        assert self.causal is not None
        shape = tuple(xs[src[0]].shape[src[1]] if src is not None else n for n, src in zip(self.shape, self.lengths)) if self.lengths else self.shape
        key = (shape, self.dtype, self.causal, str(device))
        made = _MASKS.get(key)
        if made is None:
            q, k = shape[-2], shape[-1]
            made = torch.ones(q, k, dtype=torch.bool, device=device).tril(self.causal).to(self.dtype).expand(shape).contiguous()
            if len(_MASKS) >= MASKS_KEPT:
                _MASKS.popitem(last=False)
        _MASKS[key] = made
        _MASKS.move_to_end(key)
        return made

    def view(self, x: torch.Tensor) -> torch.Tensor:
        """The tensor the graph input receives for the node's value `x`."""
        if self.cast is not None:
            x = x.to(self.cast)
        if self.layout is not None:
            return x.reshape([x.shape[i] if i is not None else 1 for i in self.layout])
        if self.group == 1:
            return x
        b, h, s, d = x.shape
        if self.heads_dim:
            return x.unflatten(1, (h // self.group, self.group))  # a view whatever the strides
        return x.reshape(b, h // self.group, self.group * s, d)


@dataclass
class Emitter:
    """Emits the tgraph ops of FX nodes into one `GraphBuilder`.

    `sizes` gives each FX node's concrete shape (from the example run); dims that are symbolic in
    the node's fake value become `dynamic` dims of the graph input.
    """

    builder: GraphBuilder
    sizes: Callable[[fx.Node], tuple[int, ...]]
    env: dict[Any, SSAValue | Transposed] = field(default_factory=dict)
    inputs: list[Input] = field(default_factory=list)
    output_like: fx.Node | None = None  # the output is a grouped view of this input's shape (grouped SDPA)
    empty_rows: fx.Node | None = None  # an SDPA mask input: PyTorch returns 0 for a query row it masks whole
    masks: set[SSAValue] = field(default_factory=set)  # values that hold a boolean or integer mask as 0/1

    # ------------------------------------------------------------ values
    def value(self, arg: Any, *, transposed_ok: bool = False, as_mask: bool = False) -> SSAValue | Transposed:
        """The tgraph value of an FX node argument (a new graph input when it is not emitted yet);
        `as_mask`: a boolean input enters as 0/1 in the graph's float type (`Input.cast`)."""
        from torch import fx

        if not isinstance(arg, fx.Node):
            raise Unsupported(f"non-tensor operand {arg!r}")
        if arg not in self.env:
            val = meta_val(arg)
            if not hasattr(val, "shape"):
                raise Unsupported(f"operand {arg.name} is not a tensor")
            cast = None
            if as_mask and is_mask_dtype(val.dtype):  # 0/1 in the graph's float type
                elt = self.builder.default_element_type
                cast = torch_dtype(str(elt))
            else:
                elt = element_type(val.dtype)
            shape = self.sizes(arg)
            # a 0-d tensor (a learned temperature, a scale buffer) enters as its [1] view
            layout: tuple[int | None, ...] | None = (None,) if len(shape) == 0 else None
            name = f"in{len(self.inputs)}"
            self.env[arg] = self.builder.input(name, list(shape) or [1], elt, dynamic=self._dynamic(val.shape, shape))
            self.inputs.append(Input(arg, shape=shape or (1,), dtype=val.dtype, cast=cast, layout=layout))
            if cast is not None:
                self.masks.add(self.env[arg])
        v = self.env[arg]
        if isinstance(v, Transposed) and not transposed_ok:
            raise Unsupported(f"{arg.name} is a transpose, which tgraph has only as matmul transpose_b")
        return v

    @staticmethod
    def _dynamic(fake: Sequence[Any], shape: Sequence[int]) -> list[int]:
        """Dims that become `dynamic`: symbolic in the fake value, or awkward sizes (`awkward`)."""
        return [i for i, (d, n) in enumerate(zip(fake, shape)) if is_symbolic(d) or awkward(n)]

    def causal_input(
        self, shape: Sequence[int], offset: int, dynamic: Sequence[int] = (), lengths: Sequence[tuple[int, int] | None] = ()
    ) -> SSAValue:
        """A graph input holding the causal 0/1 mask of `shape` (`#cleave.causal<offset>`) in the
        graph's float type: the kernel computes it from indices, the region passes one it makes
        (`dynamic`: its dims that follow a padded or symbolic sequence length; `lengths`: `Input.lengths`)."""
        elt = self.builder.default_element_type
        v = self.builder.input(f"in{len(self.inputs)}", list(shape), elt, causal=offset, dynamic=dynamic)
        self.inputs.append(Input(None, shape=tuple(shape), dtype=torch_dtype(str(elt)), causal=offset, lengths=tuple(lengths)))
        return v

    def size_source(self, size: Any) -> tuple[int, int] | None:
        """(tensor input, dim) of a region input of symbolic size `size` at that dim, else None."""
        tensors = [slot.node for slot in self.inputs if slot.node is not None]
        for index, node in enumerate(tensors):
            for dim, d in enumerate(meta_val(node).shape):
                if is_symbolic(d) and d.node.expr == size.node.expr:
                    return index, dim
        return None

    def grouped_input(self, arg: fx.Node, group: int, heads_dim: bool = False) -> SSAValue:
        """A [b, h, s, d] node as the graph input [b, h/group, group*s, d], or with `heads_dim`
        [b, h/group, group, s, d] (`Input.view`)."""
        if arg in self.env:
            raise Unsupported(f"{arg.name} is computed in the region; a grouped query must be a region input")
        val = meta_val(arg)
        b, h, s, d = self.sizes(arg)
        shape: tuple[int, ...] = (b, h // group, group, s, d) if heads_dim else (b, h // group, group * s, d)
        # the batch, and the sequence (`group*s` rows, an independent dim: nothing else in the graph has it)
        fake = (val.shape[0], val.shape[1] // group, group, val.shape[2], val.shape[3]) if heads_dim else (val.shape[0], val.shape[1] // group, group * val.shape[2], val.shape[3])
        v = self.builder.input(f"in{len(self.inputs)}", list(shape), element_type(val.dtype), dynamic=self._dynamic(fake, shape))
        self.env[arg] = v
        self.inputs.append(Input(arg, shape=shape, dtype=val.dtype, group=group, heads_dim=heads_dim))
        return v

    def rows(self, arg: fx.Node) -> SSAValue:
        """A [.., K] node with at most one leading dim over 1 reshaped to [rows, K]. Read from a graph
        input, the reshape becomes the input's view (`partition._squeeze_inputs`): the matmul that reads it sees its
        rows directly (a reshape in front of it would hide the K dim from Split-K)."""
        shape = self.sizes(arg)
        rows = next((n for n in shape[:-1] if n != 1), 1)
        return self.builder.reshape(self.tensor(arg), [rows, shape[-1]])

    def as_type(self, x: SSAValue, element_type: Any) -> SSAValue:
        """`x` in `element_type` (`f16`, or an xDSL type): itself, or a `tgraph.cast` of it."""
        if str(tgraph.tensor_type(x).element_type) == str(element_type):
            return x
        y = self.builder.cast(x, element_type)
        if x in self.masks:
            self.masks.add(y)
        return y

    def tensor(self, arg: Any) -> SSAValue:
        v = self.value(arg)
        assert isinstance(v, SSAValue)
        return v

    # ------------------------------------------------------------ helpers for converters
    def shape(self, v: SSAValue) -> tuple[Any, ...]:
        return tuple(tgraph.tensor_type(v).shape)

    def rank_to(self, v: SSAValue, rank: int) -> SSAValue:
        """`v` with leading size-1 dims added up to `rank`."""
        s = self.shape(v)
        return v if len(s) >= rank else self.builder.reshape(v, [1] * (rank - len(s)) + list(s))

    def same_rank(self, a: SSAValue, b: SSAValue) -> tuple[SSAValue, SSAValue]:
        r = max(len(self.shape(a)), len(self.shape(b)))
        return self.rank_to(a, r), self.rank_to(b, r)

    def reduce(self, kind: str, x: SSAValue, dims: Sequence[int], keepdim: bool) -> SSAValue:
        rank = len(self.shape(x))
        dims = sorted({d % rank for d in dims})
        for d in dims:
            x = self.builder.reduce(kind, x, d)
        if not keepdim:
            x = self.builder.reshape(x, [s for i, s in enumerate(self.shape(x)) if i not in dims])
        return x

    def softmax(self, x: SSAValue, dim: int) -> SSAValue:
        b = self.builder
        d = dim % len(self.shape(x))
        e = b.exp(x)
        return b.div(e, b.reduce("sum", e, d))


def floor_softmax_fills(ops: Sequence[Any], masks: set[SSAValue]) -> None:
    """Raise every finite constant below `LOGIT_FLOOR` that reaches only a softmax's exp to it: a fill
    (`masked_fill(m, finfo.min)`, `where(m, s, finfo.min)`, `(1 - m) * finfo.min`) or a 0/1 mask times
    such a constant. Exact for the softmax: its masked entries stay below any real logit by far (exp
    underflows to 0) and a row masked whole stays uniform, as in PyTorch."""
    for op in ops:
        if isinstance(op, tgraph.ScalarOp) and op.scalar_kind == tgraph.ScalarKind.ADD:
            c, attr = op.value, "constant"
        elif isinstance(op, tgraph.ScaleOp) and op.input in masks:
            c, attr = op.value, "factor"
        else:
            continue
        if math.isfinite(c) and c < LOGIT_FLOOR and _reaches_only_exp(op.results[0]):
            setattr(op, attr, FloatAttr(LOGIT_FLOOR, Float64Type()))


def _reaches_only_exp(v: SSAValue) -> bool:
    """Every use of `v` leads, through ops that keep a very negative value very negative, to an exp."""
    uses = [(u.operation, u.index) for u in v.uses]
    if not uses:
        return False
    for op, i in uses:
        if isinstance(op, tgraph.ExpOp):
            continue
        keeps = (
            isinstance(op, (tgraph.AddOp, tgraph.CastOp, tgraph.ReshapeOp))
            or (isinstance(op, tgraph.SubOp) and i == 0)
            or (isinstance(op, tgraph.SelectOp) and i > 0)
            or (isinstance(op, tgraph.ScaleOp) and op.value > 0)
            or (isinstance(op, tgraph.ScalarOp) and op.scalar_kind in (tgraph.ScalarKind.ADD, tgraph.ScalarKind.SUB))
        )
        if not keeps or not _reaches_only_exp(op.results[0]):
            return False
    return True


def awkward(size: int) -> bool:
    """A size the front end declares dynamic itself: over 256 and no tile of 64 divides it (a KV
    cache of 4096 plus the new token), so its region serves the next size too. Smaller awkward
    static sizes (77, 197) are padded by `cleave compile` (`passes/padded_dims.py`)."""
    return size > 256 and padded_dims.awkward(size)


def repeat_kv_source(node: Any) -> tuple[fx.Node, int, list[fx.Node]] | None:
    """(k, n, nodes) when `node` is k [b, kvh, L, d] with each kv head repeated n times, written as
    Hugging Face's `repeat_kv`: reshape(expand(unsqueeze(k, 2), [b, kvh, n, L, d]), [b, kvh*n, L, d]),
    or, for one kv head (multi-query attention), as expand(k, [b, n, L, d])."""
    from torch import fx

    if isinstance(node, fx.Node) and _packet(node) == "aten.expand" and len(node.users) == 1:
        src, out = meta_val(node.args[0]).shape, meta_val(node).shape
        same = len(src) == 4 and len(out) == 4 and all(str(src[i]) == str(out[i]) for i in (0, 2, 3))
        if same and src[1] == 1 and isinstance(out[1], int) and out[1] > 1:
            return node.args[0], int(out[1]), [node]
        return None
    if not isinstance(node, fx.Node) or _packet(node) not in ("aten.reshape", "aten.view", "aten._unsafe_view"):
        return None
    e = node.args[0]
    if not isinstance(e, fx.Node) or _packet(e) != "aten.expand" or len(e.users) != 1:
        return None
    u = e.args[0]
    if not isinstance(u, fx.Node) or _packet(u) != "aten.unsqueeze" or len(u.users) != 1 or u.args[1] % 5 != 2:
        return None
    k = u.args[0]
    src, mid, out = meta_val(k).shape, meta_val(e).shape, meta_val(node).shape
    if len(src) != 4 or len(mid) != 5 or len(out) != 4 or len(node.users) != 1:
        return None
    n = mid[2]
    if not isinstance(n, int) or [str(x) for x in out] != [str(src[0]), str(src[1] * n), str(src[2]), str(src[3])]:
        return None
    return k, n, [u, e, node]


@dataclass(frozen=True)
class GroupedAttention:
    """An SDPA whose k and v are `repeat_kv`'d: computed per kv head with the `group` query heads
    that share it as rows ([b, kvh, group*s, d], as in examples/gqa_decode.mlir), so K and V are read
    once, not `group` times."""

    key: fx.Node
    value: fx.Node
    group: int
    repeat_nodes: list[fx.Node]
    # is_causal: the group is a dim of its own ([b, kvh, group, s, d] against K/V [b, kvh, 1, L, d],
    # as examples/gqa.mlir), since the causal mask follows each query head's positions, not the rows
    causal: bool = False


def bool_masked_attention(node: fx.Node) -> bool:
    """An SDPA with an attn_mask: its rows masked whole (False throughout, or -inf throughout in a
    float mask) are 0 in PyTorch, which the stitched op applies to the region's output, so the SDPA
    must be its region's root."""
    if _packet(node) != "aten.scaled_dot_product_attention":
        return False
    return _sdpa_args(node)["attn_mask"] is not None


def unbounded_float_mask(node: fx.Node, supported: Any) -> fx.Node | None:
    """The float attn_mask of SDPA `node` when it may hold a row that is -inf throughout: it must be
    an input of the SDPA's region, so the stitched op can zero those rows (`Region.empty_rows`), as
    PyTorch does. A mask computed from boolean or integer tensors (entering as 0/1) and finite
    constants by `supported` nodes (Hugging Face's `(1 - mask) * finfo.min`) has none: None."""
    import math

    from torch import fx

    if _packet(node) != "aten.scaled_dot_product_attention":
        return None
    mask = _sdpa_args(node)["attn_mask"]
    if mask is None or str(getattr(meta_val(mask), "dtype", None)) == "torch.bool":
        return None
    todo, seen = [mask], set()
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        seen.add(n)
        c = constant_scalar(n)
        if c is not None:
            if not math.isfinite(c):
                return mask
            continue
        val = meta_val(n)
        if val is not None and hasattr(val, "dtype") and is_mask_dtype(val.dtype):
            continue
        if n not in supported:  # a float value from outside (an input, a buffer): may hold -inf
            return mask
        for a in [*n.args, *n.kwargs.values()]:
            for x in a if isinstance(a, (list, tuple)) else [a]:
                if isinstance(x, fx.Node):
                    todo.append(x)
                elif isinstance(x, float) and not math.isfinite(x):
                    return mask
    return None


def grouped_attention(node: fx.Node) -> GroupedAttention | None:
    """The grouped form of an SDPA node over repeated kv heads (4-d, unmasked or `is_causal`), else None."""
    if _packet(node) != "aten.scaled_dot_product_attention":
        return None
    a = _sdpa_args(node)
    causal = bool(a["is_causal"])
    if a["attn_mask"] is not None or a["dropout_p"]:
        return None
    if a["enable_gqa"]:  # PyTorch's own grouping: query head h reads kv head h // group, as repeat_kv
        hq, hk, hv = (_heads(a[x]) for x in ("query", "key", "value"))
        if len(meta_val(a["query"]).shape) != 4 or None in (hq, hk) or hk != hv or hq == hk or hq % hk:
            return None
        return GroupedAttention(a["key"], a["value"], hq // hk, [], causal)
    k, v = repeat_kv_source(a["key"]), repeat_kv_source(a["value"])
    if k is None or v is None or k[1] != v[1] or k[1] < 2 or len(meta_val(a["query"]).shape) != 4:
        return None
    return GroupedAttention(k[0], v[0], k[1], sorted(k[2] + v[2], key=lambda n: list(node.graph.nodes).index(n)), causal)


def _heads(node: Any) -> int | None:
    """The static size of dim -3 (the heads of [b, h, s, d]), else None."""
    shape = getattr(meta_val(node), "shape", ())
    return int(shape[-3]) if len(shape) >= 3 and not is_symbolic(shape[-3]) else None


def _static_dim(node: fx.Node, d: int) -> int:
    val = meta_val(node)
    size = val.shape[d]
    if is_symbolic(size):
        raise Unsupported(f"dim {d} of {node.name} is dynamic (its size enters a constant)")
    return int(size)


_CONSTANT_VIEWS = ("aten.lift_fresh_copy", "aten.detach_", "aten.detach", "aten.clone", "aten.alias", "aten._to_copy", "aten.to")
"""Ops that pass a 0-d constant on (a copy, or the value in another dtype)."""


def constant_scalar(node: fx.Node) -> Any:
    """The value a 0-d constant node makes (`torch.full([], c)`, `torch.scalar_tensor(c)`: GPT-2's
    attention scale and mask value; `torch.tensor(c)` in a forward, which torch.export lifts to a
    constant attribute read through `lift_fresh_copy`: GPT-J's mask value, Gemma's sqrt(d)), else None.
    Parameters and buffers are state, not constants: None."""
    from torch import fx

    packet = _packet(node)
    if packet == "aten.full" and list(node.args[0]) == []:
        return node.args[1]
    if packet == "aten.scalar_tensor":
        return node.args[0]
    if packet not in _CONSTANT_VIEWS or not isinstance(node.args[0], fx.Node) or len(getattr(meta_val(node), "shape", (0,))) != 0:
        return None
    src = node.args[0]
    value = _lifted_constant(src) if packet == "aten.lift_fresh_copy" else constant_scalar(src)
    if value is None or packet not in ("aten._to_copy", "aten.to"):
        return value
    import torch

    dtype = meta_val(node).dtype
    return torch.tensor(value).to(dtype).item() if dtype.is_floating_point else None


def _lifted_constant(node: fx.Node) -> Any:
    """The number a 0-d tensor constant attribute (`get_attr` of neither a parameter nor a buffer) holds."""
    import torch

    gm = node.graph.owning_module
    if node.op != "get_attr" or gm is None:
        return None
    names = {n for n, _ in gm.named_parameters()} | {n for n, _ in gm.named_buffers()}
    if node.target in names:
        return None
    obj: Any = gm
    for part in str(node.target).split("."):
        obj = getattr(obj, part, None)
    if not isinstance(obj, torch.Tensor) or obj.dim() != 0 or not (obj.dtype.is_floating_point or obj.dtype == torch.int64):
        return None
    return obj.item()


def _scalar(arg: Any) -> float | None:
    """A Python number or a 0-d constant node's value (`constant_scalar`) as a float; else None."""
    from torch import fx

    if isinstance(arg, fx.Node):
        arg = constant_scalar(arg)
    return float(arg) if isinstance(arg, (int, float)) and not isinstance(arg, bool) else None


# --------------------------------------------------------------------------- converters


def _unary(name: str) -> Callable[[Emitter, fx.Node], SSAValue]:
    def conv(cx: Emitter, node: fx.Node) -> SSAValue:
        return cx.builder.unary(name, cx.tensor(node.args[0]))

    return conv


def _binary(name: str) -> Callable[[Emitter, fx.Node], SSAValue]:
    def conv(cx: Emitter, node: fx.Node) -> SSAValue:
        a, b = node.args[0], node.args[1]
        alpha = node.kwargs.get("alpha", 1)
        if alpha != 1:
            raise Unsupported(f"{name} with alpha={alpha}")
        mode = node.kwargs.get("rounding_mode", node.args[2] if len(node.args) > 2 else None)
        if mode is not None:
            raise Unsupported(f"{name} with rounding_mode={mode!r}")
        if _scalar(a) is not None and _scalar(b) is None:  # c op x (a 0-d constant first)
            c, x = _scalar(a), cx.tensor(b)
            if name == "div":
                return cx.builder.scalar("rdiv", x, c)
            if name == "mul":
                return cx.builder.scale(x, c)
            return cx.builder.scalar("rsub" if name == "sub" else name, x, c)
        if _scalar(a) is not None:
            raise Unsupported(f"{name} of two scalars")
        x = cx.tensor(a)
        c = _scalar(b)
        if c is not None:
            if name == "mul" and (keep := _inverted_mask(cx, a, x)) is not None:
                # (1 - keep) * c as select(keep, 0, c): the search draws a select condition as 0/1 (a
                # 0/1 input times finfo.min drawn from a normal overflows every rewritten softmax)
                zero = cx.builder.scale(keep, 0.0)
                return cx.builder.select(keep, zero, cx.builder.scalar("add", zero, c))
            if name == "mul":
                return cx.builder.scale(x, c)
            if name == "div":
                return cx.builder.scale(x, 1.0 / c)
            return cx.builder.scalar(name, x, c)
        y = cx.tensor(b)
        # mixed types (a float32 statistic times a bf16 activation): PyTorch computes in the promoted type
        out = element_type(meta_val(node).dtype)
        return cx.builder.binary(name, *cx.same_rank(cx.as_type(x, out), cx.as_type(y, out)))

    return conv


def _inverted_mask(cx: Emitter, node: Any, x: SSAValue) -> SSAValue | None:
    """The 0/1 mask `keep` when `x` (the value of FX `node`) is `1 - keep`, used only here
    (Hugging Face's extended attention mask `(1.0 - mask.to(dtype)) * torch.finfo(dtype).min`);
    its `scalar rsub` is erased, the caller uses `keep`."""
    from torch import fx

    op = x.owner
    if not (
        isinstance(node, fx.Node) and len(node.users) == 1 and isinstance(op, tgraph.ScalarOp)
        and op.kind.data.value == "rsub" and op.constant.value.data == 1.0 and op.input in cx.masks and not x.uses
    ):
        return None
    keep = op.input
    op.detach()
    op.erase()
    return keep


def _rsub(cx: Emitter, node: fx.Node) -> SSAValue:
    """`rsub(x, other)` = other - x (`1.0 - x` in Python)."""
    x, other = node.args[0], node.args[1]
    if node.kwargs.get("alpha", node.args[2] if len(node.args) > 2 else 1) != 1:
        raise Unsupported("rsub with alpha")
    c = _scalar(other)
    if c is not None:
        return cx.builder.scalar("rsub", cx.tensor(x), c)
    a, b = cx.tensor(other), cx.tensor(x)
    if tgraph.tensor_type(a).element_type != tgraph.tensor_type(b).element_type:
        raise Unsupported("rsub of mixed element types")
    return cx.builder.binary("sub", *cx.same_rank(a, b))


def _gelu(cx: Emitter, node: fx.Node) -> SSAValue:
    approximate = node.kwargs.get("approximate", node.args[1] if len(node.args) > 1 else "none")
    return cx.builder.gelu(cx.tensor(node.args[0]), "erf" if approximate == "none" else approximate)


def _relu(cx: Emitter, node: fx.Node) -> SSAValue:
    return cx.builder.scalar("max", cx.tensor(node.args[0]), 0.0)


def _select(cx: Emitter, cond: Any, a: Any, b: Any) -> SSAValue:
    """`where(cond, a, b)` of a boolean `cond` (a region input, entering as 0/1) and tensor or
    scalar branches: `tgraph.select`; a scalar branch is a tensor of it made from the mask (0 * m + c)."""
    from torch import fx

    if not isinstance(cond, fx.Node) or str(getattr(meta_val(cond), "dtype", None)) != "torch.bool":
        raise Unsupported("where/masked_fill with a condition that is not a boolean tensor")
    m = cx.value(cond, as_mask=True)
    assert isinstance(m, SSAValue)
    branches = [x for x in (a, b) if _scalar(x) is None]
    if not branches:
        raise Unsupported("where with two scalar branches")
    m = cx.as_type(m, tgraph.tensor_type(cx.tensor(branches[0])).element_type)

    def branch(x: Any) -> SSAValue:
        c = _scalar(x)
        return cx.tensor(x) if c is None else cx.builder.scalar("add", cx.builder.scale(m, 0.0), c)

    x, y = branch(a), branch(b)
    r = max(len(cx.shape(v)) for v in (m, x, y))
    return cx.builder.select(cx.rank_to(m, r), cx.rank_to(x, r), cx.rank_to(y, r))


def _where(cx: Emitter, node: fx.Node) -> SSAValue:
    return _select(cx, *node.args[:3])


def _masked_fill(cx: Emitter, node: fx.Node) -> SSAValue:
    x, mask, value = node.args[:3]
    return _select(cx, mask, value, x)


def _pow(cx: Emitter, node: fx.Node) -> SSAValue:
    x, e = cx.tensor(node.args[0]), _scalar(node.args[1])
    ops = {2.0: "square", 0.5: "sqrt", -0.5: "rsqrt", -1.0: "reciprocal"}
    if e == 1.0:
        return x
    if e == 3.0:  # GPT-2's gelu_new: x + 0.044715 x^3
        return cx.builder.binary("mul", x, cx.builder.unary("square", x))
    if e not in ops:
        raise Unsupported(f"pow with exponent {node.args[1]!r} (2, 3, 0.5, -0.5, -1 are supported)")
    return cx.builder.unary(ops[e], x)


def _matmul(cx: Emitter, node: fx.Node) -> SSAValue:
    a = cx.tensor(node.args[0])
    b = cx.value(node.args[1], transposed_ok=True)
    tb = isinstance(b, Transposed)
    bv = b.value if isinstance(b, Transposed) else b
    if len(cx.shape(a)) < 2 or len(cx.shape(bv)) < 2:
        raise Unsupported("matmul of a 1-d operand")
    a, bv = cx.same_rank(a, bv)
    return cx.builder.matmul(a, bv, transpose_b=tb)


def _addmm(cx: Emitter, node: fx.Node) -> SSAValue:
    """`addmm(bias, a, b, beta=1, alpha=1)` = beta * bias + alpha * (a @ b) (GPT-2's Conv1D)."""
    bias, a, b = node.args[:3]
    beta, alpha = node.kwargs.get("beta", 1), node.kwargs.get("alpha", 1)
    bv = cx.value(b, transposed_ok=True)
    y = cx.builder.matmul(cx.tensor(a), bv.value if isinstance(bv, Transposed) else bv, transpose_b=isinstance(bv, Transposed))
    if alpha != 1:
        y = cx.builder.scale(y, float(alpha))
    if beta == 0:
        return y
    c = cx.tensor(bias)
    if beta != 1:
        c = cx.builder.scale(c, float(beta))
    return cx.builder.binary("add", *cx.same_rank(y, c))


def _baddbmm(cx: Emitter, node: fx.Node) -> SSAValue:
    """`baddbmm(c, a, b, beta=1, alpha=1)` = beta * c + alpha * (a @ b), batched (Bloom's ALiBi scores)."""
    return _addmm(cx, node)


def _einsum(cx: Emitter, node: fx.Node) -> SSAValue:
    """`torch.einsum` of two operands that is a (batched) matmul: `...ij,...jk->...ik`, or with the
    second operand's last two letters swapped (`bhqd,bhkd->bhqk`: transpose_b), or either of those
    with the operands swapped; the second operand's batch letters may be a trailing part of the
    first's (`bsd,nd->bsn`: broadcast, as a linear)."""
    eq, operands = node.args[0], node.args[1]
    if not isinstance(eq, str) or len(operands) != 2 or "->" not in eq:
        raise Unsupported("einsum of other than two operands into an explicit output")
    lhs, out = eq.replace(" ", "").split("->")
    specs = lhs.split(",")
    ranks = [len(meta_val(x).shape) for x in operands]
    dots = max((r - len(sp.replace("...", "")) for sp, r in zip(specs, ranks) if "..." in sp), default=0)
    batch = "0123456789"[:dots]  # letters for the ellipsis dims, right-aligned as einsum broadcasts them

    def expand(spec: str, rank: int) -> str:
        return spec.replace("...", batch[dots - (rank - len(spec.replace("...", ""))) :]) if "..." in spec else spec

    sa, sb, so = expand(specs[0], ranks[0]), expand(specs[1], ranks[1]), out.replace("...", batch)
    for (x, sx), (y, sy) in (((operands[0], sa), (operands[1], sb)), ((operands[1], sb), (operands[0], sa))):
        transpose_b = _einsum_matmul(sx, sy, so)
        if transpose_b is not None:
            a, b = cx.same_rank(cx.tensor(x), cx.tensor(y))
            return cx.builder.matmul(a, b, transpose_b=transpose_b)
    raise Unsupported(f"einsum {eq!r} that is not a batched matmul")


def _einsum_matmul(sa: str, sb: str, so: str) -> bool | None:
    """Whether `sa,sb->so` is `matmul(a, b)` (False) or `matmul(a, b, transpose_b)` (True); None if neither."""
    if len(sa) < 2 or len(sb) < 2 or any(len(set(x)) != len(x) for x in (sa, sb, so)):
        return None
    i, j = sa[-2], sa[-1]
    if sb[-2] == j:
        k, transpose_b = sb[-1], False
    elif sb[-1] == j:
        k, transpose_b = sb[-2], True
    else:
        return None
    if so != sa[:-2] + i + k or not sa[:-2].endswith(sb[:-2]) or len({i, j, k}) != 3 or {i, j, k} & set(sa[:-2]):
        return None
    return transpose_b


def _linear(cx: Emitter, node: fx.Node) -> SSAValue:
    return _project(cx, node.args[0], node.args[1], node.args[2] if len(node.args) > 2 else node.kwargs.get("bias"))


def _project(cx: Emitter, x_node: Any, w_node: Any, bias: Any) -> SSAValue:
    """`linear(x, w, bias)` of FX nodes: x @ w^T (+ bias)."""
    from torch import fx

    if not all(isinstance(a, fx.Node) for a in (x_node, w_node)):
        raise Unsupported("linear of a non-tensor operand")
    shape = cx.sizes(x_node)
    if len(shape) < 2 or len(cx.sizes(w_node)) != 2:
        raise Unsupported("linear with a 1-d input")
    lead = shape[:-1]
    flat = len(lead) > 1 and sum(1 for d in lead if d != 1) <= 1
    # decode's [B, 1, K]: the B rows share the weight, so they are one matmul's M dim, not a batch
    x = cx.rows(x_node) if flat else cx.tensor(x_node)
    w = cx.value(w_node, transposed_ok=True)  # `F.linear(x, w.t())`: x @ w
    x, wv = cx.same_rank(x, w.value if isinstance(w, Transposed) else w)
    y = cx.builder.matmul(x, wv, transpose_b=not isinstance(w, Transposed))
    if bias is not None:
        y = cx.builder.add(*cx.same_rank(y, cx.tensor(bias)))
    return cx.builder.reshape(y, [*lead, cx.shape(y)[-1]]) if flat else y


def _transpose(cx: Emitter, node: fx.Node) -> Transposed:
    val = meta_val(node)
    rank = len(val.shape)
    target = _packet(node)
    if target in ("aten.t", "aten.numpy_T"):  # `w.T` of a 2-d w
        swapped = rank == 2
    elif target == "aten.permute":
        perm = [p % rank for p in node.args[1]]
        swapped = rank >= 2 and perm == [*range(rank - 2), rank - 1, rank - 2]
    else:
        swapped = rank >= 2 and sorted(d % rank for d in node.args[1:3]) == [rank - 2, rank - 1]
    users = list(node.users)
    if swapped and users and all(_packet(u) in (*_MATMULS, "aten.linear") and u.args[0] is not node and u.args[1] is node for u in users):
        return Transposed(cx.tensor(node.args[0]))  # read as the matmul's transpose_b
    if target in ("aten.t", "aten.numpy_T"):
        perm = list(range(rank))[::-1]
    elif target != "aten.permute":
        a, b = (d % rank for d in node.args[1:3])
        perm = list(range(rank))
        perm[a], perm[b] = perm[b], perm[a]
    return cx.builder.transpose(cx.tensor(node.args[0]), perm)


def _cut_dim(node: fx.Node, x: fx.Node, dim: int) -> int:
    """`dim` of `x` normalized; Unsupported where its size is dynamic (a cut there would be fixed at the
    example's size)."""
    shape = meta_val(x).shape
    d = dim % len(shape)
    if is_symbolic(shape[d]):
        raise Unsupported(f"{_packet(node)} along dim {d}, which is dynamic")
    return d


def _slice_of(cx: Emitter, node: fx.Node, x: fx.Node, dim: int, start: Any, end: Any) -> SSAValue:
    """`x[start:end]` along `dim` (Python's rules: None, negative and past-the-end bounds) as a
    `tgraph.slice`; the value itself where that is all of it."""
    d = _cut_dim(node, x, dim)
    n = cx.sizes(x)[d]
    if any(is_symbolic(v) or not isinstance(v, (int, type(None))) for v in (start, end)):
        raise Unsupported(f"{_packet(node) or 'slice'} with a bound that is not a constant")
    lo, hi, _ = slice(start, end).indices(n)
    if hi <= lo:
        raise Unsupported(f"{_packet(node) or 'slice'} of no elements")
    v = cx.tensor(x)
    return v if (lo, hi) == (0, n) else cx.builder.slice(v, d, lo, hi - lo)


def _slice(cx: Emitter, node: fx.Node) -> SSAValue:
    """`x[a:b]` along a dim (`aten.slice`, step 1), `narrow(x, dim, start, length)`."""
    x, dim = node.args[0], node.args[1] if len(node.args) > 1 else node.kwargs.get("dim", 0)
    if _packet(node) == "aten.narrow":
        start, length = node.args[2], node.args[3]
        if not isinstance(start, int) or not isinstance(length, int):
            raise Unsupported("narrow with a bound that is not a constant")
        if start < 0:
            start += cx.sizes(x)[_cut_dim(node, x, dim)]
        return _slice_of(cx, node, x, dim, start, start + length)
    start = node.args[2] if len(node.args) > 2 else node.kwargs.get("start")
    end = node.args[3] if len(node.args) > 3 else node.kwargs.get("end")
    step = node.args[4] if len(node.args) > 4 else node.kwargs.get("step", 1)
    if step != 1:
        raise Unsupported(f"slice with step {step} (tgraph slices are contiguous)")
    return _slice_of(cx, node, x, dim, start, end)


def _select_index(cx: Emitter, node: fx.Node) -> SSAValue:
    """`x[.., i]`: the one-element slice, its dim dropped."""
    x, dim, index = node.args[0], node.args[1], node.args[2]
    if not isinstance(index, int):
        raise Unsupported("select with an index that is not a constant")
    d = _cut_dim(node, x, dim)
    return _index(cx, node, x, d, index % cx.sizes(x)[d])


def _index(cx: Emitter, node: fx.Node, x: fx.Node, d: int, i: int) -> SSAValue:
    """Element `i` of dim `d` of `x`, that dim dropped (`select`, an `unbind` piece)."""
    return cx.builder.reshape(_slice_of(cx, node, x, d, i, i + 1), list(cx.sizes(node)) or [1])


def _cat(cx: Emitter, node: fx.Node) -> SSAValue:
    """`torch.cat(xs, dim)` as a `tgraph.concat` (empty parts dropped, as PyTorch does)."""
    parts = [p for p in node.args[0] if math.prod(cx.sizes(p)) > 0]
    dim = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim", 0)
    if not parts:
        raise Unsupported("cat of empty tensors")
    d = dim % len(meta_val(node).shape)
    for p in parts:
        _cut_dim(node, p, d)
    values = [cx.tensor(p) for p in parts]
    return values[0] if len(values) == 1 else cx.builder.concat(values, d)


def _stack(cx: Emitter, node: fx.Node) -> SSAValue:
    """`torch.stack(xs, dim)`: each part with a size-1 dim inserted there, concatenated along it."""
    parts = list(node.args[0])
    rank = len(meta_val(node).shape)
    dim = (node.args[1] if len(node.args) > 1 else node.kwargs.get("dim", 0)) % rank
    values = []
    for p in parts:
        shape = list(cx.sizes(p))
        values.append(cx.builder.reshape(cx.tensor(p), shape[:dim] + [1] + shape[dim:]))
    return values[0] if len(values) == 1 else cx.builder.concat(values, dim)


SPLITS = ("aten.split", "aten.split_with_sizes", "aten.chunk", "aten.unbind")
"""aten ops returning a list of views, whose pieces (`getitem`) a region reads as slices of their input."""


def _piece(cx: Emitter, node: fx.Node) -> SSAValue:
    """`getitem(split(x, ..), i)`, `chunk`, `unbind`: the slice of x that piece i is."""
    from torch import fx

    src, i = node.args
    if node.target is not operator.getitem or not isinstance(src, fx.Node) or not isinstance(i, int):
        raise Unsupported("getitem of other than a split, chunk or unbind")
    op = _packet(src)
    x = src.args[0]
    if op == "aten.unbind":
        dim = src.args[1] if len(src.args) > 1 else src.kwargs.get("dim", 0)
        return _index(cx, node, x, _cut_dim(node, x, dim), i)
    if op not in SPLITS:
        raise Unsupported(f"getitem of {op_name(src)} (not a split, chunk or unbind)")
    dim = src.args[2] if len(src.args) > 2 else src.kwargs.get("dim", 0)
    d = _cut_dim(node, x, dim)
    sizes = [int(piece.shape[d]) for piece in meta_val(src)]
    start = sum(sizes[:i])
    return _slice_of(cx, node, x, d, start, start + sizes[i])


def _reshape(cx: Emitter, node: fx.Node) -> SSAValue:
    src, out = meta_val(node.args[0]).shape, meta_val(node).shape
    if [str(d) for d in src if str(d) != "1"] != [str(d) for d in out if str(d) != "1"]:
        raise Unsupported("view/reshape that splits, merges or moves dims (tgraph reshape only adds or drops size-1 dims)")
    return cx.builder.reshape(cx.tensor(node.args[0]), list(cx.sizes(node)))


def _convert(cx: Emitter, node: fx.Node) -> SSAValue:
    """`x.to(dtype)`, `x.float()`, `x.type_as(y)`: a `tgraph.cast` where the element type changes (the
    float32 norms and softmaxes of Hugging Face models); a boolean mask enters as 0/1 (`Input.cast`)."""
    src, dst = meta_val(node.args[0]).dtype, meta_val(node).dtype
    x = cx.value(node.args[0], as_mask=is_mask_dtype(src))
    assert isinstance(x, SSAValue)
    return cx.as_type(x, element_type(dst))


def _identity(cx: Emitter, node: fx.Node) -> SSAValue:
    if _packet(node) == "aten.dropout" and node.args[2:3] == (True,) and node.args[1]:
        raise Unsupported("dropout in training mode")
    return cx.tensor(node.args[0])


_BROADCASTING = ("aten.add", "aten.sub", "aten.mul", "aten.div", "aten.maximum", "aten.minimum")


def _only_broadcast(node: fx.Node) -> bool:
    """Whether every user of `node` is an element-wise binary op whose other operand has `node`'s
    shape: the op's own broadcasting then gives the expanded result (`F.normalize`'s
    `norm.expand_as(x)`, divided into x)."""
    from torch import fx

    shape = [str(d) for d in meta_val(node).shape]
    for user in node.users:
        others = [a for a in user.args[:2] if a is not node]
        if _packet(user) not in _BROADCASTING or len(others) != 1 or not isinstance(others[0], fx.Node):
            return False
        if [str(d) for d in getattr(meta_val(others[0]), "shape", ())] != shape:
            return False
    return bool(node.users)


def _expand(cx: Emitter, node: fx.Node) -> SSAValue:
    """`expand`, `expand_as`: the tensor itself where nothing is broadcast, or where only element-wise
    binary ops read the broadcast (`_only_broadcast`)."""
    if [str(d) for d in meta_val(node).shape] != [str(d) for d in meta_val(node.args[0]).shape] and not _only_broadcast(node):
        raise Unsupported("expand that broadcasts (tgraph broadcasts only inside binary ops and matmul)")
    return cx.tensor(node.args[0])


def _reduce(kind: str) -> Callable[[Emitter, fx.Node], SSAValue]:
    def conv(cx: Emitter, node: fx.Node) -> SSAValue:
        x = cx.tensor(node.args[0])
        dims = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim")
        keepdim = node.args[2] if len(node.args) > 2 else node.kwargs.get("keepdim", False)
        if dims is None or dims == []:
            raise Unsupported("reduction over all dims")
        if node.kwargs.get("dtype") is not None:
            raise Unsupported("reduction with a dtype")
        dims = [dims] if isinstance(dims, int) else list(dims)
        y = cx.reduce("sum" if kind == "mean" else kind, x, dims, bool(keepdim))
        if kind == "mean":
            n = math.prod(_static_dim(node.args[0], d) for d in dims)
            y = cx.builder.scale(y, 1.0 / n)
        return y

    return conv


def _softmax(cx: Emitter, node: fx.Node) -> SSAValue:
    """Softmax over a dim. With a dtype (`softmax(x, -1, dtype=torch.float32)`, `_softmax`'s
    half_to_float) the input is cast to the result's type first, which is how PyTorch computes it."""
    return cx.softmax(cx.as_type(cx.tensor(node.args[0]), element_type(meta_val(node).dtype)), node.args[1])


def _norm_tail(cx: Emitter, node: fx.Node, y: SSAValue, weight: Any, bias: Any) -> SSAValue:
    b = cx.builder
    if weight is not None:
        y = b.mul(*cx.same_rank(y, cx.tensor(weight)))
    if bias is not None:
        y = b.add(*cx.same_rank(y, cx.tensor(bias)))
    return y


def _normalized_dim(node: fx.Node, shape: Sequence[int]) -> int:
    if len(shape) != 1:
        raise Unsupported("normalization over more than the last dim")
    return _static_dim(node.args[0], -1)


def _rms_norm(cx: Emitter, node: fx.Node) -> SSAValue:
    import torch

    args = list(node.args) + [None] * 4
    x = cx.tensor(args[0])
    weight, eps = args[2] if args[2] is not None else node.kwargs.get("weight"), args[3] if args[3] is not None else node.kwargs.get("eps")
    n = _normalized_dim(node, args[1])
    if eps is None:  # PyTorch's default: the epsilon of the type it computes in (float32 for f16 and bf16)
        dtype = meta_val(node).dtype
        eps = torch.finfo(torch.float64 if dtype == torch.float64 else torch.float32).eps
    b = cx.builder
    ms = b.scale(b.reduce("sum", b.square(x), len(cx.shape(x)) - 1), 1.0 / n)
    y = b.mul(x, b.rsqrt(b.scalar("add", ms, eps)))
    return _norm_tail(cx, node, y, weight, None)


def _moments(cx: Emitter, x: SSAValue, dims: Sequence[int], n: int, correction: int = 0, keepdim: bool = True) -> tuple[SSAValue, SSAValue]:
    """(x - mean, variance) over `dims` of `n` elements: the squared deviations summed, over
    n - `correction` (`layer_norm`, `var`, `std`)."""
    b = cx.builder
    xc = b.sub(x, b.scale(cx.reduce("sum", x, dims, True), 1.0 / n))
    return xc, b.scale(cx.reduce("sum", b.square(xc), dims, keepdim), 1.0 / (n - correction))


def _layer_norm(cx: Emitter, node: fx.Node) -> SSAValue:
    args = list(node.args) + [None] * 5
    x = cx.tensor(args[0])
    weight, bias = args[2], args[3]
    eps = args[4] if args[4] is not None else 1e-5
    n = _normalized_dim(node, args[1])
    b = cx.builder
    xc, var = _moments(cx, x, [len(cx.shape(x)) - 1], n)
    y = b.mul(xc, b.rsqrt(b.scalar("add", var, eps)))
    return _norm_tail(cx, node, y, weight, bias)


def _sdpa_args(node: fx.Node) -> dict[str, Any]:
    names = ["query", "key", "value", "attn_mask", "dropout_p", "is_causal", "scale", "enable_gqa"]
    defaults = [None, None, None, None, 0.0, False, None, False]
    a = dict(zip(names, defaults))
    a.update(zip(names, node.args))
    a.update(node.kwargs)
    return a


def _sdpa(cx: Emitter, node: fx.Node) -> SSAValue:
    a = _sdpa_args(node)
    grouped = grouped_attention(node)
    if grouped is not None:  # rows = (query head of the group, position); one K/V read per kv head
        q = cx.grouped_input(a["query"], grouped.group, heads_dim=grouped.causal)
        a.update(key=grouped.key, value=grouped.value)
        cx.output_like = a["query"]
    if a["dropout_p"]:
        raise Unsupported("attention with dropout")
    if a["is_causal"] and a["attn_mask"] is not None:
        raise Unsupported("is_causal=True with an attn_mask")
    if grouped is None:
        if a["enable_gqa"] and _heads(a["query"]) != _heads(a["key"]):
            raise Unsupported("enable_gqa with an attn_mask (grouped attention is unmasked or is_causal)")
        q = cx.tensor(a["query"])
    k, v = cx.tensor(a["key"]), cx.tensor(a["value"])
    if grouped is not None and grouped.causal:  # K/V [b, kvh, 1, L, d], broadcast over the group's heads
        k, v = (cx.builder.reshape(x, [*cx.shape(x)[:2], 1, *cx.shape(x)[2:]]) for x in (k, v))
    mask = a["attn_mask"]
    scale = a["scale"] if a["scale"] is not None else 1.0 / math.sqrt(_static_dim(a["query"], -1))
    b = cx.builder
    q, k = cx.same_rank(q, k)
    s = b.scale(b.matmul(q, k, transpose_b=True), scale)
    if a["is_causal"]:  # PyTorch's is_causal keeps key j for query i when j <= i (top-left aligned)
        padded, lengths = [], []
        for node in (a["query"], a["key"]):
            d = meta_val(node).shape[-2]
            # a symbolic length: the region makes the mask per call, at the size of the input it comes from
            # (the ops a region holds keep sequence lengths, so some input has it; the refusal is a guard)
            source = cx.size_source(d) if is_symbolic(d) else None
            if is_symbolic(d) and source is None:
                raise Unsupported(f"is_causal=True over a sequence length no region input has ({node.name})")
            lengths.append(source)
            padded.append(is_symbolic(d) or awkward(int(d)))
        rank = len(cx.shape(s))
        # an awkward length is padded (its dims dynamic): keys past it are in every query's future
        dims = [rank - 2 + i for i, p in enumerate(padded) if p]
        keep = cx.causal_input([1] * (rank - 2) + list(cx.shape(s)[-2:]), 0, dynamic=dims, lengths=[None] * (rank - 2) + lengths if any(lengths) else ())
        s = b.add(s, b.scale(b.scalar("add", keep, -1.0), -MASKED_LOGIT))
    if mask is not None and str(meta_val(mask).dtype) == "torch.bool":
        if len(meta_val(mask).shape) > len(meta_val(a["query"]).shape):
            raise Unsupported("boolean attn_mask of higher rank than the query")
        cx.empty_rows = mask  # PyTorch's 0 for a row masked whole is applied to the output (`Region.empty_rows`)
        # keep where True: select(keep, s, keep - 30000) (the fill a tensor, MASKED_LOGIT where it is
        # used); as a select condition the mask is drawn as 0/1 by the search's tests (a float input
        # drawn from a normal made every rewritten softmax overflow and be refused)
        keep = cx.value(mask, as_mask=True)
        assert isinstance(keep, SSAValue)
        fill = b.scalar("add", keep, MASKED_LOGIT)
        r = max(len(cx.shape(s)), len(cx.shape(keep)))
        s = b.select(cx.rank_to(keep, r), cx.rank_to(s, r), cx.rank_to(fill, r))
    elif mask is not None:
        fm = cx.tensor(mask)
        if fm in cx.builder.block.args:  # a row -inf throughout is 0 in PyTorch, applied to the output
            cx.empty_rows = mask
            fm = b.scalar("max", fm, LOGIT_FLOOR)  # finfo.min throughout stays a uniform row (`LOGIT_FLOOR`)
        s = b.add(*cx.same_rank(s, fm))
    p = cx.softmax(s, -1)
    p, v = cx.same_rank(p, v)
    return b.matmul(p, v)


def _safe_softmax(cx: Emitter, node: fx.Node) -> SSAValue:
    """Refused: PyTorch's `_safe_softmax` (SDPA's math path) gives 0 for a row that is -inf
    throughout, where exp(x - max(x)) / sum is NaN, and tgraph has no comparison to pick those rows."""
    raise Unsupported("_safe_softmax is 0 on rows that are -inf throughout (ours would be NaN there)")


def _arg(node: fx.Node, i: int, name: str, default: Any = None) -> Any:
    """Argument `i` of `node`, given by position or as keyword `name`."""
    return node.args[i] if len(node.args) > i else node.kwargs.get(name, default)


def _clamp(cx: Emitter, node: fx.Node) -> SSAValue:
    """`clamp(x, min, max)` (and `clamp_min`, `clamp_max`, `hardtanh`, `relu6`): scalar or tensor bounds
    as `max` then `min`, as PyTorch applies them (min wins where min > max)."""
    op = _packet(node)
    x = cx.tensor(node.args[0])
    if op == "aten.hardtanh":
        lo, hi = _arg(node, 1, "min_val", -1.0), _arg(node, 2, "max_val", 1.0)
    elif op == "aten.relu6":
        lo, hi = 0.0, 6.0
    elif op == "aten.clamp_min":
        lo, hi = _arg(node, 1, "min"), None
    elif op == "aten.clamp_max":
        lo, hi = None, _arg(node, 1, "max")
    else:
        lo, hi = _arg(node, 1, "min"), _arg(node, 2, "max")
    for bound, kind in ((lo, "max"), (hi, "min")):
        if bound is None:
            continue
        c = _scalar(bound)
        if c is not None:
            x = cx.builder.scalar(kind, x, c)
        else:
            x = cx.builder.binary(kind, *cx.same_rank(x, cx.as_type(cx.tensor(bound), tgraph.tensor_type(x).element_type)))
    return x


def _leaky_relu(cx: Emitter, node: fx.Node) -> SSAValue:
    """`leaky_relu(x, slope)` = max(x, slope * x) for 0 <= slope <= 1."""
    slope = float(_arg(node, 1, "negative_slope", 0.01))
    if not 0.0 <= slope <= 1.0:
        raise Unsupported(f"leaky_relu with negative_slope={slope} (0..1 are supported)")
    x = cx.tensor(node.args[0])
    return cx.builder.binary("max", x, cx.builder.scale(x, slope))


def _elu_of(cx: Emitter, x: SSAValue, alpha: float, scale: float = 1.0) -> SSAValue:
    """scale * (max(x, 0) + alpha * (exp(min(x, 0)) - 1)): exp never sees a positive input."""
    b = cx.builder
    neg = b.scale(b.scalar("add", b.exp(b.scalar("min", x, 0.0)), -1.0), alpha)
    y = b.add(b.scalar("max", x, 0.0), neg)
    return b.scale(y, scale) if scale != 1.0 else y


def _elu(cx: Emitter, node: fx.Node) -> SSAValue:
    """`elu(x, alpha, scale, input_scale)`, of input_scale * x."""
    alpha, scale, input_scale = (float(_arg(node, i, n, 1.0)) for i, n in ((1, "alpha"), (2, "scale"), (3, "input_scale")))
    x = cx.tensor(node.args[0])
    return _elu_of(cx, cx.builder.scale(x, input_scale) if input_scale != 1.0 else x, alpha, scale)


def _selu(cx: Emitter, node: fx.Node) -> SSAValue:
    """`selu(x)`: `elu` with SELU's alpha and scale."""
    return _elu_of(cx, cx.tensor(node.args[0]), 1.6732632423543772, 1.0507009873554805)


def _softplus_of(cx: Emitter, x: SSAValue, beta: float = 1.0) -> SSAValue:
    """log(1 + exp(beta x)) / beta as max(x, 0) + log(1 + exp(-|beta x|)) / beta: no overflow. PyTorch
    returns x past its threshold (beta x > 20), where the two differ by under 2e-9 relatively."""
    b = cx.builder
    bx = b.scale(x, beta) if beta != 1.0 else x
    tail = b.log(b.scalar("add", b.exp(b.neg(b.abs(bx))), 1.0))
    return b.add(b.scalar("max", x, 0.0), b.scale(tail, 1.0 / beta) if beta != 1.0 else tail)


def _softplus(cx: Emitter, node: fx.Node) -> SSAValue:
    beta = float(_arg(node, 1, "beta", 1.0))
    if beta <= 0:
        raise Unsupported(f"softplus with beta={beta} (positive betas are supported)")
    return _softplus_of(cx, cx.tensor(node.args[0]), beta)


def _mish(cx: Emitter, node: fx.Node) -> SSAValue:
    """`mish(x)` = x * tanh(softplus(x))."""
    x = cx.tensor(node.args[0])
    return cx.builder.mul(x, cx.builder.tanh(_softplus_of(cx, x)))


def _hardsigmoid_of(cx: Emitter, x: SSAValue) -> SSAValue:
    b = cx.builder
    return b.scalar("min", b.scalar("max", b.scalar("add", b.scale(x, 1.0 / 6.0), 0.5), 0.0), 1.0)


def _hardsigmoid(cx: Emitter, node: fx.Node) -> SSAValue:
    """`hardsigmoid(x)` = clamp(x / 6 + 1/2, 0, 1)."""
    return _hardsigmoid_of(cx, cx.tensor(node.args[0]))


def _hardswish(cx: Emitter, node: fx.Node) -> SSAValue:
    """`hardswish(x)` = x * hardsigmoid(x) (MobileNetV3)."""
    x = cx.tensor(node.args[0])
    return cx.builder.mul(x, _hardsigmoid_of(cx, x))


def _reduced_dims(node: fx.Node, i: int = 1) -> list[int]:
    dims = _arg(node, i, "dim")
    if dims is None or dims == []:
        raise Unsupported(f"{_packet(node)} over all dims")
    return [dims] if isinstance(dims, int) else list(dims)


def _var(cx: Emitter, node: fx.Node) -> SSAValue:
    """`var(x, dim, correction, keepdim)` (and `std`): the mean of the squared deviations from the
    mean, times n / (n - correction) (`unbiased` is correction 1, PyTorch's default)."""
    x = cx.tensor(node.args[0])
    dims = _reduced_dims(node)
    if getattr(node.target, "_overloadname", "") == "dim":  # var.dim(x, dim, unbiased, keepdim)
        correction = 1 if _arg(node, 2, "unbiased", True) else 0
        keepdim = bool(_arg(node, 3, "keepdim", False))
    else:  # var.correction(x, dim, *, correction, keepdim)
        correction = node.kwargs.get("correction")
        correction = 1 if correction is None else correction
        keepdim = bool(node.kwargs.get("keepdim", False))
    n = math.prod(_static_dim(node.args[0], d) for d in dims)
    if n - correction <= 0:
        raise Unsupported(f"{_packet(node)} of {n} elements with correction {correction}")
    _, v = _moments(cx, x, dims, n, correction, keepdim)
    return cx.builder.sqrt(v) if _packet(node) == "aten.std" else v


def _vector_norm(cx: Emitter, node: fx.Node) -> SSAValue:
    """`linalg_vector_norm(x, ord, dim, keepdim)` for ord 2 (sqrt of the sum of squares), 1 (sum of
    |x|) and inf (max of |x|): `torch.norm`, `F.normalize`."""
    order = float(_arg(node, 1, "ord", 2))
    dims = _reduced_dims(node, 2)
    keepdim = bool(_arg(node, 3, "keepdim", False))
    if node.kwargs.get("dtype") is not None:
        raise Unsupported("linalg_vector_norm with a dtype")
    x, b = cx.tensor(node.args[0]), cx.builder
    if order == 2.0:
        return b.sqrt(cx.reduce("sum", b.square(x), dims, keepdim))
    if order == 1.0:
        return cx.reduce("sum", b.abs(x), dims, keepdim)
    if order == math.inf:
        return cx.reduce("max", b.abs(x), dims, keepdim)
    raise Unsupported(f"linalg_vector_norm of order {order} (2, 1 and inf are supported)")


def _logsumexp_of(cx: Emitter, x: SSAValue, dim: int) -> tuple[SSAValue, SSAValue, SSAValue]:
    """(m, x - m, log(sum(exp(x - m)))) along `dim`, m the max (kept dim)."""
    b = cx.builder
    d = dim % len(cx.shape(x))
    m = b.reduce("max", x, d)
    shifted = b.sub(x, m)
    return m, shifted, b.log(b.reduce("sum", b.exp(shifted), d))


def _logsumexp(cx: Emitter, node: fx.Node) -> SSAValue:
    """`logsumexp(x, dim, keepdim)` = m + log(sum(exp(x - m))), m the max over `dim` (one dim), held at
    or above a finite floor (the element type's lowest value, at most `LOGIT_FLOOR`): a row that is -inf
    throughout (a masked-out row) then gives -inf, as in PyTorch, not -inf - -inf = NaN."""
    dims = _reduced_dims(node)
    if len(dims) != 1:
        raise Unsupported("logsumexp over several dims")
    x, b = cx.tensor(node.args[0]), cx.builder
    d = dims[0] % len(cx.shape(x))
    import torch

    floor = max(float(torch.finfo(meta_val(node).dtype).min), LOGIT_FLOOR)
    m = b.scalar("max", b.reduce("max", x, d), floor)
    y = b.add(m, b.log(b.reduce("sum", b.exp(b.sub(x, m)), d)))
    return y if _arg(node, 2, "keepdim", False) else cx.builder.reshape(y, [s for i, s in enumerate(cx.shape(y)) if i != d])


def _log_softmax(cx: Emitter, node: fx.Node) -> SSAValue:
    """`log_softmax(x, dim)` = (x - m) - log(sum(exp(x - m))); with a dtype (`_log_softmax`'s
    half_to_float) the input is cast to the result's type first."""
    x = cx.as_type(cx.tensor(node.args[0]), element_type(meta_val(node).dtype))
    _, shifted, lse = _logsumexp_of(cx, x, node.args[1])
    return cx.builder.sub(shifted, lse)


def _addcmul(cx: Emitter, node: fx.Node) -> SSAValue:
    """`addcmul(x, t1, t2, value)` = x + value * t1 * t2."""
    b = cx.builder
    prod = b.mul(*cx.same_rank(cx.tensor(node.args[1]), cx.tensor(node.args[2])))
    value = float(node.kwargs.get("value", 1.0))
    if value != 1.0:
        prod = b.scale(prod, value)
    return b.add(*cx.same_rank(cx.tensor(node.args[0]), prod))


def _lerp(cx: Emitter, node: fx.Node) -> SSAValue:
    """`lerp(x, y, w)` = x + w * (y - x), a scalar or tensor weight."""
    b = cx.builder
    x, y, w = cx.tensor(node.args[0]), cx.tensor(node.args[1]), node.args[2]
    step = b.sub(*cx.same_rank(y, x))
    c = _scalar(w)
    step = b.scale(step, c) if c is not None else b.mul(*cx.same_rank(step, cx.tensor(w)))
    return b.add(*cx.same_rank(x, step))


_MATMULS = ("aten.matmul", "aten.mm", "aten.bmm")

ELEMENTWISE = frozenset(
    f"aten.{n}"
    for n in (
        "exp", "sqrt", "rsqrt", "neg", "silu", "sigmoid", "square", "reciprocal", "tanh", "log", "abs", "exp2", "gelu",
        "relu", "where", "masked_fill", "minimum", "maximum", "pow", "add", "sub", "rsub", "mul", "div", "clamp",
        "clamp_min", "clamp_max", "hardtanh", "relu6", "leaky_relu", "elu", "selu", "softplus", "mish", "hardsigmoid",
        "hardswish", "addcmul", "lerp", "_to_copy", "to", "type_as",
    )
)
"""aten ops of `ATEN` that compute each output element from the same element of their (broadcast)
inputs: where a projection's piece goes only to these, a region may compute the piece itself."""


ATEN: dict[str, Callable[[Emitter, Any], SSAValue | Transposed]] = {
    "aten.matmul": _matmul,
    "aten.mm": _matmul,
    "aten.bmm": _matmul,
    "aten.linear": _linear,
    "aten.addmm": _addmm,
    "aten.baddbmm": _baddbmm,
    "aten.einsum": _einsum,
    "aten.slice": _slice,
    "aten.narrow": _slice,
    "aten.select": _select_index,
    "aten.cat": _cat,
    "aten.stack": _stack,
    "aten.concat": _cat,
    "getitem": _piece,
    "aten.t": _transpose,
    "aten.numpy_T": _transpose,
    "aten.transpose": _transpose,
    "aten.permute": _transpose,
    "aten.exp": _unary("exp"),
    "aten.sqrt": _unary("sqrt"),
    "aten.rsqrt": _unary("rsqrt"),
    "aten.neg": _unary("neg"),
    "aten.silu": _unary("silu"),
    "aten.sigmoid": _unary("sigmoid"),
    "aten.square": _unary("square"),
    "aten.reciprocal": _unary("reciprocal"),
    "aten.tanh": _unary("tanh"),
    "aten.log": _unary("log"),
    "aten.abs": _unary("abs"),
    "aten.exp2": _unary("exp2"),
    "aten.gelu": _gelu,
    "aten.relu": _relu,
    "aten.where": _where,
    "aten.masked_fill": _masked_fill,
    "aten.minimum": _binary("min"),
    "aten.pow": _pow,
    "aten.add": _binary("add"),
    "aten.sub": _binary("sub"),
    "aten.rsub": _rsub,
    "aten.mul": _binary("mul"),
    "aten.div": _binary("div"),
    "aten.maximum": _binary("max"),
    "aten.sum": _reduce("sum"),
    "aten.amax": _reduce("max"),
    "aten.mean": _reduce("mean"),
    "aten.softmax": _softmax,
    "aten._softmax": _softmax,
    "aten._safe_softmax": _safe_softmax,
    "aten.view": _reshape,
    "aten.reshape": _reshape,
    "aten._unsafe_view": _reshape,
    "aten.unsqueeze": _reshape,
    "aten.squeeze": _reshape,
    "aten.expand": _expand,
    "aten.clone": _identity,
    "aten.contiguous": _identity,
    "aten.alias": _identity,
    "aten.detach": _identity,
    "aten._to_copy": _convert,
    "aten.to": _convert,
    "aten.type_as": _convert,
    "aten.dropout": _identity,
    "aten.layer_norm": _layer_norm,
    "aten.rms_norm": _rms_norm,
    "aten.scaled_dot_product_attention": _sdpa,
    "aten.clamp": _clamp,
    "aten.clamp_min": _clamp,
    "aten.clamp_max": _clamp,
    "aten.hardtanh": _clamp,
    "aten.relu6": _clamp,
    "aten.leaky_relu": _leaky_relu,
    "aten.elu": _elu,
    "aten.selu": _selu,
    "aten.softplus": _softplus,
    "aten.mish": _mish,
    "aten.hardsigmoid": _hardsigmoid,
    "aten.hardswish": _hardswish,
    "aten.var": _var,
    "aten.std": _var,
    "aten.linalg_vector_norm": _vector_norm,
    "aten.logsumexp": _logsumexp,
    "aten.log_softmax": _log_softmax,
    "aten._log_softmax": _log_softmax,
    "aten.addcmul": _addcmul,
    "aten.lerp": _lerp,
    "aten.expand_as": _expand,
}

VIEWS = frozenset(name for name, convert_node in ATEN.items() if convert_node in (_reshape, _transpose, _expand, _identity, _convert))
"""aten ops of `ATEN` that pass their input's values on (views, copies, casts): read through them to
find where a value comes from."""
"""aten op (packet name) -> converter. Ops not listed stay in PyTorch."""


def _packet(node: fx.Node) -> str | None:
    """`aten.linear` for `torch.ops.aten.linear.default`; None for non-aten targets."""
    packet = getattr(node.target, "overloadpacket", None)
    if packet is None or getattr(node.target, "namespace", None) != "aten":
        return None
    return f"aten.{packet.__name__}"


def op_name(node: fx.Node) -> str:
    """The node's op for reports: `aten.linear`, else the FX target's name (a chunked projection's
    piece: `aten.linear` of its weight rows)."""
    if SLICED_LINEAR in node.meta:
        return "aten.linear (chunk)"
    return _packet(node) or (node.target if isinstance(node.target, str) else getattr(node.target, "__name__", str(node.target)))


def _sliced_linear(cx: Emitter, node: fx.Node) -> SSAValue:
    """A piece of a chunked projection as `linear` of its input over the weight's row slice
    (`capture.slice_chunked_projections`): x @ W[a:b]^T (+ bias[a:b])."""
    return _project(cx, *node.meta[SLICED_LINEAR])


def convert(cx: Emitter, node: fx.Node) -> SSAValue | Transposed:
    """Emit `node` into `cx`; Unsupported when the table lacks its op or the converter refuses it."""
    if node.op != "call_function":
        raise Unsupported(f"{node.op} node")
    if SLICED_LINEAR in node.meta:
        out = _sliced_linear(cx, node)
        cx.env[node] = out
        return out
    if CHUNKED in node.meta:
        raise Unsupported("a chunked projection: its regions compute its pieces from the weight's rows")
    name = "getitem" if node.target is operator.getitem else _packet(node)
    if name is None:
        raise Unsupported(f"{op_name(node)} is not an aten op")
    if constant_scalar(node) is not None:
        raise Unsupported("a 0-d constant: the regions that use it read its value as a scalar")
    if name not in ATEN:
        raise Unsupported(f"{name} is not in the aten->tgraph table")
    val = meta_val(node)
    if not hasattr(val, "shape") or not hasattr(val, "dtype"):
        raise Unsupported(f"{name} does not return one tensor")
    if len(val.shape) == 0:
        raise Unsupported(f"{name} returns a 0-d tensor (tgraph tensors have a dim)")
    element_type(val.dtype)
    try:
        out = ATEN[name](cx, node)
    except Unsupported:
        raise
    except Exception as e:  # a verifier refused what the converter built: the op is outside tgraph's rules
        lines = [l.strip() for l in str(e).splitlines() if l.strip()]
        raise Unsupported(f"{name}: {lines[-1] if lines else type(e).__name__}") from None
    cx.env[node] = out
    return out
