// fp32 attention, 4 heads of 64 over 256 tokens: FlashAttention's two gemms in TF32.
tgraph.graph @f32_attn(%q: !tgraph.tensor<[1, 4, 256, 64], f32>, %k: !tgraph.tensor<[1, 4, 256, 64], f32>, %v: !tgraph.tensor<[1, 4, 256, 64], f32>) -> !tgraph.tensor<[1, 4, 256, 64], f32> {
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[1, 4, 256, 64], f32>, !tgraph.tensor<[1, 4, 256, 64], f32> -> !tgraph.tensor<[1, 4, 256, 256], f32>
  %t = tgraph.scale %s, 0.125 : !tgraph.tensor<[1, 4, 256, 256], f32>
  %m = tgraph.reduce max %t dim 3 : !tgraph.tensor<[1, 4, 256, 256], f32> -> !tgraph.tensor<[1, 4, 256, 1], f32>
  %z = tgraph.sub %t, %m : !tgraph.tensor<[1, 4, 256, 256], f32>, !tgraph.tensor<[1, 4, 256, 1], f32> -> !tgraph.tensor<[1, 4, 256, 256], f32>
  %e = tgraph.exp %z : !tgraph.tensor<[1, 4, 256, 256], f32>
  %l = tgraph.reduce sum %e dim 3 : !tgraph.tensor<[1, 4, 256, 256], f32> -> !tgraph.tensor<[1, 4, 256, 1], f32>
  %p = tgraph.div %e, %l : !tgraph.tensor<[1, 4, 256, 256], f32>, !tgraph.tensor<[1, 4, 256, 1], f32> -> !tgraph.tensor<[1, 4, 256, 256], f32>
  %o = tgraph.matmul %p, %v : !tgraph.tensor<[1, 4, 256, 256], f32>, !tgraph.tensor<[1, 4, 256, 64], f32> -> !tgraph.tensor<[1, 4, 256, 64], f32>
  tgraph.output %o : !tgraph.tensor<[1, 4, 256, 64], f32>
}
