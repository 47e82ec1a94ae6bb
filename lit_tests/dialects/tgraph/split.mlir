// RUN: cleave-opt %s | cleave-opt | filecheck %s
// RUN: ROUNDTRIP

// Integer parts: the part count becomes the new leading dim.
// CHECK-LABEL: tgraph.graph @split_int
// CHECK-NEXT:    %[[A:.*]] = tgraph.split %a dim 1 : !tgraph.tensor<[64, 256], f16> -> !tgraph.tensor<[4, 64, 64], f16>
// CHECK-NEXT:    %[[B:.*]] = tgraph.split %b dim 0 : !tgraph.tensor<[256, 32], f16> -> !tgraph.tensor<[4, 64, 32], f16>
// CHECK-NEXT:    %[[P:.*]] = tgraph.matmul %[[A]], %[[B]] : !tgraph.tensor<[4, 64, 64], f16>, !tgraph.tensor<[4, 64, 32], f16> -> !tgraph.tensor<[4, 64, 32], f16>
// CHECK-NEXT:    %[[R:.*]] = tgraph.reduce sum %[[P]] dim 0 : !tgraph.tensor<[4, 64, 32], f16> -> !tgraph.tensor<[1, 64, 32], f16>
// CHECK-NEXT:    tgraph.output %[[R]]
tgraph.graph @split_int(%a: !tgraph.tensor<[64, 256], f16>, %b: !tgraph.tensor<[256, 32], f16>) -> !tgraph.tensor<[1, 64, 32], f16> {
  %as = tgraph.split %a dim 1 : !tgraph.tensor<[64, 256], f16> -> !tgraph.tensor<[4, 64, 64], f16>
  %bs = tgraph.split %b dim 0 : !tgraph.tensor<[256, 32], f16> -> !tgraph.tensor<[4, 64, 32], f16>
  %p = tgraph.matmul %as, %bs : !tgraph.tensor<[4, 64, 64], f16>, !tgraph.tensor<[4, 64, 32], f16> -> !tgraph.tensor<[4, 64, 32], f16>
  %r = tgraph.reduce sum %p dim 0 : !tgraph.tensor<[4, 64, 32], f16> -> !tgraph.tensor<[1, 64, 32], f16>
  tgraph.output %r : !tgraph.tensor<[1, 64, 32], f16>
}

// Symbolic parts s: the split dim becomes K/s (also for an integer split dim, 256/s).
// CHECK-LABEL: tgraph.graph @split_sym
// CHECK-NEXT:    %[[A:.*]] = tgraph.split %a dim 1 : !tgraph.tensor<[M, K], f16> -> !tgraph.tensor<[s, M, K/s], f16>
// CHECK-NEXT:    %[[B:.*]] = tgraph.split %b dim 0 : !tgraph.tensor<[256, N], f16> -> !tgraph.tensor<[s, 256/s, N], f16>
// CHECK-NEXT:    %[[C:.*]] = tgraph.split %[[A]] dim 2 : !tgraph.tensor<[s, M, K/s], f16> -> !tgraph.tensor<[2, s, M, K/(2*s)], f16>
// CHECK-NEXT:    tgraph.output %[[A]], %[[B]], %[[C]] : !tgraph.tensor<[s, M, K/s], f16>, !tgraph.tensor<[s, 256/s, N], f16>, !tgraph.tensor<[2, s, M, K/(2*s)], f16>
tgraph.graph @split_sym(%a: !tgraph.tensor<[M, K], f16>, %b: !tgraph.tensor<[256, N], f16>) -> (!tgraph.tensor<[s, M, K/s], f16>, !tgraph.tensor<[s, 256/s, N], f16>, !tgraph.tensor<[2, s, M, K/(2*s)], f16>) {
  %as = tgraph.split %a dim 1 : !tgraph.tensor<[M, K], f16> -> !tgraph.tensor<[s, M, K/s], f16>
  %bs = tgraph.split %b dim 0 : !tgraph.tensor<[256, N], f16> -> !tgraph.tensor<[s, 256/s, N], f16>
  %cs = tgraph.split %as dim 2 : !tgraph.tensor<[s, M, K/s], f16> -> !tgraph.tensor<[2, s, M, K/(2*s)], f16>
  tgraph.output %as, %bs, %cs : !tgraph.tensor<[s, M, K/s], f16>, !tgraph.tensor<[s, 256/s, N], f16>, !tgraph.tensor<[2, s, M, K/(2*s)], f16>
}
