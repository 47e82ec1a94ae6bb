// attention: mha B1 H32 S4096 D112
tgraph.graph @mha(%q: !tgraph.tensor<[1, 32, 4096, 112], f16>, %k: !tgraph.tensor<[1, 32, 4096, 112], f16>, %v: !tgraph.tensor<[1, 32, 4096, 112], f16>) -> !tgraph.tensor<[1, 32, 4096, 112], f16> {
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[1, 32, 4096, 112], f16>, !tgraph.tensor<[1, 32, 4096, 112], f16> -> !tgraph.tensor<[1, 32, 4096, 4096], f16>
  %t = tgraph.scale %s, 0.0944911182523068 : !tgraph.tensor<[1, 32, 4096, 4096], f16>
  %e = tgraph.exp %t : !tgraph.tensor<[1, 32, 4096, 4096], f16>
  %r = tgraph.reduce sum %e dim 3 : !tgraph.tensor<[1, 32, 4096, 4096], f16> -> !tgraph.tensor<[1, 32, 4096, 1], f16>
  %p = tgraph.div %e, %r : !tgraph.tensor<[1, 32, 4096, 4096], f16>, !tgraph.tensor<[1, 32, 4096, 1], f16> -> !tgraph.tensor<[1, 32, 4096, 4096], f16>
  %o = tgraph.matmul %p, %v : !tgraph.tensor<[1, 32, 4096, 4096], f16>, !tgraph.tensor<[1, 32, 4096, 112], f16> -> !tgraph.tensor<[1, 32, 4096, 112], f16>
  tgraph.output %o : !tgraph.tensor<[1, 32, 4096, 112], f16>
}
