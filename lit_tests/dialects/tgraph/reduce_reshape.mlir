// RUN: cleave-opt %s | cleave-opt | filecheck %s
// RUN: ROUNDTRIP

// reduce keeps the reduced dim as size 1.
// CHECK-LABEL: tgraph.graph @reduce
// CHECK-NEXT:    %[[S:.*]] = tgraph.reduce sum %x dim 2 : !tgraph.tensor<[B, 4, N], f16> -> !tgraph.tensor<[B, 4, 1], f16>
// CHECK-NEXT:    %[[M:.*]] = tgraph.reduce max %x dim 0 : !tgraph.tensor<[B, 4, N], f16> -> !tgraph.tensor<[1, 4, N], f16>
// CHECK-NEXT:    tgraph.output %[[S]], %[[M]] : !tgraph.tensor<[B, 4, 1], f16>, !tgraph.tensor<[1, 4, N], f16>
tgraph.graph @reduce(%x: !tgraph.tensor<[B, 4, N], f16>) -> (!tgraph.tensor<[B, 4, 1], f16>, !tgraph.tensor<[1, 4, N], f16>) {
  %s = tgraph.reduce sum %x dim 2 : !tgraph.tensor<[B, 4, N], f16> -> !tgraph.tensor<[B, 4, 1], f16>
  %m = tgraph.reduce max %x dim 0 : !tgraph.tensor<[B, 4, N], f16> -> !tgraph.tensor<[1, 4, N], f16>
  tgraph.output %s, %m : !tgraph.tensor<[B, 4, 1], f16>, !tgraph.tensor<[1, 4, N], f16>
}

// reshape adds and drops size-1 dims only.
// CHECK-LABEL: tgraph.graph @reshape
// CHECK-NEXT:    %[[A:.*]] = tgraph.reshape %x : !tgraph.tensor<[4, N], f16> -> !tgraph.tensor<[1, 4, 1, N], f16>
// CHECK-NEXT:    %[[B:.*]] = tgraph.reshape %[[A]] : !tgraph.tensor<[1, 4, 1, N], f16> -> !tgraph.tensor<[4, N, 1], f16>
// CHECK-NEXT:    tgraph.output %[[B]] : !tgraph.tensor<[4, N, 1], f16>
tgraph.graph @reshape(%x: !tgraph.tensor<[4, N], f16>) -> !tgraph.tensor<[4, N, 1], f16> {
  %a = tgraph.reshape %x : !tgraph.tensor<[4, N], f16> -> !tgraph.tensor<[1, 4, 1, N], f16>
  %b = tgraph.reshape %a : !tgraph.tensor<[1, 4, 1, N], f16> -> !tgraph.tensor<[4, N, 1], f16>
  tgraph.output %b : !tgraph.tensor<[4, N, 1], f16>
}
