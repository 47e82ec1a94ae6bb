// Row maxima of a product: max over dim 1 of (A B), A [1024, 64], B [64, 2048] (no algebraic shortcut, unlike a row sum). Not one of the examples: bench/probes/unseen.sh.
tgraph.graph @rm(%a: !tgraph.tensor<[1024, 64], f16>, %b: !tgraph.tensor<[64, 2048], f16>) -> !tgraph.tensor<[1024, 1], f16> {
  %ab = tgraph.matmul %a, %b : !tgraph.tensor<[1024, 64], f16>, !tgraph.tensor<[64, 2048], f16> -> !tgraph.tensor<[1024, 2048], f16>
  %o = tgraph.reduce max %ab dim 1 : !tgraph.tensor<[1024, 2048], f16> -> !tgraph.tensor<[1024, 1], f16>
  tgraph.output %o : !tgraph.tensor<[1024, 1], f16>
}
