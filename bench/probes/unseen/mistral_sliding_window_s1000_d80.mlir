// Mistral sliding-window GQA attention (examples/models) resized: 8 KV heads, 4 a group, S=1000, D=80. Not one of the examples: bench/probes/unseen.sh.
tgraph.graph @mistral_sliding_window_attention(%q: !tgraph.tensor<[1, 8, 4, 1000, 80], f16>, %k: !tgraph.tensor<[1, 8, 1, 1000, 80], f16>, %v: !tgraph.tensor<[1, 8, 1, 1000, 80], f16>, %mask: !tgraph.tensor<[1, 1, 1, 1000, 1000], f16>) -> !tgraph.tensor<[1, 8, 4, 1000, 80], f16> {
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[1, 8, 4, 1000, 80], f16>, !tgraph.tensor<[1, 8, 1, 1000, 80], f16> -> !tgraph.tensor<[1, 8, 4, 1000, 1000], f16>
  %t = tgraph.scale %s, 0.088388347648318433 : !tgraph.tensor<[1, 8, 4, 1000, 1000], f16>
  %fill = tgraph.scalar sub %mask, 1.000000e+04 : !tgraph.tensor<[1, 1, 1, 1000, 1000], f16>
  %tm = tgraph.select %mask, %t, %fill : !tgraph.tensor<[1, 1, 1, 1000, 1000], f16>, !tgraph.tensor<[1, 8, 4, 1000, 1000], f16>, !tgraph.tensor<[1, 1, 1, 1000, 1000], f16> -> !tgraph.tensor<[1, 8, 4, 1000, 1000], f16>
  %m = tgraph.reduce max %tm dim 4 : !tgraph.tensor<[1, 8, 4, 1000, 1000], f16> -> !tgraph.tensor<[1, 8, 4, 1000, 1], f16>
  %0 = tgraph.sub %tm, %m : !tgraph.tensor<[1, 8, 4, 1000, 1000], f16>, !tgraph.tensor<[1, 8, 4, 1000, 1], f16> -> !tgraph.tensor<[1, 8, 4, 1000, 1000], f16>
  %e = tgraph.exp %0 : !tgraph.tensor<[1, 8, 4, 1000, 1000], f16>
  %r = tgraph.reduce sum %e dim 4 : !tgraph.tensor<[1, 8, 4, 1000, 1000], f16> -> !tgraph.tensor<[1, 8, 4, 1000, 1], f16>
  %p = tgraph.div %e, %r : !tgraph.tensor<[1, 8, 4, 1000, 1000], f16>, !tgraph.tensor<[1, 8, 4, 1000, 1], f16> -> !tgraph.tensor<[1, 8, 4, 1000, 1000], f16>
  %o = tgraph.matmul %p, %v : !tgraph.tensor<[1, 8, 4, 1000, 1000], f16>, !tgraph.tensor<[1, 8, 1, 1000, 80], f16> -> !tgraph.tensor<[1, 8, 4, 1000, 80], f16>
  tgraph.output %o : !tgraph.tensor<[1, 8, 4, 1000, 80], f16>
}
