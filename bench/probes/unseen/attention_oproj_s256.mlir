// Attention followed by its output projection in one graph (three matmuls): (softmax(q k^T / 8) v) @ Wo per head, heads summed by the caller; 4 heads, 256 tokens, head dim 64, model dim 256.
tgraph.graph @attn_oproj(%q: !tgraph.tensor<[4, 256, 64], f16>, %k: !tgraph.tensor<[4, 256, 64], f16>, %v: !tgraph.tensor<[4, 256, 64], f16>, %wo: !tgraph.tensor<[4, 64, 256], f16>) -> !tgraph.tensor<[4, 256, 256], f16> {
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[4, 256, 64], f16>, !tgraph.tensor<[4, 256, 64], f16> -> !tgraph.tensor<[4, 256, 256], f16>
  %t = tgraph.scale %s, 0.125 : !tgraph.tensor<[4, 256, 256], f16>
  %m = tgraph.reduce max %t dim 2 : !tgraph.tensor<[4, 256, 256], f16> -> !tgraph.tensor<[4, 256, 1], f16>
  %d = tgraph.sub %t, %m : !tgraph.tensor<[4, 256, 256], f16>, !tgraph.tensor<[4, 256, 1], f16> -> !tgraph.tensor<[4, 256, 256], f16>
  %e = tgraph.exp %d : !tgraph.tensor<[4, 256, 256], f16>
  %z = tgraph.reduce sum %e dim 2 : !tgraph.tensor<[4, 256, 256], f16> -> !tgraph.tensor<[4, 256, 1], f16>
  %p = tgraph.div %e, %z : !tgraph.tensor<[4, 256, 256], f16>, !tgraph.tensor<[4, 256, 1], f16> -> !tgraph.tensor<[4, 256, 256], f16>
  %o = tgraph.matmul %p, %v : !tgraph.tensor<[4, 256, 256], f16>, !tgraph.tensor<[4, 256, 64], f16> -> !tgraph.tensor<[4, 256, 64], f16>
  %y = tgraph.matmul %o, %wo : !tgraph.tensor<[4, 256, 64], f16>, !tgraph.tensor<[4, 64, 256], f16> -> !tgraph.tensor<[4, 256, 256], f16>
  tgraph.output %y : !tgraph.tensor<[4, 256, 256], f16>
}
