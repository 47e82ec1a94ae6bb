// Row-wise cosine similarity of two [256, 768] batches: sum(a*b) / (|a| |b|).
tgraph.graph @cosine_similarity(%a: !tgraph.tensor<[256, 768], f16>, %b: !tgraph.tensor<[256, 768], f16>) -> !tgraph.tensor<[256, 1], f16> {
  %ab = tgraph.mul %a, %b : !tgraph.tensor<[256, 768], f16>, !tgraph.tensor<[256, 768], f16> -> !tgraph.tensor<[256, 768], f16>
  %d = tgraph.reduce sum %ab dim 1 : !tgraph.tensor<[256, 768], f16> -> !tgraph.tensor<[256, 1], f16>
  %a2 = tgraph.square %a : !tgraph.tensor<[256, 768], f16>
  %na = tgraph.reduce sum %a2 dim 1 : !tgraph.tensor<[256, 768], f16> -> !tgraph.tensor<[256, 1], f16>
  %b2 = tgraph.square %b : !tgraph.tensor<[256, 768], f16>
  %nb = tgraph.reduce sum %b2 dim 1 : !tgraph.tensor<[256, 768], f16> -> !tgraph.tensor<[256, 1], f16>
  %nn = tgraph.mul %na, %nb : !tgraph.tensor<[256, 1], f16>, !tgraph.tensor<[256, 1], f16> -> !tgraph.tensor<[256, 1], f16>
  %e = tgraph.scalar add %nn, 1.000000e-08 : !tgraph.tensor<[256, 1], f16>
  %r = tgraph.rsqrt %e : !tgraph.tensor<[256, 1], f16>
  %o = tgraph.mul %d, %r : !tgraph.tensor<[256, 1], f16>, !tgraph.tensor<[256, 1], f16> -> !tgraph.tensor<[256, 1], f16>
  tgraph.output %o : !tgraph.tensor<[256, 1], f16>
}
