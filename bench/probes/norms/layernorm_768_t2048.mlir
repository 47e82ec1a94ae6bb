// GPT-2's LayerNorm (weight, bias, eps 1e-5) at prefill: 2048 tokens of 768.
tgraph.graph @layernorm_768_t2048(%x: !tgraph.tensor<[2048, 768], f16>, %g: !tgraph.tensor<[1, 768], f16>, %b: !tgraph.tensor<[1, 768], f16>) -> !tgraph.tensor<[2048, 768], f16> {
  %mu = tgraph.reduce mean %x dim 1 : !tgraph.tensor<[2048, 768], f16> -> !tgraph.tensor<[2048, 1], f16>
  %xc = tgraph.sub %x, %mu : !tgraph.tensor<[2048, 768], f16>, !tgraph.tensor<[2048, 1], f16> -> !tgraph.tensor<[2048, 768], f16>
  %sq = tgraph.square %xc : !tgraph.tensor<[2048, 768], f16>
  %var = tgraph.reduce mean %sq dim 1 : !tgraph.tensor<[2048, 768], f16> -> !tgraph.tensor<[2048, 1], f16>
  %e = tgraph.scalar add %var, 1.000000e-05 : !tgraph.tensor<[2048, 1], f16>
  %r = tgraph.rsqrt %e : !tgraph.tensor<[2048, 1], f16>
  %n = tgraph.mul %xc, %r : !tgraph.tensor<[2048, 768], f16>, !tgraph.tensor<[2048, 1], f16> -> !tgraph.tensor<[2048, 768], f16>
  %ng = tgraph.mul %n, %g : !tgraph.tensor<[2048, 768], f16>, !tgraph.tensor<[1, 768], f16> -> !tgraph.tensor<[2048, 768], f16>
  %y = tgraph.add %ng, %b : !tgraph.tensor<[2048, 768], f16>, !tgraph.tensor<[1, 768], f16> -> !tgraph.tensor<[2048, 768], f16>
  tgraph.output %y : !tgraph.tensor<[2048, 768], f16>
}
