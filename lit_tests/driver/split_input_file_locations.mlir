// With --split-input-file, verifier errors give line:col in the whole file, not in the chunk.
// RUN: cleave-opt %s --split-input-file --verify-diagnostics | filecheck %s

// CHECK:      split_input_file_locations.mlir:8:3: error: tgraph.matmul: contracting dims differ: 128 vs 64
// CHECK-NEXT: -----
// CHECK-NEXT: split_input_file_locations.mlir:15:3: error: tgraph.reduce: dim 2 out of range for operand of rank 2
tgraph.graph @contracting(%a: !tgraph.tensor<[32, 128], f16>, %b: !tgraph.tensor<[64, 16], f16>) -> !tgraph.tensor<[32, 16], f16> {
  %c = tgraph.matmul %a, %b : !tgraph.tensor<[32, 128], f16>, !tgraph.tensor<[64, 16], f16> -> !tgraph.tensor<[32, 16], f16>
  tgraph.output %c : !tgraph.tensor<[32, 16], f16>
}

// -----

tgraph.graph @reduce(%a: !tgraph.tensor<[4, 8], f16>) -> !tgraph.tensor<[4, 1], f16> {
  %r = tgraph.reduce sum %a dim 2 : !tgraph.tensor<[4, 8], f16> -> !tgraph.tensor<[4, 1], f16>
  tgraph.output %r : !tgraph.tensor<[4, 1], f16>
}
