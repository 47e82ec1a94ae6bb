// Mean squared error of two [64, 4096] batches down to one number.
tgraph.graph @mse_loss(%p: !tgraph.tensor<[64, 4096], f16>, %t: !tgraph.tensor<[64, 4096], f16>) -> !tgraph.tensor<[1, 1], f32> {
  %d = tgraph.sub %p, %t : !tgraph.tensor<[64, 4096], f16>, !tgraph.tensor<[64, 4096], f16> -> !tgraph.tensor<[64, 4096], f16>
  %df = tgraph.cast %d : !tgraph.tensor<[64, 4096], f16> -> !tgraph.tensor<[64, 4096], f32>
  %sq = tgraph.square %df : !tgraph.tensor<[64, 4096], f32>
  %r = tgraph.reduce sum %sq dim 1 : !tgraph.tensor<[64, 4096], f32> -> !tgraph.tensor<[64, 1], f32>
  %c = tgraph.reduce sum %r dim 0 : !tgraph.tensor<[64, 1], f32> -> !tgraph.tensor<[1, 1], f32>
  %m = tgraph.scale %c, 3.814697265625e-06 : !tgraph.tensor<[1, 1], f32>
  tgraph.output %m : !tgraph.tensor<[1, 1], f32>
}
