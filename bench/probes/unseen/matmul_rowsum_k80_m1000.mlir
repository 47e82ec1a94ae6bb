// Row sums of a product at odd sizes: A [1000, 80], B [80, 3000]. Not one of the examples: bench/probes/unseen.sh.
tgraph.graph @rs(%a: !tgraph.tensor<[1000, 80], f16>, %b: !tgraph.tensor<[80, 3000], f16>) -> !tgraph.tensor<[1000, 1], f16> {
  %ab = tgraph.matmul %a, %b : !tgraph.tensor<[1000, 80], f16>, !tgraph.tensor<[80, 3000], f16> -> !tgraph.tensor<[1000, 3000], f16>
  %o = tgraph.reduce sum %ab dim 1 : !tgraph.tensor<[1000, 3000], f16> -> !tgraph.tensor<[1000, 1], f16>
  tgraph.output %o : !tgraph.tensor<[1000, 1], f16>
}
