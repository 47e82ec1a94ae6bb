// Max-pooling over tokens, then a classifier: max over 128 tokens of [8, 128, 512], then @ W [512, 10] (a sentence classifier's head).
tgraph.graph @maxpool_head(%x: !tgraph.tensor<[8, 128, 512], f16>, %w: !tgraph.tensor<[1, 512, 10], f16>) -> !tgraph.tensor<[8, 1, 10], f16> {
  %p = tgraph.reduce max %x dim 1 : !tgraph.tensor<[8, 128, 512], f16> -> !tgraph.tensor<[8, 1, 512], f16>
  %y = tgraph.matmul %p, %w : !tgraph.tensor<[8, 1, 512], f16>, !tgraph.tensor<[1, 512, 10], f16> -> !tgraph.tensor<[8, 1, 10], f16>
  tgraph.output %y : !tgraph.tensor<[8, 1, 10], f16>
}
