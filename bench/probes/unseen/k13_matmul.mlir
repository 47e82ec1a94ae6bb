// A matmul over 13 (an odd, prime contraction) with a bias row added.
tgraph.graph @k13(%x: !tgraph.tensor<[100, 13], f16>, %w: !tgraph.tensor<[13, 48], f16>, %b: !tgraph.tensor<[1, 48], f16>) -> !tgraph.tensor<[100, 48], f16> {
  %y = tgraph.matmul %x, %w : !tgraph.tensor<[100, 13], f16>, !tgraph.tensor<[13, 48], f16> -> !tgraph.tensor<[100, 48], f16>
  %z = tgraph.add %y, %b : !tgraph.tensor<[100, 48], f16>, !tgraph.tensor<[1, 48], f16> -> !tgraph.tensor<[100, 48], f16>
  tgraph.output %z : !tgraph.tensor<[100, 48], f16>
}
