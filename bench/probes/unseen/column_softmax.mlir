// A softmax over dim 0 (columns): each column of a [512, 256] score matrix normalized.
tgraph.graph @col_softmax(%s: !tgraph.tensor<[512, 256], f16>) -> !tgraph.tensor<[512, 256], f16> {
  %m = tgraph.reduce max %s dim 0 : !tgraph.tensor<[512, 256], f16> -> !tgraph.tensor<[1, 256], f16>
  %d = tgraph.sub %s, %m : !tgraph.tensor<[512, 256], f16>, !tgraph.tensor<[1, 256], f16> -> !tgraph.tensor<[512, 256], f16>
  %e = tgraph.exp %d : !tgraph.tensor<[512, 256], f16>
  %z = tgraph.reduce sum %e dim 0 : !tgraph.tensor<[512, 256], f16> -> !tgraph.tensor<[1, 256], f16>
  %p = tgraph.div %e, %z : !tgraph.tensor<[512, 256], f16>, !tgraph.tensor<[1, 256], f16> -> !tgraph.tensor<[512, 256], f16>
  tgraph.output %p : !tgraph.tensor<[512, 256], f16>
}
