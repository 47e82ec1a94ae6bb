// Qwen's RMSNorm with its weight (eps 1e-6) at prefill: 2048 tokens of 5120 (the Qwen3-32B layer's norm region).
tgraph.graph @rmsnorm_5120_t2048(%x: !tgraph.tensor<[2048, 5120], f16>, %g: !tgraph.tensor<[1, 5120], f16>) -> !tgraph.tensor<[2048, 5120], f16> {
  %sq = tgraph.square %x : !tgraph.tensor<[2048, 5120], f16>
  %ms = tgraph.reduce mean %sq dim 1 : !tgraph.tensor<[2048, 5120], f16> -> !tgraph.tensor<[2048, 1], f16>
  %e = tgraph.scalar add %ms, 1.000000e-06 : !tgraph.tensor<[2048, 1], f16>
  %r = tgraph.rsqrt %e : !tgraph.tensor<[2048, 1], f16>
  %n = tgraph.mul %x, %r : !tgraph.tensor<[2048, 5120], f16>, !tgraph.tensor<[2048, 1], f16> -> !tgraph.tensor<[2048, 5120], f16>
  %y = tgraph.mul %n, %g : !tgraph.tensor<[2048, 5120], f16>, !tgraph.tensor<[1, 5120], f16> -> !tgraph.tensor<[2048, 5120], f16>
  tgraph.output %y : !tgraph.tensor<[2048, 5120], f16>
}

