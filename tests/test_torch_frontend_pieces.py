"""Models torch.export cannot capture whole, taken in the graphs torch.compile cuts them into, and two
patterns of `transformers`' own code that once crashed `optimize` (found running its Gemma-2 and Phi-3
causal LMs through it): a `type_as(y)` whose `y` the region reads for its dtype only, and a concat
with an empty piece. Through the interpreters; the test timer makes ours faster, so only correctness
decides."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import cleave_ir.torch as ct  # noqa: E402
from cleave_ir.diagnostics import CleaveError  # noqa: E402


def faster(fn, inputs, which, region):  # ours 2x faster: only correctness decides
    return 1.0 if which == "cleave" else 2.0


H, NH, HD, E = 64, 4, 16, 4  # hidden, heads, head dim, experts


class Expert(nn.Module):  # a module of its own, as `transformers` writes one: dynamo compiles its frame
    def __init__(self) -> None:
        super().__init__()
        self.gate, self.up, self.down = nn.Linear(H, 128, bias=False), nn.Linear(H, 128, bias=False), nn.Linear(128, H, bias=False)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return self.down(F.silu(self.gate(h)) * self.up(h))


class RoutedMoE(nn.Module):
    """A Mixtral-style layer: attention, then a top-2 router whose loop over the experts that got
    tokens (`nonzero`, `torch.where`, `index_add_`) is data-dependent: torch.export refuses it."""

    def __init__(self) -> None:
        super().__init__()
        self.n1, self.n2 = nn.RMSNorm(H, eps=1e-6), nn.RMSNorm(H, eps=1e-6)
        self.qkv, self.o = nn.Linear(H, 3 * H, bias=False), nn.Linear(H, H, bias=False)
        self.router = nn.Linear(H, E, bias=False)
        self.experts = nn.ModuleList(Expert() for _ in range(E))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, _ = x.shape
        q, k, v = (t.view(b, s, NH, HD).transpose(1, 2) for t in self.qkv(self.n1(x)).chunk(3, -1))
        x = x + self.o(F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, s, H))
        h = self.n2(x).view(-1, H)
        weights, chosen = torch.topk(F.softmax(self.router(h), dim=-1, dtype=torch.float), 2, dim=-1)
        weights = (weights / weights.sum(-1, keepdim=True)).to(h.dtype)
        out = torch.zeros_like(h)
        mask = F.one_hot(chosen, E).permute(2, 1, 0)
        for e in torch.greater(mask.sum(dim=(-1, -2)), 0).nonzero():
            slot, tok = torch.where(mask[e].squeeze(0))
            y = self.experts[int(e)](h[tok]) * weights[tok, slot, None]
            out.index_add_(0, tok, y)
        return x + out.view(b, s, H)


@pytest.fixture(scope="module")
def moe():
    import torch._dynamo

    torch.manual_seed(0)
    model = RoutedMoE().half().eval()
    x = torch.randn(1, 16, H).half()
    torch._dynamo.reset()
    with torch.no_grad():
        m2 = ct.optimize(model, (x,), compiler=ct.interpreted_graph, timer=faster)
    return model, x, m2


def test_data_dependent_model_is_optimized_in_pieces(moe):
    model, x, m2 = moe
    assert isinstance(m2, ct.InPieces)
    report = m2.cleave_report
    assert report.plan.startswith("torch.export failed: ") and "graphs torch.compile cuts the model into" in report.plan
    assert "graph 1:" in report.plan
    replaced = report.replaced()
    assert any("aten.scaled_dot_product_attention" in r.ops for r in replaced), report.table()
    assert any("aten.linear" in r.ops for r in replaced)
    assert not [r for r in report.rows if r.reason.startswith(("compile failed", "kernel failed", "wrong"))], report.table()
    assert [r.region for r in report.rows] == list(range(len(report.rows)))  # numbered across the graphs
    with torch.no_grad():
        want = model.float()(x.float())
        model.half()
        got = m2(x).float()
        again = m2(torch.randn(1, 16, H).half())  # other values: other experts get tokens
    assert ((got - want).abs().max() / want.abs().max()).item() < 2e-3
    assert torch.isfinite(again).all()


def test_data_dependent_model_explained_in_pieces(moe):
    model, x, _ = moe
    plan = ct.explain(model, (x,), quiet=True)
    assert len(plan.pieces) >= 2 and plan.pieces[0] is plan
    text = plan.text()
    assert text.startswith("torch.export failed: ") and "graph 0:\ncleave_ir.torch: " in text
    assert any(r.worth for p in plan.pieces for r in p.regions)


def test_backend_on_a_model_with_graph_breaks(moe):
    """torch.compile(backend=...) on the same layer: each graph is captured at its first call (a
    capture while dynamo compiles the frame broke dynamo's guards on it)."""
    import torch._dynamo

    model, x, _ = moe
    torch._dynamo.reset()
    reports: list = []
    compiled = torch.compile(model, backend=ct.backend(compiler=ct.interpreted_graph, timer=faster, reports=reports))
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), model(x), rtol=2e-3, atol=2e-3)
    assert len(reports) >= 2 and any(r.replaced() for r in reports)


