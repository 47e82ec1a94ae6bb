// nn.Linear written as x @ w.T with an explicit transpose of the [N, K] weight (64 tokens, 512 -> 256).
tgraph.graph @t_mm(%x: !tgraph.tensor<[64, 512], f16>, %w: !tgraph.tensor<[256, 512], f16>) -> !tgraph.tensor<[64, 256], f16> {
  %wt = tgraph.transpose %w perm [1, 0] : !tgraph.tensor<[256, 512], f16> -> !tgraph.tensor<[512, 256], f16>
  %y = tgraph.matmul %x, %wt : !tgraph.tensor<[64, 512], f16>, !tgraph.tensor<[512, 256], f16> -> !tgraph.tensor<[64, 256], f16>
  tgraph.output %y : !tgraph.tensor<[64, 256], f16>
}
