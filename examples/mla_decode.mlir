// Multi-head latent attention decode, DeepSeek-V3 shapes (absorbed): softmax(Q K^T / sqrt(192)) V, one query token, B=1, H=128, L=4096 (dynamic); the 128 heads share the latent KV so they form the M dim: Q [B, H, 576], K [B, L, 576] (latent 512 + rope 64), V [B, L, 512]; scale 1/sqrt(192) as DeepSeek uses (qk_head_dim 192).
tgraph.graph @mla_decode(%q: !tgraph.tensor<[1, 128, 576], f16>, %k: !tgraph.tensor<[1, 4096, 576], f16> {dynamic = array<i64: 1>}, %v: !tgraph.tensor<[1, 4096, 512], f16> {dynamic = array<i64: 1>}) -> !tgraph.tensor<[1, 128, 512], f16> {
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[1, 128, 576], f16>, !tgraph.tensor<[1, 4096, 576], f16> -> !tgraph.tensor<[1, 128, 4096], f16>
  %t = tgraph.scale %s, 0.07216878364870323 : !tgraph.tensor<[1, 128, 4096], f16>
  %e = tgraph.exp %t : !tgraph.tensor<[1, 128, 4096], f16>
  %r = tgraph.reduce sum %e dim 2 : !tgraph.tensor<[1, 128, 4096], f16> -> !tgraph.tensor<[1, 128, 1], f16>
  %p = tgraph.div %e, %r : !tgraph.tensor<[1, 128, 4096], f16>, !tgraph.tensor<[1, 128, 1], f16> -> !tgraph.tensor<[1, 128, 4096], f16>
  %o = tgraph.matmul %p, %v : !tgraph.tensor<[1, 128, 4096], f16>, !tgraph.tensor<[1, 4096, 512], f16> -> !tgraph.tensor<[1, 128, 512], f16>
  tgraph.output %o : !tgraph.tensor<[1, 128, 512], f16>
}
