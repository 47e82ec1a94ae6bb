// Matmul: A B, A [4096, 4096], B [4096, 4096].
tgraph.graph @matmul(%a: !tgraph.tensor<[4096, 4096], f16>, %b: !tgraph.tensor<[4096, 4096], f16>) -> !tgraph.tensor<[4096, 4096], f16> {
  %o = tgraph.matmul %a, %b : !tgraph.tensor<[4096, 4096], f16>, !tgraph.tensor<[4096, 4096], f16> -> !tgraph.tensor<[4096, 4096], f16>
  tgraph.output %o : !tgraph.tensor<[4096, 4096], f16>
}
