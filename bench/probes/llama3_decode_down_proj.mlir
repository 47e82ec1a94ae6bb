tgraph.graph @llama3_decode_down_proj(%in0: !tgraph.tensor<[1, 14336], f16>, %in1: !tgraph.tensor<[4096, 14336], f16>) -> !tgraph.tensor<[1, 4096], f16> {
  %0 = tgraph.matmul %in0, %in1 transpose_b : !tgraph.tensor<[1, 14336], f16>, !tgraph.tensor<[4096, 14336], f16> -> !tgraph.tensor<[1, 4096], f16>
  tgraph.output %0 : !tgraph.tensor<[1, 4096], f16>
}
