// RUN: not cleave-opt %s -p cleave-superoptimize 2>&1 | filecheck %s
// RUN: not cleave-opt %s -p cleave-symbolize 2>&1 | filecheck %s
// RUN: cleave-opt %s -p cleave-fold-structural,cleave-symbolize | filecheck %s --check-prefix=FOLDED
// A concat's result dim is the sum of its operands' (4095 + 1), which no product of symbols is: the search
// and cleave-symbolize say so in one line and name the pass that moves it out (cleave-pipeline runs it first).
tgraph.graph @kv_append(%kc: !tgraph.tensor<[4, 4095, 64], f16>, %kn: !tgraph.tensor<[4, 1, 64], f16>, %q: !tgraph.tensor<[4, 1, 64], f16>) -> !tgraph.tensor<[4, 1, 4096], f16> {
  %k = tgraph.concat %kc, %kn dim 1 : !tgraph.tensor<[4, 4095, 64], f16>, !tgraph.tensor<[4, 1, 64], f16> -> !tgraph.tensor<[4, 4096, 64], f16>
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[4, 1, 64], f16>, !tgraph.tensor<[4, 4096, 64], f16> -> !tgraph.tensor<[4, 1, 4096], f16>
  tgraph.output %s : !tgraph.tensor<[4, 1, 4096], f16>
}
// CHECK:     {{^.*}}symbolize_structural.mlir:7:3: error: cleave-symbolize: tgraph.concat in @kv_append is not symbolized (nor searched); run cleave-fold-structural first, as cleave-pipeline does, to move it to the graph's boundary{{$}}
// CHECK-NOT: {{.}}
// FOLDED:     tgraph.graph @kv_append
// FOLDED-NOT: tgraph.concat
// FOLDED:     tgraph.matmul