def test_export_error_stands_where_dynamic_dims_were_asked_for():
    """A data-dependent model given `dynamic_shapes`: the graphs torch.compile would cut are compiled
    for the example's shapes only, so the export error is the answer, in one line."""

    class Branchy(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x * 2 if x.sum() > 0 else x

    with pytest.raises(CleaveError, match=r"^error: torch.export failed: ") as e:
        ct.optimize(Branchy(), (torch.randn(4, 8),), dynamic_shapes=({0: torch.export.Dim("n", min=2, max=64)},),
                    compiler=ct.interpreted_graph, timer=faster)
    assert "\n" not in str(e.value)


class SoftcappedHead(nn.Module):
    """Gemma-2's last norm, LM head and logit soft-capping as `transformers` writes them: the norm in
    float32, cast back by `type_as(x)`; the region cut at its op budget reads `x` for its dtype only."""

    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.randn(H) * 0.1)
        self.head = nn.Linear(H, 96, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xf = x.float()
        y = (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6) * (1.0 + self.w.float())).type_as(x)
        return torch.tanh(self.head(y) / 30.0) * 30.0


class FullWidthRotary(nn.Module):
    """Phi-3's rotary embedding as `transformers` writes it, at a rotary width equal to the head dim:
    the pass-through part `q[..., HD:]` is empty and still concatenated."""

    def forward(self, q: torch.Tensor, k: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        def rotate_half(t: torch.Tensor) -> torch.Tensor:
            return torch.cat((-t[..., HD // 2 :], t[..., : HD // 2]), dim=-1)

        def embed(t: torch.Tensor) -> torch.Tensor:
            rot, rest = t[..., :HD], t[..., HD:]
            return torch.cat((rot * cos + rotate_half(rot) * sin, rest), dim=-1)

        return F.scaled_dot_product_attention(embed(q), embed(k), k, is_causal=True)


@pytest.mark.parametrize("name", ["SoftcappedHead", "FullWidthRotary"])
def test_transformers_patterns_that_crashed_optimize(name: str) -> None:
    torch.manual_seed(0)
    model = globals()[name]().half().eval()
    if name == "SoftcappedHead":
        xs = (torch.randn(1, 8, H).half(),)
    else:
        xs = (torch.randn(1, NH, 8, HD).half(), torch.randn(1, NH, 8, HD).half(), torch.randn(8, HD).half(), torch.randn(8, HD).half())
    with torch.no_grad():
        m2 = ct.optimize(model, xs, compiler=ct.interpreted_graph, timer=faster)
        want = model.float()(*[x.float() for x in xs])
        model.half()
        got = m2(*xs).float()
    rows = m2.cleave_report.rows
    assert m2.cleave_report.replaced(), m2.cleave_report.table()
    assert not [r for r in rows if r.reason.startswith(("compile failed", "kernel failed", "wrong"))], m2.cleave_report.table()
    assert ((got - want).abs().max() / want.abs().max()).item() < 2e-3


class DecodeStep(nn.Module):
    """One decode step against a cache that grows (`transformers`' DynamicCache: `torch.cat`)."""

    def __init__(self) -> None:
        super().__init__()
        self.n = nn.RMSNorm(H, eps=1e-6)
        self.q, self.kv, self.o = nn.Linear(H, H, bias=False), nn.Linear(H, 2 * 2 * HD, bias=False), nn.Linear(H, H, bias=False)

    def forward(self, x: torch.Tensor, past_k: torch.Tensor, past_v: torch.Tensor) -> tuple[torch.Tensor, ...]:
        h = self.n(x)
        q = self.q(h).view(1, 1, NH, HD).transpose(1, 2)
        k, v = self.kv(h).view(1, 1, 2, 2, HD).permute(2, 0, 3, 1, 4)
        k, v = torch.cat([past_k, k], 2), torch.cat([past_v, v], 2)
        a = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
        return x + self.o(a.transpose(1, 2).reshape(1, 1, H)), k, v


def test_backend_compiles_the_graph_dynamo_makes_dynamic():
    """torch.compile(backend=...) over decode steps: dynamo's second graph has the cache length as a
    symbol (and as an int input); it is captured with that dim dynamic and serves every later length
    (before, the backend left such a graph to PyTorch: `generate` ran one optimized decode step)."""
    import torch._dynamo

    torch.manual_seed(0)
    step = DecodeStep().half().eval()
    torch._dynamo.reset()
    reports: list = []
    compiled = torch.compile(step, backend=ct.backend(compiler=ct.interpreted_graph, timer=faster, reports=reports))
    k, v = torch.randn(1, 2, 8, HD).half(), torch.randn(1, 2, 8, HD).half()
    k2, v2 = k, v
    with torch.no_grad():
        for _ in range(6):
            x = torch.randn(1, 1, H).half()
            got, k2, v2 = compiled(x, k2, v2)
            want, k, v = step(x, k, v)
            torch.testing.assert_close(got, want, rtol=2e-3, atol=2e-3)
    assert k2.shape[2] == 14 and len(reports) == 2  # length 8 static, then one dynamic graph for 9..13
    attention = [r for r in reports[-1].rows if "aten.scaled_dot_product_attention" in r.ops]
    assert attention and attention[0].decision == "cleave", reports[-1].table()


def test_backend_hands_the_rest_to_another_backend():
    """`ct.backend(rest=...)`: the stitched graph (our regions as custom ops) goes on to a torch.compile
    backend ("inductor" fuses the glue that stays PyTorch's; "aot_eager" here: the same tracing, no C++
    compile), for the static graph and the dynamic one alike."""
    import torch._dynamo

    torch.manual_seed(0)
    step = DecodeStep().half().eval()
    torch._dynamo.reset()
    reports: list = []
    compiled = torch.compile(step, backend=ct.backend(rest="aot_eager", compiler=ct.interpreted_graph, timer=faster, reports=reports))
    k, v = torch.randn(1, 2, 8, HD).half(), torch.randn(1, 2, 8, HD).half()
    k2, v2 = k, v
    with torch.no_grad():
        for _ in range(4):
            x = torch.randn(1, 1, H).half()
            got, k2, v2 = compiled(x, k2, v2)
            want, k, v = step(x, k, v)
            torch.testing.assert_close(got, want, rtol=2e-3, atol=2e-3)
    assert len(reports) == 2 and all(r.replaced() for r in reports)


def test_inductor_rest_gates_each_region_against_inductors_compile(monkeypatch):
    """With `rest="inductor"` the regions' PyTorch side is what inductor would run, so the gate times
    against it (`baseline="compile"`) unless the caller names a baseline; without `rest`, eager."""
    import cleave_ir.torch as ct_module

    seen: list = []

    def recorded(model, args, dynamic_shapes=None, **options):
        seen.append(options.get("baseline"))
        return model

    monkeypatch.setattr(ct_module, "optimize", recorded)
    monkeypatch.setattr(torch, "compile", lambda fn, **kw: fn)  # the stitched graph as it is: no C++ compile here
    gm = torch.fx.symbolic_trace(lambda x: torch.softmax(x, -1))
    x = torch.randn(2, 8)
    for kwargs in ({"rest": "inductor"}, {"rest": "inductor", "baseline": "eager"}, {}):
        ct.backend(**kwargs)(gm, [x])(x)
    assert seen == ["compile", "eager", None]
