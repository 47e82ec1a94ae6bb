// RUN: cleave-opt %s | cleave-opt | filecheck %s
// RUN: ROUNDTRIP

// CHECK-LABEL: tgraph.graph @plain
// CHECK-NEXT:    %[[C:.*]] = tgraph.matmul %a, %b : !tgraph.tensor<[32, 128], f16>, !tgraph.tensor<[128, 16], f16> -> !tgraph.tensor<[32, 16], f16>
// CHECK-NEXT:    tgraph.output %[[C]] : !tgraph.tensor<[32, 16], f16>
tgraph.graph @plain(%a: !tgraph.tensor<[32, 128], f16>, %b: !tgraph.tensor<[128, 16], f16>) -> !tgraph.tensor<[32, 16], f16> {
  %c = tgraph.matmul %a, %b : !tgraph.tensor<[32, 128], f16>, !tgraph.tensor<[128, 16], f16> -> !tgraph.tensor<[32, 16], f16>
  tgraph.output %c : !tgraph.tensor<[32, 16], f16>
}

// Batched, leading dims broadcast (size 1 against 8 and 4 against 1), f16 in, f32 out.
// CHECK-LABEL: tgraph.graph @batched
// CHECK-NEXT:    %[[C:.*]] = tgraph.matmul %a, %b : !tgraph.tensor<[1, 4, 32, 128], f16>, !tgraph.tensor<[8, 1, 128, 16], f16> -> !tgraph.tensor<[8, 4, 32, 16], f32>
// CHECK-NEXT:    tgraph.output %[[C]]
tgraph.graph @batched(%a: !tgraph.tensor<[1, 4, 32, 128], f16>, %b: !tgraph.tensor<[8, 1, 128, 16], f16>) -> !tgraph.tensor<[8, 4, 32, 16], f32> {
  %c = tgraph.matmul %a, %b : !tgraph.tensor<[1, 4, 32, 128], f16>, !tgraph.tensor<[8, 1, 128, 16], f16> -> !tgraph.tensor<[8, 4, 32, 16], f32>
  tgraph.output %c : !tgraph.tensor<[8, 4, 32, 16], f32>
}

// transpose_b: Q K^T with symbolic dims; the rhs is [.., N, K].
// CHECK-LABEL: tgraph.graph @transpose_b
// CHECK-NEXT:    %[[S:.*]] = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[H, S, D], f16>, !tgraph.tensor<[1, T, D], f16> -> !tgraph.tensor<[H, S, T], f16>
// CHECK-NEXT:    tgraph.output %[[S]] : !tgraph.tensor<[H, S, T], f16>
tgraph.graph @transpose_b(%q: !tgraph.tensor<[H, S, D], f16>, %k: !tgraph.tensor<[1, T, D], f16>) -> !tgraph.tensor<[H, S, T], f16> {
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[H, S, D], f16>, !tgraph.tensor<[1, T, D], f16> -> !tgraph.tensor<[H, S, T], f16>
  tgraph.output %s : !tgraph.tensor<[H, S, T], f16>
}
