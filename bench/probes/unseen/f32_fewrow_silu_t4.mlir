// An fp32 few-row projection with SiLU at T=4 ([K, N] weight): the padded rows' T.gemm in TF32.
tgraph.graph @f32_fewrow(%x: !tgraph.tensor<[4, 1024], f32>, %w: !tgraph.tensor<[1024, 2048], f32>) -> !tgraph.tensor<[4, 2048], f32> {
  %h = tgraph.matmul %x, %w : !tgraph.tensor<[4, 1024], f32>, !tgraph.tensor<[1024, 2048], f32> -> !tgraph.tensor<[4, 2048], f32>
  %s = tgraph.silu %h : !tgraph.tensor<[4, 2048], f32>
  tgraph.output %s : !tgraph.tensor<[4, 2048], f32>
}
