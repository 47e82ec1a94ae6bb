// ALiBi attention, BLOOM-7B1 (transformers models/bloom/modeling_bloom.py, build_alibi_tensor and
// BloomAttention): softmax(Q K^T / sqrt(D) + slope_h * key_position, causal 0/1 mask) V; the per-head bias
// row alibi [B, H, 1, S] is an input.
// Test shape: H=2, S=64, D=32. Real shape: H=32, S=2048, D=128.
// gpu-resize: 2=32 64=2048 32=128
tgraph.graph @bloom_alibi_attention(%q: !tgraph.tensor<[1, 2, 64, 32], f16>, %k: !tgraph.tensor<[1, 2, 64, 32], f16>, %v: !tgraph.tensor<[1, 2, 64, 32], f16>, %alibi: !tgraph.tensor<[1, 2, 1, 64], f16>, %mask: !tgraph.tensor<[1, 1, 64, 64], f16>) -> !tgraph.tensor<[1, 2, 64, 32], f16> {
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[1, 2, 64, 32], f16>, !tgraph.tensor<[1, 2, 64, 32], f16> -> !tgraph.tensor<[1, 2, 64, 64], f16>
  %ts = tgraph.scale %s, 0.088388347648318433 : !tgraph.tensor<[1, 2, 64, 64], f16>
  %ta = tgraph.add %ts, %alibi : !tgraph.tensor<[1, 2, 64, 64], f16>, !tgraph.tensor<[1, 2, 1, 64], f16> -> !tgraph.tensor<[1, 2, 64, 64], f16>
  %fill = tgraph.scalar sub %mask, 1.000000e+04 : !tgraph.tensor<[1, 1, 64, 64], f16>
  %tm = tgraph.select %mask, %ta, %fill : !tgraph.tensor<[1, 1, 64, 64], f16>, !tgraph.tensor<[1, 2, 64, 64], f16>, !tgraph.tensor<[1, 1, 64, 64], f16> -> !tgraph.tensor<[1, 2, 64, 64], f16>
  %m = tgraph.reduce max %tm dim 3 : !tgraph.tensor<[1, 2, 64, 64], f16> -> !tgraph.tensor<[1, 2, 64, 1], f16>
  %0 = tgraph.sub %tm, %m : !tgraph.tensor<[1, 2, 64, 64], f16>, !tgraph.tensor<[1, 2, 64, 1], f16> -> !tgraph.tensor<[1, 2, 64, 64], f16>
  %e = tgraph.exp %0 : !tgraph.tensor<[1, 2, 64, 64], f16>
  %r = tgraph.reduce sum %e dim 3 : !tgraph.tensor<[1, 2, 64, 64], f16> -> !tgraph.tensor<[1, 2, 64, 1], f16>
  %p = tgraph.div %e, %r : !tgraph.tensor<[1, 2, 64, 64], f16>, !tgraph.tensor<[1, 2, 64, 1], f16> -> !tgraph.tensor<[1, 2, 64, 64], f16>
  %o = tgraph.matmul %p, %v : !tgraph.tensor<[1, 2, 64, 64], f16>, !tgraph.tensor<[1, 2, 64, 32], f16> -> !tgraph.tensor<[1, 2, 64, 32], f16>
  tgraph.output %o : !tgraph.tensor<[1, 2, 64, 32], f16>
}
