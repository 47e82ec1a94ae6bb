// relu(x @ W)^T: the transpose folds into the output's boundary (the caller's view).
tgraph.graph @to(%x: !tgraph.tensor<[96, 200], f16>, %w: !tgraph.tensor<[200, 136], f16>) -> !tgraph.tensor<[136, 96], f16> {
  %y = tgraph.matmul %x, %w : !tgraph.tensor<[96, 200], f16>, !tgraph.tensor<[200, 136], f16> -> !tgraph.tensor<[96, 136], f16>
  %t = tgraph.transpose %y perm [1, 0] : !tgraph.tensor<[96, 136], f16> -> !tgraph.tensor<[136, 96], f16>
  %r = tgraph.scalar max %t, 0.000000e+00 : !tgraph.tensor<[136, 96], f16>
  tgraph.output %r : !tgraph.tensor<[136, 96], f16>
}
