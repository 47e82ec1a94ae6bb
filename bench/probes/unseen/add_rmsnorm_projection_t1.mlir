// Llama's residual add, RMSNorm and the next projection in one graph, returning the new residual too (T=1 decode).
tgraph.graph @add_norm_proj(%x: !tgraph.tensor<[1, 4096], f16>, %r: !tgraph.tensor<[1, 4096], f16>, %g: !tgraph.tensor<[1, 4096], f16>, %w: !tgraph.tensor<[4096, 4096], f16>) -> (!tgraph.tensor<[1, 4096], f16>, !tgraph.tensor<[1, 4096], f16>) {
  %h = tgraph.add %x, %r : !tgraph.tensor<[1, 4096], f16>, !tgraph.tensor<[1, 4096], f16> -> !tgraph.tensor<[1, 4096], f16>
  %sq = tgraph.square %h : !tgraph.tensor<[1, 4096], f16>
  %ms = tgraph.reduce mean %sq dim 1 : !tgraph.tensor<[1, 4096], f16> -> !tgraph.tensor<[1, 1], f16>
  %e = tgraph.scalar add %ms, 1.000000e-06 : !tgraph.tensor<[1, 1], f16>
  %rs = tgraph.rsqrt %e : !tgraph.tensor<[1, 1], f16>
  %n = tgraph.mul %h, %rs : !tgraph.tensor<[1, 4096], f16>, !tgraph.tensor<[1, 1], f16> -> !tgraph.tensor<[1, 4096], f16>
  %y = tgraph.mul %n, %g : !tgraph.tensor<[1, 4096], f16>, !tgraph.tensor<[1, 4096], f16> -> !tgraph.tensor<[1, 4096], f16>
  %o = tgraph.matmul %y, %w : !tgraph.tensor<[1, 4096], f16>, !tgraph.tensor<[4096, 4096], f16> -> !tgraph.tensor<[1, 4096], f16>
  tgraph.output %o, %h : !tgraph.tensor<[1, 4096], f16>, !tgraph.tensor<[1, 4096], f16>
}
