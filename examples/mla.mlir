// Multi-head latent attention, DeepSeek-V3 shapes (absorbed): softmax(Q K^T / sqrt(192)) V, B=1, H=128, S=4096; Q [B, H, S, 576], K [B, 1, S, 576] (latent 512 + rope 64, shared across heads), V [B, 1, S, 512]; scale 1/sqrt(192) as DeepSeek uses (qk_head_dim 192), not 1/sqrt(576).
tgraph.graph @mla(%q: !tgraph.tensor<[1, 128, 4096, 576], f16>, %k: !tgraph.tensor<[1, 1, 4096, 576], f16>, %v: !tgraph.tensor<[1, 1, 4096, 512], f16>) -> !tgraph.tensor<[1, 128, 4096, 512], f16> {
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[1, 128, 4096, 576], f16>, !tgraph.tensor<[1, 1, 4096, 576], f16> -> !tgraph.tensor<[1, 128, 4096, 4096], f16>
  %t = tgraph.scale %s, 0.07216878364870323 : !tgraph.tensor<[1, 128, 4096, 4096], f16>
  %e = tgraph.exp %t : !tgraph.tensor<[1, 128, 4096, 4096], f16>
  %r = tgraph.reduce sum %e dim 3 : !tgraph.tensor<[1, 128, 4096, 4096], f16> -> !tgraph.tensor<[1, 128, 4096, 1], f16>
  %p = tgraph.div %e, %r : !tgraph.tensor<[1, 128, 4096, 4096], f16>, !tgraph.tensor<[1, 128, 4096, 1], f16> -> !tgraph.tensor<[1, 128, 4096, 4096], f16>
  %o = tgraph.matmul %p, %v : !tgraph.tensor<[1, 128, 4096, 4096], f16>, !tgraph.tensor<[1, 1, 4096, 512], f16> -> !tgraph.tensor<[1, 128, 4096, 512], f16>
  tgraph.output %o : !tgraph.tensor<[1, 128, 4096, 512], f16>
}
