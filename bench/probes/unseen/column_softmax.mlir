// Softmax over dim 0 (columns) of a [128, 1000] tensor.
tgraph.graph @column_softmax(%x: !tgraph.tensor<[128, 1000], f16>) -> !tgraph.tensor<[128, 1000], f16> {
  %m = tgraph.reduce max %x dim 0 : !tgraph.tensor<[128, 1000], f16> -> !tgraph.tensor<[1, 1000], f16>
  %z = tgraph.sub %x, %m : !tgraph.tensor<[128, 1000], f16>, !tgraph.tensor<[1, 1000], f16> -> !tgraph.tensor<[128, 1000], f16>
  %e = tgraph.exp %z : !tgraph.tensor<[128, 1000], f16>
  %s = tgraph.reduce sum %e dim 0 : !tgraph.tensor<[128, 1000], f16> -> !tgraph.tensor<[1, 1000], f16>
  %p = tgraph.div %e, %s : !tgraph.tensor<[128, 1000], f16>, !tgraph.tensor<[1, 1000], f16> -> !tgraph.tensor<[128, 1000], f16>
  tgraph.output %p : !tgraph.tensor<[128, 1000], f16>
}
