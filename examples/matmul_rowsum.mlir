// Matmul then row sum: sum over dim 1 of (A B), A [4096, 128], B [128, 4096]; output [4096, 1].
tgraph.graph @matmul_rowsum(%a: !tgraph.tensor<[4096, 128], f16>, %b: !tgraph.tensor<[128, 4096], f16>) -> !tgraph.tensor<[4096, 1], f16> {
  %ab = tgraph.matmul %a, %b : !tgraph.tensor<[4096, 128], f16>, !tgraph.tensor<[128, 4096], f16> -> !tgraph.tensor<[4096, 4096], f16>
  %o = tgraph.reduce sum %ab dim 1 : !tgraph.tensor<[4096, 4096], f16> -> !tgraph.tensor<[4096, 1], f16>
  tgraph.output %o : !tgraph.tensor<[4096, 1], f16>
}
