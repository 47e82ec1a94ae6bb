// QK-norm (RMSNorm of the query with a weight, Qwen3/OLMo-style) before decode attention over 777 keys, 8 heads of 64.
tgraph.graph @qk_norm_decode(%q: !tgraph.tensor<[1, 8, 1, 64], f16>, %gq: !tgraph.tensor<[1, 1, 1, 64], f16>, %k: !tgraph.tensor<[1, 8, 777, 64], f16>, %v: !tgraph.tensor<[1, 8, 777, 64], f16>) -> !tgraph.tensor<[1, 8, 1, 64], f16> {
  %sq = tgraph.square %q : !tgraph.tensor<[1, 8, 1, 64], f16>
  %ms = tgraph.reduce mean %sq dim 3 : !tgraph.tensor<[1, 8, 1, 64], f16> -> !tgraph.tensor<[1, 8, 1, 1], f16>
  %e = tgraph.scalar add %ms, 1.000000e-06 : !tgraph.tensor<[1, 8, 1, 1], f16>
  %r = tgraph.rsqrt %e : !tgraph.tensor<[1, 8, 1, 1], f16>
  %qn = tgraph.mul %q, %r : !tgraph.tensor<[1, 8, 1, 64], f16>, !tgraph.tensor<[1, 8, 1, 1], f16> -> !tgraph.tensor<[1, 8, 1, 64], f16>
  %qg = tgraph.mul %qn, %gq : !tgraph.tensor<[1, 8, 1, 64], f16>, !tgraph.tensor<[1, 1, 1, 64], f16> -> !tgraph.tensor<[1, 8, 1, 64], f16>
  %s = tgraph.matmul %qg, %k transpose_b : !tgraph.tensor<[1, 8, 1, 64], f16>, !tgraph.tensor<[1, 8, 777, 64], f16> -> !tgraph.tensor<[1, 8, 1, 777], f16>
  %t = tgraph.scale %s, 0.125 : !tgraph.tensor<[1, 8, 1, 777], f16>
  %mx = tgraph.reduce max %t dim 3 : !tgraph.tensor<[1, 8, 1, 777], f16> -> !tgraph.tensor<[1, 8, 1, 1], f16>
  %z = tgraph.sub %t, %mx : !tgraph.tensor<[1, 8, 1, 777], f16>, !tgraph.tensor<[1, 8, 1, 1], f16> -> !tgraph.tensor<[1, 8, 1, 777], f16>
  %p = tgraph.exp %z : !tgraph.tensor<[1, 8, 1, 777], f16>
  %l = tgraph.reduce sum %p dim 3 : !tgraph.tensor<[1, 8, 1, 777], f16> -> !tgraph.tensor<[1, 8, 1, 1], f16>
  %o = tgraph.matmul %p, %v : !tgraph.tensor<[1, 8, 1, 777], f16>, !tgraph.tensor<[1, 8, 777, 64], f16> -> !tgraph.tensor<[1, 8, 1, 64], f16>
  %y = tgraph.div %o, %l : !tgraph.tensor<[1, 8, 1, 64], f16>, !tgraph.tensor<[1, 8, 1, 1], f16> -> !tgraph.tensor<[1, 8, 1, 64], f16>
  tgraph.output %y : !tgraph.tensor<[1, 8, 1, 64], f16>
}
