// Two-head attention output written per head then joined along features (concat at the output), 256 tokens, head dim 64.
tgraph.graph @two_heads(%q0: !tgraph.tensor<[256, 64], f16>, %k0: !tgraph.tensor<[256, 64], f16>, %v0: !tgraph.tensor<[256, 64], f16>, %q1: !tgraph.tensor<[256, 64], f16>, %k1: !tgraph.tensor<[256, 64], f16>, %v1: !tgraph.tensor<[256, 64], f16>) -> !tgraph.tensor<[256, 128], f16> {
  %s0 = tgraph.matmul %q0, %k0 transpose_b : !tgraph.tensor<[256, 64], f16>, !tgraph.tensor<[256, 64], f16> -> !tgraph.tensor<[256, 256], f16>
  %m0 = tgraph.reduce max %s0 dim 1 : !tgraph.tensor<[256, 256], f16> -> !tgraph.tensor<[256, 1], f16>
  %z0 = tgraph.sub %s0, %m0 : !tgraph.tensor<[256, 256], f16>, !tgraph.tensor<[256, 1], f16> -> !tgraph.tensor<[256, 256], f16>
  %e0 = tgraph.exp %z0 : !tgraph.tensor<[256, 256], f16>
  %r0 = tgraph.reduce sum %e0 dim 1 : !tgraph.tensor<[256, 256], f16> -> !tgraph.tensor<[256, 1], f16>
  %p0 = tgraph.div %e0, %r0 : !tgraph.tensor<[256, 256], f16>, !tgraph.tensor<[256, 1], f16> -> !tgraph.tensor<[256, 256], f16>
  %o0 = tgraph.matmul %p0, %v0 : !tgraph.tensor<[256, 256], f16>, !tgraph.tensor<[256, 64], f16> -> !tgraph.tensor<[256, 64], f16>
  %s1 = tgraph.matmul %q1, %k1 transpose_b : !tgraph.tensor<[256, 64], f16>, !tgraph.tensor<[256, 64], f16> -> !tgraph.tensor<[256, 256], f16>
  %m1 = tgraph.reduce max %s1 dim 1 : !tgraph.tensor<[256, 256], f16> -> !tgraph.tensor<[256, 1], f16>
  %z1 = tgraph.sub %s1, %m1 : !tgraph.tensor<[256, 256], f16>, !tgraph.tensor<[256, 1], f16> -> !tgraph.tensor<[256, 256], f16>
  %e1 = tgraph.exp %z1 : !tgraph.tensor<[256, 256], f16>
  %r1 = tgraph.reduce sum %e1 dim 1 : !tgraph.tensor<[256, 256], f16> -> !tgraph.tensor<[256, 1], f16>
  %p1 = tgraph.div %e1, %r1 : !tgraph.tensor<[256, 256], f16>, !tgraph.tensor<[256, 1], f16> -> !tgraph.tensor<[256, 256], f16>
  %o1 = tgraph.matmul %p1, %v1 : !tgraph.tensor<[256, 256], f16>, !tgraph.tensor<[256, 64], f16> -> !tgraph.tensor<[256, 64], f16>
  %o = tgraph.concat %o0, %o1 dim 1 : !tgraph.tensor<[256, 64], f16>, !tgraph.tensor<[256, 64], f16> -> !tgraph.tensor<[256, 128], f16>
  tgraph.output %o : !tgraph.tensor<[256, 128], f16>
}
