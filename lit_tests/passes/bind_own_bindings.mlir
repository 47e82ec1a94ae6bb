// A graph written with symbols binds from its own `bindings` (no cleave-symbolize needed);
// `values` overrides them, and a symbol with no value at all is an error.
// RUN: cleave-opt %s -p cleave-bind | filecheck %s
// RUN: cleave-opt %s -p 'cleave-bind{values="T=2"}' | filecheck %s --check-prefix=OVR
// RUN: not cleave-opt %S/Inputs/unbound.mlir -p cleave-bind 2>&1 | filecheck %s --check-prefix=UNBOUND

// CHECK:      tgraph.graph @decode(%x: !tgraph.tensor<[16, 64], f16> {dynamic = array<i64: 0>}, %w: !tgraph.tensor<[64, 32], f16>) -> !tgraph.tensor<[16, 32], f16> {
// CHECK-NEXT:   tgraph.matmul %x, %w : !tgraph.tensor<[16, 64], f16>, !tgraph.tensor<[64, 32], f16> -> !tgraph.tensor<[16, 32], f16>
// OVR:        tgraph.graph @decode(%x: !tgraph.tensor<[2, 64], f16> {dynamic = array<i64: 0>}, %w: !tgraph.tensor<[64, 32], f16>) -> !tgraph.tensor<[2, 32], f16> {
// UNBOUND:    @unbound: dim K has unbound symbol(s) K

tgraph.graph @decode(%x: !tgraph.tensor<[T, 64], f16> {dynamic = array<i64: 0>}, %w: !tgraph.tensor<[64, 32], f16>) -> !tgraph.tensor<[T, 32], f16> attributes {bindings = {T = 16 : i64}} {
  %y = tgraph.matmul %x, %w : !tgraph.tensor<[T, 64], f16>, !tgraph.tensor<[64, 32], f16> -> !tgraph.tensor<[T, 32], f16>
  tgraph.output %y : !tgraph.tensor<[T, 32], f16>
}
