// Rows shifted by their max, then projected: a row reduction feeding a matmul's A operand.
tgraph.graph @cp(%x: !tgraph.tensor<[40, 384], f16>, %w: !tgraph.tensor<[384, 96], f16>) -> !tgraph.tensor<[40, 96], f16> {
  %m = tgraph.reduce max %x dim 1 : !tgraph.tensor<[40, 384], f16> -> !tgraph.tensor<[40, 1], f16>
  %c = tgraph.sub %x, %m : !tgraph.tensor<[40, 384], f16>, !tgraph.tensor<[40, 1], f16> -> !tgraph.tensor<[40, 384], f16>
  %y = tgraph.matmul %c, %w : !tgraph.tensor<[40, 384], f16>, !tgraph.tensor<[384, 96], f16> -> !tgraph.tensor<[40, 96], f16>
  tgraph.output %y : !tgraph.tensor<[40, 96], f16>
}
