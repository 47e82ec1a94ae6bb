// x^T @ W where x is stored [K, M] (a gradient-style product): the transpose of the A operand.
tgraph.graph @ta(%x: !tgraph.tensor<[192, 80], f16>, %w: !tgraph.tensor<[192, 64], f16>) -> !tgraph.tensor<[80, 64], f16> {
  %xt = tgraph.transpose %x perm [1, 0] : !tgraph.tensor<[192, 80], f16> -> !tgraph.tensor<[80, 192], f16>
  %y = tgraph.matmul %xt, %w : !tgraph.tensor<[80, 192], f16>, !tgraph.tensor<[192, 64], f16> -> !tgraph.tensor<[80, 64], f16>
  tgraph.output %y : !tgraph.tensor<[80, 64], f16>
}
