import torch, torch.nn.functional as F
from cleave_ir import runtime
torch.manual_seed(0)
for n, k in ((14336, 4096), (4096, 4096), (1024, 4096), (4096, 14336)):
    x = torch.randn(1, k, dtype=torch.half, device="cuda")
    w = torch.randn(n, k, dtype=torch.half, device="cuda")
    us = runtime.time_us(lambda: F.linear(x, w), batch=20, iters=10)
    print(f"F.linear x[1,{k}] W[{n},{k}]: {us:.1f} us, {n*k*2/us/1e6:.2f} TB/s")
