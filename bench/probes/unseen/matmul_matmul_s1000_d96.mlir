// Two chained matmuls: (A B) C, A [1000, 96], B [96, 1000], C [1000, 96]. Not one of the examples: bench/probes/unseen.sh.
tgraph.graph @matmul_matmul(%a: !tgraph.tensor<[1000, 96], f16>, %b: !tgraph.tensor<[96, 1000], f16>, %c: !tgraph.tensor<[1000, 96], f16>) -> !tgraph.tensor<[1000, 96], f16> {
  %ab = tgraph.matmul %a, %b : !tgraph.tensor<[1000, 96], f16>, !tgraph.tensor<[96, 1000], f16> -> !tgraph.tensor<[1000, 1000], f16>
  %o = tgraph.matmul %ab, %c : !tgraph.tensor<[1000, 1000], f16>, !tgraph.tensor<[1000, 96], f16> -> !tgraph.tensor<[1000, 96], f16>
  tgraph.output %o : !tgraph.tensor<[1000, 96], f16>
}
