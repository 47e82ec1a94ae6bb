// mha_small_max.mlir with Llama's causal mask (examples/models/llama3_causal_attention.mlir at 2 heads,
// 2048 tokens, head dim 64): masked logits become -1e4 through tgraph.select before the row max.
tgraph.graph @mha_causal(%q: !tgraph.tensor<[1, 2, 2048, 64], f16>, %k: !tgraph.tensor<[1, 2, 2048, 64], f16>, %v: !tgraph.tensor<[1, 2, 2048, 64], f16>, %mask: !tgraph.tensor<[1, 1, 2048, 2048], f16>) -> !tgraph.tensor<[1, 2, 2048, 64], f16> {
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[1, 2, 2048, 64], f16>, !tgraph.tensor<[1, 2, 2048, 64], f16> -> !tgraph.tensor<[1, 2, 2048, 2048], f16>
  %t = tgraph.scale %s, 0.125 : !tgraph.tensor<[1, 2, 2048, 2048], f16>
  %fill = tgraph.scalar sub %mask, 1.000000e+04 : !tgraph.tensor<[1, 1, 2048, 2048], f16>
  %tm = tgraph.select %mask, %t, %fill : !tgraph.tensor<[1, 1, 2048, 2048], f16>, !tgraph.tensor<[1, 2, 2048, 2048], f16>, !tgraph.tensor<[1, 1, 2048, 2048], f16> -> !tgraph.tensor<[1, 2, 2048, 2048], f16>
  %m = tgraph.reduce max %tm dim 3 : !tgraph.tensor<[1, 2, 2048, 2048], f16> -> !tgraph.tensor<[1, 2, 2048, 1], f16>
  %d = tgraph.sub %tm, %m : !tgraph.tensor<[1, 2, 2048, 2048], f16>, !tgraph.tensor<[1, 2, 2048, 1], f16> -> !tgraph.tensor<[1, 2, 2048, 2048], f16>
  %e = tgraph.exp %d : !tgraph.tensor<[1, 2, 2048, 2048], f16>
  %r = tgraph.reduce sum %e dim 3 : !tgraph.tensor<[1, 2, 2048, 2048], f16> -> !tgraph.tensor<[1, 2, 2048, 1], f16>
  %p = tgraph.div %e, %r : !tgraph.tensor<[1, 2, 2048, 2048], f16>, !tgraph.tensor<[1, 2, 2048, 1], f16> -> !tgraph.tensor<[1, 2, 2048, 2048], f16>
  %o = tgraph.matmul %p, %v : !tgraph.tensor<[1, 2, 2048, 2048], f16>, !tgraph.tensor<[1, 2, 2048, 64], f16> -> !tgraph.tensor<[1, 2, 2048, 64], f16>
  tgraph.output %o : !tgraph.tensor<[1, 2, 2048, 64], f16>
}
