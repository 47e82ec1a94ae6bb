// cleave-bind with no values restores the concrete graph from `bindings`: the round trip is exact.
// RUN: cleave-opt %s -p cleave-symbolize,cleave-bind > %t
// RUN: cleave-opt %s | diff - %t
// RUN: cleave-opt %s -p cleave-symbolize,cleave-bind | filecheck %s
// Overrides are a quoted string option, space or comma separated; the rest come from `bindings`.
// RUN: cleave-opt %s -p 'cleave-symbolize,cleave-bind{values="d0=4 s=8"}' | filecheck %s --check-prefix=OVR
// RUN: cleave-opt %s -p 'cleave-symbolize,cleave-bind{values="d0=4,s=8"}' | filecheck %s --check-prefix=OVR
// Bad values are one-line errors.
// RUN: not cleave-opt %s -p 'cleave-symbolize,cleave-bind{values="s=3"}' 2>&1 | filecheck %s --check-prefix=NODIV
// RUN: not cleave-opt %s -p 'cleave-bind{values="d0=0"}' 2>&1 | filecheck %s --check-prefix=BADVAL

// The headers end in `{`: no `bindings` or `constraints` are left.
// CHECK-LABEL: tgraph.graph @mm(%a: !tgraph.tensor<[8, 16], f16>, %b: !tgraph.tensor<[16, 4], f16>) -> !tgraph.tensor<[8, 4], f16> {
// CHECK-NEXT:    tgraph.matmul %a, %b : !tgraph.tensor<[8, 16], f16>, !tgraph.tensor<[16, 4], f16> -> !tgraph.tensor<[8, 4], f16>
// CHECK-LABEL: tgraph.graph @split(%a: !tgraph.tensor<[2, 64], f16>) -> !tgraph.tensor<[4, 2, 16], f16> {
// CHECK-NEXT:    tgraph.split %a dim 1 : !tgraph.tensor<[2, 64], f16> -> !tgraph.tensor<[4, 2, 16], f16>

// OVR-LABEL: tgraph.graph @mm(%a: !tgraph.tensor<[4, 16], f16>, %b: !tgraph.tensor<[16, 4], f16>) -> !tgraph.tensor<[4, 4], f16> {
// OVR-NEXT:    tgraph.matmul %a, %b : !tgraph.tensor<[4, 16], f16>, !tgraph.tensor<[16, 4], f16> -> !tgraph.tensor<[4, 4], f16>
// OVR-LABEL: tgraph.graph @split(%a: !tgraph.tensor<[4, 64], f16>) -> !tgraph.tensor<[8, 4, 8], f16> {
// OVR-NEXT:    tgraph.split %a dim 1 : !tgraph.tensor<[4, 64], f16> -> !tgraph.tensor<[8, 4, 8], f16>

// NODIV: @split: dim d1/s is not an integer under {{.*}}: 64/3
// BADVAL: cleave-bind: expected NAME=POSITIVE_INT, got 'd0=0'

tgraph.graph @mm(%a: !tgraph.tensor<[8, 16], f16>, %b: !tgraph.tensor<[16, 4], f16>) -> !tgraph.tensor<[8, 4], f16> {
  %c = tgraph.matmul %a, %b : !tgraph.tensor<[8, 16], f16>, !tgraph.tensor<[16, 4], f16> -> !tgraph.tensor<[8, 4], f16>
  tgraph.output %c : !tgraph.tensor<[8, 4], f16>
}
tgraph.graph @split(%a: !tgraph.tensor<[2, 64], f16>) -> !tgraph.tensor<[4, 2, 16], f16> {
  %s = tgraph.split %a dim 1 : !tgraph.tensor<[2, 64], f16> -> !tgraph.tensor<[4, 2, 16], f16>
  tgraph.output %s : !tgraph.tensor<[4, 2, 16], f16>
}
