// RUN: not cleave-opt %s 2>&1 | filecheck %s
// RUN: sh -c 'cleave-opt "$1" >/dev/null 2>&1; echo "exit $?"' sh %s | filecheck %s --check-prefix=EXIT
tgraph.graph @bad(%a: !tgraph.tensor<[4, 8], f16>) -> !tgraph.tensor<[4, 1], f16> {
  %r = tgraph.reduce sum %a dim 1 : !tgraph.tensor<[4, 8/3], f16> -> !tgraph.tensor<[4, 1], f16>
  tgraph.output %r : !tgraph.tensor<[4, 1], f16>
}

// A parse error is one line on stderr, at the offending token, and nothing else.
// CHECK:     {{^.*}}parse_error_line.mlir:4:56: error: dim 8/3 is not an integer{{$}}
// CHECK-NOT: {{.}}
// EXIT: exit 1
