// Grouped-query attention, Llama-3-8B shapes: softmax(Q K^T / sqrt(128)) V, B=1, Hq=32, Hkv=8, S=4096, D=128; Q as [B, Hkv, 4, S, D], K and V as [B, Hkv, 1, S, D] broadcast over the 4 query heads of a group.
tgraph.graph @gqa(%q: !tgraph.tensor<[1, 8, 4, 4096, 128], f16>, %k: !tgraph.tensor<[1, 8, 1, 4096, 128], f16>, %v: !tgraph.tensor<[1, 8, 1, 4096, 128], f16>) -> !tgraph.tensor<[1, 8, 4, 4096, 128], f16> {
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[1, 8, 4, 4096, 128], f16>, !tgraph.tensor<[1, 8, 1, 4096, 128], f16> -> !tgraph.tensor<[1, 8, 4, 4096, 4096], f16>
  %t = tgraph.scale %s, 0.08838834764831845 : !tgraph.tensor<[1, 8, 4, 4096, 4096], f16>
  %e = tgraph.exp %t : !tgraph.tensor<[1, 8, 4, 4096, 4096], f16>
  %r = tgraph.reduce sum %e dim 4 : !tgraph.tensor<[1, 8, 4, 4096, 4096], f16> -> !tgraph.tensor<[1, 8, 4, 4096, 1], f16>
  %p = tgraph.div %e, %r : !tgraph.tensor<[1, 8, 4, 4096, 4096], f16>, !tgraph.tensor<[1, 8, 4, 4096, 1], f16> -> !tgraph.tensor<[1, 8, 4, 4096, 4096], f16>
  %o = tgraph.matmul %p, %v : !tgraph.tensor<[1, 8, 4, 4096, 4096], f16>, !tgraph.tensor<[1, 8, 1, 4096, 128], f16> -> !tgraph.tensor<[1, 8, 4, 4096, 128], f16>
  tgraph.output %o : !tgraph.tensor<[1, 8, 4, 4096, 128], f16>
}
