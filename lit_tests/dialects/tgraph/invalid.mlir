// RUN: cleave-opt %s --split-input-file --verify-diagnostics | filecheck %s
// One bad graph per chunk. Every chunk must fail: the CHECK-NEXT chain leaves no room for a
// chunk that verifies (it would print a module between the errors).

tgraph.graph @contracting(%a: !tgraph.tensor<[32, 128], f16>, %b: !tgraph.tensor<[64, 16], f16>) -> !tgraph.tensor<[32, 16], f16> {
  %c = tgraph.matmul %a, %b : !tgraph.tensor<[32, 128], f16>, !tgraph.tensor<[64, 16], f16> -> !tgraph.tensor<[32, 16], f16>
  tgraph.output %c : !tgraph.tensor<[32, 16], f16>
}

// CHECK: error: tgraph.matmul: contracting dims differ: 128 vs 64

// -----

tgraph.graph @batch(%a: !tgraph.tensor<[2, 32, 128], f16>, %b: !tgraph.tensor<[3, 128, 16], f16>) -> !tgraph.tensor<[2, 32, 16], f16> {
  %c = tgraph.matmul %a, %b : !tgraph.tensor<[2, 32, 128], f16>, !tgraph.tensor<[3, 128, 16], f16> -> !tgraph.tensor<[2, 32, 16], f16>
  tgraph.output %c : !tgraph.tensor<[2, 32, 16], f16>
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: tgraph.matmul batch dims: dim 0 does not broadcast: 2 vs 3 (shapes [2] and [3])

// -----

tgraph.graph @transposed(%a: !tgraph.tensor<[32, 128], f16>, %b: !tgraph.tensor<[128, 16], f16>) -> !tgraph.tensor<[32, 128], f16> {
  %c = tgraph.matmul %a, %b transpose_b : !tgraph.tensor<[32, 128], f16>, !tgraph.tensor<[128, 16], f16> -> !tgraph.tensor<[32, 128], f16>
  tgraph.output %c : !tgraph.tensor<[32, 128], f16>
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: tgraph.matmul: contracting dims differ: 128 vs 16

// -----

tgraph.graph @rank1(%a: !tgraph.tensor<[128], f16>, %b: !tgraph.tensor<[128, 16], f16>) -> !tgraph.tensor<[16], f16> {
  %c = tgraph.matmul %a, %b : !tgraph.tensor<[128], f16>, !tgraph.tensor<[128, 16], f16> -> !tgraph.tensor<[16], f16>
  tgraph.output %c : !tgraph.tensor<[16], f16>
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: tgraph.matmul: operands need rank >= 2, got [128] and [128, 16]

// -----

tgraph.graph @rank(%a: !tgraph.tensor<[4, 8], f16>, %b: !tgraph.tensor<[8], f16>) -> !tgraph.tensor<[4, 8], f16> {
  %c = tgraph.add %a, %b : !tgraph.tensor<[4, 8], f16>, !tgraph.tensor<[8], f16> -> !tgraph.tensor<[4, 8], f16>
  tgraph.output %c : !tgraph.tensor<[4, 8], f16>
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: tgraph.add: operands must have the same rank (add size-1 dims with tgraph.reshape): [4, 8] vs [8]

// -----

tgraph.graph @no_broadcast(%a: !tgraph.tensor<[4, 8], f16>, %b: !tgraph.tensor<[4, 2], f16>) -> !tgraph.tensor<[4, 8], f16> {
  %c = tgraph.mul %a, %b : !tgraph.tensor<[4, 8], f16>, !tgraph.tensor<[4, 2], f16> -> !tgraph.tensor<[4, 8], f16>
  tgraph.output %c : !tgraph.tensor<[4, 8], f16>
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: tgraph.mul: dim 1 does not broadcast: 8 vs 2 (shapes [4, 8] and [4, 2])

// -----

tgraph.graph @result_shape(%a: !tgraph.tensor<[4, 8], f16>, %b: !tgraph.tensor<[4, 1], f16>) -> !tgraph.tensor<[4, 1], f16> {
  %c = tgraph.sub %a, %b : !tgraph.tensor<[4, 8], f16>, !tgraph.tensor<[4, 1], f16> -> !tgraph.tensor<[4, 1], f16>
  tgraph.output %c : !tgraph.tensor<[4, 1], f16>
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: tgraph.sub: result shape [4, 1] does not match the inferred [4, 8]

// -----

tgraph.graph @matmul_result(%a: !tgraph.tensor<[N, K], f16>, %b: !tgraph.tensor<[K, M], f16>) -> !tgraph.tensor<[M, N], f16> {
  %c = tgraph.matmul %a, %b : !tgraph.tensor<[N, K], f16>, !tgraph.tensor<[K, M], f16> -> !tgraph.tensor<[M, N], f16>
  tgraph.output %c : !tgraph.tensor<[M, N], f16>
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: tgraph.matmul: result shape [M, N] does not match the inferred [N, M]

// -----

tgraph.graph @reduce_dim(%a: !tgraph.tensor<[4, 8], f16>) -> !tgraph.tensor<[4, 1], f16> {
  %r = tgraph.reduce sum %a dim 2 : !tgraph.tensor<[4, 8], f16> -> !tgraph.tensor<[4, 1], f16>
  tgraph.output %r : !tgraph.tensor<[4, 1], f16>
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: tgraph.reduce: dim 2 out of range for operand of rank 2

// -----

tgraph.graph @reduce_keeps_dim(%a: !tgraph.tensor<[4, 8], f16>) -> !tgraph.tensor<[4], f16> {
  %r = tgraph.reduce max %a dim 1 : !tgraph.tensor<[4, 8], f16> -> !tgraph.tensor<[4], f16>
  tgraph.output %r : !tgraph.tensor<[4], f16>
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: tgraph.reduce: result shape [4] does not match the inferred [4, 1]

// -----

tgraph.graph @reshape(%a: !tgraph.tensor<[4, 8], f16>) -> !tgraph.tensor<[32], f16> {
  %r = tgraph.reshape %a : !tgraph.tensor<[4, 8], f16> -> !tgraph.tensor<[32], f16>
  tgraph.output %r : !tgraph.tensor<[32], f16>
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: tgraph.reshape may only add or drop size-1 dims: [4, 8] -> [32]

// -----

tgraph.graph @reshape_order(%a: !tgraph.tensor<[4, 1, 8], f16>) -> !tgraph.tensor<[8, 4], f16> {
  %r = tgraph.reshape %a : !tgraph.tensor<[4, 1, 8], f16> -> !tgraph.tensor<[8, 4], f16>
  tgraph.output %r : !tgraph.tensor<[8, 4], f16>
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: tgraph.reshape may only add or drop size-1 dims: [4, 1, 8] -> [8, 4]

// -----

tgraph.graph @split_divide(%a: !tgraph.tensor<[64, 256], f16>) -> !tgraph.tensor<[3, 64, 85], f16> {
  %s = tgraph.split %a dim 1 : !tgraph.tensor<[64, 256], f16> -> !tgraph.tensor<[3, 64, 85], f16>
  tgraph.output %s : !tgraph.tensor<[3, 64, 85], f16>
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: tgraph.split: 3 parts do not divide dim 1 of size 256

// -----

tgraph.graph @split_rank(%a: !tgraph.tensor<[64, 256], f16>) -> !tgraph.tensor<[4, 64], f16> {
  %s = tgraph.split %a dim 1 : !tgraph.tensor<[64, 256], f16> -> !tgraph.tensor<[4, 64], f16>
  tgraph.output %s : !tgraph.tensor<[4, 64], f16>
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: tgraph.split: result must have rank 3 (parts first), got 2

// -----

tgraph.graph @split_dim(%a: !tgraph.tensor<[64, 256], f16>) -> !tgraph.tensor<[4, 64, 64], f16> {
  %s = tgraph.split %a dim 2 : !tgraph.tensor<[64, 256], f16> -> !tgraph.tensor<[4, 64, 64], f16>
  tgraph.output %s : !tgraph.tensor<[4, 64, 64], f16>
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: tgraph.split: dim 2 out of range for operand of rank 2

// -----

tgraph.graph @split_piece(%a: !tgraph.tensor<[M, K], f16>) -> !tgraph.tensor<[s, M, K], f16> {
  %s = tgraph.split %a dim 1 : !tgraph.tensor<[M, K], f16> -> !tgraph.tensor<[s, M, K], f16>
  tgraph.output %s : !tgraph.tensor<[s, M, K], f16>
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: tgraph.split: result shape [s, M, K] does not match the inferred [s, M, K/s]

// -----

tgraph.graph @outputs(%a: !tgraph.tensor<[4, 8], f16>) -> !tgraph.tensor<[8, 4], f16> {
  %e = tgraph.exp %a : !tgraph.tensor<[4, 8], f16>
  tgraph.output %e : !tgraph.tensor<[4, 8], f16>
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: tgraph.graph @outputs: tgraph.output returns (!tgraph.tensor<[4, 8], f16>) but the graph declares (!tgraph.tensor<[8, 4], f16>)

// -----

tgraph.graph @output_count(%a: !tgraph.tensor<[4, 8], f16>) -> (!tgraph.tensor<[4, 8], f16>, !tgraph.tensor<[4, 8], f16>) {
  tgraph.output %a : !tgraph.tensor<[4, 8], f16>
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: tgraph.graph @output_count: tgraph.output returns (!tgraph.tensor<[4, 8], f16>) but the graph declares (!tgraph.tensor<[4, 8], f16>, !tgraph.tensor<[4, 8], f16>)

// -----

tgraph.graph @element(%a: !tgraph.tensor<[4, 8], f16>, %b: !tgraph.tensor<[4, 8], f32>) -> !tgraph.tensor<[4, 8], f16> {
  %c = tgraph.add %a, %b : !tgraph.tensor<[4, 8], f16>, !tgraph.tensor<[4, 8], f32> -> !tgraph.tensor<[4, 8], f16>
  tgraph.output %c : !tgraph.tensor<[4, 8], f16>
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: tgraph.add: element types differ: f16, f32, f16

// -----

tgraph.graph @matmul_element(%a: !tgraph.tensor<[4, 8], bf16>, %b: !tgraph.tensor<[8, 4], f16>) -> !tgraph.tensor<[4, 4], f32> {
  %c = tgraph.matmul %a, %b : !tgraph.tensor<[4, 8], bf16>, !tgraph.tensor<[8, 4], f16> -> !tgraph.tensor<[4, 4], f32>
  tgraph.output %c : !tgraph.tensor<[4, 4], f32>
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: tgraph.matmul: element types differ: bf16, f16

// -----

tgraph.graph @annotation(%a: !tgraph.tensor<[4, 8], f16> {dynamic = array<i64: 2>}) -> !tgraph.tensor<[4, 8], f16> {
  tgraph.output %a : !tgraph.tensor<[4, 8], f16>
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: tgraph.graph @annotation: input 0 'dynamic' names dim 2, but the input has rank 2

// -----

tgraph.graph @annotation_type(%a: !tgraph.tensor<[4, 8], f16>, %b: !tgraph.tensor<[4, 8], f16> {reduced = [1]}) -> !tgraph.tensor<[4, 8], f16> {
  tgraph.output %a : !tgraph.tensor<[4, 8], f16>
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: tgraph.graph @annotation_type: input 1 'reduced' must be array<i64: ...>, got [1 : i64]

// -----

tgraph.graph @binding(%a: !tgraph.tensor<[N, 8], f16>) -> !tgraph.tensor<[N, 8], f16> attributes {bindings = {N = 0 : i64}} {
  tgraph.output %a : !tgraph.tensor<[N, 8], f16>
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: tgraph.graph @binding: binding N must be a positive integer

// -----

// The unary result type is tied to the operand type (only reachable in generic form).
tgraph.graph @unary_type(%a: !tgraph.tensor<[4, 8], f16>) -> !tgraph.tensor<[4, 8], f32> {
  %e = "tgraph.exp"(%a) : (!tgraph.tensor<[4, 8], f16>) -> !tgraph.tensor<[4, 8], f32>
  tgraph.output %e : !tgraph.tensor<[4, 8], f32>
}


// CHECK-NEXT: -----
// CHECK-NEXT: error: {{.*}}attribute !tgraph.tensor<[4, 8], f16> expected from variable 'T', but got !tgraph.tensor<[4, 8], f32>
