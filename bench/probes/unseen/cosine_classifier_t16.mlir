// Cosine classifier head: rows of x L2-normalized, then x_n @ W^T over 1000 classes (W stored [N, K]).
tgraph.graph @cosine_classifier(%x: !tgraph.tensor<[16, 768], f16>, %w: !tgraph.tensor<[1000, 768], f16>) -> !tgraph.tensor<[16, 1000], f16> {
  %sq = tgraph.square %x : !tgraph.tensor<[16, 768], f16>
  %ss = tgraph.reduce sum %sq dim 1 : !tgraph.tensor<[16, 768], f16> -> !tgraph.tensor<[16, 1], f16>
  %e = tgraph.scalar add %ss, 1.000000e-06 : !tgraph.tensor<[16, 1], f16>
  %n = tgraph.sqrt %e : !tgraph.tensor<[16, 1], f16>
  %xn = tgraph.div %x, %n : !tgraph.tensor<[16, 768], f16>, !tgraph.tensor<[16, 1], f16> -> !tgraph.tensor<[16, 768], f16>
  %o = tgraph.matmul %xn, %w transpose_b : !tgraph.tensor<[16, 768], f16>, !tgraph.tensor<[1000, 768], f16> -> !tgraph.tensor<[16, 1000], f16>
  tgraph.output %o : !tgraph.tensor<[16, 1000], f16>
}
