"""`transformers`' own causal LMs and two encoders (pinned in the test extra) through `cleave_ir.torch`, as users call it:
tiny configs, random fp16 weights, every region's graph in the tgraph interpreter, the gate's timings
faked (ours faster: only correctness decides). Gemma-2 and Phi-3 once crashed `optimize` (a `type_as`
read for its dtype, an empty concat piece); Mixtral's expert loop is data-dependent, so it is taken in
the graphs torch.compile cuts it into; `generate` under the backend runs its decode steps through a
graph with a dynamic cache length. All 46 types: `python bench/probes/hf_models.py`."""

from __future__ import annotations

import inspect

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import cleave_ir.torch as ct  # noqa: E402

TINY = dict(hidden_size=64, intermediate_size=128, num_attention_heads=4, num_key_value_heads=2, num_hidden_layers=1, vocab_size=128,
            max_position_embeddings=64, head_dim=16, pad_token_id=0, bos_token_id=1, eos_token_id=2, n_embd=64, n_head=4, n_layer=1,
            n_positions=64, num_local_experts=4, num_experts_per_tok=2)


def faster(fn, inputs, which, region):  # ours 2x faster: only correctness decides
    return 1.0 if which == "cleave" else 2.0


def causal_lm(name: str) -> torch.nn.Module:
    cls = transformers.CONFIG_MAPPING[name]
    params = inspect.signature(cls.__init__).parameters
    cfg = cls(**{k: v for k, v in TINY.items() if k in params})
    cfg._attn_implementation = "sdpa"
    torch.manual_seed(0)
    return transformers.AutoModelForCausalLM.from_config(cfg).half().eval()


class Logits(torch.nn.Module):
    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.model(input_ids=ids, use_cache=False).logits


def rel(got: torch.Tensor, want: torch.Tensor) -> float:
    return ((got.float() - want.float()).abs().max() / want.float().abs().max()).item()


@pytest.mark.parametrize("name", ["llama", "qwen3", "gemma2", "phi3", "gpt2", "mixtral"])
def test_causal_lm_is_optimized(name: str) -> None:
    import torch._dynamo

    torch._dynamo.reset()
    model = Logits(causal_lm(name))
    ids = torch.randint(3, 128, (1, 16), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        eager = model(ids)
        want = model.float()(ids)
        model.half()
        m2 = ct.optimize(model, (ids,), compiler=ct.interpreted_graph, timer=faster)
        got = m2(ids)
    report = m2.cleave_report
    assert isinstance(m2, ct.InPieces) == (name == "mixtral")
    assert len(report.replaced()) >= 6, report.table()
    assert not [r for r in report.rows if r.reason.startswith(("compile failed", "kernel failed", "wrong"))], report.table()
    assert rel(got, want) < max(2e-3, 2 * rel(eager, want)), (rel(got, want), rel(eager, want))


def test_generate_under_the_backend() -> None:
    """Greedy decoding with `model.forward` under torch.compile(backend=ct.backend(...)): three graphs
    (prefill, the first decode step, then every later step with the cache length dynamic), each with
    regions ours; the same tokens as eager."""
    import torch._dynamo

    torch._dynamo.reset()
    lm = causal_lm("llama")
    ids = torch.randint(3, 128, (1, 8), generator=torch.Generator().manual_seed(2))
    run = dict(max_new_tokens=6, do_sample=False, output_logits=True, return_dict_in_generate=True)
    with torch.no_grad():
        want = lm.generate(ids, **run)
        reports: list = []
        lm.forward = torch.compile(lm.forward, backend=ct.backend(compiler=ct.interpreted_graph, timer=faster, reports=reports))
        got = lm.generate(ids, **run)
    assert torch.equal(got.sequences, want.sequences)
    assert max(rel(a, b) for a, b in zip(got.logits, want.logits)) < 2e-3
    assert len(reports) == 3 and all(r.replaced() for r in reports)
    attention = [r for r in reports[-1].rows if "aten.scaled_dot_product_attention" in r.ops]
    assert attention and attention[0].decision == "cleave", reports[-1].table()


@pytest.mark.parametrize("name", ["gpt2", "phi3", "llama"])
def test_causal_lm_with_a_dynamic_sequence_length(name: str) -> None:
    """`dynamic_shapes` on the ids' length: GPT-2's regions read that length as a number (its head
    split's `view`), Phi-3's rotary concat has an empty piece of a dynamic shape; both once failed
    every such region. The example length 24 differs from every static dim (the interpreter compiler
    resizes dims by their example value)."""
    import torch._dynamo

    torch._dynamo.reset()
    model = Logits(causal_lm(name))
    ids = torch.randint(3, 128, (1, 24), generator=torch.Generator().manual_seed(3))
    s = torch.export.Dim("s", min=2, max=60)
    with torch.no_grad():
        m2 = ct.optimize(model, (ids,), dynamic_shapes=({1: s},), compiler=ct.interpreted_graph, timer=faster)
        for n in (24, 7, 33):
            x = torch.randint(3, 128, (1, n), generator=torch.Generator().manual_seed(n))
            want = model.float()(x)
            model.half()
            assert rel(m2(x), want) < 2e-3, n
    report = m2.cleave_report
    assert len(report.replaced()) >= 6, report.table()
    assert not [r for r in report.rows if r.reason.startswith(("compile failed", "kernel failed", "wrong"))], report.table()


@pytest.mark.parametrize("name", ["bert", "vit"])
def test_encoder_is_optimized(name: str) -> None:
    """Encoders through `AutoModel` (last hidden state): BERT on ids, ViT on a 32x32 image."""
    import torch._dynamo

    torch._dynamo.reset()
    cls = transformers.CONFIG_MAPPING[name]
    params = inspect.signature(cls.__init__).parameters
    sizes = TINY | dict(image_size=32, patch_size=8, num_channels=3)
    cfg = cls(**{k: v for k, v in sizes.items() if k in params})
    cfg._attn_implementation = "sdpa"
    torch.manual_seed(0)
    encoder = transformers.AutoModel.from_config(cfg).half().eval()
    key = "pixel_values" if name == "vit" else "input_ids"

    class Hidden(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.encoder = encoder

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.encoder(**{key: x}).last_hidden_state

    model = Hidden()
    x = torch.randn(1, 3, 32, 32).half() if name == "vit" else torch.randint(3, 128, (1, 16), generator=torch.Generator().manual_seed(4))
    with torch.no_grad():
        want = model.float()(x.float() if name == "vit" else x)
        model.half()
        m2 = ct.optimize(model, (x,), compiler=ct.interpreted_graph, timer=faster)
        got = m2(x)
    report = m2.cleave_report
    assert len(report.replaced()) >= 6, report.table()
    assert not [r for r in report.rows if r.reason.startswith(("compile failed", "kernel failed", "wrong"))], report.table()
    assert rel(got, want) < 3e-3
