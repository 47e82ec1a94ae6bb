// RMSNorm then matmul: x [T, 4096], T=3 (dynamic), W [4096, 1000] (an awkward width: padded by cleave compile). Not one of the examples: bench/probes/unseen.sh.
tgraph.graph @rmsnorm_matmul(%x: !tgraph.tensor<[3, 4096], f16> {dynamic = array<i64: 0>}, %w: !tgraph.tensor<[4096, 1000], f16>) -> !tgraph.tensor<[3, 1000], f16> {
  %sq = tgraph.square %x : !tgraph.tensor<[3, 4096], f16>
  %ss = tgraph.reduce sum %sq dim 1 : !tgraph.tensor<[3, 4096], f16> -> !tgraph.tensor<[3, 1], f16>
  %ms = tgraph.scale %ss, 0.000244140625 : !tgraph.tensor<[3, 1], f16>
  %rs = tgraph.rsqrt %ms : !tgraph.tensor<[3, 1], f16>
  %n = tgraph.mul %x, %rs : !tgraph.tensor<[3, 4096], f16>, !tgraph.tensor<[3, 1], f16> -> !tgraph.tensor<[3, 4096], f16>
  %o = tgraph.matmul %n, %w : !tgraph.tensor<[3, 4096], f16>, !tgraph.tensor<[4096, 1000], f16> -> !tgraph.tensor<[3, 1000], f16>
  tgraph.output %o : !tgraph.tensor<[3, 1000], f16>
}
