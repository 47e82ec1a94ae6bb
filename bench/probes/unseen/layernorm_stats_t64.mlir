// LayerNorm that also returns its mean and reciprocal std (the values a backward pass keeps), 64 x 1024, f32 stats.
tgraph.graph @layernorm_stats(%x: !tgraph.tensor<[64, 1024], f16>, %g: !tgraph.tensor<[1, 1024], f16>, %b: !tgraph.tensor<[1, 1024], f16>) -> (!tgraph.tensor<[64, 1024], f16>, !tgraph.tensor<[64, 1], f32>, !tgraph.tensor<[64, 1], f32>) {
  %xf = tgraph.cast %x : !tgraph.tensor<[64, 1024], f16> -> !tgraph.tensor<[64, 1024], f32>
  %m = tgraph.reduce mean %xf dim 1 : !tgraph.tensor<[64, 1024], f32> -> !tgraph.tensor<[64, 1], f32>
  %d = tgraph.sub %xf, %m : !tgraph.tensor<[64, 1024], f32>, !tgraph.tensor<[64, 1], f32> -> !tgraph.tensor<[64, 1024], f32>
  %sq = tgraph.square %d : !tgraph.tensor<[64, 1024], f32>
  %v = tgraph.reduce mean %sq dim 1 : !tgraph.tensor<[64, 1024], f32> -> !tgraph.tensor<[64, 1], f32>
  %e = tgraph.scalar add %v, 1.000000e-05 : !tgraph.tensor<[64, 1], f32>
  %r = tgraph.rsqrt %e : !tgraph.tensor<[64, 1], f32>
  %n = tgraph.mul %d, %r : !tgraph.tensor<[64, 1024], f32>, !tgraph.tensor<[64, 1], f32> -> !tgraph.tensor<[64, 1024], f32>
  %nh = tgraph.cast %n : !tgraph.tensor<[64, 1024], f32> -> !tgraph.tensor<[64, 1024], f16>
  %y = tgraph.mul %nh, %g : !tgraph.tensor<[64, 1024], f16>, !tgraph.tensor<[1, 1024], f16> -> !tgraph.tensor<[64, 1024], f16>
  %z = tgraph.add %y, %b : !tgraph.tensor<[64, 1024], f16>, !tgraph.tensor<[1, 1024], f16> -> !tgraph.tensor<[64, 1024], f16>
  tgraph.output %z, %m, %r : !tgraph.tensor<[64, 1024], f16>, !tgraph.tensor<[64, 1], f32>, !tgraph.tensor<[64, 1], f32>
}
