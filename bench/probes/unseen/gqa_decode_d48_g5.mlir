// GQA decode, head dim 48, 5 query heads a group (8 KV heads), L 4096 (dynamic). Not one of the examples: bench/probes/unseen.sh.
tgraph.graph @gqa_decode(%q: !tgraph.tensor<[1, 8, 5, 48], f16>, %k: !tgraph.tensor<[1, 8, 4096, 48], f16> {dynamic = array<i64: 2>}, %v: !tgraph.tensor<[1, 8, 4096, 48], f16> {dynamic = array<i64: 2>}) -> !tgraph.tensor<[1, 8, 5, 48], f16> {
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[1, 8, 5, 48], f16>, !tgraph.tensor<[1, 8, 4096, 48], f16> -> !tgraph.tensor<[1, 8, 5, 4096], f16>
  %t = tgraph.scale %s, 0.08838834764831845 : !tgraph.tensor<[1, 8, 5, 4096], f16>
  %e = tgraph.exp %t : !tgraph.tensor<[1, 8, 5, 4096], f16>
  %r = tgraph.reduce sum %e dim 3 : !tgraph.tensor<[1, 8, 5, 4096], f16> -> !tgraph.tensor<[1, 8, 5, 1], f16>
  %p = tgraph.div %e, %r : !tgraph.tensor<[1, 8, 5, 4096], f16>, !tgraph.tensor<[1, 8, 5, 1], f16> -> !tgraph.tensor<[1, 8, 5, 4096], f16>
  %o = tgraph.matmul %p, %v : !tgraph.tensor<[1, 8, 5, 4096], f16>, !tgraph.tensor<[1, 8, 4096, 48], f16> -> !tgraph.tensor<[1, 8, 5, 48], f16>
  tgraph.output %o : !tgraph.tensor<[1, 8, 5, 48], f16>
}
