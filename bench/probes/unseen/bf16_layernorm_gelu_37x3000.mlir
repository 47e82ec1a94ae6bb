// LayerNorm without affine, then GELU (erf), over 37 rows of 3000 in bf16: awkward sizes on both dims.
tgraph.graph @bf16_ln_gelu(%x: !tgraph.tensor<[37, 3000], bf16>) -> !tgraph.tensor<[37, 3000], bf16> {
  %mu = tgraph.reduce mean %x dim 1 : !tgraph.tensor<[37, 3000], bf16> -> !tgraph.tensor<[37, 1], bf16>
  %xc = tgraph.sub %x, %mu : !tgraph.tensor<[37, 3000], bf16>, !tgraph.tensor<[37, 1], bf16> -> !tgraph.tensor<[37, 3000], bf16>
  %sq = tgraph.square %xc : !tgraph.tensor<[37, 3000], bf16>
  %var = tgraph.reduce mean %sq dim 1 : !tgraph.tensor<[37, 3000], bf16> -> !tgraph.tensor<[37, 1], bf16>
  %e = tgraph.scalar add %var, 1.000000e-05 : !tgraph.tensor<[37, 1], bf16>
  %r = tgraph.rsqrt %e : !tgraph.tensor<[37, 1], bf16>
  %n = tgraph.mul %xc, %r : !tgraph.tensor<[37, 3000], bf16>, !tgraph.tensor<[37, 1], bf16> -> !tgraph.tensor<[37, 3000], bf16>
  %y = tgraph.gelu erf %n : !tgraph.tensor<[37, 3000], bf16>
  tgraph.output %y : !tgraph.tensor<[37, 3000], bf16>
}
