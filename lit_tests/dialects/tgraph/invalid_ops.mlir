// RUN: cleave-opt %s --split-input-file --verify-diagnostics | filecheck %s
// Verifier errors of the ops for real layers (cast, scalar, min, gelu), one bad graph per chunk.

tgraph.graph @cast_shape(%a: !tgraph.tensor<[4, 8], f16>) -> !tgraph.tensor<[8, 4], f32> {
  %b = tgraph.cast %a : !tgraph.tensor<[4, 8], f16> -> !tgraph.tensor<[8, 4], f32>
  tgraph.output %b : !tgraph.tensor<[8, 4], f32>
}

// CHECK: error: tgraph.cast changes the element type only: shape [4, 8] -> [8, 4]

// -----

tgraph.graph @mixed(%a: !tgraph.tensor<[4, 8], f16>, %b: !tgraph.tensor<[4, 1], f32>) -> !tgraph.tensor<[4, 8], f16> {
  %c = tgraph.min %a, %b : !tgraph.tensor<[4, 8], f16>, !tgraph.tensor<[4, 1], f32> -> !tgraph.tensor<[4, 8], f16>
  tgraph.output %c : !tgraph.tensor<[4, 8], f16>
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: tgraph.min: element types differ: f16, f32, f16 (convert with tgraph.cast)

// -----

tgraph.graph @min_broadcast(%a: !tgraph.tensor<[4, 8], f16>, %b: !tgraph.tensor<[4, 2], f16>) -> !tgraph.tensor<[4, 8], f16> {
  %c = tgraph.min %a, %b : !tgraph.tensor<[4, 8], f16>, !tgraph.tensor<[4, 2], f16> -> !tgraph.tensor<[4, 8], f16>
  tgraph.output %c : !tgraph.tensor<[4, 8], f16>
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: tgraph.min: dim 1 does not broadcast: 8 vs 2

// -----

tgraph.graph @scalar_type(%a: !tgraph.tensor<[4, 8], f16>) -> !tgraph.tensor<[4, 8], f32> {
  %b = "tgraph.scalar"(%a) <{kind = #tgraph<scalar_kind max>, constant = 0.0 : f64}> : (!tgraph.tensor<[4, 8], f16>) -> !tgraph.tensor<[4, 8], f32>
  tgraph.output %b : !tgraph.tensor<[4, 8], f32>
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: {{.*}}expected from variable 'T'
