"""CPU check of `ct.optimize` on a block no example has: `python bench/probes/alibi_block_cpu.py` (session 53: 4 regions
compiled and correct on 6 input sets, refused as slower on the CPU, output within 8.8e-9 of float64)."""
# Not an example: ALiBi-biased attention + a Gemma-style (1 + w) RMSNorm and a GeLU-tanh MLP (static shapes)
import torch, torch.nn as nn, torch.nn.functional as F
import cleave_ir.torch as ct
torch.manual_seed(0); torch.set_float32_matmul_precision("high")
class Block(nn.Module):
    def __init__(s, d=64, h=4):
        super().__init__(); s.h=h; s.w=nn.Parameter(torch.randn(d)*0.1); s.qkv=nn.Linear(d,3*d); s.o=nn.Linear(d,d)
        s.up=nn.Linear(d,4*d); s.down=nn.Linear(4*d,d)
        s.register_buffer("slopes", 2.0 ** (-torch.arange(1, h+1, dtype=torch.float32)))
    def forward(s, x):
        b,t,d=x.shape
        n = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * (1 + s.w)
        q,k,v = s.qkv(n).view(b,t,3,s.h,d//s.h).permute(2,0,3,1,4)
        pos = torch.arange(t, dtype=torch.float32)
        bias = -(pos[None,:]-pos[:,None]).abs()[None] * s.slopes[:,None,None]
        a = torch.softmax(q @ k.transpose(-1,-2) / (d//s.h)**0.5 + bias, -1) @ v
        x = x + s.o(a.transpose(1,2).reshape(b,t,d))
        return x + s.down(F.gelu(s.up(x), approximate="tanh"))
m = Block().eval(); x = torch.randn(2, 48, 64)
m2 = ct.optimize(m, (x,))
print(m2.cleave_report)
with torch.no_grad():
    ref = m.double()(x.double()); got = m2(x)
print("max rel err", ((got.double()-ref).abs().max()/ref.abs().max()).item())
