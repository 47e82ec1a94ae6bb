// Multi-query attention: softmax(Q K^T / sqrt(128)) V, B=1, Hq=32, one KV head broadcast over the 32 query heads, S=4096, D=128.
tgraph.graph @mqa(%q: !tgraph.tensor<[1, 32, 4096, 128], f16>, %k: !tgraph.tensor<[1, 1, 4096, 128], f16>, %v: !tgraph.tensor<[1, 1, 4096, 128], f16>) -> !tgraph.tensor<[1, 32, 4096, 128], f16> {
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[1, 32, 4096, 128], f16>, !tgraph.tensor<[1, 1, 4096, 128], f16> -> !tgraph.tensor<[1, 32, 4096, 4096], f16>
  %t = tgraph.scale %s, 0.08838834764831845 : !tgraph.tensor<[1, 32, 4096, 4096], f16>
  %e = tgraph.exp %t : !tgraph.tensor<[1, 32, 4096, 4096], f16>
  %r = tgraph.reduce sum %e dim 3 : !tgraph.tensor<[1, 32, 4096, 4096], f16> -> !tgraph.tensor<[1, 32, 4096, 1], f16>
  %p = tgraph.div %e, %r : !tgraph.tensor<[1, 32, 4096, 4096], f16>, !tgraph.tensor<[1, 32, 4096, 1], f16> -> !tgraph.tensor<[1, 32, 4096, 4096], f16>
  %o = tgraph.matmul %p, %v : !tgraph.tensor<[1, 32, 4096, 4096], f16>, !tgraph.tensor<[1, 1, 4096, 128], f16> -> !tgraph.tensor<[1, 32, 4096, 128], f16>
  tgraph.output %o : !tgraph.tensor<[1, 32, 4096, 128], f16>
}
