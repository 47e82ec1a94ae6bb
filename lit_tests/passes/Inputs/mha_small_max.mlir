// A small mha (2 heads, 2048 tokens, head dim 64) with softmax written as exp(t - max t) / sum(exp(t - max t)).
tgraph.graph @mha(%q: !tgraph.tensor<[1, 2, 2048, 64], f16>, %k: !tgraph.tensor<[1, 2, 2048, 64], f16>, %v: !tgraph.tensor<[1, 2, 2048, 64], f16>) -> !tgraph.tensor<[1, 2, 2048, 64], f16> {
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[1, 2, 2048, 64], f16>, !tgraph.tensor<[1, 2, 2048, 64], f16> -> !tgraph.tensor<[1, 2, 2048, 2048], f16>
  %t = tgraph.scale %s, 0.125 : !tgraph.tensor<[1, 2, 2048, 2048], f16>
  %m = tgraph.reduce max %t dim 3 : !tgraph.tensor<[1, 2, 2048, 2048], f16> -> !tgraph.tensor<[1, 2, 2048, 1], f16>
  %d = tgraph.sub %t, %m : !tgraph.tensor<[1, 2, 2048, 2048], f16>, !tgraph.tensor<[1, 2, 2048, 1], f16> -> !tgraph.tensor<[1, 2, 2048, 2048], f16>
  %e = tgraph.exp %d : !tgraph.tensor<[1, 2, 2048, 2048], f16>
  %r = tgraph.reduce sum %e dim 3 : !tgraph.tensor<[1, 2, 2048, 2048], f16> -> !tgraph.tensor<[1, 2, 2048, 1], f16>
  %p = tgraph.div %e, %r : !tgraph.tensor<[1, 2, 2048, 2048], f16>, !tgraph.tensor<[1, 2, 2048, 1], f16> -> !tgraph.tensor<[1, 2, 2048, 2048], f16>
  %o = tgraph.matmul %p, %v : !tgraph.tensor<[1, 2, 2048, 2048], f16>, !tgraph.tensor<[1, 2, 2048, 64], f16> -> !tgraph.tensor<[1, 2, 2048, 64], f16>
  tgraph.output %o : !tgraph.tensor<[1, 2, 2048, 64], f16>
}
