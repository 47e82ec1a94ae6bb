// The fused add + RMSNorm of vLLM-style decoders at T=1: h = x + r is returned (the next residual) beside RMSNorm(h) * g (eps 1e-6), hidden 4096.
tgraph.graph @add_rmsnorm(%x: !tgraph.tensor<[1, 4096], f16>, %r: !tgraph.tensor<[1, 4096], f16>, %g: !tgraph.tensor<[1, 4096], f16>) -> (!tgraph.tensor<[1, 4096], f16>, !tgraph.tensor<[1, 4096], f16>) {
  %h = tgraph.add %x, %r : !tgraph.tensor<[1, 4096], f16>, !tgraph.tensor<[1, 4096], f16> -> !tgraph.tensor<[1, 4096], f16>
  %sq = tgraph.square %h : !tgraph.tensor<[1, 4096], f16>
  %ms = tgraph.reduce mean %sq dim 1 : !tgraph.tensor<[1, 4096], f16> -> !tgraph.tensor<[1, 1], f16>
  %e = tgraph.scalar add %ms, 1.000000e-06 : !tgraph.tensor<[1, 1], f16>
  %rs = tgraph.rsqrt %e : !tgraph.tensor<[1, 1], f16>
  %n = tgraph.mul %h, %rs : !tgraph.tensor<[1, 4096], f16>, !tgraph.tensor<[1, 1], f16> -> !tgraph.tensor<[1, 4096], f16>
  %ng = tgraph.mul %n, %g : !tgraph.tensor<[1, 4096], f16>, !tgraph.tensor<[1, 4096], f16> -> !tgraph.tensor<[1, 4096], f16>
  tgraph.output %h, %ng : !tgraph.tensor<[1, 4096], f16>, !tgraph.tensor<[1, 4096], f16>
}
