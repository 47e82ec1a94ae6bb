// A matmul whose operands both come from splits (split-K): the two part counts unify to one symbol.
// RUN: cleave-opt %s -p cleave-symbolize | filecheck %s

// CHECK: tgraph.matmul %as, %bs : !tgraph.tensor<[s, {{.*}}], f16>, !tgraph.tensor<[s, {{.*}}], f16> -> !tgraph.tensor<[s, {{.*}}], f16>
tgraph.graph @split_k(%a: !tgraph.tensor<[64, 256], f16>, %b: !tgraph.tensor<[256, 32], f16>) -> !tgraph.tensor<[4, 64, 32], f16> {
  %as = tgraph.split %a dim 1 : !tgraph.tensor<[64, 256], f16> -> !tgraph.tensor<[4, 64, 64], f16>
  %bs = tgraph.split %b dim 0 : !tgraph.tensor<[256, 32], f16> -> !tgraph.tensor<[4, 64, 32], f16>
  %p = tgraph.matmul %as, %bs : !tgraph.tensor<[4, 64, 64], f16>, !tgraph.tensor<[4, 64, 32], f16> -> !tgraph.tensor<[4, 64, 32], f16>
  tgraph.output %p : !tgraph.tensor<[4, 64, 32], f16>
}
