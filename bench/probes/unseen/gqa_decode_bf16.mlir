// GQA decode in bf16, Llama-3-8B shapes: B=1, Hkv=8, 4 query heads a group, L=4096 (dynamic), D=128. Not one of the examples: bench/probes/unseen.sh.
tgraph.graph @gqa_decode(%q: !tgraph.tensor<[1, 8, 4, 128], bf16>, %k: !tgraph.tensor<[1, 8, 4096, 128], bf16> {dynamic = array<i64: 2>}, %v: !tgraph.tensor<[1, 8, 4096, 128], bf16> {dynamic = array<i64: 2>}) -> !tgraph.tensor<[1, 8, 4, 128], bf16> {
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[1, 8, 4, 128], bf16>, !tgraph.tensor<[1, 8, 4096, 128], bf16> -> !tgraph.tensor<[1, 8, 4, 4096], bf16>
  %t = tgraph.scale %s, 0.08838834764831845 : !tgraph.tensor<[1, 8, 4, 4096], bf16>
  %e = tgraph.exp %t : !tgraph.tensor<[1, 8, 4, 4096], bf16>
  %r = tgraph.reduce sum %e dim 3 : !tgraph.tensor<[1, 8, 4, 4096], bf16> -> !tgraph.tensor<[1, 8, 4, 1], bf16>
  %p = tgraph.div %e, %r : !tgraph.tensor<[1, 8, 4, 4096], bf16>, !tgraph.tensor<[1, 8, 4, 1], bf16> -> !tgraph.tensor<[1, 8, 4, 4096], bf16>
  %o = tgraph.matmul %p, %v : !tgraph.tensor<[1, 8, 4, 4096], bf16>, !tgraph.tensor<[1, 8, 4096, 128], bf16> -> !tgraph.tensor<[1, 8, 4, 128], bf16>
  tgraph.output %o : !tgraph.tensor<[1, 8, 4, 128], bf16>
}
