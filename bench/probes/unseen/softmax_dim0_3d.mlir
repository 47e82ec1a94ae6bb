// Softmax over the leading dim of a 3-d tensor (over 6 experts or heads, per position).
tgraph.graph @sd0(%x: !tgraph.tensor<[6, 50, 70], f16>) -> !tgraph.tensor<[6, 50, 70], f16> {
  %m = tgraph.reduce max %x dim 0 : !tgraph.tensor<[6, 50, 70], f16> -> !tgraph.tensor<[1, 50, 70], f16>
  %d = tgraph.sub %x, %m : !tgraph.tensor<[6, 50, 70], f16>, !tgraph.tensor<[1, 50, 70], f16> -> !tgraph.tensor<[6, 50, 70], f16>
  %e = tgraph.exp %d : !tgraph.tensor<[6, 50, 70], f16>
  %s = tgraph.reduce sum %e dim 0 : !tgraph.tensor<[6, 50, 70], f16> -> !tgraph.tensor<[1, 50, 70], f16>
  %p = tgraph.div %e, %s : !tgraph.tensor<[6, 50, 70], f16>, !tgraph.tensor<[1, 50, 70], f16> -> !tgraph.tensor<[6, 50, 70], f16>
  tgraph.output %p : !tgraph.tensor<[6, 50, 70], f16>
}
