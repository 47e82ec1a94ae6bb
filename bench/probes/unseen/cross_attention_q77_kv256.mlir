// Cross-attention (text queries over image keys): 77 queries, 256 keys, 8 heads, D=64.
tgraph.graph @cross_attention(%q: !tgraph.tensor<[1, 8, 77, 64], f16>, %k: !tgraph.tensor<[1, 8, 256, 64], f16>, %v: !tgraph.tensor<[1, 8, 256, 64], f16>) -> !tgraph.tensor<[1, 8, 77, 64], f16> {
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[1, 8, 77, 64], f16>, !tgraph.tensor<[1, 8, 256, 64], f16> -> !tgraph.tensor<[1, 8, 77, 256], f16>
  %t = tgraph.scale %s, 0.125 : !tgraph.tensor<[1, 8, 77, 256], f16>
  %m = tgraph.reduce max %t dim 3 : !tgraph.tensor<[1, 8, 77, 256], f16> -> !tgraph.tensor<[1, 8, 77, 1], f16>
  %z = tgraph.sub %t, %m : !tgraph.tensor<[1, 8, 77, 256], f16>, !tgraph.tensor<[1, 8, 77, 1], f16> -> !tgraph.tensor<[1, 8, 77, 256], f16>
  %e = tgraph.exp %z : !tgraph.tensor<[1, 8, 77, 256], f16>
  %r = tgraph.reduce sum %e dim 3 : !tgraph.tensor<[1, 8, 77, 256], f16> -> !tgraph.tensor<[1, 8, 77, 1], f16>
  %p = tgraph.div %e, %r : !tgraph.tensor<[1, 8, 77, 256], f16>, !tgraph.tensor<[1, 8, 77, 1], f16> -> !tgraph.tensor<[1, 8, 77, 256], f16>
  %o = tgraph.matmul %p, %v : !tgraph.tensor<[1, 8, 77, 256], f16>, !tgraph.tensor<[1, 8, 256, 64], f16> -> !tgraph.tensor<[1, 8, 77, 64], f16>
  tgraph.output %o : !tgraph.tensor<[1, 8, 77, 64], f16>
}
