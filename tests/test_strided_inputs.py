"""Kernel inputs that are strided views (a transposed q, k, v): the emitted module reads them in place.

Every input of an emitted kernel is a `T.StridedTensor` whose outer strides are symbols; the module's
`prim_func(name, layouts)` specializes them (dense row-major by default, the code of a `T.Tensor`), and
`run` compiles each kernel once per layout of its inputs, copying only tensors it cannot read in place.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
tilelang = pytest.importorskip("tilelang")

from cleave_ir.tilelang_check import load_module_file  # noqa: E402

GOLDEN = Path(__file__).resolve().parent / "golden"
DENSE = re.compile(r'T\.StridedTensor\((\([^()]*\)), \([^()]*\), ("[a-z0-9]+")\)')


@pytest.fixture(scope="module")
def mha() -> Any:
    return load_module_file(GOLDEN / "mha.py")


@pytest.fixture(scope="module")
def mha_dense_lowered(mha: Any) -> dict[str, Any]:
    """Each kernel of `mha` as `prim_func(name)` gives it (dense inputs) lowered for sm_90a (shared:
    two tests read them)."""
    from tilelang import tvm

    with tvm.target.Target({"kind": "cuda", "arch": "sm_90a"}):
        return {name: tilelang.lower(mha.prim_func(name)) for name in mha.KERNELS}


def test_dense_specialization_is_the_code_of_dense_tensors(mha: Any, mha_dense_lowered: dict[str, Any], tmp_path: Path) -> None:
    """`prim_func(name)` lowers to exactly the CUDA of the kernel declared with `T.Tensor` inputs."""
    from tilelang import tvm

    text = (GOLDEN / "mha.py").read_text()
    assert "T.StridedTensor((1, 4, 512, 128), (q_stride0, q_stride1, q_stride2, 1)" in text
    path = tmp_path / "mha_dense.py"
    path.write_text(DENSE.sub(r"T.Tensor(\1, \2)", text))
    dense = load_module_file(path)
    with tvm.target.Target({"kind": "cuda", "arch": "sm_90a"}):
        for name in mha.KERNELS:
            assert _unsuffixed(mha_dense_lowered[name].kernel_source) == _unsuffixed(tilelang.lower(getattr(dense, name)).kernel_source)


def _unsuffixed(cuda: str) -> str:
    """CUDA source with the names TVM makes unique per process (an all-reduce's `workspace`, `workspace_1`, ...)
    written alike: which suffix a lowering gets depends on what the process lowered before."""
    return re.sub(r"\bworkspace(_\d+)?\b", "workspace", cuda)


def test_specialized_strides_reach_the_buffers_and_the_code(mha: Any, mha_dense_lowered: dict[str, Any]) -> None:
    """A head-transposed layout ([b, s, h, d] memory seen as [b, h, s, d]) binds the buffers' strides
    and changes the lowered code (the global loads' address arithmetic, or the host's TMA descriptors)."""
    from tilelang import tvm

    name = next(iter(mha.KERNELS))
    heads = (4 * 512 * 128, 128, 4 * 128)  # q of shape [1, 4, 512, 128] viewed from [1, 512, 4, 128]
    func = mha.prim_func(name, (heads, None, heads))
    strides = [[int(s) for s in func.buffer_map[p].strides] for p in func.params[:3]]
    assert strides == [[*heads, 1], [4 * 512 * 128, 512 * 128, 128, 1], [*heads, 1]]
    with tvm.target.Target({"kind": "cuda", "arch": "sm_90a"}):
        strided, dense = tilelang.lower(func), mha_dense_lowered[name]
    assert (strided.kernel_source, str(strided.host_mod)) != (dense.kernel_source, str(dense.host_mod))


def test_layout_of_views(mha: Any) -> None:
    """Which tensors a kernel reads in place (their outer strides), and which it gets a copy of."""
    x = torch.empty(1, 512, 4, 128, dtype=torch.float16)
    assert mha.layout(x) is None
    assert mha.layout(x.transpose(1, 2)) == (4 * 512 * 128, 128, 512)  # the size-1 batch dim: its dense stride
    y = torch.empty(2, 512, 4, 128, dtype=torch.float16).transpose(1, 2)
    assert mha.layout(y) == (512 * 4 * 128, 128, 512)
    assert mha.layout(x.transpose(-1, -2)) == "copy"  # the last stride is not 1
    assert mha.layout(torch.empty(1, 1, 512, 128, dtype=torch.float16).expand(1, 4, 512, 128)) == "copy"  # stride 0
    assert mha.layout(torch.empty(512 * 128 + 1, dtype=torch.float16)[1:].view(512, 128)) == "copy"  # 2-byte aligned
    assert mha.layout(torch.empty(256, dtype=torch.float16)[::2]) == "copy"  # a strided vector
    assert mha.layout(torch.empty(512, 136, dtype=torch.float16)[:, :128]) == (136,)  # 272-byte rows
    assert mha.layout(torch.empty(512, 130, dtype=torch.float16)[:, :128]) == "copy"  # 260-byte rows: no TMA


def test_run_reads_views_in_place_and_copies_the_rest(mha: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """`run` compiles for the inputs' layouts and passes views unchanged; a tensor it cannot read in
    place reaches the kernel as a dense copy; `out=` (any layout) is written by the kernel itself;
    past `MAX_LAYOUTS` layouts of one kernel, views are copied (a stand-in `tilelang.compile` records
    the strides each compiled kernel was specialized to, and what it gets)."""
    seen: list[tuple[list[list[int]], list[Any]]] = []
    name = next(iter(mha.KERNELS))

    def fake_compile(func: Any, out_idx: Any = None, target: str = "cuda", pass_configs: Any = None) -> Any:
        strides = [[int(s) for s in func.buffer_map[p].strides] for p in func.params]

        def kernel(*args: Any) -> Any:
            seen.append((strides, list(args)))
            if out_idx is None:
                args[-1].fill_(1.0)
                return None
            return torch.zeros(mha.KERNELS[name]["shapes"][-1], dtype=torch.float16)

        return kernel

    monkeypatch.setattr(mha.tilelang, "compile", fake_compile)
    monkeypatch.setattr(mha, "_compiled", {})
    dense = [4 * 512 * 128, 512 * 128, 128, 1]
    heads = [4 * 512 * 128, 128, 512, 1]  # [1, 4, 512, 128] seen in [1, 512, 4, 128] memory
    base = torch.randn(1, 512, 4, 128).half()
    q, k = base.transpose(1, 2), torch.randn(1, 4, 512, 128).half()
    v = torch.randn(1, 4, 128, 512).half().transpose(-1, -2)
    mha.run(q, k, v)
    strides, args = seen[-1]
    assert strides == [heads, dense, dense, dense]
    assert args[0] is q and args[1] is k
    assert args[2].is_contiguous() and torch.equal(args[2], v)
    mha.run(*(t.contiguous() for t in (q, k, v)))
    assert seen[-1][0] == [dense] * 4 and len(mha._compiled) == 2  # dense inputs: the module's default kernel
    out = torch.zeros(1, 512, 4, 128, dtype=torch.float16).transpose(1, 2)
    assert mha.run(q, k, v, out=out) is out and bool((out == 1).all())  # the kernel wrote `out` itself
    assert seen[-1][0] == [heads, dense, dense, heads] and seen[-1][1][-1] is out
    for n in range(1, 1 + mha.MAX_LAYOUTS):  # more layouts: row strides of wider tensors (q the first heads)
        wide = torch.randn(1, 512, 4 + n, 128).half()[:, :, :4].transpose(1, 2)
        mha.run(wide, k, k)
    assert sum(any(key[1]) for key in mha._compiled) == mha.MAX_LAYOUTS
    assert seen[-1][0] == [dense] * 4 and seen[-1][1][0].is_contiguous()  # the last one: copied


def test_run_compiles_without_tma_where_tensor_maps_cannot_take_the_rows(mha: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A tensor whose rows are not a multiple of 16 bytes (a dynamic width of 127 halves) gets a
    kernel compiled with thread copies (`tl.disable_tma_lower`): TMA's host-side descriptor refuses
    such strides and the launch fails (a [333, 64] x [64, 777] x [777, 48] chain on the H200). A kernel
    whose own output TMA cannot map fails the same way before it launches: `run` then compiles it
    without TMA once and keeps that kernel for the layout."""
    configs: list[dict[str, Any]] = []
    refuse = {"tma": False}
    name = next(iter(mha.KERNELS))

    def fake_compile(func: Any, out_idx: Any = None, target: str = "cuda", pass_configs: Any = None) -> Any:
        configs.append(dict(pass_configs or {}))
        no_tma = bool((pass_configs or {}).get("tl.disable_tma_lower"))

        def kernel(*args: Any) -> Any:
            if refuse["tma"] and not no_tma:
                raise RuntimeError("Error: Failed to initialize the TMA descriptor out0_desc")
            return torch.zeros(mha.KERNELS[name]["shapes"][-1], dtype=torch.float16)

        return kernel

    monkeypatch.setattr(mha.tilelang, "compile", fake_compile)
    monkeypatch.setattr(mha, "_compiled", {})
    q, k, v = (torch.randn(1, 4, 512, 128).half() for _ in range(3))
    assert mha.tma_maps([q, k, v]) and not mha.tma_maps([torch.randn(1, 4, 512, 127).half()])
    # a column of row statistics ([T, 1]) is a vector; rows of 3 halves are not 16-byte multiples
    assert mha.tma_maps([torch.randn(17, 1).half()]) and not mha.tma_maps([torch.randn(17, 3, 1).half()])
    # a tensor map has the dims of size 1 too: a decode step's [1, 1, 1, 18] mask has 36-byte strides
    assert not mha.tma_maps([torch.randn(1, 1, 1, 18).half()]) and mha.tma_maps([torch.randn(1, 1, 1, 24).half()])
    assert mha.layout(torch.randn(1, 1, 2, 18).half()[:, :, :1]) is None  # (a view's size-1 dim: its dense stride)
    mha.run(q, k, v)
    assert not configs[-1].get("tl.disable_tma_lower")
    mha.run(q, k, torch.randn(1, 4, 512, 127).half())  # rows of 254 bytes
    assert configs[-1].get("tl.disable_tma_lower") is True and configs[-1]["tl.enable_fast_math"] is True
    assert configs[-1]["tl.disable_warp_specialized"] is True  # its loads would take TMA regardless
    monkeypatch.setattr(mha, "_compiled", {})
    refuse["tma"] = True
    compiled = len(configs)
    mha.run(q, k, v)  # the TMA kernel fails on the host; the thread-copy one runs
    assert [c.get("tl.disable_tma_lower", False) for c in configs[compiled:]] == [False, True]
    with pytest.raises(RuntimeError, match="out of memory"):
        monkeypatch.setattr(mha, "_compiled", {(name, ()): lambda *a: (_ for _ in ()).throw(RuntimeError("CUDA out of memory"))})
        mha.run(q, k, v)  # any other failure is the caller's


def test_run_replays_its_decisions_for_tensors_of_the_same_signature(mha: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A second call with tensors of the same shapes, strides, dtypes and alignment runs the kernels
    the first one chose without deciding again (no `layout` calls): a tensor it cannot read in place
    is still copied, once, and a later kernel's passthrough gets that copy; a new signature, `out=`,
    or a `_compiled` that no longer holds those kernels decides again. (Two stand-in kernels: a split
    whose combine also reads the input x.)"""
    calls: list[tuple[str, list[Any]]] = []

    def split(x: Any, y: Any) -> list[Any]:
        calls.append(("split", [x, y]))
        return [x + y, x * y]

    def combine(s: Any, t: Any, x: Any, *out: Any) -> Any:
        calls.append(("combine", [s, t, x, *out]))
        return out[0].copy_(s + t + x) if out else s + t + x

    kernels = {
        "k_split": {"inputs": 2, "outputs": 2, "input_names": ["x", "y"], "passthrough": [], "output_names": ["s", "t"]},
        "k_combine": {"inputs": 3, "outputs": 1, "input_names": ["s", "t", "x"], "passthrough": ["x"], "output_names": ["o"]},
    }
    monkeypatch.setattr(mha, "KERNELS", kernels)
    monkeypatch.setattr(mha, "CANDIDATES", [(1.0, ["k_split", "k_combine"], "g")])
    compiled = {("k_split", ()): split, ("k_combine", ()): combine, ("k_combine", (), "into"): combine}
    monkeypatch.setattr(mha, "_compiled", dict(compiled))
    monkeypatch.setattr(mha, "_plans", {})
    decided: list[Any] = []
    layout = mha.layout
    monkeypatch.setattr(mha, "layout", lambda x: decided.append(x) or layout(x))
    x, y = torch.randn(64, 32).t(), torch.randn(32, 64)  # x: a last stride of 64, copied
    want = (x + y) + (x * y) + x
    for _ in range(2):
        calls.clear()
        assert torch.equal(mha.run(x, y), want)
        assert [c[0] for c in calls] == ["split", "combine"]
        (_, (x_in, y_in)), (_, (_, _, x_pass)) = calls
        assert x_in is not x and x_in.is_contiguous() and y_in is y and x_pass is x_in
        assert len(decided) == 5  # the first call's 2 + 3 arguments; the second decides nothing
    assert len(mha._plans) == 1
    mha.run(x.contiguous(), y)  # another signature: decided again
    assert len(decided) == 10 and len(mha._plans) == 2
    seen = len(decided)
    out = torch.empty(32, 64)
    for _ in range(2):
        calls.clear()
        assert mha.run(x, y, out=out) is out and torch.equal(out, want) and calls[-1][1][-1] is out
    assert len(decided) == seen + 6  # the first call with `out`: its 5 arguments and `out`
    seen = len(decided)
    monkeypatch.setattr(mha, "_compiled", {k: (lambda *a, f=f: f(*a)) for k, f in compiled.items()})
    assert torch.equal(mha.run(x, y), want) and len(decided) == seen + 5  # other kernels now: decided again


def test_the_gpu_check_launches_as_run_does(mha: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """`cleave compile --gpu` checks a candidate through `runtime.run_poisoned` with kernels it
    compiled in parallel; where the module's `tma_maps` refuses the tensors, the check runs the
    thread-copy kernels too (before, a [64, 777] operand failed every candidate of its graph)."""
    from cleave_ir import runtime

    configs: list[dict[str, Any]] = []
    name = next(iter(mha.KERNELS))
    shape = mha.KERNELS[name]["shapes"][-1]

    def fake_compile(func: Any, out_idx: Any = None, target: str = "cuda", pass_configs: Any = None) -> Any:
        configs.append(dict(pass_configs or {}))
        return lambda *args: args[-1].fill_(2.0) if out_idx is None else torch.zeros(shape, dtype=torch.float16)

    monkeypatch.setattr(mha.tilelang, "compile", fake_compile)
    monkeypatch.setattr(mha, "_compiled", {})
    xs = [torch.randn(*s).half() for s in mha.KERNELS[name]["shapes"][:3]]
    prebuilt = lambda *args: args[-1].fill_(1.0)  # noqa: E731 - the check's own raw kernel
    (got,) = runtime.run_poisoned(mha, [name], xs, {}, prebuilt)
    assert bool((got == 1).all()) and not configs  # aligned: the kernels it was given
    monkeypatch.setattr(mha, "tma_maps", lambda tensors: False)
    (got,) = runtime.run_poisoned(mha, [name], xs, {}, prebuilt)
    assert bool((got == 2).all()) and configs[-1].get("tl.disable_tma_lower") is True


def test_the_gpu_check_reads_views_as_run_does(mha: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check of `cleave compile --gpu` (`runtime.run_poisoned`) gives kernels the views `run` gives
    them (a graph's boundary: a transposed or sliced input) compiled for their layout, or copies. A
    stand-in `tilelang.compile` refuses arguments whose strides are not its buffers', as TileLang's
    launcher does on a GPU: before, every candidate of a graph with boundary views failed there."""
    import importlib.util
    import sys

    from cleave_ir import runtime

    spec = importlib.util.spec_from_file_location("gpu_suite", GOLDEN.parent.parent / "bench" / "gpu_suite.py")
    assert spec is not None and spec.loader is not None
    gpu_suite = sys.modules.get("gpu_suite") or importlib.util.module_from_spec(spec)
    if "gpu_suite" not in sys.modules:
        sys.modules["gpu_suite"] = gpu_suite
        spec.loader.exec_module(gpu_suite)
    name = next(iter(mha.KERNELS))

    def fake_compile(func: Any, out_idx: Any = None, target: str = "cuda", pass_configs: Any = None) -> Any:
        want = [[int(s) for s in func.buffer_map[p].strides] for p in func.params]

        def kernel(*args: Any) -> Any:
            for w, x in zip(want, args):
                if any(a != b for a, b, n in zip(w, x.stride(), x.shape) if n > 1):
                    raise ValueError(f"stride mismatch: {list(x.stride())} for {w}")
            if out_idx is None:
                args[-1].copy_(args[0])
                return None
            return args[0].clone()

        return kernel

    monkeypatch.setattr(mha.tilelang, "compile", fake_compile)
    monkeypatch.setattr(mha, "_compiled", {})
    q = torch.randn(1, 512, 4, 128).half().transpose(1, 2)  # a head transpose at the graph's boundary
    k = torch.randn(1, 4, 512, 128).half()
    v = torch.randn(1, 4, 128, 512).half().transpose(-1, -2)  # no kernel reads it in place: a copy
    dense = mha.compile_kernel(name)
    raw = mha.compile_kernel(name, into=True)
    with pytest.raises(ValueError, match="stride mismatch"):
        raw(q, k, v, torch.empty(1, 4, 512, 128).half())
    (got,) = runtime.run_poisoned(mha, [name], [q, k, v], {name: dense}, raw)
    assert torch.equal(got, q)
    assert any(key[0] == name and any(key[1]) for key in mha._compiled)  # compiled for q's layout
    outs = [torch.empty(1, 4, 512, 128).half()]
    again = gpu_suite.launch_into(mha, name, raw, [q, k, v], outs)
    assert torch.equal(outs[0], q)
    outs[0].zero_()
    again(q, k, v, *outs)  # v is copied every call: the launcher, not the kernel
    assert torch.equal(outs[0], q)


def test_thread_copy_variant_lowers_without_tensor_maps(tmp_path: Path) -> None:
    """The variant `run` compiles where TMA cannot map a tensor (`tma=False`): no TMA in the device
    code, no tensor map on the host, and its pipelined loop of a dynamic trip count (over K of a
    [128, K] x [K, 768] matmul) lowers with one stage, as TileLang 0.1.15 needs without warp
    specialization (two stages there: "Downcast from tirx.Sub to ir.IntImm failed")."""
    from tilelang import tvm
    from xdsl.context import Context

    from cleave_ir.builder import GraphBuilder, module_of
    from cleave_ir.passes.pipeline import PipelinePass
    from cleave_ir.tilelang_emitter import module_source

    b = GraphBuilder("mm")
    graph = b.build(b.matmul(b.input("a", [128, 8192], dynamic=[1]), b.input("w", [8192, 768], dynamic=[0])))
    module = module_of(graph)
    PipelinePass(no_search=True, top_k=1, keep=1).apply(Context(), module)
    (tmp_path / "mm.py").write_text(module_source(module))
    mod = load_module_file(tmp_path / "mm.py")
    (name,) = mod.CANDIDATES[0][1]
    assert "T.Pipelined(T.ceildiv(" in (tmp_path / "mm.py").read_text()
    configs = {**mod.KERNELS[name]["pass_configs"], "tl.disable_tma_lower": True, "tl.disable_warp_specialized": True}
    with tvm.transform.PassContext(config=configs), tvm.target.Target({"kind": "cuda", "arch": "sm_90a"}):
        art = tilelang.lower(mod.prim_func(name, tma=False))
    assert "tma_load" not in art.kernel_source and "tma_store" not in art.kernel_source
    assert "TensorMap" not in str(art.host_mod)
