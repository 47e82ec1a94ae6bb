"""Probe (GPU): Mistral sliding-window attention (bench/probes/unseen, S=1000) with its padded dims
dynamic, as emitted at 1cadd11, against the same kernel with them specialized to 1000 by hand (what
the emitted module's `prim_func` does since, from `STATIC_SIZES`), at 1-3 pipelining stages. Reads
the module `gpu_suite.py prepare` wrote, copied to .gpu/mprobe/m.py:

    bash bench/on_device.sh python bench/probes/mistral_static_dims.py      # writes $OUT/mprobe.json

Results: bench/results/static_padded_dims_2026-12-04_H200.md.
"""
import sys, importlib.util, json
import torch, tilelang
from tilelang import tvm
from cleave_ir.runtime import timed
tirx = tvm.tirx
name = 'mistral_sliding_window_attention_c1_k0'
def load(stages):
    src = open('.gpu/mprobe/m.py').read()
    if stages: src = src.replace('num_stages=1', f'num_stages={stages}')
    p = f'/tmp/m_{stages}.py'; open(p, 'w').write(src)
    spec = importlib.util.spec_from_file_location(f"m{stages}", p); mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
    return mod
def specialized(mod, real):
    func = getattr(mod, name); binds = {}
    for p in func.params:
        buf = func.buffer_map.get(p)
        if buf is None: continue
        shape = [tirx.IntImm('int32', real[s.name]) if isinstance(s, tirx.Var) and s.name in real else s for s in buf.shape]
        strides, step = [], 1
        for d in reversed(shape):
            strides.insert(0, step); step = step * d
        binds[p] = tirx.decl_buffer(shape, buf.dtype, buf.name, strides=strides)
    return func.specialize(binds)
S, D = 1000, 80
g = torch.Generator(device='cuda').manual_seed(0)
q = torch.randn(1, 8, 4, S, D, device='cuda', generator=g).half()
k = torch.randn(1, 8, 1, S, D, device='cuda', generator=g).half()
v = torch.randn(1, 8, 1, S, D, device='cuda', generator=g).half()
i = torch.arange(S, device='cuda')
mask = ((i[None, :] <= i[:, None]) & (i[None, :] > i[:, None] - 256)).half().view(1, 1, 1, S, S)
s = (q.double() @ k.double().transpose(-1, -2)) * 0.088388347648318433
s = torch.where(mask != 0, s, mask.double() - 1e4)
ref = torch.softmax(s, -1) @ v.double()
out = {}
for label, stages, spec in [('as emitted', 0, False), ('static, 1 stage', 0, True), ('static, 2 stages', 2, True), ('static, 3 stages', 3, True)]:
    try:
        mod = load(stages)
        func = specialized(mod, {'k_d3': S, 'q_d3': S}) if spec else mod.prim_func(name)
        kern = tilelang.compile(func, out_idx=None, target='cuda', pass_configs=mod.KERNELS[name]['pass_configs'])
        o = torch.empty_like(q)
        kern(q, k, v, mask, o); torch.cuda.synchronize()
        err = ((o.double() - ref).abs().max() / ref.abs().max()).item()
        t = timed(lambda: kern(q, k, v, mask, o))
        out[label] = {'us': t.us if hasattr(t, 'us') else t.microseconds, 'err': err}
    except Exception as e:
        out[label] = {'error': str(e).splitlines()[-1][:300]}
    print(label, out[label], flush=True)
import os
json.dump(out, open(os.environ['OUT'] + '/mprobe.json', 'w'), indent=1)
