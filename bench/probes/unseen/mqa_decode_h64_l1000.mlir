// Multi-query decode: 64 query heads share one KV head over 1000 cached tokens (awkward length), head dim 128.
tgraph.graph @mqa_decode(%q: !tgraph.tensor<[1, 64, 128], f16>, %k: !tgraph.tensor<[1, 1000, 128], f16>, %v: !tgraph.tensor<[1, 1000, 128], f16>) -> !tgraph.tensor<[1, 64, 128], f16> {
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[1, 64, 128], f16>, !tgraph.tensor<[1, 1000, 128], f16> -> !tgraph.tensor<[1, 64, 1000], f16>
  %t = tgraph.scale %s, 8.838834764831845e-02 : !tgraph.tensor<[1, 64, 1000], f16>
  %m = tgraph.reduce max %t dim 2 : !tgraph.tensor<[1, 64, 1000], f16> -> !tgraph.tensor<[1, 64, 1], f16>
  %z = tgraph.sub %t, %m : !tgraph.tensor<[1, 64, 1000], f16>, !tgraph.tensor<[1, 64, 1], f16> -> !tgraph.tensor<[1, 64, 1000], f16>
  %e = tgraph.exp %z : !tgraph.tensor<[1, 64, 1000], f16>
  %r = tgraph.reduce sum %e dim 2 : !tgraph.tensor<[1, 64, 1000], f16> -> !tgraph.tensor<[1, 64, 1], f16>
  %p = tgraph.div %e, %r : !tgraph.tensor<[1, 64, 1000], f16>, !tgraph.tensor<[1, 64, 1], f16> -> !tgraph.tensor<[1, 64, 1000], f16>
  %o = tgraph.matmul %p, %v : !tgraph.tensor<[1, 64, 1000], f16>, !tgraph.tensor<[1, 1000, 128], f16> -> !tgraph.tensor<[1, 64, 128], f16>
  tgraph.output %o : !tgraph.tensor<[1, 64, 128], f16>
}
