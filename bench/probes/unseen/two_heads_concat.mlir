// Two projections of one input, one through a sigmoid, concatenated along columns.
tgraph.graph @hc(%x: !tgraph.tensor<[64, 256], f16>, %w1: !tgraph.tensor<[256, 48], f16>, %w2: !tgraph.tensor<[256, 80], f16>) -> !tgraph.tensor<[64, 128], f16> {
  %a = tgraph.matmul %x, %w1 : !tgraph.tensor<[64, 256], f16>, !tgraph.tensor<[256, 48], f16> -> !tgraph.tensor<[64, 48], f16>
  %b = tgraph.matmul %x, %w2 : !tgraph.tensor<[64, 256], f16>, !tgraph.tensor<[256, 80], f16> -> !tgraph.tensor<[64, 80], f16>
  %sa = tgraph.sigmoid %a : !tgraph.tensor<[64, 48], f16>
  %o = tgraph.concat %sa, %b dim 1 : !tgraph.tensor<[64, 48], f16>, !tgraph.tensor<[64, 80], f16> -> !tgraph.tensor<[64, 128], f16>
  tgraph.output %o : !tgraph.tensor<[64, 128], f16>
}
