// Llama-3-8B's gate and up projections with silu(gate) * up at decode, the region after the norm's cut.
tgraph.graph @llama3_decode_gate_up(%in0: !tgraph.tensor<[1, 4096], f16>, %in1: !tgraph.tensor<[14336, 4096], f16>, %in2: !tgraph.tensor<[14336, 4096], f16>) -> !tgraph.tensor<[1, 14336], f16> {
  %0 = tgraph.matmul %in0, %in1 transpose_b : !tgraph.tensor<[1, 4096], f16>, !tgraph.tensor<[14336, 4096], f16> -> !tgraph.tensor<[1, 14336], f16>
  %1 = tgraph.silu %0 : !tgraph.tensor<[1, 14336], f16>
  %2 = tgraph.matmul %in0, %in2 transpose_b : !tgraph.tensor<[1, 4096], f16>, !tgraph.tensor<[14336, 4096], f16> -> !tgraph.tensor<[1, 14336], f16>
  %3 = tgraph.mul %1, %2 : !tgraph.tensor<[1, 14336], f16>, !tgraph.tensor<[1, 14336], f16> -> !tgraph.tensor<[1, 14336], f16>
  tgraph.output %3 : !tgraph.tensor<[1, 14336], f16>
}