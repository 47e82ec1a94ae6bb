"""`transformers`' own causal LMs through `cleave_ir.torch.optimize`: models the project was not developed
on, built from their configs with random weights (no download), as a user would call it:
`ct.optimize(model, (input_ids,))` (the model returns logits; `use_cache=False`).

    python bench/probes/hf_models.py                       # CPU: tiny configs, every region's graph in the
                                                           # tgraph interpreter, the gate's timings faked
    python bench/probes/hf_models.py --encoders             # BERT, ViT, Whisper's encoder, ... (AutoModel)
    python bench/probes/hf_models.py --generate 8 llama    # greedy decoding under torch.compile(backend=ct.backend())
    python bench/probes/hf_models.py --pipeline ...        # CPU: the real pipeline instead of the tgraph interpreter
                                                           # (search, schedule, emit; kernels in the tilelang
                                                           # interpreter): what a GPU would run, minutes a model
    python bench/probes/hf_models.py --gpu --sizes real    # a CUDA machine: the real pipeline, one layer of the
                                                           # models' real widths; times eager, torch.compile, the
                                                           # captured program alone, ours, ours + torch.compile

Needs `pip install transformers` (not a dependency of cleave_ir). Per model: the output's error against
the float32 model (and eager fp16's, for scale), how many regions our kernels run, and any region the
gate found failing or wrong (there should be none). Mixture-of-experts models (Mixtral, Qwen-MoE,
DBRX, ...) route tokens with data-dependent code that torch.export refuses: they are taken in the graphs
torch.compile cuts them into (`ct.InPieces`).
"""

from __future__ import annotations

import argparse
import inspect
import sys
import time
from pathlib import Path
from typing import Any

import torch

import cleave_ir.torch as ct

DENSE = ("llama mistral qwen2 qwen3 gemma gemma2 gemma3_text phi phi3 gpt2 gpt_neox falcon olmo olmo2 cohere cohere2 granite "
         "starcoder2 stablelm glm glm4 opt persimmon nemotron smollm3 helium arcee exaone4 ernie4_5 seed_oss hunyuan_v1_dense apertus").split()
MOE = "mixtral qwen2_moe qwen3_moe olmoe granitemoe phimoe dbrx minimax deepseek_v2".split()
EAGER_ONLY = "gptj bloom codegen gpt_bigcode biogpt".split()  # no SDPA attention in transformers: attn_implementation="eager"
# encoders (`--encoders`): AutoModel's last hidden state; images [1, 3, 32, 32], Whisper's encoder [1, 16 mel bins, 64 frames]
ENCODERS = "bert roberta xlm-roberta distilbert albert modernbert electra deberta-v2 mpnet t5 vit dinov2 clip_vision_model siglip_vision_model whisper".split()
IMAGES = ("vit", "dinov2", "clip_vision_model", "siglip_vision_model")
ENCODER_SIZES = dict(encoder_layers=1, encoder_attention_heads=4, encoder_ffn_dim=128, d_ff=128, d_kv=16, num_heads=4, num_layers=1,
                     dim=64, hidden_dim=128, n_heads=4, n_layers=1, image_size=32, patch_size=8, num_channels=3, embedding_size=64,
                     num_mel_bins=16, max_source_positions=32, decoder_layers=1, decoder_attention_heads=4, decoder_ffn_dim=128)

# one config for all: each model's class takes the keys it knows
TINY = dict(hidden_size=64, intermediate_size=128, num_attention_heads=4, num_key_value_heads=2, num_hidden_layers=1, vocab_size=128,
            max_position_embeddings=64, head_dim=16, pad_token_id=0, bos_token_id=1, eos_token_id=2, n_embd=64, n_head=4, n_layer=1,
            n_positions=64, d_model=64, moe_intermediate_size=32, num_experts=4, num_local_experts=4, num_experts_per_tok=2,
            shared_expert_intermediate_size=64, n_routed_experts=4, n_shared_experts=1, kv_lora_rank=16, q_lora_rank=32,
            qk_rope_head_dim=8, qk_nope_head_dim=16, v_head_dim=16, first_k_dense_replace=0, ffn_hidden_size=128, n_inner=128, rotary_dim=8)
