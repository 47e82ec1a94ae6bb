// LayerNorm without affine over 5000 columns (no power of two) at T=5: (x - mean) / sqrt(var + 1e-5).
tgraph.graph @ln(%x: !tgraph.tensor<[5, 5000], f16>) -> !tgraph.tensor<[5, 5000], f16> {
  %s = tgraph.reduce sum %x dim 1 : !tgraph.tensor<[5, 5000], f16> -> !tgraph.tensor<[5, 1], f16>
  %mu = tgraph.scale %s, 0.0002 : !tgraph.tensor<[5, 1], f16>
  %c = tgraph.sub %x, %mu : !tgraph.tensor<[5, 5000], f16>, !tgraph.tensor<[5, 1], f16> -> !tgraph.tensor<[5, 5000], f16>
  %c2 = tgraph.square %c : !tgraph.tensor<[5, 5000], f16>
  %v = tgraph.reduce sum %c2 dim 1 : !tgraph.tensor<[5, 5000], f16> -> !tgraph.tensor<[5, 1], f16>
  %vm = tgraph.scale %v, 0.0002 : !tgraph.tensor<[5, 1], f16>
  %ve = tgraph.scalar add %vm, 1.0e-05 : !tgraph.tensor<[5, 1], f16>
  %r = tgraph.rsqrt %ve : !tgraph.tensor<[5, 1], f16>
  %o = tgraph.mul %c, %r : !tgraph.tensor<[5, 5000], f16>, !tgraph.tensor<[5, 1], f16> -> !tgraph.tensor<[5, 5000], f16>
  tgraph.output %o : !tgraph.tensor<[5, 5000], f16>
}
