// Cross-attention of 2000 queries over 77 keys at head dim 32 (B1 H12; a text encoder's tokens, session 44)
tgraph.graph @d32(%q: !tgraph.tensor<[1, 12, 2000, 32], f16>, %k: !tgraph.tensor<[1, 12, 77, 32], f16>, %v: !tgraph.tensor<[1, 12, 77, 32], f16>) -> !tgraph.tensor<[1, 12, 2000, 32], f16> {
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[1, 12, 2000, 32], f16>, !tgraph.tensor<[1, 12, 77, 32], f16> -> !tgraph.tensor<[1, 12, 2000, 77], f16>
  %t = tgraph.scale %s, 0.17677669529663687 : !tgraph.tensor<[1, 12, 2000, 77], f16>
  %e = tgraph.exp %t : !tgraph.tensor<[1, 12, 2000, 77], f16>
  %d = tgraph.reduce sum %e dim 3 : !tgraph.tensor<[1, 12, 2000, 77], f16> -> !tgraph.tensor<[1, 12, 2000, 1], f16>
  %p = tgraph.div %e, %d : !tgraph.tensor<[1, 12, 2000, 77], f16>, !tgraph.tensor<[1, 12, 2000, 1], f16> -> !tgraph.tensor<[1, 12, 2000, 77], f16>
  %o = tgraph.matmul %p, %v : !tgraph.tensor<[1, 12, 2000, 77], f16>, !tgraph.tensor<[1, 12, 77, 32], f16> -> !tgraph.tensor<[1, 12, 2000, 32], f16>
  tgraph.output %o : !tgraph.tensor<[1, 12, 2000, 32], f16>
}
