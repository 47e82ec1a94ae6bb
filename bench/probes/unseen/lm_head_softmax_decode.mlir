// Sampling at decode: next-token probabilities softmax(x W_lm) for 4 sequences, Llama-2 vocabulary (32000).
tgraph.graph @lm_head_softmax_decode(%x: !tgraph.tensor<[4, 4096], f16>, %w: !tgraph.tensor<[4096, 32000], f16>) -> !tgraph.tensor<[4, 32000], f16> {
  %l = tgraph.matmul %x, %w : !tgraph.tensor<[4, 4096], f16>, !tgraph.tensor<[4096, 32000], f16> -> !tgraph.tensor<[4, 32000], f16>
  %m = tgraph.reduce max %l dim 1 : !tgraph.tensor<[4, 32000], f16> -> !tgraph.tensor<[4, 1], f16>
  %z = tgraph.sub %l, %m : !tgraph.tensor<[4, 32000], f16>, !tgraph.tensor<[4, 1], f16> -> !tgraph.tensor<[4, 32000], f16>
  %e = tgraph.exp %z : !tgraph.tensor<[4, 32000], f16>
  %r = tgraph.reduce sum %e dim 1 : !tgraph.tensor<[4, 32000], f16> -> !tgraph.tensor<[4, 1], f16>
  %p = tgraph.div %e, %r : !tgraph.tensor<[4, 32000], f16>, !tgraph.tensor<[4, 1], f16> -> !tgraph.tensor<[4, 32000], f16>
  tgraph.output %p : !tgraph.tensor<[4, 32000], f16>
}
