// vLLM's fused_add_rms_norm: h = x + r (the new residual), y = rmsnorm(h) * g; both returned. 16 tokens, hidden 4096.
tgraph.graph @add_rmsnorm(%x: !tgraph.tensor<[16, 4096], f16>, %r: !tgraph.tensor<[16, 4096], f16>, %g: !tgraph.tensor<[1, 4096], f16>) -> (!tgraph.tensor<[16, 4096], f16>, !tgraph.tensor<[16, 4096], f16>) {
  %h = tgraph.add %x, %r : !tgraph.tensor<[16, 4096], f16>, !tgraph.tensor<[16, 4096], f16> -> !tgraph.tensor<[16, 4096], f16>
  %sq = tgraph.square %h : !tgraph.tensor<[16, 4096], f16>
  %ms = tgraph.reduce mean %sq dim 1 : !tgraph.tensor<[16, 4096], f16> -> !tgraph.tensor<[16, 1], f16>
  %e = tgraph.scalar add %ms, 1.000000e-06 : !tgraph.tensor<[16, 1], f16>
  %rs = tgraph.rsqrt %e : !tgraph.tensor<[16, 1], f16>
  %n = tgraph.mul %h, %rs : !tgraph.tensor<[16, 4096], f16>, !tgraph.tensor<[16, 1], f16> -> !tgraph.tensor<[16, 4096], f16>
  %y = tgraph.mul %n, %g : !tgraph.tensor<[16, 4096], f16>, !tgraph.tensor<[1, 4096], f16> -> !tgraph.tensor<[16, 4096], f16>
  tgraph.output %y, %h : !tgraph.tensor<[16, 4096], f16>, !tgraph.tensor<[16, 4096], f16>
}
