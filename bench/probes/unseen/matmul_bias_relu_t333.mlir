// A linear layer with bias and ReLU (max with 0) at awkward sizes: 333 rows, 4000 outputs, nn.Linear's [N, K] weight.
tgraph.graph @mm_bias_relu(%x: !tgraph.tensor<[333, 1024], f16>, %w: !tgraph.tensor<[4000, 1024], f16>, %b: !tgraph.tensor<[1, 4000], f16>) -> !tgraph.tensor<[333, 4000], f16> {
  %h = tgraph.matmul %x, %w transpose_b : !tgraph.tensor<[333, 1024], f16>, !tgraph.tensor<[4000, 1024], f16> -> !tgraph.tensor<[333, 4000], f16>
  %hb = tgraph.add %h, %b : !tgraph.tensor<[333, 4000], f16>, !tgraph.tensor<[1, 4000], f16> -> !tgraph.tensor<[333, 4000], f16>
  %z = tgraph.scalar max %hb, 0.000000e+00 : !tgraph.tensor<[333, 4000], f16>
  tgraph.output %z : !tgraph.tensor<[333, 4000], f16>
}
