// RUN: cleave-opt %s --split-input-file --verify-diagnostics | filecheck %s
// Parse errors in tensor types and op syntax, one per chunk. cleave-opt turns parse errors into
// one-line diagnostics, so they are reported under --verify-diagnostics (--parsing-diagnostics
// does not catch them: see parse_diagnostics_flag.mlir).

tgraph.graph @zero(%a: !tgraph.tensor<[2, 0], f16>) -> !tgraph.tensor<[2, 0], f16> {
  tgraph.output %a : !tgraph.tensor<[2, 0], f16>
}

// CHECK: error: dims must be positive, got 0

// -----

tgraph.graph @fraction(%a: !tgraph.tensor<[4096/3], f16>) -> !tgraph.tensor<[4096/3], f16> {
  tgraph.output %a : !tgraph.tensor<[4096/3], f16>
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: dim 4096/3 is not an integer

// -----

tgraph.graph @negative(%a: !tgraph.tensor<[-4], f16>) -> !tgraph.tensor<[-4], f16> {
  tgraph.output %a : !tgraph.tensor<[-4], f16>
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: expected a dim: an integer, a symbol name or '('

// -----

tgraph.graph @i32(%a: !tgraph.tensor<[4, 8], i32>) -> !tgraph.tensor<[4, 8], i32> {
  tgraph.output %a : !tgraph.tensor<[4, 8], i32>
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: tgraph.tensor element type must be f16, bf16, f32 or f64, got i32

// -----

tgraph.graph @reduce_kind(%a: !tgraph.tensor<[4, 8], f16>) -> !tgraph.tensor<[4, 1], f16> {
  %r = tgraph.reduce min %a dim 1 : !tgraph.tensor<[4, 8], f16> -> !tgraph.tensor<[4, 1], f16>
  tgraph.output %r : !tgraph.tensor<[4, 1], f16>
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: Expected `sum`, or `max`.

// -----

tgraph.graph @scale_int(%a: !tgraph.tensor<[4, 8], f16>) -> !tgraph.tensor<[4, 8], f16> {
  %s = tgraph.scale %a, 2 : !tgraph.tensor<[4, 8], f16>
  tgraph.output %s : !tgraph.tensor<[4, 8], f16>
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: Expected float literal

// -----

// The unary result type is tied to the operand type (only reachable in generic form).
tgraph.graph @unary_type(%a: !tgraph.tensor<[4, 8], f16>) -> !tgraph.tensor<[4, 8], f32> {
  %e = "tgraph.exp"(%a) : (!tgraph.tensor<[4, 8], f16>) -> !tgraph.tensor<[4, 8], f32>
  tgraph.output %e : !tgraph.tensor<[4, 8], f32>
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: attribute !tgraph.tensor<[4, 8], f16> expected from variable 'T', but got !tgraph.tensor<[4, 8], f32>
