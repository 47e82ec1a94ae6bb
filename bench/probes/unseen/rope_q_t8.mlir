// Rotary embedding of queries (rotate-half form): q * cos + cat(-q2, q1) * sin, 8 tokens, 32 heads, head dim 128.
tgraph.graph @rope_q(%q: !tgraph.tensor<[8, 32, 128], f16>, %cos: !tgraph.tensor<[8, 1, 128], f16>, %sin: !tgraph.tensor<[8, 1, 128], f16>) -> !tgraph.tensor<[8, 32, 128], f16> {
  %q1 = tgraph.slice %q dim 2 start 0 : !tgraph.tensor<[8, 32, 128], f16> -> !tgraph.tensor<[8, 32, 64], f16>
  %q2 = tgraph.slice %q dim 2 start 64 : !tgraph.tensor<[8, 32, 128], f16> -> !tgraph.tensor<[8, 32, 64], f16>
  %n2 = tgraph.neg %q2 : !tgraph.tensor<[8, 32, 64], f16>
  %rh = tgraph.concat %n2, %q1 dim 2 : !tgraph.tensor<[8, 32, 64], f16>, !tgraph.tensor<[8, 32, 64], f16> -> !tgraph.tensor<[8, 32, 128], f16>
  %a = tgraph.mul %q, %cos : !tgraph.tensor<[8, 32, 128], f16>, !tgraph.tensor<[8, 1, 128], f16> -> !tgraph.tensor<[8, 32, 128], f16>
  %b = tgraph.mul %rh, %sin : !tgraph.tensor<[8, 32, 128], f16>, !tgraph.tensor<[8, 1, 128], f16> -> !tgraph.tensor<[8, 32, 128], f16>
  %o = tgraph.add %a, %b : !tgraph.tensor<[8, 32, 128], f16>, !tgraph.tensor<[8, 32, 128], f16> -> !tgraph.tensor<[8, 32, 128], f16>
  tgraph.output %o : !tgraph.tensor<[8, 32, 128], f16>
}
