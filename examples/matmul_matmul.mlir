// Two chained matmuls: (A B) C, A [4096, 128], B [128, 4096], C [4096, 128] (S=4096).
tgraph.graph @matmul_matmul(%a: !tgraph.tensor<[4096, 128], f16>, %b: !tgraph.tensor<[128, 4096], f16>, %c: !tgraph.tensor<[4096, 128], f16>) -> !tgraph.tensor<[4096, 128], f16> {
  %ab = tgraph.matmul %a, %b : !tgraph.tensor<[4096, 128], f16>, !tgraph.tensor<[128, 4096], f16> -> !tgraph.tensor<[4096, 4096], f16>
  %o = tgraph.matmul %ab, %c : !tgraph.tensor<[4096, 4096], f16>, !tgraph.tensor<[4096, 128], f16> -> !tgraph.tensor<[4096, 128], f16>
  tgraph.output %o : !tgraph.tensor<[4096, 128], f16>
}
