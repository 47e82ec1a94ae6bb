// RUN: not cleave-opt %s 2>&1 | filecheck %s
// RUN: sh -c 'cleave-opt "$1" >/dev/null 2>&1; echo "exit $?"' sh %s | filecheck %s --check-prefix=EXIT
tgraph.graph @bad(%a: !tgraph.tensor<[4, 8], f16>, %b: !tgraph.tensor<[16, 2], f16>) -> !tgraph.tensor<[4, 2], f16> {
  %e = tgraph.exp %a : !tgraph.tensor<[4, 8], f16>
  %c = tgraph.matmul %e, %b : !tgraph.tensor<[4, 8], f16>, !tgraph.tensor<[16, 2], f16> -> !tgraph.tensor<[4, 2], f16>
  tgraph.output %c : !tgraph.tensor<[4, 2], f16>
}

// A verifier error is one line on stderr, located at the failing op, and nothing else.
// CHECK:     {{^.*}}invalid_line.mlir:5:3: error: tgraph.matmul: contracting dims differ: 8 vs 16{{$}}
// CHECK-NOT: {{.}}
// EXIT: exit 1
