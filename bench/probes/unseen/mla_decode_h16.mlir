// MLA decode (absorbed), DeepSeek-V3 latent dims with 16 heads: Q [1, 16, 576], K [1, L, 576], V [1, L, 512], L=4096 (dynamic). Not one of the examples: bench/probes/unseen.sh.
tgraph.graph @mla_decode(%q: !tgraph.tensor<[1, 16, 576], f16>, %k: !tgraph.tensor<[1, 4096, 576], f16> {dynamic = array<i64: 1>}, %v: !tgraph.tensor<[1, 4096, 512], f16> {dynamic = array<i64: 1>}) -> !tgraph.tensor<[1, 16, 512], f16> {
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[1, 16, 576], f16>, !tgraph.tensor<[1, 4096, 576], f16> -> !tgraph.tensor<[1, 16, 4096], f16>
  %t = tgraph.scale %s, 0.07216878364870323 : !tgraph.tensor<[1, 16, 4096], f16>
  %e = tgraph.exp %t : !tgraph.tensor<[1, 16, 4096], f16>
  %r = tgraph.reduce sum %e dim 2 : !tgraph.tensor<[1, 16, 4096], f16> -> !tgraph.tensor<[1, 16, 1], f16>
  %p = tgraph.div %e, %r : !tgraph.tensor<[1, 16, 4096], f16>, !tgraph.tensor<[1, 16, 1], f16> -> !tgraph.tensor<[1, 16, 4096], f16>
  %o = tgraph.matmul %p, %v : !tgraph.tensor<[1, 16, 4096], f16>, !tgraph.tensor<[1, 4096, 512], f16> -> !tgraph.tensor<[1, 16, 512], f16>
  tgraph.output %o : !tgraph.tensor<[1, 16, 512], f16>
}
