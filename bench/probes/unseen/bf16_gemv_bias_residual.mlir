// Decode o_proj with bias and the residual add, bf16: x @ W^T + b + r at T=1, hidden 3072.
tgraph.graph @gemv_bias_residual(%x: !tgraph.tensor<[1, 3072], bf16>, %w: !tgraph.tensor<[3072, 3072], bf16>, %b: !tgraph.tensor<[1, 3072], bf16>, %r: !tgraph.tensor<[1, 3072], bf16>) -> !tgraph.tensor<[1, 3072], bf16> {
  %y = tgraph.matmul %x, %w transpose_b : !tgraph.tensor<[1, 3072], bf16>, !tgraph.tensor<[3072, 3072], bf16> -> !tgraph.tensor<[1, 3072], bf16>
  %yb = tgraph.add %y, %b : !tgraph.tensor<[1, 3072], bf16>, !tgraph.tensor<[1, 3072], bf16> -> !tgraph.tensor<[1, 3072], bf16>
  %o = tgraph.add %yb, %r : !tgraph.tensor<[1, 3072], bf16>, !tgraph.tensor<[1, 3072], bf16> -> !tgraph.tensor<[1, 3072], bf16>
  tgraph.output %o : !tgraph.tensor<[1, 3072], bf16>
}
