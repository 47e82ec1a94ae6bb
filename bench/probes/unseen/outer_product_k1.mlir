// exp(a b) of a column and a row: a matmul with K = 1.
tgraph.graph @outer(%a: !tgraph.tensor<[300, 1], f16>, %b: !tgraph.tensor<[1, 260], f16>) -> !tgraph.tensor<[300, 260], f16> {
  %y = tgraph.matmul %a, %b : !tgraph.tensor<[300, 1], f16>, !tgraph.tensor<[1, 260], f16> -> !tgraph.tensor<[300, 260], f16>
  %e = tgraph.exp %y : !tgraph.tensor<[300, 260], f16>
  tgraph.output %e : !tgraph.tensor<[300, 260], f16>
}
