// FlashAttention's two outputs (ring or split-KV attention merges partial results by their log-sum-exp):
// O = softmax(q k^T / sqrt(d)) v and lse = m + log(sum exp(s - m)), B1 H8 S1024 D64.
tgraph.graph @attention_lse(%q: !tgraph.tensor<[1, 8, 1024, 64], f16>, %k: !tgraph.tensor<[1, 8, 1024, 64], f16>, %v: !tgraph.tensor<[1, 8, 1024, 64], f16>) -> (!tgraph.tensor<[1, 8, 1024, 64], f16>, !tgraph.tensor<[1, 8, 1024, 1], f32>) {
  %s0 = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[1, 8, 1024, 64], f16>, !tgraph.tensor<[1, 8, 1024, 64], f16> -> !tgraph.tensor<[1, 8, 1024, 1024], f16>
  %s = tgraph.scale %s0, 1.250000e-01 : !tgraph.tensor<[1, 8, 1024, 1024], f16>
  %m = tgraph.reduce max %s dim 3 : !tgraph.tensor<[1, 8, 1024, 1024], f16> -> !tgraph.tensor<[1, 8, 1024, 1], f16>
  %z = tgraph.sub %s, %m : !tgraph.tensor<[1, 8, 1024, 1024], f16>, !tgraph.tensor<[1, 8, 1024, 1], f16> -> !tgraph.tensor<[1, 8, 1024, 1024], f16>
  %e = tgraph.exp %z : !tgraph.tensor<[1, 8, 1024, 1024], f16>
  %r = tgraph.reduce sum %e dim 3 : !tgraph.tensor<[1, 8, 1024, 1024], f16> -> !tgraph.tensor<[1, 8, 1024, 1], f16>
  %p = tgraph.div %e, %r : !tgraph.tensor<[1, 8, 1024, 1024], f16>, !tgraph.tensor<[1, 8, 1024, 1], f16> -> !tgraph.tensor<[1, 8, 1024, 1024], f16>
  %o = tgraph.matmul %p, %v : !tgraph.tensor<[1, 8, 1024, 1024], f16>, !tgraph.tensor<[1, 8, 1024, 64], f16> -> !tgraph.tensor<[1, 8, 1024, 64], f16>
  %l = tgraph.log %r : !tgraph.tensor<[1, 8, 1024, 1], f16>
  %lse16 = tgraph.add %l, %m : !tgraph.tensor<[1, 8, 1024, 1], f16>, !tgraph.tensor<[1, 8, 1024, 1], f16> -> !tgraph.tensor<[1, 8, 1024, 1], f16>
  %lse = tgraph.cast %lse16 : !tgraph.tensor<[1, 8, 1024, 1], f16> -> !tgraph.tensor<[1, 8, 1024, 1], f32>
  tgraph.output %o, %lse : !tgraph.tensor<[1, 8, 1024, 64], f16>, !tgraph.tensor<[1, 8, 1024, 1], f32>
}
