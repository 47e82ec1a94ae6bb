// Llama's input RMSNorm (weight g, eps 1e-5) and the q projection at decode, nn.Linear's [N, K] weight: (x * rsqrt(mean(x^2) + eps) * g) @ Wq^T.
tgraph.graph @llama_norm_q_decode(%x: !tgraph.tensor<[1, 4096], f16>, %g: !tgraph.tensor<[1, 4096], f16>, %w: !tgraph.tensor<[4096, 4096], f16>) -> !tgraph.tensor<[1, 4096], f16> {
  %sq = tgraph.square %x : !tgraph.tensor<[1, 4096], f16>
  %ss = tgraph.reduce mean %sq dim 1 : !tgraph.tensor<[1, 4096], f16> -> !tgraph.tensor<[1, 1], f16>
  %e = tgraph.scalar add %ss, 1.000000e-05 : !tgraph.tensor<[1, 1], f16>
  %rs = tgraph.rsqrt %e : !tgraph.tensor<[1, 1], f16>
  %n = tgraph.mul %x, %rs : !tgraph.tensor<[1, 4096], f16>, !tgraph.tensor<[1, 1], f16> -> !tgraph.tensor<[1, 4096], f16>
  %ng = tgraph.mul %n, %g : !tgraph.tensor<[1, 4096], f16>, !tgraph.tensor<[1, 4096], f16> -> !tgraph.tensor<[1, 4096], f16>
  %o = tgraph.matmul %ng, %w transpose_b : !tgraph.tensor<[1, 4096], f16>, !tgraph.tensor<[4096, 4096], f16> -> !tgraph.tensor<[1, 4096], f16>
  tgraph.output %o : !tgraph.tensor<[1, 4096], f16>
}
