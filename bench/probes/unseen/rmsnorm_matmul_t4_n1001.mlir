// RMSNorm then projection: x [4, 4096] (T dynamic) @ W [4096, 1001]. Not one of the examples: bench/probes/unseen.sh.
tgraph.graph @rmsnorm_matmul(%x: !tgraph.tensor<[4, 4096], f16> {dynamic = array<i64: 0>}, %w: !tgraph.tensor<[4096, 1001], f16>) -> !tgraph.tensor<[4, 1001], f16> {
  %sq = tgraph.square %x : !tgraph.tensor<[4, 4096], f16>
  %ss = tgraph.reduce sum %sq dim 1 : !tgraph.tensor<[4, 4096], f16> -> !tgraph.tensor<[4, 1], f16>
  %ms = tgraph.scale %ss, 0.000244140625 : !tgraph.tensor<[4, 1], f16>
  %rs = tgraph.rsqrt %ms : !tgraph.tensor<[4, 1], f16>
  %n = tgraph.mul %x, %rs : !tgraph.tensor<[4, 4096], f16>, !tgraph.tensor<[4, 1], f16> -> !tgraph.tensor<[4, 4096], f16>
  %o = tgraph.matmul %n, %w : !tgraph.tensor<[4, 4096], f16>, !tgraph.tensor<[4096, 1001], f16> -> !tgraph.tensor<[4, 1001], f16>
  tgraph.output %o : !tgraph.tensor<[4, 1001], f16>
}
