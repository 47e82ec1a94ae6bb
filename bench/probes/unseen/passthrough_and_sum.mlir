// An input returned as it is beside its row sums.
tgraph.graph @ps(%x: !tgraph.tensor<[32, 100], f16>) -> (!tgraph.tensor<[32, 100], f16>, !tgraph.tensor<[32, 1], f16>) {
  %s = tgraph.reduce sum %x dim 1 : !tgraph.tensor<[32, 100], f16> -> !tgraph.tensor<[32, 1], f16>
  tgraph.output %x, %s : !tgraph.tensor<[32, 100], f16>, !tgraph.tensor<[32, 1], f16>
}
