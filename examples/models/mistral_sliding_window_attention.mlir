// Sliding-window grouped-query attention, Mistral-7B-v0.1 (transformers models/mistral/modeling_mistral.py,
// MistralAttention; sliding_window=4096): softmax(Q K^T / sqrt(D) under a banded causal mask) V. Q as
// [B, Hkv, G, S, D], K and V as [B, Hkv, 1, S, D] broadcast over the G query heads of a group; the band
// (query - window < key <= query) is the 0/1 mask input.
// Test shape: Hkv=2, G=4, S=64, D=32. Real shape: Hkv=8, G=4, S=4096 (window 4096 reaches every key at
// this length; the benchmark feeds a 1024-wide band), D=128.
// gpu-resize: 2=8 64=4096 32=128
tgraph.graph @mistral_sliding_window_attention(%q: !tgraph.tensor<[1, 2, 4, 64, 32], f16>, %k: !tgraph.tensor<[1, 2, 1, 64, 32], f16>, %v: !tgraph.tensor<[1, 2, 1, 64, 32], f16>, %mask: !tgraph.tensor<[1, 1, 1, 64, 64], f16>) -> !tgraph.tensor<[1, 2, 4, 64, 32], f16> {
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[1, 2, 4, 64, 32], f16>, !tgraph.tensor<[1, 2, 1, 64, 32], f16> -> !tgraph.tensor<[1, 2, 4, 64, 64], f16>
  %t = tgraph.scale %s, 0.088388347648318433 : !tgraph.tensor<[1, 2, 4, 64, 64], f16>
  %fill = tgraph.scalar sub %mask, 1.000000e+04 : !tgraph.tensor<[1, 1, 1, 64, 64], f16>
  %tm = tgraph.select %mask, %t, %fill : !tgraph.tensor<[1, 1, 1, 64, 64], f16>, !tgraph.tensor<[1, 2, 4, 64, 64], f16>, !tgraph.tensor<[1, 1, 1, 64, 64], f16> -> !tgraph.tensor<[1, 2, 4, 64, 64], f16>
  %m = tgraph.reduce max %tm dim 4 : !tgraph.tensor<[1, 2, 4, 64, 64], f16> -> !tgraph.tensor<[1, 2, 4, 64, 1], f16>
  %0 = tgraph.sub %tm, %m : !tgraph.tensor<[1, 2, 4, 64, 64], f16>, !tgraph.tensor<[1, 2, 4, 64, 1], f16> -> !tgraph.tensor<[1, 2, 4, 64, 64], f16>
  %e = tgraph.exp %0 : !tgraph.tensor<[1, 2, 4, 64, 64], f16>
  %r = tgraph.reduce sum %e dim 4 : !tgraph.tensor<[1, 2, 4, 64, 64], f16> -> !tgraph.tensor<[1, 2, 4, 64, 1], f16>
  %p = tgraph.div %e, %r : !tgraph.tensor<[1, 2, 4, 64, 64], f16>, !tgraph.tensor<[1, 2, 4, 64, 1], f16> -> !tgraph.tensor<[1, 2, 4, 64, 64], f16>
  %o = tgraph.matmul %p, %v : !tgraph.tensor<[1, 2, 4, 64, 64], f16>, !tgraph.tensor<[1, 2, 1, 64, 32], f16> -> !tgraph.tensor<[1, 2, 4, 64, 32], f16>
  tgraph.output %o : !tgraph.tensor<[1, 2, 4, 64, 32], f16>
}
