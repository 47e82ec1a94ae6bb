// ViT's LayerNorm with its affine over 197 tokens (eps 1e-12): an awkward row count, padded to 256.
tgraph.graph @ln_affine_197(%x: !tgraph.tensor<[197, 768], f16>, %g: !tgraph.tensor<[1, 768], f16>, %b: !tgraph.tensor<[1, 768], f16>) -> !tgraph.tensor<[197, 768], f16> {
  %mu = tgraph.reduce mean %x dim 1 : !tgraph.tensor<[197, 768], f16> -> !tgraph.tensor<[197, 1], f16>
  %xc = tgraph.sub %x, %mu : !tgraph.tensor<[197, 768], f16>, !tgraph.tensor<[197, 1], f16> -> !tgraph.tensor<[197, 768], f16>
  %sq = tgraph.square %xc : !tgraph.tensor<[197, 768], f16>
  %var = tgraph.reduce mean %sq dim 1 : !tgraph.tensor<[197, 768], f16> -> !tgraph.tensor<[197, 1], f16>
  %e = tgraph.scalar add %var, 1.000000e-12 : !tgraph.tensor<[197, 1], f16>
  %r = tgraph.rsqrt %e : !tgraph.tensor<[197, 1], f16>
  %n = tgraph.mul %xc, %r : !tgraph.tensor<[197, 768], f16>, !tgraph.tensor<[197, 1], f16> -> !tgraph.tensor<[197, 768], f16>
  %ng = tgraph.mul %n, %g : !tgraph.tensor<[197, 768], f16>, !tgraph.tensor<[1, 768], f16> -> !tgraph.tensor<[197, 768], f16>
  %y = tgraph.add %ng, %b : !tgraph.tensor<[197, 768], f16>, !tgraph.tensor<[1, 768], f16> -> !tgraph.tensor<[197, 768], f16>
  tgraph.output %y : !tgraph.tensor<[197, 768], f16>
}
