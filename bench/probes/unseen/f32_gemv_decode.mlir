// An fp32 decode projection (nn.Linear's [N, K] weight, T=1): a direct GEMV of 4-byte elements.
tgraph.graph @f32_gemv(%x: !tgraph.tensor<[1, 4096], f32>, %w: !tgraph.tensor<[4096, 4096], f32>) -> !tgraph.tensor<[1, 4096], f32> {
  %o = tgraph.matmul %x, %w transpose_b : !tgraph.tensor<[1, 4096], f32>, !tgraph.tensor<[4096, 4096], f32> -> !tgraph.tensor<[1, 4096], f32>
  tgraph.output %o : !tgraph.tensor<[1, 4096], f32>
}
