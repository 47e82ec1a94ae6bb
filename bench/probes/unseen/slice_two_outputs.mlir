// One fused projection sliced into its two halves, each returned (a packed k/v projection).
tgraph.graph @s2o(%x: !tgraph.tensor<[16, 128], f16>, %w: !tgraph.tensor<[128, 192], f16>) -> (!tgraph.tensor<[16, 96], f16>, !tgraph.tensor<[16, 96], f16>) {
  %y = tgraph.matmul %x, %w : !tgraph.tensor<[16, 128], f16>, !tgraph.tensor<[128, 192], f16> -> !tgraph.tensor<[16, 192], f16>
  %k = tgraph.slice %y dim 1 start 0 : !tgraph.tensor<[16, 192], f16> -> !tgraph.tensor<[16, 96], f16>
  %v = tgraph.slice %y dim 1 start 96 : !tgraph.tensor<[16, 192], f16> -> !tgraph.tensor<[16, 96], f16>
  tgraph.output %k, %v : !tgraph.tensor<[16, 96], f16>, !tgraph.tensor<[16, 96], f16>
}
