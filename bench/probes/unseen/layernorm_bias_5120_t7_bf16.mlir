// LayerNorm with weight and bias over 5120 features (bf16, T=7: a few decode rows), eps 1e-5, as nn.LayerNorm computes it.
tgraph.graph @ln_affine_5120(%x: !tgraph.tensor<[7, 5120], bf16>, %g: !tgraph.tensor<[1, 5120], bf16>, %b: !tgraph.tensor<[1, 5120], bf16>) -> !tgraph.tensor<[7, 5120], bf16> {
  %mu = tgraph.reduce mean %x dim 1 : !tgraph.tensor<[7, 5120], bf16> -> !tgraph.tensor<[7, 1], bf16>
  %xc = tgraph.sub %x, %mu : !tgraph.tensor<[7, 5120], bf16>, !tgraph.tensor<[7, 1], bf16> -> !tgraph.tensor<[7, 5120], bf16>
  %sq = tgraph.square %xc : !tgraph.tensor<[7, 5120], bf16>
  %var = tgraph.reduce mean %sq dim 1 : !tgraph.tensor<[7, 5120], bf16> -> !tgraph.tensor<[7, 1], bf16>
  %e = tgraph.scalar add %var, 1.000000e-05 : !tgraph.tensor<[7, 1], bf16>
  %r = tgraph.rsqrt %e : !tgraph.tensor<[7, 1], bf16>
  %n = tgraph.mul %xc, %r : !tgraph.tensor<[7, 5120], bf16>, !tgraph.tensor<[7, 1], bf16> -> !tgraph.tensor<[7, 5120], bf16>
  %ng = tgraph.mul %n, %g : !tgraph.tensor<[7, 5120], bf16>, !tgraph.tensor<[1, 5120], bf16> -> !tgraph.tensor<[7, 5120], bf16>
  %o = tgraph.add %ng, %b : !tgraph.tensor<[7, 5120], bf16>, !tgraph.tensor<[1, 5120], bf16> -> !tgraph.tensor<[7, 5120], bf16>
  tgraph.output %o : !tgraph.tensor<[7, 5120], bf16>
}
