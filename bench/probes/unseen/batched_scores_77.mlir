// Batched attention scores and probabilities only (no V), 12 heads of 77 tokens, head dim 64, scaled by 1/8.
tgraph.graph @batched_scores(%q: !tgraph.tensor<[12, 77, 64], f16>, %k: !tgraph.tensor<[12, 77, 64], f16>) -> !tgraph.tensor<[12, 77, 77], f16> {
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[12, 77, 64], f16>, !tgraph.tensor<[12, 77, 64], f16> -> !tgraph.tensor<[12, 77, 77], f16>
  %t = tgraph.scale %s, 1.250000e-01 : !tgraph.tensor<[12, 77, 77], f16>
  %m = tgraph.reduce max %t dim 2 : !tgraph.tensor<[12, 77, 77], f16> -> !tgraph.tensor<[12, 77, 1], f16>
  %z = tgraph.sub %t, %m : !tgraph.tensor<[12, 77, 77], f16>, !tgraph.tensor<[12, 77, 1], f16> -> !tgraph.tensor<[12, 77, 77], f16>
  %e = tgraph.exp %z : !tgraph.tensor<[12, 77, 77], f16>
  %r = tgraph.reduce sum %e dim 2 : !tgraph.tensor<[12, 77, 77], f16> -> !tgraph.tensor<[12, 77, 1], f16>
  %p = tgraph.div %e, %r : !tgraph.tensor<[12, 77, 77], f16>, !tgraph.tensor<[12, 77, 1], f16> -> !tgraph.tensor<[12, 77, 77], f16>
  tgraph.output %p : !tgraph.tensor<[12, 77, 77], f16>
}
