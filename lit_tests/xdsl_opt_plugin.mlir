// Stock xdsl-opt finds the tgraph dialect and the cleave-* passes through the `xdsl.universe`
// entry point of the installed cleave-ir package.
// RUN: xdsl-opt %s -p cleave-symbolize | filecheck %s
// RUN: xdsl-opt %s -p cleave-symbolize,cleave-bind | filecheck %s --check-prefix=BIND

// CHECK:      tgraph.graph @mm(%a: !tgraph.tensor<[d0, d1], f16>, %b: !tgraph.tensor<[d1, d2], f16>) -> !tgraph.tensor<[d0, d2], f16> attributes {bindings = {d0 = 8 : i64, d1 = 16 : i64, d2 = 4 : i64}} {
// CHECK-NEXT:   %c = tgraph.matmul %a, %b : !tgraph.tensor<[d0, d1], f16>, !tgraph.tensor<[d1, d2], f16> -> !tgraph.tensor<[d0, d2], f16>
// BIND:       tgraph.graph @mm(%a: !tgraph.tensor<[8, 16], f16>, %b: !tgraph.tensor<[16, 4], f16>) -> !tgraph.tensor<[8, 4], f16> {

tgraph.graph @mm(%a: !tgraph.tensor<[8, 16], f16>, %b: !tgraph.tensor<[16, 4], f16>) -> !tgraph.tensor<[8, 4], f16> {
  %c = tgraph.matmul %a, %b : !tgraph.tensor<[8, 16], f16>, !tgraph.tensor<[16, 4], f16> -> !tgraph.tensor<[8, 4], f16>
  tgraph.output %c : !tgraph.tensor<[8, 4], f16>
}
