// Llama rotary embedding of one decode token's q (32 heads) and k (8 KV heads), head dim 128, rotate-half form, both returned.
tgraph.graph @rope_qk_decode(%q: !tgraph.tensor<[1, 32, 128], f16>, %k: !tgraph.tensor<[1, 8, 128], f16>, %cos: !tgraph.tensor<[1, 1, 128], f16>, %sin: !tgraph.tensor<[1, 1, 128], f16>) -> (!tgraph.tensor<[1, 32, 128], f16>, !tgraph.tensor<[1, 8, 128], f16>) {
  %q1 = tgraph.slice %q dim 2 start 0 : !tgraph.tensor<[1, 32, 128], f16> -> !tgraph.tensor<[1, 32, 64], f16>
  %q2 = tgraph.slice %q dim 2 start 64 : !tgraph.tensor<[1, 32, 128], f16> -> !tgraph.tensor<[1, 32, 64], f16>
  %nq2 = tgraph.neg %q2 : !tgraph.tensor<[1, 32, 64], f16>
  %rq = tgraph.concat %nq2, %q1 dim 2 : !tgraph.tensor<[1, 32, 64], f16>, !tgraph.tensor<[1, 32, 64], f16> -> !tgraph.tensor<[1, 32, 128], f16>
  %qa = tgraph.mul %q, %cos : !tgraph.tensor<[1, 32, 128], f16>, !tgraph.tensor<[1, 1, 128], f16> -> !tgraph.tensor<[1, 32, 128], f16>
  %qb = tgraph.mul %rq, %sin : !tgraph.tensor<[1, 32, 128], f16>, !tgraph.tensor<[1, 1, 128], f16> -> !tgraph.tensor<[1, 32, 128], f16>
  %qo = tgraph.add %qa, %qb : !tgraph.tensor<[1, 32, 128], f16>, !tgraph.tensor<[1, 32, 128], f16> -> !tgraph.tensor<[1, 32, 128], f16>
  %k1 = tgraph.slice %k dim 2 start 0 : !tgraph.tensor<[1, 8, 128], f16> -> !tgraph.tensor<[1, 8, 64], f16>
  %k2 = tgraph.slice %k dim 2 start 64 : !tgraph.tensor<[1, 8, 128], f16> -> !tgraph.tensor<[1, 8, 64], f16>
  %nk2 = tgraph.neg %k2 : !tgraph.tensor<[1, 8, 64], f16>
  %rk = tgraph.concat %nk2, %k1 dim 2 : !tgraph.tensor<[1, 8, 64], f16>, !tgraph.tensor<[1, 8, 64], f16> -> !tgraph.tensor<[1, 8, 128], f16>
  %ka = tgraph.mul %k, %cos : !tgraph.tensor<[1, 8, 128], f16>, !tgraph.tensor<[1, 1, 128], f16> -> !tgraph.tensor<[1, 8, 128], f16>
  %kb = tgraph.mul %rk, %sin : !tgraph.tensor<[1, 8, 128], f16>, !tgraph.tensor<[1, 1, 128], f16> -> !tgraph.tensor<[1, 8, 128], f16>
  %ko = tgraph.add %ka, %kb : !tgraph.tensor<[1, 8, 128], f16>, !tgraph.tensor<[1, 8, 128], f16> -> !tgraph.tensor<[1, 8, 128], f16>
  tgraph.output %qo, %ko : !tgraph.tensor<[1, 32, 128], f16>, !tgraph.tensor<[1, 8, 128], f16>
}
