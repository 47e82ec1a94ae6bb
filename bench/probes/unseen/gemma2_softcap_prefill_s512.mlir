// Gemma-2 prefill attention with logit soft-capping: tanh(q k^T / 16 / 50) * 50, softmax, P v; B1 H8 S512 D256.
tgraph.graph @gemma2_softcap_prefill(%q: !tgraph.tensor<[1, 8, 512, 256], f16>, %k: !tgraph.tensor<[1, 8, 512, 256], f16>, %v: !tgraph.tensor<[1, 8, 512, 256], f16>) -> !tgraph.tensor<[1, 8, 512, 256], f16> {
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[1, 8, 512, 256], f16>, !tgraph.tensor<[1, 8, 512, 256], f16> -> !tgraph.tensor<[1, 8, 512, 512], f16>
  %0 = tgraph.scale %s, 1.250000e-03 : !tgraph.tensor<[1, 8, 512, 512], f16>
  %c = tgraph.tanh %0 : !tgraph.tensor<[1, 8, 512, 512], f16>
  %t = tgraph.scale %c, 5.000000e+01 : !tgraph.tensor<[1, 8, 512, 512], f16>
  %m = tgraph.reduce max %t dim 3 : !tgraph.tensor<[1, 8, 512, 512], f16> -> !tgraph.tensor<[1, 8, 512, 1], f16>
  %z = tgraph.sub %t, %m : !tgraph.tensor<[1, 8, 512, 512], f16>, !tgraph.tensor<[1, 8, 512, 1], f16> -> !tgraph.tensor<[1, 8, 512, 512], f16>
  %e = tgraph.exp %z : !tgraph.tensor<[1, 8, 512, 512], f16>
  %r = tgraph.reduce sum %e dim 3 : !tgraph.tensor<[1, 8, 512, 512], f16> -> !tgraph.tensor<[1, 8, 512, 1], f16>
  %p = tgraph.div %e, %r : !tgraph.tensor<[1, 8, 512, 512], f16>, !tgraph.tensor<[1, 8, 512, 1], f16> -> !tgraph.tensor<[1, 8, 512, 512], f16>
  %o = tgraph.matmul %p, %v : !tgraph.tensor<[1, 8, 512, 512], f16>, !tgraph.tensor<[1, 8, 512, 256], f16> -> !tgraph.tensor<[1, 8, 512, 256], f16>
  tgraph.output %o : !tgraph.tensor<[1, 8, 512, 256], f16>
}
