// Self-attention whose queries, keys and values are one tensor: softmax(x x^T / 8) x (cleave-split-shared-inputs).
tgraph.graph @selfattn(%x: !tgraph.tensor<[1, 4, 256, 64], f16>) -> !tgraph.tensor<[1, 4, 256, 64], f16> {
  %s = tgraph.matmul %x, %x transpose_b : !tgraph.tensor<[1, 4, 256, 64], f16>, !tgraph.tensor<[1, 4, 256, 64], f16> -> !tgraph.tensor<[1, 4, 256, 256], f16>
  %t = tgraph.scale %s, 1.250000e-01 : !tgraph.tensor<[1, 4, 256, 256], f16>
  %m = tgraph.reduce max %t dim 3 : !tgraph.tensor<[1, 4, 256, 256], f16> -> !tgraph.tensor<[1, 4, 256, 1], f16>
  %z = tgraph.sub %t, %m : !tgraph.tensor<[1, 4, 256, 256], f16>, !tgraph.tensor<[1, 4, 256, 1], f16> -> !tgraph.tensor<[1, 4, 256, 256], f16>
  %e = tgraph.exp %z : !tgraph.tensor<[1, 4, 256, 256], f16>
  %r = tgraph.reduce sum %e dim 3 : !tgraph.tensor<[1, 4, 256, 256], f16> -> !tgraph.tensor<[1, 4, 256, 1], f16>
  %p = tgraph.div %e, %r : !tgraph.tensor<[1, 4, 256, 256], f16>, !tgraph.tensor<[1, 4, 256, 1], f16> -> !tgraph.tensor<[1, 4, 256, 256], f16>
  %o = tgraph.matmul %p, %x : !tgraph.tensor<[1, 4, 256, 256], f16>, !tgraph.tensor<[1, 4, 256, 64], f16> -> !tgraph.tensor<[1, 4, 256, 64], f16>
  tgraph.output %o : !tgraph.tensor<[1, 4, 256, 64], f16>
}
