// Sigmoid attention (Apple's SigmoidAttn): sigmoid(Q K^T * s + b) V with b = -log(S), no softmax.
tgraph.graph @sigmoid_attention(%q: !tgraph.tensor<[1, 8, 256, 64], f16>, %k: !tgraph.tensor<[1, 8, 256, 64], f16>, %v: !tgraph.tensor<[1, 8, 256, 64], f16>) -> !tgraph.tensor<[1, 8, 256, 64], f16> {
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[1, 8, 256, 64], f16>, !tgraph.tensor<[1, 8, 256, 64], f16> -> !tgraph.tensor<[1, 8, 256, 256], f16>
  %t = tgraph.scale %s, 1.250000e-01 : !tgraph.tensor<[1, 8, 256, 256], f16>
  %u = tgraph.scalar add %t, -5.545177e+00 : !tgraph.tensor<[1, 8, 256, 256], f16>
  %p = tgraph.sigmoid %u : !tgraph.tensor<[1, 8, 256, 256], f16>
  %o = tgraph.matmul %p, %v : !tgraph.tensor<[1, 8, 256, 256], f16>, !tgraph.tensor<[1, 8, 256, 64], f16> -> !tgraph.tensor<[1, 8, 256, 64], f16>
  tgraph.output %o : !tgraph.tensor<[1, 8, 256, 64], f16>
}
