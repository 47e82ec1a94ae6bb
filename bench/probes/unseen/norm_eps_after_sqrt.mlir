// An RMS norm with eps added after the square root, x / (sqrt(mean(x^2)) + 1e-6) * g, then nn.Linear's [N, K] projection at T=3.
tgraph.graph @norm_eps_after_sqrt(%x: !tgraph.tensor<[3, 2048], f16>, %g: !tgraph.tensor<[1, 2048], f16>, %w: !tgraph.tensor<[512, 2048], f16>) -> !tgraph.tensor<[3, 512], f16> {
  %sq = tgraph.square %x : !tgraph.tensor<[3, 2048], f16>
  %ms = tgraph.reduce mean %sq dim 1 : !tgraph.tensor<[3, 2048], f16> -> !tgraph.tensor<[3, 1], f16>
  %rt = tgraph.sqrt %ms : !tgraph.tensor<[3, 1], f16>
  %d = tgraph.scalar add %rt, 1.000000e-06 : !tgraph.tensor<[3, 1], f16>
  %n = tgraph.div %x, %d : !tgraph.tensor<[3, 2048], f16>, !tgraph.tensor<[3, 1], f16> -> !tgraph.tensor<[3, 2048], f16>
  %ng = tgraph.mul %n, %g : !tgraph.tensor<[3, 2048], f16>, !tgraph.tensor<[1, 2048], f16> -> !tgraph.tensor<[3, 2048], f16>
  %o = tgraph.matmul %ng, %w transpose_b : !tgraph.tensor<[3, 2048], f16>, !tgraph.tensor<[512, 2048], f16> -> !tgraph.tensor<[3, 512], f16>
  tgraph.output %o : !tgraph.tensor<[3, 512], f16>
}
