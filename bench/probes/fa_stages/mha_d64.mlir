// attention: mha B1 H32 S8192 D64
tgraph.graph @mha(%q: !tgraph.tensor<[1, 32, 8192, 64], f16>, %k: !tgraph.tensor<[1, 32, 8192, 64], f16>, %v: !tgraph.tensor<[1, 32, 8192, 64], f16>) -> !tgraph.tensor<[1, 32, 8192, 64], f16> {
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[1, 32, 8192, 64], f16>, !tgraph.tensor<[1, 32, 8192, 64], f16> -> !tgraph.tensor<[1, 32, 8192, 8192], f16>
  %t = tgraph.scale %s, 0.125 : !tgraph.tensor<[1, 32, 8192, 8192], f16>
  %e = tgraph.exp %t : !tgraph.tensor<[1, 32, 8192, 8192], f16>
  %r = tgraph.reduce sum %e dim 3 : !tgraph.tensor<[1, 32, 8192, 8192], f16> -> !tgraph.tensor<[1, 32, 8192, 1], f16>
  %p = tgraph.div %e, %r : !tgraph.tensor<[1, 32, 8192, 8192], f16>, !tgraph.tensor<[1, 32, 8192, 1], f16> -> !tgraph.tensor<[1, 32, 8192, 8192], f16>
  %o = tgraph.matmul %p, %v : !tgraph.tensor<[1, 32, 8192, 8192], f16>, !tgraph.tensor<[1, 32, 8192, 64], f16> -> !tgraph.tensor<[1, 32, 8192, 64], f16>
  tgraph.output %o : !tgraph.tensor<[1, 32, 8192, 64], f16>
}
