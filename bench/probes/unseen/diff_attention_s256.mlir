// Differential attention (DIFF Transformer): (softmax(Q1 K1^T s) - 0.8 softmax(Q2 K2^T s)) V.
tgraph.graph @diff_attention(%q1: !tgraph.tensor<[1, 4, 256, 64], f16>, %k1: !tgraph.tensor<[1, 4, 256, 64], f16>, %q2: !tgraph.tensor<[1, 4, 256, 64], f16>, %k2: !tgraph.tensor<[1, 4, 256, 64], f16>, %v: !tgraph.tensor<[1, 4, 256, 128], f16>) -> !tgraph.tensor<[1, 4, 256, 128], f16> {
  %s1 = tgraph.matmul %q1, %k1 transpose_b : !tgraph.tensor<[1, 4, 256, 64], f16>, !tgraph.tensor<[1, 4, 256, 64], f16> -> !tgraph.tensor<[1, 4, 256, 256], f16>
  %t1 = tgraph.scale %s1, 1.250000e-01 : !tgraph.tensor<[1, 4, 256, 256], f16>
  %m1 = tgraph.reduce max %t1 dim 3 : !tgraph.tensor<[1, 4, 256, 256], f16> -> !tgraph.tensor<[1, 4, 256, 1], f16>
  %z1 = tgraph.sub %t1, %m1 : !tgraph.tensor<[1, 4, 256, 256], f16>, !tgraph.tensor<[1, 4, 256, 1], f16> -> !tgraph.tensor<[1, 4, 256, 256], f16>
  %e1 = tgraph.exp %z1 : !tgraph.tensor<[1, 4, 256, 256], f16>
  %r1 = tgraph.reduce sum %e1 dim 3 : !tgraph.tensor<[1, 4, 256, 256], f16> -> !tgraph.tensor<[1, 4, 256, 1], f16>
  %p1 = tgraph.div %e1, %r1 : !tgraph.tensor<[1, 4, 256, 256], f16>, !tgraph.tensor<[1, 4, 256, 1], f16> -> !tgraph.tensor<[1, 4, 256, 256], f16>
  %s2 = tgraph.matmul %q2, %k2 transpose_b : !tgraph.tensor<[1, 4, 256, 64], f16>, !tgraph.tensor<[1, 4, 256, 64], f16> -> !tgraph.tensor<[1, 4, 256, 256], f16>
  %t2 = tgraph.scale %s2, 1.250000e-01 : !tgraph.tensor<[1, 4, 256, 256], f16>
  %m2 = tgraph.reduce max %t2 dim 3 : !tgraph.tensor<[1, 4, 256, 256], f16> -> !tgraph.tensor<[1, 4, 256, 1], f16>
  %z2 = tgraph.sub %t2, %m2 : !tgraph.tensor<[1, 4, 256, 256], f16>, !tgraph.tensor<[1, 4, 256, 1], f16> -> !tgraph.tensor<[1, 4, 256, 256], f16>
  %e2 = tgraph.exp %z2 : !tgraph.tensor<[1, 4, 256, 256], f16>
  %r2 = tgraph.reduce sum %e2 dim 3 : !tgraph.tensor<[1, 4, 256, 256], f16> -> !tgraph.tensor<[1, 4, 256, 1], f16>
  %p2 = tgraph.div %e2, %r2 : !tgraph.tensor<[1, 4, 256, 256], f16>, !tgraph.tensor<[1, 4, 256, 1], f16> -> !tgraph.tensor<[1, 4, 256, 256], f16>
  %l = tgraph.scale %p2, 8.000000e-01 : !tgraph.tensor<[1, 4, 256, 256], f16>
  %d = tgraph.sub %p1, %l : !tgraph.tensor<[1, 4, 256, 256], f16>, !tgraph.tensor<[1, 4, 256, 256], f16> -> !tgraph.tensor<[1, 4, 256, 256], f16>
  %o = tgraph.matmul %d, %v : !tgraph.tensor<[1, 4, 256, 256], f16>, !tgraph.tensor<[1, 4, 256, 128], f16> -> !tgraph.tensor<[1, 4, 256, 128], f16>
  tgraph.output %o : !tgraph.tensor<[1, 4, 256, 128], f16>
}
