// Outputs x @ w and 2 x: one kernel either way; its tiles of x serve the product and the scaled output (cleave-split-shared-inputs copies x for the second).
tgraph.graph @os(%x: !tgraph.tensor<[256, 512], f16>, %w: !tgraph.tensor<[512, 512], f16>) -> (!tgraph.tensor<[256, 512], f16>, !tgraph.tensor<[256, 512], f16>) {
  %y = tgraph.matmul %x, %w : !tgraph.tensor<[256, 512], f16>, !tgraph.tensor<[512, 512], f16> -> !tgraph.tensor<[256, 512], f16>
  %z = tgraph.scale %x, 2.000000e+00 : !tgraph.tensor<[256, 512], f16>
  tgraph.output %y, %z : !tgraph.tensor<[256, 512], f16>, !tgraph.tensor<[256, 512], f16>
}
