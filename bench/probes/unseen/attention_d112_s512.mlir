// Bidirectional attention with head dim 112 (16 x 7: no power of two), 8 heads of 512 tokens: softmax(q k^T / sqrt(112)) v, max-subtracted.
tgraph.graph @attn_d112(%q: !tgraph.tensor<[8, 512, 112], f16>, %k: !tgraph.tensor<[8, 512, 112], f16>, %v: !tgraph.tensor<[8, 512, 112], f16>) -> !tgraph.tensor<[8, 512, 112], f16> {
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[8, 512, 112], f16>, !tgraph.tensor<[8, 512, 112], f16> -> !tgraph.tensor<[8, 512, 512], f16>
  %t = tgraph.scale %s, 0.0944911182523068 : !tgraph.tensor<[8, 512, 512], f16>
  %m = tgraph.reduce max %t dim 2 : !tgraph.tensor<[8, 512, 512], f16> -> !tgraph.tensor<[8, 512, 1], f16>
  %d = tgraph.sub %t, %m : !tgraph.tensor<[8, 512, 512], f16>, !tgraph.tensor<[8, 512, 1], f16> -> !tgraph.tensor<[8, 512, 512], f16>
  %e = tgraph.exp %d : !tgraph.tensor<[8, 512, 512], f16>
  %z = tgraph.reduce sum %e dim 2 : !tgraph.tensor<[8, 512, 512], f16> -> !tgraph.tensor<[8, 512, 1], f16>
  %p = tgraph.div %e, %z : !tgraph.tensor<[8, 512, 512], f16>, !tgraph.tensor<[8, 512, 1], f16> -> !tgraph.tensor<[8, 512, 512], f16>
  %o = tgraph.matmul %p, %v : !tgraph.tensor<[8, 512, 512], f16>, !tgraph.tensor<[8, 512, 112], f16> -> !tgraph.tensor<[8, 512, 112], f16>
  tgraph.output %o : !tgraph.tensor<[8, 512, 112], f16>
}
