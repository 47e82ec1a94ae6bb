// Batched matmul whose batch dims broadcast both ways: [2, 1, 64, 32] @ [1, 4, 32, 48] -> [2, 4, 64, 48], then a row max over the 48 outputs.
tgraph.graph @bcast_mm(%a: !tgraph.tensor<[2, 1, 64, 32], f16>, %b: !tgraph.tensor<[1, 4, 32, 48], f16>) -> !tgraph.tensor<[2, 4, 64, 1], f16> {
  %c = tgraph.matmul %a, %b : !tgraph.tensor<[2, 1, 64, 32], f16>, !tgraph.tensor<[1, 4, 32, 48], f16> -> !tgraph.tensor<[2, 4, 64, 48], f16>
  %m = tgraph.reduce max %c dim 3 : !tgraph.tensor<[2, 4, 64, 48], f16> -> !tgraph.tensor<[2, 4, 64, 1], f16>
  tgraph.output %m : !tgraph.tensor<[2, 4, 64, 1], f16>
}
