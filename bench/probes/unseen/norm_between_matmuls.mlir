// x @ W1, a LayerNorm without affine over its 96 columns, then @ W2 (a norm between two projections).
tgraph.graph @nbm(%x: !tgraph.tensor<[40, 128], f16>, %w1: !tgraph.tensor<[128, 96], f16>, %w2: !tgraph.tensor<[96, 64], f16>) -> !tgraph.tensor<[40, 64], f16> {
  %h = tgraph.matmul %x, %w1 : !tgraph.tensor<[40, 128], f16>, !tgraph.tensor<[128, 96], f16> -> !tgraph.tensor<[40, 96], f16>
  %s = tgraph.reduce sum %h dim 1 : !tgraph.tensor<[40, 96], f16> -> !tgraph.tensor<[40, 1], f16>
  %m = tgraph.scale %s, 1.041667e-02 : !tgraph.tensor<[40, 1], f16>
  %c = tgraph.sub %h, %m : !tgraph.tensor<[40, 96], f16>, !tgraph.tensor<[40, 1], f16> -> !tgraph.tensor<[40, 96], f16>
  %sq = tgraph.square %c : !tgraph.tensor<[40, 96], f16>
  %v = tgraph.reduce sum %sq dim 1 : !tgraph.tensor<[40, 96], f16> -> !tgraph.tensor<[40, 1], f16>
  %vm = tgraph.scale %v, 1.041667e-02 : !tgraph.tensor<[40, 1], f16>
  %ve = tgraph.scalar add %vm, 1.000000e-05 : !tgraph.tensor<[40, 1], f16>
  %r = tgraph.rsqrt %ve : !tgraph.tensor<[40, 1], f16>
  %n = tgraph.mul %c, %r : !tgraph.tensor<[40, 96], f16>, !tgraph.tensor<[40, 1], f16> -> !tgraph.tensor<[40, 96], f16>
  %y = tgraph.matmul %n, %w2 : !tgraph.tensor<[40, 96], f16>, !tgraph.tensor<[96, 64], f16> -> !tgraph.tensor<[40, 64], f16>
  tgraph.output %y : !tgraph.tensor<[40, 64], f16>
}
