// --parsing-diagnostics prints parse errors and exits 0, as in xdsl-opt.
// RUN: cleave-opt %s --parsing-diagnostics | filecheck %s

// CHECK: dims must be positive, got 0
tgraph.graph @zero(%a: !tgraph.tensor<[2, 0], f16>) -> !tgraph.tensor<[2, 0], f16> {
  tgraph.output %a : !tgraph.tensor<[2, 0], f16>
}
