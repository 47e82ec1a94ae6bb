// RUN: cleave-opt %s | cleave-opt | filecheck %s
// RUN: ROUNDTRIP

// Named inputs, two outputs, argument attributes and a bindings dictionary.
// CHECK-LABEL: tgraph.graph @two_outputs(
// CHECK-SAME:    %x: !tgraph.tensor<[N, K], f16> {dynamic = array<i64: 0>, reduced = array<i64: 1>},
// CHECK-SAME:    %w: !tgraph.tensor<[K, 64], f16>)
// CHECK-SAME:    -> (!tgraph.tensor<[N, 64], f16>, !tgraph.tensor<[N, 1], f16>)
// CHECK-SAME:    attributes {bindings = {N = 8 : i64, K = 32 : i64}} {
// CHECK-NEXT:    %y = tgraph.matmul %x, %w : !tgraph.tensor<[N, K], f16>, !tgraph.tensor<[K, 64], f16> -> !tgraph.tensor<[N, 64], f16>
// CHECK-NEXT:    %r = tgraph.reduce max %x dim 1 : !tgraph.tensor<[N, K], f16> -> !tgraph.tensor<[N, 1], f16>
// CHECK-NEXT:    tgraph.output %y, %r : !tgraph.tensor<[N, 64], f16>, !tgraph.tensor<[N, 1], f16>
// CHECK-NEXT:  }
tgraph.graph @two_outputs(%x: !tgraph.tensor<[N, K], f16> {dynamic = array<i64: 0>, reduced = array<i64: 1>}, %w: !tgraph.tensor<[K, 64], f16>) -> (!tgraph.tensor<[N, 64], f16>, !tgraph.tensor<[N, 1], f16>) attributes {bindings = {N = 8 : i64, K = 32 : i64}} {
  %y = tgraph.matmul %x, %w : !tgraph.tensor<[N, K], f16>, !tgraph.tensor<[K, 64], f16> -> !tgraph.tensor<[N, 64], f16>
  %r = tgraph.reduce max %x dim 1 : !tgraph.tensor<[N, K], f16> -> !tgraph.tensor<[N, 1], f16>
  tgraph.output %y, %r : !tgraph.tensor<[N, 64], f16>, !tgraph.tensor<[N, 1], f16>
}

// Symbolic dims are printed in canonical form: (K/s)/2 becomes K/(2*s), N*M becomes M*N.
// Symbol names that are sympy constants or functions (E, I, S, N) stay plain symbols.
// CHECK-LABEL: tgraph.graph @symbolic(
// CHECK-SAME:    %a: !tgraph.tensor<[s, N, K/s], bf16>,
// CHECK-SAME:    %b: !tgraph.tensor<[2*M, K/(2*s)], f32>,
// CHECK-SAME:    %c: !tgraph.tensor<[E, I, S, M*N], f64>)
// CHECK-SAME:    -> !tgraph.tensor<[s, N, K/s], bf16> {
// CHECK-NEXT:    tgraph.output %a : !tgraph.tensor<[s, N, K/s], bf16>
tgraph.graph @symbolic(%a: !tgraph.tensor<[s, N, K/s], bf16>, %b: !tgraph.tensor<[2*M, (K/s)/2], f32>, %c: !tgraph.tensor<[E, I, S, N*M], f64>) -> !tgraph.tensor<[s, N, K/s], bf16> {
  tgraph.output %a : !tgraph.tensor<[s, N, K/s], bf16>
}

// No inputs' attributes, no outputs' attributes: nothing extra is printed. Rank 0 is allowed.
// CHECK-LABEL: tgraph.graph @scalar(%t: !tgraph.tensor<[], f16>) -> !tgraph.tensor<[], f16> {
// CHECK-NEXT:    tgraph.output %t : !tgraph.tensor<[], f16>
tgraph.graph @scalar(%t: !tgraph.tensor<[], f16>) -> !tgraph.tensor<[], f16> {
  tgraph.output %t : !tgraph.tensor<[], f16>
}
