// Llama's pre-attention block at decode with the residual add first: h = x + r, RMSNorm(h) * g (eps 1e-5), then @ W_qkv.
tgraph.graph @residual_rmsnorm_matmul(%x: !tgraph.tensor<[8, 4096], f16>, %r: !tgraph.tensor<[8, 4096], f16>, %g: !tgraph.tensor<[1, 4096], f16>, %w: !tgraph.tensor<[4096, 6144], f16>) -> !tgraph.tensor<[8, 6144], f16> {
  %h = tgraph.add %x, %r : !tgraph.tensor<[8, 4096], f16>, !tgraph.tensor<[8, 4096], f16> -> !tgraph.tensor<[8, 4096], f16>
  %sq = tgraph.square %h : !tgraph.tensor<[8, 4096], f16>
  %ss = tgraph.reduce sum %sq dim 1 : !tgraph.tensor<[8, 4096], f16> -> !tgraph.tensor<[8, 1], f16>
  %ms = tgraph.scale %ss, 0.000244140625 : !tgraph.tensor<[8, 1], f16>
  %e = tgraph.scalar add %ms, 1.000000e-05 : !tgraph.tensor<[8, 1], f16>
  %rs = tgraph.rsqrt %e : !tgraph.tensor<[8, 1], f16>
  %n = tgraph.mul %h, %rs : !tgraph.tensor<[8, 4096], f16>, !tgraph.tensor<[8, 1], f16> -> !tgraph.tensor<[8, 4096], f16>
  %ng = tgraph.mul %n, %g : !tgraph.tensor<[8, 4096], f16>, !tgraph.tensor<[1, 4096], f16> -> !tgraph.tensor<[8, 4096], f16>
  %o = tgraph.matmul %ng, %w : !tgraph.tensor<[8, 4096], f16>, !tgraph.tensor<[4096, 6144], f16> -> !tgraph.tensor<[8, 6144], f16>
  tgraph.output %o : !tgraph.tensor<[8, 6144], f16>
}
