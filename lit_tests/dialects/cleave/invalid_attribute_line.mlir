// RUN: not cleave-opt %s 2>&1 | filecheck %s
// RUN: sh -c 'cleave-opt "$1" >/dev/null 2>&1; echo "exit $?"' sh %s | filecheck %s --check-prefix=EXIT
tgraph.graph @g(%x: !tgraph.tensor<[4, 8], f16>) -> !tgraph.tensor<[4, 8], f16> attributes {
    cleave.boundary = #cleave.boundary<inputs = [#cleave.view<input = 0, perm = [0, 0]>], outputs = [#cleave.part<output = 0>]>} {
  tgraph.output %x : !tgraph.tensor<[4, 8], f16>
}

// An attribute its verifier rejects is one line on stderr, located where the attribute is written.
// CHECK:     {{^.*}}invalid_attribute_line.mlir:4:50: error: cleave.view: perm [0, 0] is not a permutation{{$}}
// CHECK-NOT: {{.}}
// EXIT: exit 1
