// RUN: cleave-opt %s | cleave-opt | filecheck %s
// RUN: ROUNDTRIP

// All eight unary ops keep the type.
// CHECK-LABEL: tgraph.graph @unary
// CHECK-NEXT:    %[[A:.*]] = tgraph.exp %x : !tgraph.tensor<[4, N], f32>
// CHECK-NEXT:    %[[B:.*]] = tgraph.sqrt %[[A]] : !tgraph.tensor<[4, N], f32>
// CHECK-NEXT:    %[[C:.*]] = tgraph.rsqrt %[[B]] : !tgraph.tensor<[4, N], f32>
// CHECK-NEXT:    %[[D:.*]] = tgraph.neg %[[C]] : !tgraph.tensor<[4, N], f32>
// CHECK-NEXT:    %[[E:.*]] = tgraph.silu %[[D]] : !tgraph.tensor<[4, N], f32>
// CHECK-NEXT:    %[[F:.*]] = tgraph.sigmoid %[[E]] : !tgraph.tensor<[4, N], f32>
// CHECK-NEXT:    %[[G:.*]] = tgraph.square %[[F]] : !tgraph.tensor<[4, N], f32>
// CHECK-NEXT:    %[[H:.*]] = tgraph.reciprocal %[[G]] : !tgraph.tensor<[4, N], f32>
// CHECK-NEXT:    tgraph.output %[[H]] : !tgraph.tensor<[4, N], f32>
tgraph.graph @unary(%x: !tgraph.tensor<[4, N], f32>) -> !tgraph.tensor<[4, N], f32> {
  %a = tgraph.exp %x : !tgraph.tensor<[4, N], f32>
  %b = tgraph.sqrt %a : !tgraph.tensor<[4, N], f32>
  %c = tgraph.rsqrt %b : !tgraph.tensor<[4, N], f32>
  %d = tgraph.neg %c : !tgraph.tensor<[4, N], f32>
  %e = tgraph.silu %d : !tgraph.tensor<[4, N], f32>
  %f = tgraph.sigmoid %e : !tgraph.tensor<[4, N], f32>
  %g = tgraph.square %f : !tgraph.tensor<[4, N], f32>
  %h = tgraph.reciprocal %g : !tgraph.tensor<[4, N], f32>
  tgraph.output %h : !tgraph.tensor<[4, N], f32>
}

// All five binary ops, with size-1 broadcasting on either side.
// CHECK-LABEL: tgraph.graph @binary
// CHECK-NEXT:    %[[A:.*]] = tgraph.add %x, %row : !tgraph.tensor<[4, N], f16>, !tgraph.tensor<[1, N], f16> -> !tgraph.tensor<[4, N], f16>
// CHECK-NEXT:    %[[B:.*]] = tgraph.sub %col, %[[A]] : !tgraph.tensor<[4, 1], f16>, !tgraph.tensor<[4, N], f16> -> !tgraph.tensor<[4, N], f16>
// CHECK-NEXT:    %[[C:.*]] = tgraph.mul %col, %row : !tgraph.tensor<[4, 1], f16>, !tgraph.tensor<[1, N], f16> -> !tgraph.tensor<[4, N], f16>
// CHECK-NEXT:    %[[D:.*]] = tgraph.div %[[B]], %[[C]] : !tgraph.tensor<[4, N], f16>, !tgraph.tensor<[4, N], f16> -> !tgraph.tensor<[4, N], f16>
// CHECK-NEXT:    %[[E:.*]] = tgraph.max %[[D]], %col : !tgraph.tensor<[4, N], f16>, !tgraph.tensor<[4, 1], f16> -> !tgraph.tensor<[4, N], f16>
// CHECK-NEXT:    tgraph.output %[[E]] : !tgraph.tensor<[4, N], f16>
tgraph.graph @binary(%x: !tgraph.tensor<[4, N], f16>, %row: !tgraph.tensor<[1, N], f16>, %col: !tgraph.tensor<[4, 1], f16>) -> !tgraph.tensor<[4, N], f16> {
  %a = tgraph.add %x, %row : !tgraph.tensor<[4, N], f16>, !tgraph.tensor<[1, N], f16> -> !tgraph.tensor<[4, N], f16>
  %b = tgraph.sub %col, %a : !tgraph.tensor<[4, 1], f16>, !tgraph.tensor<[4, N], f16> -> !tgraph.tensor<[4, N], f16>
  %c = tgraph.mul %col, %row : !tgraph.tensor<[4, 1], f16>, !tgraph.tensor<[1, N], f16> -> !tgraph.tensor<[4, N], f16>
  %d = tgraph.div %b, %c : !tgraph.tensor<[4, N], f16>, !tgraph.tensor<[4, N], f16> -> !tgraph.tensor<[4, N], f16>
  %e = tgraph.max %d, %col : !tgraph.tensor<[4, N], f16>, !tgraph.tensor<[4, 1], f16> -> !tgraph.tensor<[4, N], f16>
  tgraph.output %e : !tgraph.tensor<[4, N], f16>
}

// scale takes an f64 constant; it is printed in full precision / exponent form.
// CHECK-LABEL: tgraph.graph @scale
// CHECK-NEXT:    %[[A:.*]] = tgraph.scale %x, 0.088388347648318447 : !tgraph.tensor<[2, 8], bf16>
// CHECK-NEXT:    %[[B:.*]] = tgraph.scale %[[A]], -5.000000e-01 : !tgraph.tensor<[2, 8], bf16>
// CHECK-NEXT:    tgraph.output %[[B]]
tgraph.graph @scale(%x: !tgraph.tensor<[2, 8], bf16>) -> !tgraph.tensor<[2, 8], bf16> {
  %a = tgraph.scale %x, 0.08838834764831845 : !tgraph.tensor<[2, 8], bf16>
  %b = tgraph.scale %a, -0.5 : !tgraph.tensor<[2, 8], bf16>
  tgraph.output %b : !tgraph.tensor<[2, 8], bf16>
}
