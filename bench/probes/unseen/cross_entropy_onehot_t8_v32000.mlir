// Cross-entropy of 8 next-token predictions over 32000 words, the target given as a one-hot row (a gather written
// as a product): loss = log(sum exp(x - m)) + m - sum(x * onehot), fp32 result.
tgraph.graph @cross_entropy(%x: !tgraph.tensor<[8, 32000], f16>, %onehot: !tgraph.tensor<[8, 32000], f16>) -> !tgraph.tensor<[8, 1], f32> {
  %m = tgraph.reduce max %x dim 1 : !tgraph.tensor<[8, 32000], f16> -> !tgraph.tensor<[8, 1], f16>
  %z = tgraph.sub %x, %m : !tgraph.tensor<[8, 32000], f16>, !tgraph.tensor<[8, 1], f16> -> !tgraph.tensor<[8, 32000], f16>
  %e = tgraph.exp %z : !tgraph.tensor<[8, 32000], f16>
  %s = tgraph.reduce sum %e dim 1 : !tgraph.tensor<[8, 32000], f16> -> !tgraph.tensor<[8, 1], f16>
  %l = tgraph.log %s : !tgraph.tensor<[8, 1], f16>
  %lse = tgraph.add %l, %m : !tgraph.tensor<[8, 1], f16>, !tgraph.tensor<[8, 1], f16> -> !tgraph.tensor<[8, 1], f16>
  %xt = tgraph.mul %x, %onehot : !tgraph.tensor<[8, 32000], f16>, !tgraph.tensor<[8, 32000], f16> -> !tgraph.tensor<[8, 32000], f16>
  %t = tgraph.reduce sum %xt dim 1 : !tgraph.tensor<[8, 32000], f16> -> !tgraph.tensor<[8, 1], f16>
  %loss = tgraph.sub %lse, %t : !tgraph.tensor<[8, 1], f16>, !tgraph.tensor<[8, 1], f16> -> !tgraph.tensor<[8, 1], f16>
  %o = tgraph.cast %loss : !tgraph.tensor<[8, 1], f16> -> !tgraph.tensor<[8, 1], f32>
  tgraph.output %o : !tgraph.tensor<[8, 1], f32>
}
