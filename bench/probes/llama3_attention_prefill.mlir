tgraph.graph @r_4029a570be7e(%in0: !tgraph.tensor<[1, 32, 2048, 128], f16>, %in1: !tgraph.tensor<[1, 1, 2048, 128], f16>, %in2: !tgraph.tensor<[1, 32, 2048, 128], f16>, %in3: !tgraph.tensor<[1, 1, 2048, 128], f16>, %in4: !tgraph.tensor<[1, 32, 2048, 128], f16>, %in5: !tgraph.tensor<[1, 32, 2048, 128], f16>, %in6: !tgraph.tensor<[1, 1, 2048, 2048], f16> {cleave.causal = #cleave.causal<offset = 0>}) -> !tgraph.tensor<[1, 32, 2048, 128], f16> {
  %0 = tgraph.mul %in0, %in1 : !tgraph.tensor<[1, 32, 2048, 128], f16>, !tgraph.tensor<[1, 1, 2048, 128], f16> -> !tgraph.tensor<[1, 32, 2048, 128], f16>
  %1 = tgraph.mul %in2, %in3 : !tgraph.tensor<[1, 32, 2048, 128], f16>, !tgraph.tensor<[1, 1, 2048, 128], f16> -> !tgraph.tensor<[1, 32, 2048, 128], f16>
  %2 = tgraph.add %0, %1 : !tgraph.tensor<[1, 32, 2048, 128], f16>, !tgraph.tensor<[1, 32, 2048, 128], f16> -> !tgraph.tensor<[1, 32, 2048, 128], f16>
  %3 = tgraph.matmul %2, %in4 transpose_b : !tgraph.tensor<[1, 32, 2048, 128], f16>, !tgraph.tensor<[1, 32, 2048, 128], f16> -> !tgraph.tensor<[1, 32, 2048, 2048], f16>
  %4 = tgraph.scale %3, 0.088388347648318433 : !tgraph.tensor<[1, 32, 2048, 2048], f16>
  %5 = tgraph.scalar add %in6, -1.000000e+00 : !tgraph.tensor<[1, 1, 2048, 2048], f16>
  %6 = tgraph.scale %5, 3.000000e+04 : !tgraph.tensor<[1, 1, 2048, 2048], f16>
  %7 = tgraph.add %4, %6 : !tgraph.tensor<[1, 32, 2048, 2048], f16>, !tgraph.tensor<[1, 1, 2048, 2048], f16> -> !tgraph.tensor<[1, 32, 2048, 2048], f16>
  %8 = tgraph.exp %7 : !tgraph.tensor<[1, 32, 2048, 2048], f16>
  %9 = tgraph.reduce sum %8 dim 3 : !tgraph.tensor<[1, 32, 2048, 2048], f16> -> !tgraph.tensor<[1, 32, 2048, 1], f16>
  %10 = tgraph.div %8, %9 : !tgraph.tensor<[1, 32, 2048, 2048], f16>, !tgraph.tensor<[1, 32, 2048, 1], f16> -> !tgraph.tensor<[1, 32, 2048, 2048], f16>
  %11 = tgraph.matmul %10, %in5 : !tgraph.tensor<[1, 32, 2048, 2048], f16>, !tgraph.tensor<[1, 32, 2048, 128], f16> -> !tgraph.tensor<[1, 32, 2048, 128], f16>
  tgraph.output %11 : !tgraph.tensor<[1, 32, 2048, 128], f16>
}
