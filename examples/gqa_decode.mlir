// Grouped-query attention decode, Llama-3-8B shapes: softmax(Q K^T / sqrt(128)) V, one query token, B=1, Hq=32, Hkv=8, L=4096 (dynamic), D=128; the 4 query heads of a group form the M dim: Q [B, Hkv, 4, D], K and V [B, Hkv, L, D].
tgraph.graph @gqa_decode(%q: !tgraph.tensor<[1, 8, 4, 128], f16>, %k: !tgraph.tensor<[1, 8, 4096, 128], f16> {dynamic = array<i64: 2>}, %v: !tgraph.tensor<[1, 8, 4096, 128], f16> {dynamic = array<i64: 2>}) -> !tgraph.tensor<[1, 8, 4, 128], f16> {
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[1, 8, 4, 128], f16>, !tgraph.tensor<[1, 8, 4096, 128], f16> -> !tgraph.tensor<[1, 8, 4, 4096], f16>
  %t = tgraph.scale %s, 0.08838834764831845 : !tgraph.tensor<[1, 8, 4, 4096], f16>
  %e = tgraph.exp %t : !tgraph.tensor<[1, 8, 4, 4096], f16>
  %r = tgraph.reduce sum %e dim 3 : !tgraph.tensor<[1, 8, 4, 4096], f16> -> !tgraph.tensor<[1, 8, 4, 1], f16>
  %p = tgraph.div %e, %r : !tgraph.tensor<[1, 8, 4, 4096], f16>, !tgraph.tensor<[1, 8, 4, 1], f16> -> !tgraph.tensor<[1, 8, 4, 4096], f16>
  %o = tgraph.matmul %p, %v : !tgraph.tensor<[1, 8, 4, 4096], f16>, !tgraph.tensor<[1, 8, 4096, 128], f16> -> !tgraph.tensor<[1, 8, 4, 128], f16>
  tgraph.output %o : !tgraph.tensor<[1, 8, 4, 128], f16>
}
