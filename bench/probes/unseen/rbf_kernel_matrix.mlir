// A Gaussian (RBF) kernel matrix: exp(-(|x|^2 + |y|^2 - 2 x y^T) / 64) between 256 points and 512 centers in 64 dims (kernel methods, attention variants).
tgraph.graph @rbf(%x: !tgraph.tensor<[256, 64], f16>, %y: !tgraph.tensor<[512, 64], f16>, %ynorm: !tgraph.tensor<[1, 512], f16>) -> !tgraph.tensor<[256, 512], f16> {
  %xy = tgraph.matmul %x, %y transpose_b : !tgraph.tensor<[256, 64], f16>, !tgraph.tensor<[512, 64], f16> -> !tgraph.tensor<[256, 512], f16>
  %sq = tgraph.square %x : !tgraph.tensor<[256, 64], f16>
  %xn = tgraph.reduce sum %sq dim 1 : !tgraph.tensor<[256, 64], f16> -> !tgraph.tensor<[256, 1], f16>
  %m2 = tgraph.scale %xy, -2.000000e+00 : !tgraph.tensor<[256, 512], f16>
  %a = tgraph.add %m2, %xn : !tgraph.tensor<[256, 512], f16>, !tgraph.tensor<[256, 1], f16> -> !tgraph.tensor<[256, 512], f16>
  %d = tgraph.add %a, %ynorm : !tgraph.tensor<[256, 512], f16>, !tgraph.tensor<[1, 512], f16> -> !tgraph.tensor<[256, 512], f16>
  %s = tgraph.scale %d, -1.562500e-02 : !tgraph.tensor<[256, 512], f16>
  %k = tgraph.exp %s : !tgraph.tensor<[256, 512], f16>
  tgraph.output %k : !tgraph.tensor<[256, 512], f16>
}
