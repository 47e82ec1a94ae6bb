// An fp32 matmul and tanh-GELU whose result is cast to bf16.
tgraph.graph @fb(%x: !tgraph.tensor<[24, 160], f32>, %w: !tgraph.tensor<[160, 72], f32>) -> !tgraph.tensor<[24, 72], bf16> {
  %y = tgraph.matmul %x, %w : !tgraph.tensor<[24, 160], f32>, !tgraph.tensor<[160, 72], f32> -> !tgraph.tensor<[24, 72], f32>
  %g = tgraph.gelu tanh %y : !tgraph.tensor<[24, 72], f32>
  %c = tgraph.cast %g : !tgraph.tensor<[24, 72], f32> -> !tgraph.tensor<[24, 72], bf16>
  tgraph.output %c : !tgraph.tensor<[24, 72], bf16>
}
