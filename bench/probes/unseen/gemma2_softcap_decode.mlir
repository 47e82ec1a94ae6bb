// Gemma-2 decode attention with logit soft-capping (no mask at decode): tanh(q K^T / 16 / 50) * 50, softmax, P V; B1 H16 (8 KV heads, group 2) L4096 D256.
tgraph.graph @gemma2_softcap_decode(%q: !tgraph.tensor<[1, 8, 2, 256], f16>, %k: !tgraph.tensor<[1, 8, 4096, 256], f16>, %v: !tgraph.tensor<[1, 8, 4096, 256], f16>) -> !tgraph.tensor<[1, 8, 2, 256], f16> {
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[1, 8, 2, 256], f16>, !tgraph.tensor<[1, 8, 4096, 256], f16> -> !tgraph.tensor<[1, 8, 2, 4096], f16>
  %0 = tgraph.scale %s, 1.250000e-03 : !tgraph.tensor<[1, 8, 2, 4096], f16>
  %c = tgraph.tanh %0 : !tgraph.tensor<[1, 8, 2, 4096], f16>
  %t = tgraph.scale %c, 5.000000e+01 : !tgraph.tensor<[1, 8, 2, 4096], f16>
  %m = tgraph.reduce max %t dim 3 : !tgraph.tensor<[1, 8, 2, 4096], f16> -> !tgraph.tensor<[1, 8, 2, 1], f16>
  %z = tgraph.sub %t, %m : !tgraph.tensor<[1, 8, 2, 4096], f16>, !tgraph.tensor<[1, 8, 2, 1], f16> -> !tgraph.tensor<[1, 8, 2, 4096], f16>
  %e = tgraph.exp %z : !tgraph.tensor<[1, 8, 2, 4096], f16>
  %r = tgraph.reduce sum %e dim 3 : !tgraph.tensor<[1, 8, 2, 4096], f16> -> !tgraph.tensor<[1, 8, 2, 1], f16>
  %p = tgraph.div %e, %r : !tgraph.tensor<[1, 8, 2, 4096], f16>, !tgraph.tensor<[1, 8, 2, 1], f16> -> !tgraph.tensor<[1, 8, 2, 4096], f16>
  %o = tgraph.matmul %p, %v : !tgraph.tensor<[1, 8, 2, 4096], f16>, !tgraph.tensor<[1, 8, 4096, 256], f16> -> !tgraph.tensor<[1, 8, 2, 256], f16>
  tgraph.output %o : !tgraph.tensor<[1, 8, 2, 256], f16>
}
