// Cosine similarities between the rows of one batch: normalize(x) normalize(x)^T (cleave-split-shared-inputs).
tgraph.graph @cos_sim(%x: !tgraph.tensor<[512, 128], f16>) -> !tgraph.tensor<[512, 512], f16> {
  %sq = tgraph.square %x : !tgraph.tensor<[512, 128], f16>
  %ss = tgraph.reduce sum %sq dim 1 : !tgraph.tensor<[512, 128], f16> -> !tgraph.tensor<[512, 1], f16>
  %rn = tgraph.rsqrt %ss : !tgraph.tensor<[512, 1], f16>
  %xn = tgraph.mul %x, %rn : !tgraph.tensor<[512, 128], f16>, !tgraph.tensor<[512, 1], f16> -> !tgraph.tensor<[512, 128], f16>
  %g = tgraph.matmul %xn, %xn transpose_b : !tgraph.tensor<[512, 128], f16>, !tgraph.tensor<[512, 128], f16> -> !tgraph.tensor<[512, 512], f16>
  tgraph.output %g : !tgraph.tensor<[512, 512], f16>
}
