"""The front end's transposes, slices and concats on a GPU (the thirty-fourth session's change, written
without device time): each module below goes through `ct.optimize` with the real compiler; prints the
gate's report (PyTorch's region and ours, timed by the gate) and the stitched module's error against
eager in float64.

    python bench/probes/structural_frontend_gpu.py            # on a CUDA machine (pending_checks.sh D)
    python bench/probes/structural_frontend_gpu.py --cpu      # small sizes, TileLang interpreter, the gate's
                                                              # timings faked (ours 2x): a smoke run of the path

Modules: Qwen3's q path after its projection (RMSNorm over the head dim, heads to dim 1, rotary embedding:
one region whose output is two permuted halves, joined by `run`), the same without the rotary embedding
(one permuted output: the kernel writes `out` through its view, `run(out=)`), a last-token LM head over
the final norm (a select moved to a view of the norm's input), Qwen3-32B's attention block at prefill and
linear attention (the transposed first operand taken as the transposed product).
"""

from __future__ import annotations

import argparse
import re
import sys

import torch

import cleave_ir.torch as ct


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class QkNorm(torch.nn.Module):
    """RMSNorm over the head dim of a projection's [B, S, H, D] view, then heads to dim 1 (and rotary)."""

    def __init__(self, d: int, rope: bool) -> None:
        super().__init__()
        self.w = torch.nn.Parameter(torch.rand(d) + 0.5)
        self.rope = rope

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        v = x.float()
        v = v * torch.rsqrt(v.pow(2).mean(-1, keepdim=True) + 1e-6)
        q = (self.w * v.to(x.dtype)).transpose(1, 2)
        return q * cos + rotate_half(q) * sin if self.rope else q * cos


class LastTokenHead(torch.nn.Module):
    def __init__(self, d: int, vocab: int) -> None:
        super().__init__()
        self.n = torch.nn.Parameter(torch.rand(d) + 0.5)
        self.w = torch.nn.Parameter(torch.randn(vocab, d) * d**-0.5)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        v = h.float()
        v = (v * torch.rsqrt(v.pow(2).mean(-1, keepdim=True) + 1e-6)).to(h.dtype) * self.n
        return v[:, -1, :] @ self.w.t()


