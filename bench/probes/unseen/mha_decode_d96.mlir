// Multi-head attention decode, B=1, H=32, L=8192 (dynamic), D=96 (scale 1/sqrt(128)). Not one of the examples: bench/probes/unseen.sh.
tgraph.graph @mha_decode(%q: !tgraph.tensor<[1, 32, 1, 96], f16>, %k: !tgraph.tensor<[1, 32, 8192, 96], f16> {dynamic = array<i64: 2>}, %v: !tgraph.tensor<[1, 32, 8192, 96], f16> {dynamic = array<i64: 2>}) -> !tgraph.tensor<[1, 32, 1, 96], f16> {
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[1, 32, 1, 96], f16>, !tgraph.tensor<[1, 32, 8192, 96], f16> -> !tgraph.tensor<[1, 32, 1, 8192], f16>
  %t = tgraph.scale %s, 0.08838834764831845 : !tgraph.tensor<[1, 32, 1, 8192], f16>
  %e = tgraph.exp %t : !tgraph.tensor<[1, 32, 1, 8192], f16>
  %r = tgraph.reduce sum %e dim 3 : !tgraph.tensor<[1, 32, 1, 8192], f16> -> !tgraph.tensor<[1, 32, 1, 1], f16>
  %p = tgraph.div %e, %r : !tgraph.tensor<[1, 32, 1, 8192], f16>, !tgraph.tensor<[1, 32, 1, 1], f16> -> !tgraph.tensor<[1, 32, 1, 8192], f16>
  %o = tgraph.matmul %p, %v : !tgraph.tensor<[1, 32, 1, 8192], f16>, !tgraph.tensor<[1, 32, 8192, 96], f16> -> !tgraph.tensor<[1, 32, 1, 96], f16>
  tgraph.output %o : !tgraph.tensor<[1, 32, 1, 96], f16>
}
