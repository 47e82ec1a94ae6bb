// Gated attention output (Qwen3-Next style): o * sigmoid(x @ Wg), T=4, hidden 2048.
tgraph.graph @gated_output(%x: !tgraph.tensor<[4, 2048], f16>, %wg: !tgraph.tensor<[2048, 2048], f16>, %o: !tgraph.tensor<[4, 2048], f16>) -> !tgraph.tensor<[4, 2048], f16> {
  %g = tgraph.matmul %x, %wg : !tgraph.tensor<[4, 2048], f16>, !tgraph.tensor<[2048, 2048], f16> -> !tgraph.tensor<[4, 2048], f16>
  %s = tgraph.sigmoid %g : !tgraph.tensor<[4, 2048], f16>
  %y = tgraph.mul %o, %s : !tgraph.tensor<[4, 2048], f16>, !tgraph.tensor<[4, 2048], f16> -> !tgraph.tensor<[4, 2048], f16>
  tgraph.output %y : !tgraph.tensor<[4, 2048], f16>
}
