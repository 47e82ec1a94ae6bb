// RUN: cleave-opt %s --split-input-file --parsing-diagnostics | filecheck %s
// Closed vocabularies of the new ops: gelu's form and tgraph.scalar's operation are enums.

tgraph.graph @gelu(%a: !tgraph.tensor<[2, 4], f16>) -> !tgraph.tensor<[2, 4], f16> {
  %b = tgraph.gelu fast %a : !tgraph.tensor<[2, 4], f16>
  tgraph.output %b : !tgraph.tensor<[2, 4], f16>
}

// CHECK: Expected `erf`, or `tanh`.

// -----

tgraph.graph @scalar(%a: !tgraph.tensor<[2, 4], f16>) -> !tgraph.tensor<[2, 4], f16> {
  %b = tgraph.scalar pow %a, 2.0 : !tgraph.tensor<[2, 4], f16>
  tgraph.output %b : !tgraph.tensor<[2, 4], f16>
}

// CHECK: Expected `add`, `sub`, `rsub`, `mul`, `div`, `rdiv`, `max`, or `min`.
