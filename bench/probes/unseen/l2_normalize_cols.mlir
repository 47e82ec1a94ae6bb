// Weight normalization: each column over its L2 norm, a sum of squares over the leading dim (squared in fp16 until session 49).
tgraph.graph @l2c(%w: !tgraph.tensor<[256, 90], f16>) -> !tgraph.tensor<[256, 90], f16> {
  %sq = tgraph.square %w : !tgraph.tensor<[256, 90], f16>
  %s = tgraph.reduce sum %sq dim 0 : !tgraph.tensor<[256, 90], f16> -> !tgraph.tensor<[1, 90], f16>
  %r = tgraph.rsqrt %s : !tgraph.tensor<[1, 90], f16>
  %o = tgraph.mul %w, %r : !tgraph.tensor<[256, 90], f16>, !tgraph.tensor<[1, 90], f16> -> !tgraph.tensor<[256, 90], f16>
  tgraph.output %o : !tgraph.tensor<[256, 90], f16>
}
