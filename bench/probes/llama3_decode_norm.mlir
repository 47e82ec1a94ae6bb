// Llama-3-8B's post-attention RMSNorm at decode, as cleave_ir.torch's partition cuts it off the gate/up region (bench/probes/unseen/llama3_norm_gate_up_decode.mlir joins them).
tgraph.graph @llama3_decode_norm(%in0: !tgraph.tensor<[1, 1, 4096], f16>, %in1: !tgraph.tensor<[1, 1, 4096], f16>) -> !tgraph.tensor<[1, 1, 4096], f16> {
  %0 = tgraph.square %in0 : !tgraph.tensor<[1, 1, 4096], f16>
  %1 = tgraph.reduce sum %0 dim 2 : !tgraph.tensor<[1, 1, 4096], f16> -> !tgraph.tensor<[1, 1, 1], f16>
  %2 = tgraph.scale %1, 0.000244140625 : !tgraph.tensor<[1, 1, 1], f16>
  %3 = tgraph.scalar add %2, 1.000000e-05 : !tgraph.tensor<[1, 1, 1], f16>
  %4 = tgraph.rsqrt %3 : !tgraph.tensor<[1, 1, 1], f16>
  %5 = tgraph.mul %in0, %4 : !tgraph.tensor<[1, 1, 4096], f16>, !tgraph.tensor<[1, 1, 1], f16> -> !tgraph.tensor<[1, 1, 4096], f16>
  %6 = tgraph.mul %5, %in1 : !tgraph.tensor<[1, 1, 4096], f16>, !tgraph.tensor<[1, 1, 4096], f16> -> !tgraph.tensor<[1, 1, 4096], f16>
  tgraph.output %6 : !tgraph.tensor<[1, 1, 4096], f16>
}