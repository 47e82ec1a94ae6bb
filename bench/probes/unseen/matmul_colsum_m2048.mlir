// Column sums of a product: sum over dim 0 of (A B), A [2048, 128], B [128, 512]; output [1, 512]. Not one of the examples: bench/probes/unseen.sh.
tgraph.graph @cs(%a: !tgraph.tensor<[2048, 128], f16>, %b: !tgraph.tensor<[128, 512], f16>) -> !tgraph.tensor<[1, 512], f16> {
  %ab = tgraph.matmul %a, %b : !tgraph.tensor<[2048, 128], f16>, !tgraph.tensor<[128, 512], f16> -> !tgraph.tensor<[2048, 512], f16>
  %o = tgraph.reduce sum %ab dim 0 : !tgraph.tensor<[2048, 512], f16> -> !tgraph.tensor<[1, 512], f16>
  tgraph.output %o : !tgraph.tensor<[1, 512], f16>
}
