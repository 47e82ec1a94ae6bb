// Per-row standard deviation (torch.std, unbiased) of 32 rows of 4000 values, as a user writes it.
tgraph.graph @row_std(%x: !tgraph.tensor<[32, 4000], f16>) -> !tgraph.tensor<[32, 1], f16> {
  %mu = tgraph.reduce mean %x dim 1 : !tgraph.tensor<[32, 4000], f16> -> !tgraph.tensor<[32, 1], f16>
  %xc = tgraph.sub %x, %mu : !tgraph.tensor<[32, 4000], f16>, !tgraph.tensor<[32, 1], f16> -> !tgraph.tensor<[32, 4000], f16>
  %sq = tgraph.square %xc : !tgraph.tensor<[32, 4000], f16>
  %ss = tgraph.reduce sum %sq dim 1 : !tgraph.tensor<[32, 4000], f16> -> !tgraph.tensor<[32, 1], f16>
  %v = tgraph.scale %ss, 2.500625156289072e-04 : !tgraph.tensor<[32, 1], f16>
  %o = tgraph.sqrt %v : !tgraph.tensor<[32, 1], f16>
  tgraph.output %o : !tgraph.tensor<[32, 1], f16>
}