# one layer at Llama-3-8B's widths (Mixtral-8x7B's: the same hidden and expert width), a 32000-token vocabulary
REAL = dict(TINY, hidden_size=4096, intermediate_size=14336, num_attention_heads=32, num_key_value_heads=8, head_dim=128,
            vocab_size=32000, max_position_embeddings=4096, moe_intermediate_size=14336, num_experts=8, num_local_experts=8,
            n_embd=4096, n_head=32, n_positions=4096, n_inner=14336)


REPORTS: list[str] = []
DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16}


class Logits(torch.nn.Module):
    """model(input_ids) -> logits, without a KV cache."""

    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.model(input_ids=ids, use_cache=False).logits


class Hidden(torch.nn.Module):
    """An encoder's last hidden state (T5's and Whisper's encoder half)."""

    def __init__(self, model: torch.nn.Module, name: str) -> None:
        super().__init__()
        self.model, self.name = model, name

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.name in ("t5", "whisper"):
            return self.model.encoder(x).last_hidden_state
        return self.model(**{"pixel_values" if self.name in IMAGES else "input_ids": x}).last_hidden_state


def example(name: str, sizes: dict[str, Any], batch: int, seq: int, device: str) -> torch.Tensor:
    if name in IMAGES:
        return torch.randn(batch, 3, 32, 32, device=device)
    if name == "whisper":
        return torch.randn(batch, 16, 64, device=device)
    return torch.randint(3, sizes["vocab_size"], (batch, seq), device=device)


def build(name: str, sizes: dict[str, Any], attn: str, dtype: torch.dtype, device: str) -> torch.nn.Module:
    import transformers
    from transformers import CONFIG_MAPPING

    cls = CONFIG_MAPPING[name]
    params = inspect.signature(cls.__init__).parameters
    if name.startswith("deepseek"):  # multi-head latent attention: its own head dims, as many kv heads as heads
        sizes = {k: v for k, v in sizes.items() if k != "head_dim"} | {"num_key_value_heads": sizes["num_attention_heads"]}
    if name in ENCODERS:
        sizes = sizes | ENCODER_SIZES
    cfg = cls(**{k: v for k, v in sizes.items() if k in params})
    cfg._attn_implementation = attn
    if name in ENCODERS:
        return Hidden(transformers.AutoModel.from_config(cfg), name).to(device, dtype).eval()
    return Logits(transformers.AutoModelForCausalLM.from_config(cfg)).to(device, dtype).eval()


def rel(got: torch.Tensor, want: torch.Tensor) -> float:
    return ((got.float() - want.float()).abs().max() / want.float().abs().max()).item()


def faked(fn: Any, inputs: Any, which: str, region: Any) -> float:  # CPU: ours 2x faster, only correctness decides
    return 1.0 if which == "cleave" else 2.0


