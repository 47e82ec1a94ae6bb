// RUN: cleave-opt %s | cleave-opt | filecheck %s
// RUN: ROUNDTRIP

// The unary ops added for real layers keep the type; gelu names its form (erf or tanh).
// CHECK-LABEL: tgraph.graph @activations
// CHECK-NEXT:    %[[A:.*]] = tgraph.tanh %x : !tgraph.tensor<[4, N], f32>
// CHECK-NEXT:    %[[B:.*]] = tgraph.gelu erf %[[A]] : !tgraph.tensor<[4, N], f32>
// CHECK-NEXT:    %[[C:.*]] = tgraph.gelu tanh %[[B]] : !tgraph.tensor<[4, N], f32>
// CHECK-NEXT:    %[[D:.*]] = tgraph.exp2 %[[C]] : !tgraph.tensor<[4, N], f32>
// CHECK-NEXT:    %[[E:.*]] = tgraph.log %[[D]] : !tgraph.tensor<[4, N], f32>
// CHECK-NEXT:    %[[F:.*]] = tgraph.abs %[[E]] : !tgraph.tensor<[4, N], f32>
// CHECK-NEXT:    tgraph.output %[[F]] : !tgraph.tensor<[4, N], f32>
tgraph.graph @activations(%x: !tgraph.tensor<[4, N], f32>) -> !tgraph.tensor<[4, N], f32> {
  %a = tgraph.tanh %x : !tgraph.tensor<[4, N], f32>
  %b = tgraph.gelu erf %a : !tgraph.tensor<[4, N], f32>
  %c = tgraph.gelu tanh %b : !tgraph.tensor<[4, N], f32>
  %d = tgraph.exp2 %c : !tgraph.tensor<[4, N], f32>
  %e = tgraph.log %d : !tgraph.tensor<[4, N], f32>
  %f = tgraph.abs %e : !tgraph.tensor<[4, N], f32>
  tgraph.output %f : !tgraph.tensor<[4, N], f32>
}

// min broadcasts like the other binary ops.
// CHECK-LABEL: tgraph.graph @minimum
// CHECK-NEXT:    %[[A:.*]] = tgraph.min %x, %col : !tgraph.tensor<[4, N], f16>, !tgraph.tensor<[4, 1], f16> -> !tgraph.tensor<[4, N], f16>
// CHECK-NEXT:    tgraph.output %[[A]]
tgraph.graph @minimum(%x: !tgraph.tensor<[4, N], f16>, %col: !tgraph.tensor<[4, 1], f16>) -> !tgraph.tensor<[4, N], f16> {
  %a = tgraph.min %x, %col : !tgraph.tensor<[4, N], f16>, !tgraph.tensor<[4, 1], f16> -> !tgraph.tensor<[4, N], f16>
  tgraph.output %a : !tgraph.tensor<[4, N], f16>
}

// An elementwise op with a constant: the operation, the operand, the f64 constant.
// CHECK-LABEL: tgraph.graph @scalar
// CHECK-NEXT:    %[[A:.*]] = tgraph.scalar add %x, 1.000000e+00 : !tgraph.tensor<[2, 8], bf16>
// CHECK-NEXT:    %[[B:.*]] = tgraph.scalar sub %[[A]], 5.000000e-01 : !tgraph.tensor<[2, 8], bf16>
// CHECK-NEXT:    %[[C:.*]] = tgraph.scalar rsub %[[B]], 1.000000e+00 : !tgraph.tensor<[2, 8], bf16>
// CHECK-NEXT:    %[[D:.*]] = tgraph.scalar mul %[[C]], -2.000000e+00 : !tgraph.tensor<[2, 8], bf16>
// CHECK-NEXT:    %[[E:.*]] = tgraph.scalar div %[[D]], 3.000000e+00 : !tgraph.tensor<[2, 8], bf16>
// CHECK-NEXT:    %[[F:.*]] = tgraph.scalar rdiv %[[E]], 1.000000e+00 : !tgraph.tensor<[2, 8], bf16>
// CHECK-NEXT:    %[[G:.*]] = tgraph.scalar max %[[F]], 0.000000e+00 : !tgraph.tensor<[2, 8], bf16>
// CHECK-NEXT:    %[[H:.*]] = tgraph.scalar min %[[G]], 6.000000e+00 : !tgraph.tensor<[2, 8], bf16>
// CHECK-NEXT:    tgraph.output %[[H]]
tgraph.graph @scalar(%x: !tgraph.tensor<[2, 8], bf16>) -> !tgraph.tensor<[2, 8], bf16> {
  %a = tgraph.scalar add %x, 1.0 : !tgraph.tensor<[2, 8], bf16>
  %b = tgraph.scalar sub %a, 0.5 : !tgraph.tensor<[2, 8], bf16>
  %c = tgraph.scalar rsub %b, 1.0 : !tgraph.tensor<[2, 8], bf16>
  %d = tgraph.scalar mul %c, -2.0 : !tgraph.tensor<[2, 8], bf16>
  %e = tgraph.scalar div %d, 3.0 : !tgraph.tensor<[2, 8], bf16>
  %f = tgraph.scalar rdiv %e, 1.0 : !tgraph.tensor<[2, 8], bf16>
  %g = tgraph.scalar max %f, 0.0 : !tgraph.tensor<[2, 8], bf16>
  %h = tgraph.scalar min %g, 6.0 : !tgraph.tensor<[2, 8], bf16>
  tgraph.output %h : !tgraph.tensor<[2, 8], bf16>
}

