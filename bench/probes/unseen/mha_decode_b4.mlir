// Multi-head attention decode, B=4, H=32, L=8192 (dynamic), D=128. Not one of the examples: bench/probes/unseen.sh.
tgraph.graph @mha_decode(%q: !tgraph.tensor<[4, 32, 1, 128], f16>, %k: !tgraph.tensor<[4, 32, 8192, 128], f16> {dynamic = array<i64: 2>}, %v: !tgraph.tensor<[4, 32, 8192, 128], f16> {dynamic = array<i64: 2>}) -> !tgraph.tensor<[4, 32, 1, 128], f16> {
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[4, 32, 1, 128], f16>, !tgraph.tensor<[4, 32, 8192, 128], f16> -> !tgraph.tensor<[4, 32, 1, 8192], f16>
  %t = tgraph.scale %s, 0.08838834764831845 : !tgraph.tensor<[4, 32, 1, 8192], f16>
  %e = tgraph.exp %t : !tgraph.tensor<[4, 32, 1, 8192], f16>
  %r = tgraph.reduce sum %e dim 3 : !tgraph.tensor<[4, 32, 1, 8192], f16> -> !tgraph.tensor<[4, 32, 1, 1], f16>
  %p = tgraph.div %e, %r : !tgraph.tensor<[4, 32, 1, 8192], f16>, !tgraph.tensor<[4, 32, 1, 1], f16> -> !tgraph.tensor<[4, 32, 1, 8192], f16>
  %o = tgraph.matmul %p, %v : !tgraph.tensor<[4, 32, 1, 8192], f16>, !tgraph.tensor<[4, 32, 8192, 128], f16> -> !tgraph.tensor<[4, 32, 1, 128], f16>
  tgraph.output %o : !tgraph.tensor<[4, 32, 1, 128], f16>
}
