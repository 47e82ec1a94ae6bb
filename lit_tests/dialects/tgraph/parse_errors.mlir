// RUN: cleave-opt %s --split-input-file --parsing-diagnostics | filecheck %s
// Parse errors in tensor types and op syntax, one per chunk, reported under --parsing-diagnostics
// (xDSL prints the offending source line, a caret line, then the message).

tgraph.graph @zero(%a: !tgraph.tensor<[2, 0], f16>) -> !tgraph.tensor<[2, 0], f16> {
  tgraph.output %a : !tgraph.tensor<[2, 0], f16>
}

// CHECK: dims must be positive, got 0

// -----

tgraph.graph @fraction(%a: !tgraph.tensor<[4096/3], f16>) -> !tgraph.tensor<[4096/3], f16> {
  tgraph.output %a : !tgraph.tensor<[4096/3], f16>
}

// CHECK: -----
// CHECK: dim 4096/3 is not an integer

// -----

tgraph.graph @negative(%a: !tgraph.tensor<[-4], f16>) -> !tgraph.tensor<[-4], f16> {
  tgraph.output %a : !tgraph.tensor<[-4], f16>
}

// CHECK: -----
// CHECK: expected a dim: an integer, a symbol name or '('

// -----

tgraph.graph @i32(%a: !tgraph.tensor<[4, 8], i32>) -> !tgraph.tensor<[4, 8], i32> {
  tgraph.output %a : !tgraph.tensor<[4, 8], i32>
}

// CHECK: -----
// CHECK: tgraph.tensor element type must be f16, bf16, f32 or f64, got i32

// -----

tgraph.graph @reduce_kind(%a: !tgraph.tensor<[4, 8], f16>) -> !tgraph.tensor<[4, 1], f16> {
  %r = tgraph.reduce min %a dim 1 : !tgraph.tensor<[4, 8], f16> -> !tgraph.tensor<[4, 1], f16>
  tgraph.output %r : !tgraph.tensor<[4, 1], f16>
}

// CHECK: -----
// CHECK: Expected `sum`, `max`, or `mean`.

// -----

tgraph.graph @scale_int(%a: !tgraph.tensor<[4, 8], f16>) -> !tgraph.tensor<[4, 8], f16> {
  %s = tgraph.scale %a, 2 : !tgraph.tensor<[4, 8], f16>
  tgraph.output %s : !tgraph.tensor<[4, 8], f16>
}

// CHECK: -----
// CHECK: Expected float literal

// -----

tgraph.graph @i32(%a: !tgraph.tensor<[4, 8], i32>) -> !tgraph.tensor<[4, 8], i32> {
  tgraph.output %a : !tgraph.tensor<[4, 8], i32>
}

// CHECK: tgraph.tensor element type must be f16, bf16, f32 or f64, got i32
