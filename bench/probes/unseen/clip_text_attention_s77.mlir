// CLIP's text encoder attention: 8 heads of 77 tokens (no multiple of 16), head dim 64, causal by a -1e4 additive mask input [77, 77]: softmax(q k^T / 8 + mask) v, max-subtracted.
tgraph.graph @clip_attn(%q: !tgraph.tensor<[8, 77, 64], f16>, %k: !tgraph.tensor<[8, 77, 64], f16>, %v: !tgraph.tensor<[8, 77, 64], f16>, %mask: !tgraph.tensor<[1, 77, 77], f16>) -> !tgraph.tensor<[8, 77, 64], f16> {
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[8, 77, 64], f16>, !tgraph.tensor<[8, 77, 64], f16> -> !tgraph.tensor<[8, 77, 77], f16>
  %t = tgraph.scale %s, 0.125 : !tgraph.tensor<[8, 77, 77], f16>
  %a = tgraph.add %t, %mask : !tgraph.tensor<[8, 77, 77], f16>, !tgraph.tensor<[1, 77, 77], f16> -> !tgraph.tensor<[8, 77, 77], f16>
  %m = tgraph.reduce max %a dim 2 : !tgraph.tensor<[8, 77, 77], f16> -> !tgraph.tensor<[8, 77, 1], f16>
  %d = tgraph.sub %a, %m : !tgraph.tensor<[8, 77, 77], f16>, !tgraph.tensor<[8, 77, 1], f16> -> !tgraph.tensor<[8, 77, 77], f16>
  %e = tgraph.exp %d : !tgraph.tensor<[8, 77, 77], f16>
  %z = tgraph.reduce sum %e dim 2 : !tgraph.tensor<[8, 77, 77], f16> -> !tgraph.tensor<[8, 77, 1], f16>
  %p = tgraph.div %e, %z : !tgraph.tensor<[8, 77, 77], f16>, !tgraph.tensor<[8, 77, 1], f16> -> !tgraph.tensor<[8, 77, 77], f16>
  %o = tgraph.matmul %p, %v : !tgraph.tensor<[8, 77, 77], f16>, !tgraph.tensor<[8, 77, 64], f16> -> !tgraph.tensor<[8, 77, 64], f16>
  tgraph.output %o : !tgraph.tensor<[8, 77, 64], f16>
}