// inf and NaN constants print as MLIR's hexadecimal bit patterns and read back (a masked_fill(m, -inf)).
// CHECK-LABEL: tgraph.graph @non_finite
// CHECK-NEXT:    %[[A:.*]] = tgraph.scalar add %x, 0xfff0000000000000 : !tgraph.tensor<[2, 8], f32>
// CHECK-NEXT:    %[[B:.*]] = tgraph.scalar min %[[A]], 0x7ff0000000000000 : !tgraph.tensor<[2, 8], f32>
// CHECK-NEXT:    %[[C:.*]] = tgraph.scale %[[B]], 0x7ff8000000000000 : !tgraph.tensor<[2, 8], f32>
// CHECK-NEXT:    %[[D:.*]] = tgraph.scale %[[C]], -1.500000e+00 : !tgraph.tensor<[2, 8], f32>
// CHECK-NEXT:    tgraph.output %[[D]]
tgraph.graph @non_finite(%x: !tgraph.tensor<[2, 8], f32>) -> !tgraph.tensor<[2, 8], f32> {
  %a = tgraph.scalar add %x, 0xFFF0000000000000 : !tgraph.tensor<[2, 8], f32>
  %b = tgraph.scalar min %a, 0x7ff0000000000000 : !tgraph.tensor<[2, 8], f32>
  %c = tgraph.scale %b, 0x7FF8000000000000 : !tgraph.tensor<[2, 8], f32>
  %d = tgraph.scale %c, -1.5 : !tgraph.tensor<[2, 8], f32>
  tgraph.output %d : !tgraph.tensor<[2, 8], f32>
}

// A norm in f32 before an f16 matmul: cast changes the element type only; reduce mean.
// CHECK-LABEL: tgraph.graph @norm_f32
// CHECK-NEXT:    %[[A:.*]] = tgraph.cast %x : !tgraph.tensor<[4, 64], f16> -> !tgraph.tensor<[4, 64], f32>
// CHECK-NEXT:    %[[B:.*]] = tgraph.square %[[A]] : !tgraph.tensor<[4, 64], f32>
// CHECK-NEXT:    %[[C:.*]] = tgraph.reduce mean %[[B]] dim 1 : !tgraph.tensor<[4, 64], f32> -> !tgraph.tensor<[4, 1], f32>
// CHECK-NEXT:    %[[D:.*]] = tgraph.scalar add %[[C]], 1.000000e-06 : !tgraph.tensor<[4, 1], f32>
// CHECK-NEXT:    %[[E:.*]] = tgraph.rsqrt %[[D]] : !tgraph.tensor<[4, 1], f32>
// CHECK-NEXT:    %[[F:.*]] = tgraph.mul %[[A]], %[[E]] : !tgraph.tensor<[4, 64], f32>, !tgraph.tensor<[4, 1], f32> -> !tgraph.tensor<[4, 64], f32>
// CHECK-NEXT:    %[[G:.*]] = tgraph.cast %[[F]] : !tgraph.tensor<[4, 64], f32> -> !tgraph.tensor<[4, 64], f16>
// CHECK-NEXT:    %[[H:.*]] = tgraph.matmul %[[G]], %w
tgraph.graph @norm_f32(%x: !tgraph.tensor<[4, 64], f16>, %w: !tgraph.tensor<[64, 32], f16>) -> !tgraph.tensor<[4, 32], f16> {
  %a = tgraph.cast %x : !tgraph.tensor<[4, 64], f16> -> !tgraph.tensor<[4, 64], f32>
  %b = tgraph.square %a : !tgraph.tensor<[4, 64], f32>
  %c = tgraph.reduce mean %b dim 1 : !tgraph.tensor<[4, 64], f32> -> !tgraph.tensor<[4, 1], f32>
  %d = tgraph.scalar add %c, 1.0e-6 : !tgraph.tensor<[4, 1], f32>
  %e = tgraph.rsqrt %d : !tgraph.tensor<[4, 1], f32>
  %f = tgraph.mul %a, %e : !tgraph.tensor<[4, 64], f32>, !tgraph.tensor<[4, 1], f32> -> !tgraph.tensor<[4, 64], f32>
  %g = tgraph.cast %f : !tgraph.tensor<[4, 64], f32> -> !tgraph.tensor<[4, 64], f16>
  %h = tgraph.matmul %g, %w : !tgraph.tensor<[4, 64], f16>, !tgraph.tensor<[64, 32], f16> -> !tgraph.tensor<[4, 32], f16>
  tgraph.output %h : !tgraph.tensor<[4, 32], f16>
}
