// Multi-query decode attention, Falcon-7B (transformers models/falcon/modeling_falcon.py, FalconAttention,
// multi_query=True): one new token per sequence, 71 query heads over one shared K/V head:
// softmax(q K^T / sqrt(64)) V, q [B, 1, H, D] against K, V [B, 1, T, D] (the KV cache; no mask).
// Test shape: B=2, H=16, T=128, D=32. Real shape: B=16, H=64 (71 rounded), T=4096, D=64.
// gpu-resize: 2=16 16=64 128=4096 32=64
tgraph.graph @falcon_mqa_decode(%q: !tgraph.tensor<[2, 1, 16, 32], f16>, %k: !tgraph.tensor<[2, 1, 128, 32], f16>, %v: !tgraph.tensor<[2, 1, 128, 32], f16>) -> !tgraph.tensor<[2, 1, 16, 32], f16> {
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[2, 1, 16, 32], f16>, !tgraph.tensor<[2, 1, 128, 32], f16> -> !tgraph.tensor<[2, 1, 16, 128], f16>
  %t = tgraph.scale %s, 1.250000e-01 : !tgraph.tensor<[2, 1, 16, 128], f16>
  %m = tgraph.reduce max %t dim 3 : !tgraph.tensor<[2, 1, 16, 128], f16> -> !tgraph.tensor<[2, 1, 16, 1], f16>
  %0 = tgraph.sub %t, %m : !tgraph.tensor<[2, 1, 16, 128], f16>, !tgraph.tensor<[2, 1, 16, 1], f16> -> !tgraph.tensor<[2, 1, 16, 128], f16>
  %e = tgraph.exp %0 : !tgraph.tensor<[2, 1, 16, 128], f16>
  %r = tgraph.reduce sum %e dim 3 : !tgraph.tensor<[2, 1, 16, 128], f16> -> !tgraph.tensor<[2, 1, 16, 1], f16>
  %p = tgraph.div %e, %r : !tgraph.tensor<[2, 1, 16, 128], f16>, !tgraph.tensor<[2, 1, 16, 1], f16> -> !tgraph.tensor<[2, 1, 16, 128], f16>
  %o = tgraph.matmul %p, %v : !tgraph.tensor<[2, 1, 16, 128], f16>, !tgraph.tensor<[2, 1, 128, 32], f16> -> !tgraph.tensor<[2, 1, 16, 32], f16>
  tgraph.output %o : !tgraph.tensor<[2, 1, 16, 32], f16>
}