def one(name: str, args: argparse.Namespace, compiler: Any) -> str:
    import torch._dynamo

    from cleave_ir.runtime import one_line

    torch._dynamo.reset()  # (one process, many models: no frame compiled for an earlier model is reused)
    torch.manual_seed(0)
    device = "cuda" if args.gpu else "cpu"
    sizes = REAL if args.sizes == "real" else TINY
    t0 = time.perf_counter()
    try:
        try:
            model = build(name, sizes, "sdpa", DTYPES[args.dtype], device)
        except ValueError:  # "does not support an attention implementation through ... scaled_dot_product_attention"
            model = build(name, sizes, "eager", DTYPES[args.dtype], device)
    except Exception as e:  # noqa: BLE001 - a config this table cannot make
        return f"| {name} | setup: {one_line(e)[:120]} |" + " |" * 11
    ids = example(name, sizes, args.batch, args.seq, device)
    with torch.no_grad():
        try:
            eager = model(ids.to(DTYPES[args.dtype]) if ids.is_floating_point() else ids)
            want = model.float()(ids.float() if ids.is_floating_point() else ids)
            ids = ids.to(DTYPES[args.dtype]) if ids.is_floating_point() else ids
        except Exception as e:  # noqa: BLE001 - a config the model itself refuses
            return f"| {name} | eager failed: {one_line(e)[:120]} |" + " |" * 11
        model.to(DTYPES[args.dtype])
        try:
            m2 = ct.optimize(model, (ids,), compiler=compiler, budget_s=args.budget, **({} if args.gpu else {"timer": faked}))
        except Exception as e:  # noqa: BLE001 - the table records it
            return f"| {name} | optimize failed: {one_line(e)[:160]} |" + " |" * 11
        prepare = time.perf_counter() - t0
        got = m2(ids)
    rows = m2.cleave_report.rows
    bad = [f"{r.region}: {r.reason[:70]}" for r in rows if r.reason.startswith(("compile failed", "kernel failed", "wrong"))]
    how = "in pieces" if isinstance(m2, ct.InPieces) else "whole"
    times = ["-"] * 5
    if args.gpu:
        from cleave_ir.runtime import timed

        def never(graph: Any) -> Any:
            raise RuntimeError("not compiled: the captured program as it is")

        with torch.no_grad():
            captured = ct.optimize(model, (ids,), compiler=never)  # every region in PyTorch: what capture costs
            fns = (model, torch.compile(model), captured, m2, torch.compile(m2))
            for i, fn in enumerate(fns):
                try:
                    t = timed(lambda f=fn: f(ids), batch=10, iters=10)
                    times[i] = f"{t.us:.0f}" + ("" if t.method == "graph" else f" ({t.method})")
                except Exception as e:  # noqa: BLE001
                    times[i] = f"failed: {one_line(e)[:60]}"
        REPORTS.append(f"### {name}\n\n{m2.cleave_report.table()}\n")
    replaced = f"{len(m2.cleave_report.replaced())}/{len(m2.cleave_report.regions())}"
    groups = [r for r in rows if r.members]
    grouped = f"{sum(r.decision == 'cleave' for r in groups)}/{len(groups)}"
    # a mixture of experts routes each token by a top-k: a rounding difference upstream can pick another
    # expert for a token (a large error on that token only); counted: tokens off by over 1e-2
    off = lambda x: int(((x.float() - want.float()).abs().amax(-1) > 1e-2 * want.float().abs().max()).sum())  # noqa: E731
    return (f"| {name} | {how} | {rel(got, want):.1e} ({off(got)}) | {rel(eager, want):.1e} ({off(eager)}) | {replaced} | {grouped} | {'; '.join(bad) or 'none'} "
            f"| {' | '.join(times)} | {prepare:.0f} |")


