tgraph.graph @fa_small(%q: !tgraph.tensor<[1, 32, 64], f16>, %k: !tgraph.tensor<[1, 512, 64], f16>, %v: !tgraph.tensor<[1, 512, 64], f16>) -> !tgraph.tensor<[1, 32, 64], f16> {
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[1, 32, 64], f16>, !tgraph.tensor<[1, 512, 64], f16> -> !tgraph.tensor<[1, 32, 512], f16>
  %t = tgraph.scale %s, 0.125 : !tgraph.tensor<[1, 32, 512], f16>
  %e = tgraph.exp %t : !tgraph.tensor<[1, 32, 512], f16>
  %o = tgraph.matmul %e, %v : !tgraph.tensor<[1, 32, 512], f16>, !tgraph.tensor<[1, 512, 64], f16> -> !tgraph.tensor<[1, 32, 64], f16>
  %l = tgraph.reduce sum %e dim 2 : !tgraph.tensor<[1, 32, 512], f16> -> !tgraph.tensor<[1, 32, 1], f16>
  %r = tgraph.div %o, %l : !tgraph.tensor<[1, 32, 64], f16>, !tgraph.tensor<[1, 32, 1], f16> -> !tgraph.tensor<[1, 32, 64], f16>
  tgraph.output %r : !tgraph.tensor<[1, 32, 64], f16>
}
