"""Layers of architectures the pipeline was not developed on (Phi-3, Gemma, Falcon, BERT, T5, Llama and
GPT-2 as `transformers` writes them in eager mode; Gemma-2, BLOOM, GPT-NeoX, Qwen2, OLMo and a top-2
mixture of experts, and decode steps of Gemma-2, BLOOM and Qwen2 against a KV cache, added later without
changing the code), captured, partitioned, compiled and stitched on
the CPU: every region must either compile correctly or stay in PyTorch with a reason, and the
optimized layer must equal the model. Tiny sizes, fp16.

The fast test runs each region's graph in the tgraph interpreter (capture, aten table, partition,
gate, stitching); `-m slow` runs the real pipeline (search, schedule, lower, TileLang interpreter)."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import cleave_ir.torch as ct  # noqa: E402

pytestmark = pytest.mark.usefixtures("tf32_allowed")  # fp32 models: TF32 as PyTorch at "high"

H, NH, HD, S, I = 64, 4, 16, 16, 128  # hidden, heads, head dim, sequence, MLP width


def faster(fn, inputs, which, region):  # ours 2x faster: only correctness decides
    return 1.0 if which == "cleave" else 2.0


class Phi3(nn.Module):  # fused qkv and gate_up projections, split by slicing / chunk
    def __init__(self):
        super().__init__()
        self.ln = nn.RMSNorm(H, eps=1e-5)
        self.qkv = nn.Linear(H, 3 * H, bias=False)
        self.o = nn.Linear(H, H, bias=False)
        self.ln2 = nn.RMSNorm(H, eps=1e-5)
        self.gate_up = nn.Linear(H, 2 * I, bias=False)
        self.down = nn.Linear(I, H, bias=False)
    def forward(self, x):
        b, s, _ = x.shape
        qkv = self.qkv(self.ln(x))
        q, k, v = qkv[..., :H], qkv[..., H:2 * H], qkv[..., 2 * H:]
        q, k, v = (t.view(b, s, NH, HD).transpose(1, 2) for t in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.o(a.transpose(1, 2).reshape(b, s, H))
        g, u = self.gate_up(self.ln2(x)).chunk(2, dim=-1)
        return x + self.down(F.silu(g) * u)

class Gemma(nn.Module):  # (1 + w) RMSNorm in float32, gelu-tanh gated MLP, sqrt(H) scaled input
    def __init__(self):
        super().__init__()
        self.w1 = nn.Parameter(torch.randn(H) * 0.1)
        self.q = nn.Linear(H, H, bias=False); self.k = nn.Linear(H, HD, bias=False); self.v = nn.Linear(H, HD, bias=False)
        self.o = nn.Linear(H, H, bias=False)
        self.gate = nn.Linear(H, I, bias=False); self.up = nn.Linear(H, I, bias=False); self.down = nn.Linear(I, H, bias=False)
    def norm(self, x):
        xf = x.float()
        y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)
        return (y * (1.0 + self.w1.float())).type_as(x)
    def forward(self, x):
        b, s, _ = x.shape
        x = x * math.sqrt(H)
        h = self.norm(x)
        q = self.q(h).view(b, s, NH, HD).transpose(1, 2)
        k = self.k(h).view(b, s, 1, HD).transpose(1, 2).expand(b, NH, s, HD)
        v = self.v(h).view(b, s, 1, HD).transpose(1, 2).expand(b, NH, s, HD)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.o(a.transpose(1, 2).reshape(b, s, H))
        h = self.norm(x)
        return x + self.down(F.gelu(self.gate(h), approximate="tanh") * self.up(h))

class Falcon(nn.Module):  # parallel attention and MLP from one LayerNorm, biases
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(H)
        self.qkv = nn.Linear(H, 3 * H); self.o = nn.Linear(H, H)
        self.fc1 = nn.Linear(H, 4 * H); self.fc2 = nn.Linear(4 * H, H)
    def forward(self, x):
        b, s, _ = x.shape
        h = self.ln(x)
        q, k, v = self.qkv(h).split(H, dim=-1)
        q, k, v = (t.reshape(b, s, NH, HD).permute(0, 2, 1, 3) for t in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True).permute(0, 2, 1, 3).reshape(b, s, H)
        return x + self.o(a) + self.fc2(F.gelu(self.fc1(h)))

class Bert(nn.Module):  # post-LN, padding mask added to the scores, explicit softmax
    def __init__(self):
        super().__init__()
        self.q = nn.Linear(H, H); self.k = nn.Linear(H, H); self.v = nn.Linear(H, H); self.o = nn.Linear(H, H)
        self.ln1 = nn.LayerNorm(H, eps=1e-12); self.fc1 = nn.Linear(H, I); self.fc2 = nn.Linear(I, H); self.ln2 = nn.LayerNorm(H, eps=1e-12)
    def forward(self, x, mask):
        b, s, _ = x.shape
        q, k, v = (f(x).view(b, s, NH, HD).transpose(1, 2) for f in (self.q, self.k, self.v))
        sc = q @ k.transpose(-1, -2) / math.sqrt(HD) + mask
        a = torch.softmax(sc, dim=-1) @ v
        x = self.ln1(x + self.o(a.transpose(1, 2).reshape(b, s, H)))
        return self.ln2(x + self.fc2(F.gelu(self.fc1(x))))

class T5(nn.Module):  # RMS norm without mean-centering in f32, relative position bias, no 1/sqrt(d)
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(H))
        self.q = nn.Linear(H, H, bias=False); self.k = nn.Linear(H, H, bias=False); self.v = nn.Linear(H, H, bias=False); self.o = nn.Linear(H, H, bias=False)
        self.wi = nn.Linear(H, I, bias=False); self.wo = nn.Linear(I, H, bias=False)
    def norm(self, x):
        var = x.to(torch.float32).pow(2).mean(-1, keepdim=True)
        return self.w * (x * torch.rsqrt(var + 1e-6)).to(x.dtype)
    def forward(self, x, bias):
        b, s, _ = x.shape
        h = self.norm(x)
        q, k, v = (f(h).view(b, s, NH, HD).transpose(1, 2) for f in (self.q, self.k, self.v))
        a = torch.softmax((q @ k.transpose(-1, -2) + bias).float(), dim=-1).type_as(q) @ v
        x = x + self.o(a.transpose(1, 2).reshape(b, s, H))
        return x + self.wo(F.relu(self.wi(self.norm(x))))


class HFLlama(nn.Module):  # transformers' eager Llama: float32 RMSNorm, rotary, repeat_kv, float32 softmax
    def __init__(self):
        super().__init__()
        self.n1 = nn.Parameter(torch.ones(H)); self.n2 = nn.Parameter(torch.ones(H))
        self.q = nn.Linear(H, H, bias=False); self.k = nn.Linear(H, 2 * HD, bias=False); self.v = nn.Linear(H, 2 * HD, bias=False); self.o = nn.Linear(H, H, bias=False)
        self.gate = nn.Linear(H, I, bias=False); self.up = nn.Linear(H, I, bias=False); self.down = nn.Linear(I, H, bias=False)
        inv = 1.0 / (10000 ** (torch.arange(0, HD, 2).float() / HD)); f = torch.outer(torch.arange(S).float(), inv); emb = torch.cat([f, f], -1)
        self.register_buffer("cos", emb.cos()[None, None]); self.register_buffer("sin", emb.sin()[None, None])
    @staticmethod
    def norm(x, w):
        dt = x.dtype; x = x.to(torch.float32)
        x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5)
        return w * x.to(dt)
    @staticmethod
    def rot(x):
        return torch.cat((-x[..., HD // 2:], x[..., :HD // 2]), -1)
    def forward(self, x, mask):
        b, s, _ = x.shape
        h = self.norm(x, self.n1)
        q = self.q(h).view(b, s, NH, HD).transpose(1, 2)
        k = self.k(h).view(b, s, 2, HD).transpose(1, 2)
        v = self.v(h).view(b, s, 2, HD).transpose(1, 2)
        cos, sin = self.cos.to(x.dtype), self.sin.to(x.dtype)
        q = q * cos + self.rot(q) * sin; k = k * cos + self.rot(k) * sin
        k = k[:, :, None].expand(b, 2, NH // 2, s, HD).reshape(b, NH, s, HD)
        v = v[:, :, None].expand(b, 2, NH // 2, s, HD).reshape(b, NH, s, HD)
        w = q @ k.transpose(2, 3) / math.sqrt(HD) + mask
        w = F.softmax(w, dim=-1, dtype=torch.float32).to(q.dtype)
        a = (w @ v).transpose(1, 2).reshape(b, s, H)
        x = x + self.o(a)
        h = self.norm(x, self.n2)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))

class Conv1D(nn.Module):  # transformers' GPT-2 projection: addmm(bias, x, W) with W [in, out]
    def __init__(self, nf, nx):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(nx, nf) * 0.05)
        self.bias = nn.Parameter(torch.randn(nf) * 0.05)
        self.nf = nf

    def forward(self, x):
        return torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight).view(x.size()[:-1] + (self.nf,))


class GPT2HF(nn.Module):  # transformers' eager GPT-2 block: Conv1D, where + finfo.min mask, 0-d scale, gelu_new
    def __init__(self):
        super().__init__()
        self.ln_1 = nn.LayerNorm(H); self.c_attn = Conv1D(3 * H, H); self.c_proj = Conv1D(H, H)
        self.ln_2 = nn.LayerNorm(H); self.c_fc = Conv1D(4 * H, H); self.c_out = Conv1D(H, 4 * H)
        self.register_buffer("bias", torch.tril(torch.ones(S, S, dtype=torch.bool))[None, None])

    def forward(self, x):
        b, s, _ = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(H, dim=2)
        q, k, v = (t.view(b, s, NH, HD).permute(0, 2, 1, 3) for t in (q, k, v))
        w = torch.matmul(q, k.transpose(-1, -2)) / torch.full([], v.size(-1) ** 0.5, dtype=q.dtype)
        w = torch.where(self.bias[:, :, :s, :s], w.to(q.dtype), torch.full([], torch.finfo(w.dtype).min, dtype=w.dtype))
        w = F.softmax(w, dim=-1).type(v.dtype)
        a = torch.matmul(w, v).permute(0, 2, 1, 3).contiguous().view(b, s, H)
        x = x + self.c_proj(a)
        h = self.c_fc(self.ln_2(x))
        h = 0.5 * h * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (h + 0.044715 * torch.pow(h, 3.0))))
        return x + self.c_out(h)


class Gemma2(nn.Module):  # softcapped logits (tanh), pre+post norms, sliding window additive mask, GQA 2 kv heads
    def __init__(self):
        super().__init__()
        self.w = nn.ParameterList([nn.Parameter(torch.randn(H) * 0.1) for _ in range(4)])
        self.q = nn.Linear(H, H, bias=False); self.k = nn.Linear(H, 2 * HD, bias=False); self.v = nn.Linear(H, 2 * HD, bias=False); self.o = nn.Linear(H, H, bias=False)
        self.gate = nn.Linear(H, I, bias=False); self.up = nn.Linear(H, I, bias=False); self.down = nn.Linear(I, H, bias=False)
    def norm(self, x, i):
        xf = x.float(); y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)
        return (y * (1.0 + self.w[i].float())).type_as(x)
    def forward(self, x, mask):
        b, t, _ = x.shape
        h = self.norm(x, 0)
        q = self.q(h).view(b, t, NH, HD).transpose(1, 2)
        k = self.k(h).view(b, t, 2, HD).transpose(1, 2).repeat_interleave(NH // 2, dim=1)
        v = self.v(h).view(b, t, 2, HD).transpose(1, 2).repeat_interleave(NH // 2, dim=1)
        w = q @ k.transpose(2, 3) * (HD ** -0.5)
        w = torch.tanh(w / 50.0) * 50.0 + mask
        w = F.softmax(w, dim=-1, dtype=torch.float32).to(q.dtype)
        a = (w @ v).transpose(1, 2).reshape(b, t, H)
        x = x + self.norm(self.o(a), 1)
        h = self.norm(x, 2)
        return x + self.norm(self.down(F.gelu(self.gate(h), approximate="tanh") * self.up(h)), 3)

class Bloom(nn.Module):  # ALiBi through baddbmm, LayerNorm, fused qkv by view, gelu (tanh form written out)
    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(H); self.qkv = nn.Linear(H, 3 * H); self.o = nn.Linear(H, H)
        self.ln2 = nn.LayerNorm(H); self.fc1 = nn.Linear(H, 4 * H); self.fc2 = nn.Linear(4 * H, H)
        slopes = torch.tensor([2 ** (-8 * (i + 1) / NH) for i in range(NH)])
        self.register_buffer("alibi", (slopes[:, None] * torch.arange(S)[None, :]).reshape(NH, 1, S))
    def forward(self, x, mask):
        b, t, _ = x.shape
        h = self.ln1(x)
        qkv = self.qkv(h).view(b, t, NH, 3, HD)
        q = qkv[..., 0, :].transpose(1, 2).reshape(b * NH, t, HD)
        k = qkv[..., 1, :].permute(0, 2, 3, 1).reshape(b * NH, HD, t)
        v = qkv[..., 2, :].transpose(1, 2).reshape(b * NH, t, HD)
        sc = torch.baddbmm(self.alibi.to(x.dtype).repeat(b, 1, 1), q, k, beta=1.0, alpha=1.0 / math.sqrt(HD))
        sc = sc.view(b, NH, t, t) + mask
        p = F.softmax(sc, dim=-1, dtype=torch.float32).to(x.dtype).view(b * NH, t, t)
        a = torch.bmm(p, v).view(b, NH, t, HD).permute(0, 2, 1, 3).reshape(b, t, H)
        x = x + self.o(a)
        u = self.fc1(self.ln2(x))
        u = u * 0.5 * (1.0 + torch.tanh(0.79788456 * u * (1 + 0.044715 * u * u)))
        return x + self.fc2(u)

class NeoX(nn.Module):  # parallel residual, partial rotary (25%), qkv interleaved per head
    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(H); self.ln2 = nn.LayerNorm(H)
        self.qkv = nn.Linear(H, 3 * H); self.o = nn.Linear(H, H); self.fc1 = nn.Linear(H, 4 * H); self.fc2 = nn.Linear(4 * H, H)
        r = HD // 4
        inv = 1.0 / (10000 ** (torch.arange(0, r, 2).float() / r)); f = torch.outer(torch.arange(S).float(), inv); emb = torch.cat([f, f], -1)
        self.register_buffer("cos", emb.cos()[None, None]); self.register_buffer("sin", emb.sin()[None, None]); self.r = r
    def forward(self, x):
        b, t, _ = x.shape
        qkv = self.qkv(self.ln1(x)).view(b, t, NH, 3 * HD).permute(0, 2, 1, 3)
        q, k, v = qkv[..., :HD], qkv[..., HD:2 * HD], qkv[..., 2 * HD:]
        def rope(z):
            zr, zp = z[..., :self.r], z[..., self.r:]
            rot = torch.cat((-zr[..., self.r // 2:], zr[..., :self.r // 2]), -1)
            return torch.cat((zr * self.cos.to(z.dtype) + rot * self.sin.to(z.dtype), zp), -1)
        q, k = rope(q), rope(k)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True).permute(0, 2, 1, 3).reshape(b, t, H)
        return x + self.o(a) + self.fc2(F.gelu(self.fc1(self.ln2(x))))

class Qwen2(nn.Module):  # qkv biases, GQA via SDPA enable_gqa, SwiGLU
    def __init__(self):
        super().__init__()
        self.n1 = nn.RMSNorm(H, eps=1e-6); self.n2 = nn.RMSNorm(H, eps=1e-6)
        self.q = nn.Linear(H, H); self.k = nn.Linear(H, 2 * HD); self.v = nn.Linear(H, 2 * HD); self.o = nn.Linear(H, H, bias=False)
        self.gate = nn.Linear(H, I, bias=False); self.up = nn.Linear(H, I, bias=False); self.down = nn.Linear(I, H, bias=False)
    def forward(self, x):
        b, t, _ = x.shape
        h = self.n1(x)
        q = self.q(h).view(b, t, NH, HD).transpose(1, 2); k = self.k(h).view(b, t, 2, HD).transpose(1, 2); v = self.v(h).view(b, t, 2, HD).transpose(1, 2)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True).transpose(1, 2).reshape(b, t, H)
        x = x + self.o(a)
        h = self.n2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))

class Olmo(nn.Module):  # non-parametric LayerNorm, clamped qkv (clip_qkv), SwiGLU from one fused projection
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(H, 3 * H, bias=False); self.o = nn.Linear(H, H, bias=False)
        self.ff = nn.Linear(H, 2 * I, bias=False); self.down = nn.Linear(I, H, bias=False)
    def forward(self, x):
        b, t, _ = x.shape
        h = F.layer_norm(x, (H,))
        qkv = self.qkv(h).clamp(-8.0, 8.0)
        q, k, v = (z.view(b, t, NH, HD).transpose(1, 2) for z in qkv.split(H, -1))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, t, H)
        x = x + self.o(a)
        u, g = self.ff(F.layer_norm(x, (H,))).chunk(2, -1)
        return x + self.down(F.silu(g) * u)

class MoE(nn.Module):  # top-2 routed experts (topk, scatter-free loop over experts), shared expert
    def __init__(self):
        super().__init__()
        self.n = nn.RMSNorm(H); self.router = nn.Linear(H, 4, bias=False)
        self.experts = nn.ModuleList([nn.Sequential(nn.Linear(H, I, bias=False), nn.SiLU(), nn.Linear(I, H, bias=False)) for _ in range(4)])
        self.shared = nn.Sequential(nn.Linear(H, I, bias=False), nn.GELU(), nn.Linear(I, H, bias=False))
    def forward(self, x):
        h = self.n(x)
        p = F.softmax(self.router(h).float(), -1)
        w, idx = torch.topk(p, 2, -1)
        w = (w / w.sum(-1, keepdim=True)).to(x.dtype)
        out = self.shared(h)
        for e, ex in enumerate(self.experts):
            sel = ((idx == e).to(x.dtype) * w).sum(-1, keepdim=True)
            out = out + sel * ex(h)
        return x + out


L = 24  # positions in the decode layers' KV cache

class Gemma2Decode(nn.Module):  # one token against a KV cache (inputs), concatenated and repeat_interleave'd; softcap
    def __init__(self):
        super().__init__()
        self.w = nn.ParameterList([nn.Parameter(torch.randn(H) * 0.1) for _ in range(4)])
        self.q = nn.Linear(H, H, bias=False); self.k = nn.Linear(H, 2 * HD, bias=False); self.v = nn.Linear(H, 2 * HD, bias=False); self.o = nn.Linear(H, H, bias=False)
        self.gate = nn.Linear(H, I, bias=False); self.up = nn.Linear(H, I, bias=False); self.down = nn.Linear(I, H, bias=False)
    def norm(self, x, i):
        xf = x.float(); y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)
        return (y * (1.0 + self.w[i].float())).type_as(x)
    def forward(self, x, kc, vc):
        b = x.shape[0]
        h = self.norm(x, 0)
        q = self.q(h).view(b, 1, NH, HD).transpose(1, 2)
        k = torch.cat([kc, self.k(h).view(b, 1, 2, HD).transpose(1, 2)], 2).repeat_interleave(NH // 2, dim=1)
        v = torch.cat([vc, self.v(h).view(b, 1, 2, HD).transpose(1, 2)], 2).repeat_interleave(NH // 2, dim=1)
        w = q @ k.transpose(2, 3) * (HD ** -0.5)
        w = torch.tanh(w / 50.0) * 50.0
        w = F.softmax(w, dim=-1, dtype=torch.float32).to(q.dtype)
        a = (w @ v).transpose(1, 2).reshape(b, 1, H)
        x = x + self.norm(self.o(a), 1)
        h = self.norm(x, 2)
        return x + self.norm(self.down(F.gelu(self.gate(h), approximate="tanh") * self.up(h)), 3)

class BloomDecode(nn.Module):  # one token: ALiBi through baddbmm against the cache, bmm
    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(H); self.qkv = nn.Linear(H, 3 * H); self.o = nn.Linear(H, H)
        self.ln2 = nn.LayerNorm(H); self.fc1 = nn.Linear(H, 4 * H); self.fc2 = nn.Linear(4 * H, H)
        slopes = torch.tensor([2 ** (-8 * (i + 1) / NH) for i in range(NH)])
        self.register_buffer("alibi", (slopes[:, None] * torch.arange(L + 1)[None, :]).reshape(NH, 1, L + 1))
    def forward(self, x, kc, vc):
        b = x.shape[0]
        qkv = self.qkv(self.ln1(x)).view(b, 1, NH, 3, HD)
        q = qkv[..., 0, :].transpose(1, 2).reshape(b * NH, 1, HD)
        k = torch.cat([kc, qkv[..., 1, :].transpose(1, 2)], 2).reshape(b * NH, L + 1, HD).transpose(1, 2)
        v = torch.cat([vc, qkv[..., 2, :].transpose(1, 2)], 2).reshape(b * NH, L + 1, HD)
        sc = torch.baddbmm(self.alibi.to(x.dtype).repeat(b, 1, 1), q, k, beta=1.0, alpha=1.0 / math.sqrt(HD))
        p = F.softmax(sc, dim=-1, dtype=torch.float32).to(x.dtype)
        a = torch.bmm(p, v).view(b, NH, 1, HD).permute(0, 2, 1, 3).reshape(b, 1, H)
        x = x + self.o(a)
        u = self.fc1(self.ln2(x))
        return x + self.fc2(F.gelu(u, approximate="tanh"))

class Qwen2Decode(nn.Module):  # one token: SDPA with enable_gqa over the cache, the norm called twice
    def __init__(self):
        super().__init__()
        self.n1 = nn.RMSNorm(H, eps=1e-6); self.n2 = nn.RMSNorm(H, eps=1e-6)
        self.q = nn.Linear(H, H); self.k = nn.Linear(H, 2 * HD); self.v = nn.Linear(H, 2 * HD); self.o = nn.Linear(H, H, bias=False)
        self.gate = nn.Linear(H, I, bias=False); self.up = nn.Linear(H, I, bias=False); self.down = nn.Linear(I, H, bias=False)
    def forward(self, x, kc, vc):
        b = x.shape[0]
        h = self.n1(x)
        q = self.q(h).view(b, 1, NH, HD).transpose(1, 2)
        k = torch.cat([kc, self.k(h).view(b, 1, 2, HD).transpose(1, 2)], 2); v = torch.cat([vc, self.v(h).view(b, 1, 2, HD).transpose(1, 2)], 2)
        a = F.scaled_dot_product_attention(q, k, v, enable_gqa=True).transpose(1, 2).reshape(b, 1, H)
        x = x + self.o(a)
        return x + self.down(F.silu(self.gate(self.n2(x))) * self.up(self.n2(x)))


def inputs(name: str) -> tuple[torch.Tensor, ...]:
    x = torch.randn(1, S, H).half()
    if name == "Bert":
        m = torch.zeros(1, 1, 1, S).half(); m[..., -3:] = -10000.0
        return (x, m)
    if name == "HFLlama":
        return (x, torch.full((S, S), -1e4).triu(1)[None, None].half())
    if name == "T5":
        return (x, (torch.randn(1, NH, S, S) * 0.5).half())
    if name == "Gemma2":  # causal and a sliding window of 8
        i = torch.arange(S)
        return (x, (((i[None, :] > i[:, None]) | (i[:, None] - i[None, :] >= 8)).float() * -1e4)[None, None].half())
    if name == "Bloom":
        return (x, torch.full((S, S), -1e4).triu(1)[None, None].half())
    if name.endswith("Decode"):  # two sequences, one new token each, their cached keys and values
        kv_heads = NH if name == "BloomDecode" else 2
        return (torch.randn(2, 1, H).half(), torch.randn(2, kv_heads, L, HD).half(), torch.randn(2, kv_heads, L, HD).half())
    return (x,)


ARCHITECTURES = ["Phi3", "Gemma", "Falcon", "Bert", "T5", "HFLlama", "GPT2HF", "Gemma2", "Bloom", "NeoX", "Qwen2", "Olmo", "MoE",
                 "Gemma2Decode", "BloomDecode", "Qwen2Decode"]


def optimized(name: str, compiler):  # type: ignore[no-untyped-def]
    torch.manual_seed(0)
    model = globals()[name]().half().eval()
    xs = inputs(name)
    m2 = ct.optimize(model, xs, compiler=compiler, timer=faster)
    with torch.no_grad():
        want = model.float()(*[x.float() for x in xs])
        model.half()
        got = m2(*xs).float()
    return m2.cleave_report.rows, ((got - want).abs().max() / want.abs().max()).item()


def check(rows, err: float) -> None:  # type: ignore[no-untyped-def]
    compiled = [r for r in rows if r.error is not None]
    assert compiled and all(r.decision == "cleave" for r in compiled), [(r.region, r.ops, r.reason) for r in rows]
    assert not [r for r in rows if r.reason.startswith(("compile failed", "kernel failed", "wrong"))]
    assert err < 2e-3, err


@pytest.mark.parametrize("name", ARCHITECTURES)
def test_unseen_architecture_layer_is_captured_and_stitched(name: str) -> None:
    check(*optimized(name, ct.interpreted_graph))


def test_transformers_eager_attention_is_one_region() -> None:
    """Llama's eager attention (rotary Q, scores + mask, float32 softmax, `.to(q.dtype)`, V), T5's
    (relative position bias, `.float()` softmax, `.type_as`) and GPT-2's (0-d scale, `torch.where` with
    finfo.min) each compile as one region."""
    for name, ops in (("HFLlama", ["matmul", "cast", "matmul"]), ("T5", ["matmul", "add", "cast", "cast", "matmul"]), ("GPT2HF", ["matmul", "select", "matmul"])):
        torch.manual_seed(0)
        plan = ct.explain(globals()[name]().half().eval(), inputs(name), quiet=True)
        attention = [r for r in plan.regions if r.graph is not None and "exp" in r.tgraph_ops()]
        assert len(attention) == 1 and attention[0].tgraph_ops().count("matmul") == 2, plan.text()
        kinds = [k for k in attention[0].tgraph_ops() if k in ("matmul", "add", "cast", "select")]
        assert all(k in kinds for k in ops), kinds


@pytest.mark.slow
@pytest.mark.parametrize("name", ARCHITECTURES)
def test_unseen_architecture_layer_through_the_real_pipeline(name: str, tmp_path) -> None:
    compiler = ct.PipelineCompiler(options=("--cache-dir", str(tmp_path), "-j", "1", "--keep", "2"), gpu=False)
    check(*optimized(name, compiler))
