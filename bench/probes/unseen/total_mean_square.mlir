// The mean of squares over a whole [64, 300] tensor (two reductions down to one value).
tgraph.graph @tms(%x: !tgraph.tensor<[64, 300], f32>) -> !tgraph.tensor<[1, 1], f32> {
  %sq = tgraph.square %x : !tgraph.tensor<[64, 300], f32>
  %r = tgraph.reduce sum %sq dim 1 : !tgraph.tensor<[64, 300], f32> -> !tgraph.tensor<[64, 1], f32>
  %t = tgraph.reduce sum %r dim 0 : !tgraph.tensor<[64, 1], f32> -> !tgraph.tensor<[1, 1], f32>
  %m = tgraph.scale %t, 5.208333e-05 : !tgraph.tensor<[1, 1], f32>
  tgraph.output %m : !tgraph.tensor<[1, 1], f32>
}
