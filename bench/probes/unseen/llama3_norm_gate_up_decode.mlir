// Llama-3-8B's RMSNorm (eps 1e-5, weight) before its gate and up projections (nn.Linear layout) and silu(gate) * up, at decode: T=1, hidden 4096, MLP 14336 (the region cleave_ir.torch's partition would form without its norm cut).
tgraph.graph @llama3_norm_gate_up_decode(%in0: !tgraph.tensor<[1, 1, 4096], f16>, %in1: !tgraph.tensor<[1, 1, 4096], f16>, %in2: !tgraph.tensor<[14336, 4096], f16>, %in3: !tgraph.tensor<[14336, 4096], f16>) -> !tgraph.tensor<[1, 14336], f16> {
  %0 = tgraph.square %in0 : !tgraph.tensor<[1, 1, 4096], f16>
  %1 = tgraph.reduce sum %0 dim 2 : !tgraph.tensor<[1, 1, 4096], f16> -> !tgraph.tensor<[1, 1, 1], f16>
  %2 = tgraph.scale %1, 0.000244140625 : !tgraph.tensor<[1, 1, 1], f16>
  %3 = tgraph.scalar add %2, 1.000000e-05 : !tgraph.tensor<[1, 1, 1], f16>
  %4 = tgraph.rsqrt %3 : !tgraph.tensor<[1, 1, 1], f16>
  %5 = tgraph.mul %in0, %4 : !tgraph.tensor<[1, 1, 4096], f16>, !tgraph.tensor<[1, 1, 1], f16> -> !tgraph.tensor<[1, 1, 4096], f16>
  %6 = tgraph.mul %5, %in1 : !tgraph.tensor<[1, 1, 4096], f16>, !tgraph.tensor<[1, 1, 4096], f16> -> !tgraph.tensor<[1, 1, 4096], f16>
  %7 = tgraph.reshape %6 : !tgraph.tensor<[1, 1, 4096], f16> -> !tgraph.tensor<[1, 4096], f16>
  %8 = tgraph.matmul %7, %in2 transpose_b : !tgraph.tensor<[1, 4096], f16>, !tgraph.tensor<[14336, 4096], f16> -> !tgraph.tensor<[1, 14336], f16>
  %9 = tgraph.silu %8 : !tgraph.tensor<[1, 14336], f16>
  %10 = tgraph.reshape %6 : !tgraph.tensor<[1, 1, 4096], f16> -> !tgraph.tensor<[1, 4096], f16>
  %11 = tgraph.matmul %10, %in3 transpose_b : !tgraph.tensor<[1, 4096], f16>, !tgraph.tensor<[14336, 4096], f16> -> !tgraph.tensor<[1, 14336], f16>
  %12 = tgraph.mul %9, %11 : !tgraph.tensor<[1, 14336], f16>, !tgraph.tensor<[1, 14336], f16> -> !tgraph.tensor<[1, 14336], f16>
  tgraph.output %12 : !tgraph.tensor<[1, 14336], f16>
}