def generate(name: str, args: argparse.Namespace, compiler: Any) -> str:
    """`model.generate` greedy, eager against `model.forward` under `torch.compile(backend=ct.backend(...))`:
    the prefill graph, the first decode step's, then one graph dynamo makes dynamic in the cache length.
    A row: whether the tokens are the same, the largest logit error, each graph's regions ours, and
    (GPU) the time per generated token of both."""
    import torch._dynamo

    from cleave_ir.runtime import one_line

    torch._dynamo.reset()
    torch.manual_seed(0)
    device = "cuda" if args.gpu else "cpu"
    sizes = REAL if args.sizes == "real" else TINY
    model = build(name, sizes, "eager" if name in EAGER_ONLY else "sdpa", DTYPES[args.dtype], device).model
    ids = torch.randint(3, sizes["vocab_size"], (args.batch, args.seq), device=device)
    run = dict(max_new_tokens=args.generate, do_sample=False, output_logits=True, return_dict_in_generate=True)

    def per_token(fn: Any) -> str:
        if not args.gpu:
            return "-"
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        return f"{(time.perf_counter() - t0) / args.generate * 1e6:.0f}"

    reports: list[Any] = []
    with torch.no_grad():
        want = model.generate(ids, **run)
        eager_us = per_token(lambda: model.generate(ids, **run))
        compile_us = "-"
        if args.gpu:
            forward = model.forward
            model.forward = torch.compile(forward)
            model.generate(ids, **run)
            compile_us = per_token(lambda: model.generate(ids, **run))
            model.forward = forward
            torch._dynamo.reset()
        model.forward = torch.compile(model.forward, backend=ct.backend(compiler=compiler, rest=args.rest, reports=reports, budget_s=args.budget, **({} if args.gpu else {"timer": faked})))
        t0 = time.perf_counter()
        try:
            got = model.generate(ids, **run)
        except Exception as e:  # noqa: BLE001 - the table records it
            return f"| {name} | generate failed: {one_line(e)[:160]} |" + " |" * 6
        prepare = time.perf_counter() - t0
        ours_us = per_token(lambda: model.generate(ids, **run))
    if args.gpu or args.pipeline:
        REPORTS.extend(f"### {name}, graph {i}\n\n{r.table()}\n" for i, r in enumerate(reports))
    same = torch.equal(got.sequences, want.sequences)
    err = max(rel(a, b) for a, b in zip(got.logits, want.logits))
    graphs = ", ".join(f"{len(r.replaced())}/{len(r.regions())}" for r in reports)
    return f"| {name} | {'yes' if same else 'NO'} | {err:.1e} | {graphs} | {eager_us} | {compile_us} | {ours_us} | {prepare:.0f} |"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("models", nargs="*", help=f"transformers model types (default: all {len(DENSE + MOE + EAGER_ONLY)} below)")
    p.add_argument("--gpu", action="store_true", help="the real pipeline on this machine's GPU, and timings")
    p.add_argument("--sizes", choices=("tiny", "real"), default="tiny")
    p.add_argument("--seq", type=int, default=16)
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--dtype", choices=("fp16", "bf16"), default="fp16")
    p.add_argument("--budget", type=float, default=None, help="seconds of compiling per model (optimize's budget_s)")
    p.add_argument("--encoders", action="store_true", help=f"the encoders instead: {' '.join(ENCODERS)}")
    p.add_argument("--generate", type=int, default=0, metavar="N",
                   help="instead: N greedy tokens by model.generate, eager and under torch.compile(backend=ct.backend(...))")
    p.add_argument("--rest", default=None, help="--generate: the backend's `rest` (inductor: what stays PyTorch's is compiled by inductor)")
    p.add_argument("-j", "--jobs", type=int, default=15)
    p.add_argument("--workdir", default=None, help="--gpu: where the regions' graphs and emitted modules are kept (default: a temporary dir)")
    p.add_argument("--pipeline", action="store_true", help="CPU: the real pipeline (search, schedule, emit), its kernels run by the tilelang interpreter")
    args = p.parse_args(argv)
    names = args.models or (ENCODERS if args.encoders else DENSE + MOE + EAGER_ONLY)
    workdir = None if args.workdir is None else Path(args.workdir)
    options = ("--keep", "2", "--tune-budget", "0", "-j", str(args.jobs))
    compiler = ct.PipelineCompiler(options=options, gpu=args.gpu, workdir=workdir) if args.gpu or args.pipeline else ct.interpreted_graph
    import transformers

    print(f"transformers {transformers.__version__}, torch {torch.__version__}, {'GPU: ' + torch.cuda.get_device_name() if args.gpu else 'CPU, the real pipeline, kernels in the tilelang interpreter' if args.pipeline else 'CPU interpreters'}, "
          f"sizes {args.sizes}, {args.dtype}, input ids [{args.batch}, {args.seq}]")
    if args.generate:
        print(f"backend rest={args.rest}")
        print("| model | same tokens | largest logit error | regions ours, per graph | eager us a token | torch.compile us a token | cleave backend us a token | first generate s |")
        print("| --- | --- | ---: | --- | ---: | ---: | ---: | ---: |")
        for name in names:
            print(generate(name, args, compiler), flush=True)
        if REPORTS:
            print("\n## The gate's reports, per graph dynamo handed over\n")
            print("\n".join(REPORTS))
        return 0
    print("| model | captured | err ours vs fp32 (tokens off) | err eager vs fp32 (tokens off) | regions ours | projection groups ours | failing or wrong regions "
          "| eager us | torch.compile us | captured, all PyTorch us | ours us | ours + torch.compile us | prepare s |")
    print("| --- | --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name in names:
        print(one(name, args, compiler), flush=True)
    if REPORTS:
        print("\n## The gate's reports (PyTorch's region: eager)\n")
        print("\n".join(REPORTS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