class Qwen3Attention(torch.nn.Module):
    """transformers' Qwen3 attention block: q/k RMSNorm over the head dim, heads to dim 1, rotary
    embedding, causal SDPA over shared kv heads, output projection."""

    def __init__(self, d: int, h: int, kvh: int, hd: int) -> None:
        super().__init__()
        self.h, self.kvh, self.hd = h, kvh, hd
        self.q, self.o = torch.nn.Linear(d, h * hd, bias=False), torch.nn.Linear(h * hd, d, bias=False)
        self.k, self.v = torch.nn.Linear(d, kvh * hd, bias=False), torch.nn.Linear(d, kvh * hd, bias=False)
        self.qn, self.kn = QkNorm(hd, False), QkNorm(hd, False)

    @staticmethod
    def norm(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        v = x.float()
        return w * (v * torch.rsqrt(v.pow(2).mean(-1, keepdim=True) + 1e-6)).to(x.dtype)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        b, t, _ = x.shape
        q = self.norm(self.q(x).view(b, t, self.h, self.hd), self.qn.w).transpose(1, 2)
        k = self.norm(self.k(x).view(b, t, self.kvh, self.hd), self.kn.w).transpose(1, 2)
        v = self.v(x).view(b, t, self.kvh, self.hd).transpose(1, 2)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        a = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        return self.o(a.transpose(1, 2).reshape(b, t, -1))


class LinearAttention(torch.nn.Module):
    """phi(q) @ (phi(k)^T @ v), phi = elu + 1 (the transposed first operand folds into one region)."""

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        fq, fk = torch.nn.functional.elu(q) + 1, torch.nn.functional.elu(k) + 1
        return fq @ (fk.transpose(-1, -2) @ v)


def cases(cpu: bool, dtype: torch.dtype, device: str) -> dict[str, tuple[torch.nn.Module, tuple[torch.Tensor, ...]]]:
    """name -> (module, example inputs): Qwen3-32B's head sizes (64 heads of 128) at decode and prefill."""
    h, d = (4, 64) if cpu else (64, 128)
    out = {}
    for s in (1,) if cpu else (1, 2048):
        x = torch.randn(1, s, h, d, dtype=dtype, device=device)
        cs = [torch.randn(1, 1, s, d, dtype=dtype, device=device) for _ in range(2)]
        out[f"qk_norm_rope_s{s}"] = (QkNorm(d, True), (x, *cs))
        out[f"qk_norm_transposed_s{s}"] = (QkNorm(d, False), (x, *cs))
    d_model, vocab = (64, 96) if cpu else (5120, 151936)
    out["last_token_head"] = (LastTokenHead(d_model, vocab), (torch.randn(1, 8 if cpu else 512, d_model, dtype=dtype, device=device),))
    # linear attention, and Qwen3-32B's attention block at prefill (64 query heads of 128 over 8 kv heads)
    b, heads, n, dh = (2, 2, 64, 32) if cpu else (1, 32, 4096, 128)
    out[f"linear_attention_s{n}"] = (LinearAttention(), tuple(torch.randn(b, heads, n, dh, dtype=dtype, device=device) * 0.3 for _ in range(3)))
    d, h, kvh, hd, s = (128, 4, 2, 32, 16) if cpu else (5120, 64, 8, 128, 2048)
    cos, sin = (torch.randn(1, 1, s, hd, dtype=dtype, device=device) for _ in range(2))
    out[f"qwen3_attention_s{s}"] = (Qwen3Attention(d, h, kvh, hd), (torch.randn(1, s, d, dtype=dtype, device=device), cos, sin))
    return {k: (m.to(device=device, dtype=dtype).eval(), xs) for k, (m, xs) in out.items()}


def _faked(fn, inputs, which, region) -> float:  # noqa: ANN001 - the CPU smoke run: ours 2x faster
    return 1.0 if which == "cleave" else 2.0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cpu", action="store_true", help="small sizes, kernels in the TileLang interpreter")
    p.add_argument("-j", "--jobs", type=int, default=15)
    p.add_argument("--only", default="", help="a regular expression: the cases whose names it matches")
    args = p.parse_args(argv)
    device = "cpu" if args.cpu else "cuda"
    dtype = torch.float16 if args.cpu else torch.bfloat16
    compiler = ct.PipelineCompiler(options=("--keep", "2", "-j", str(args.jobs)), gpu=not args.cpu)
    failed = 0
    for name, (m, xs) in cases(args.cpu, dtype, device).items():
        if not re.search(args.only, name):
            continue
        print(f"## {name}: inputs {[tuple(x.shape) for x in xs]}", flush=True)
        print(ct.explain(m, xs, quiet=True).text())
        try:
            m2 = ct.optimize(m, xs, compiler=compiler, **({"timer": _faked} if args.cpu else {}))
        except Exception as e:  # one line, and the next module
            print(f"FAILED: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
            failed += 1
            continue
        print(m2.cleave_report.table())
        # why a region's compile failed: its candidates' rows in the compile's log (wrong, or failed to run)
        bad = [line for line in compiler.log.getvalue().splitlines() if line.startswith("| ") and ("WRONG" in line or "failed" in line)]
        print("\n".join(bad[-8:]))
        compiler.log.seek(0)
        compiler.log.truncate()
        with torch.no_grad():
            ys = [torch.rand_like(x) * 3 - 1 for x in xs]
            want = m.double()(*[y.double() for y in ys])
            m.to(dtype)
            got = m2(*ys).double()
        err = ((got - want).abs().max() / want.abs().max()).item()
        print(f"max error / max |eager float64|: {err:.2e}\n", flush=True)
        failed += err > 2e-2
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
