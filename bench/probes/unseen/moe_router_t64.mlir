// Mixture-of-experts router: softmax over 8 experts of x @ Wg^T, 64 tokens, hidden 4096.
tgraph.graph @moe_router(%x: !tgraph.tensor<[64, 4096], f16>, %wg: !tgraph.tensor<[8, 4096], f16>) -> !tgraph.tensor<[64, 8], f16> {
  %l = tgraph.matmul %x, %wg transpose_b : !tgraph.tensor<[64, 4096], f16>, !tgraph.tensor<[8, 4096], f16> -> !tgraph.tensor<[64, 8], f16>
  %m = tgraph.reduce max %l dim 1 : !tgraph.tensor<[64, 8], f16> -> !tgraph.tensor<[64, 1], f16>
  %z = tgraph.sub %l, %m : !tgraph.tensor<[64, 8], f16>, !tgraph.tensor<[64, 1], f16> -> !tgraph.tensor<[64, 8], f16>
  %e = tgraph.exp %z : !tgraph.tensor<[64, 8], f16>
  %r = tgraph.reduce sum %e dim 1 : !tgraph.tensor<[64, 8], f16> -> !tgraph.tensor<[64, 1], f16>
  %p = tgraph.div %e, %r : !tgraph.tensor<[64, 8], f16>, !tgraph.tensor<[64, 1], f16> -> !tgraph.tensor<[64, 8], f16>
  tgraph.output %p : !tgraph.tensor<[64, 8], f16>
}
