// cleave-opt reports a malformed pass pipeline in one line, without a traceback.
// RUN: not cleave-opt %s -p 'cleave-bind{values=d0=4}' 2>&1 | filecheck %s

// CHECK-NOT: Traceback
// CHECK:     Malformed pass arguments
tgraph.graph @mm(%a: !tgraph.tensor<[8, 16], f16>) -> !tgraph.tensor<[8, 16], f16> {
  tgraph.output %a : !tgraph.tensor<[8, 16], f16>
}
