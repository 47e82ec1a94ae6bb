// RMSNorm then matmul: (X * rsqrt(mean(X^2))) W, X [T, 4096] with T=1 (dynamic), W [4096, 6144]; no epsilon and no gamma (the gamma can be folded into W).
tgraph.graph @rmsnorm_matmul(%x: !tgraph.tensor<[1, 4096], f16> {dynamic = array<i64: 0>}, %w: !tgraph.tensor<[4096, 6144], f16>) -> !tgraph.tensor<[1, 6144], f16> {
  %sq = tgraph.square %x : !tgraph.tensor<[1, 4096], f16>
  %ss = tgraph.reduce sum %sq dim 1 : !tgraph.tensor<[1, 4096], f16> -> !tgraph.tensor<[1, 1], f16>
  %ms = tgraph.scale %ss, 0.000244140625 : !tgraph.tensor<[1, 1], f16>
  %rs = tgraph.rsqrt %ms : !tgraph.tensor<[1, 1], f16>
  %n = tgraph.mul %x, %rs : !tgraph.tensor<[1, 4096], f16>, !tgraph.tensor<[1, 1], f16> -> !tgraph.tensor<[1, 4096], f16>
  %o = tgraph.matmul %n, %w : !tgraph.tensor<[1, 4096], f16>, !tgraph.tensor<[4096, 6144], f16> -> !tgraph.tensor<[1, 6144], f16>
  tgraph.output %o : !tgraph.tensor<[1, 6144], f16>
}
