// cleave-split-projections: a graph of several outputs (not searched) whose matmuls all read two graph inputs
// over one long contracting dim gets the search's Split-K form for all of them at once, with one split
// count: x is split once and read by every partial product (q against [K, N], k against nn.Linear's
// [N, K] with transpose_b), each product is summed over the parts, and the epilogue (silu) reads the sum.
// RUN: cleave-opt %s -p cleave-symbolize,cleave-split-projections 2>/dev/null | filecheck %s
// RUN: cleave-opt %s -p 'cleave-symbolize,cleave-split-projections,cleave-concretize{split-counts=4}' 2>/dev/null | cleave-run - | filecheck %s --check-prefix=SAME
// RUN: cleave-opt %s -p 'cleave-symbolize,cleave-split-projections,cleave-concretize{split-counts=4},cleave-partition-split-k' 2>/dev/null | filecheck %s --check-prefix=PARTS
// RUN: cleave-opt %s -p 'cleave-symbolize,cleave-split-projections,cleave-split-projections' 2>/dev/null | filecheck %s --check-prefix=ONCE
// RUN: cleave-opt %s -p cleave-pipeline,cleave-lower-tilelang 2>/dev/null | cleave-run - | filecheck %s --check-prefix=KERNELS

// CHECK:      tgraph.graph @proj_split(%x: !tgraph.tensor<[d0, d1], f16>, %wq: !tgraph.tensor<[d1, d2], f16>, %wk: !tgraph.tensor<[d3, d1], f16>)
// CHECK-SAME:   cleave.candidate_of = @proj, cleave.note = "split %x dim 1 by s, split %wq dim 0 by s, split %wk dim 1 by s, 2 partial products combined over s (cleave-split-projections)"
// CHECK-NEXT:   %[[XS:.*]] = tgraph.split %x dim 1 : !tgraph.tensor<[d0, d1], f16> -> !tgraph.tensor<[s, d0, d1/s], f16>
// CHECK-NEXT:   %[[QS:.*]] = tgraph.split %wq dim 0 : !tgraph.tensor<[d1, d2], f16> -> !tgraph.tensor<[s, d1/s, d2], f16>
// CHECK-NEXT:   %q_parts = tgraph.matmul %[[XS]], %[[QS]] : {{.*}} -> !tgraph.tensor<[s, d0, d2], f16>
// CHECK-NEXT:   %[[Q1:.*]] = tgraph.reduce sum %q_parts dim 0 : !tgraph.tensor<[s, d0, d2], f16> -> !tgraph.tensor<[1, d0, d2], f16>
// CHECK-NEXT:   %q = tgraph.reshape %[[Q1]] : !tgraph.tensor<[1, d0, d2], f16> -> !tgraph.tensor<[d0, d2], f16>
// CHECK-NEXT:   %[[KS:.*]] = tgraph.split %wk dim 1 : !tgraph.tensor<[d3, d1], f16> -> !tgraph.tensor<[s, d3, d1/s], f16>
// CHECK-NEXT:   %k_parts = tgraph.matmul %[[XS]], %[[KS]] transpose_b : {{.*}} -> !tgraph.tensor<[s, d0, d3], f16>
// CHECK-NEXT:   %[[K1:.*]] = tgraph.reduce sum %k_parts dim 0
// CHECK-NEXT:   %k = tgraph.reshape %[[K1]]
// CHECK-NEXT:   %g = tgraph.silu %q
// CHECK-NEXT:   tgraph.output %g, %k

// SAME: @proj_split_s4 vs @proj: agree

// One split kernel computes both partial products; the combine sums them and applies silu (q's partials,
// which silu reads after the sum, cross in f32: cleave-partition-split-k's rule for a non-linear combine).
// PARTS:      tgraph.graph @proj_split_s4_split({{.*}}) -> (!tgraph.tensor<[4, 16, 64], f32>, !tgraph.tensor<[4, 16, 32], f16>)
// PARTS:      tgraph.graph @proj_split_s4_combine(%partial0: !tgraph.tensor<[4, 16, 64], f32>, %partial1: !tgraph.tensor<[4, 16, 32], f16>) -> (!tgraph.tensor<[16, 64], f16>, !tgraph.tensor<[16, 32], f16>)
// PARTS:        tgraph.silu

// Run twice, the pass adds no second candidate.
// ONCE:     cleave.note
// ONCE-NOT: cleave.note

// KERNELS: @proj_split_s{{[0-9]+}}_split_k0 + @proj_split_s{{[0-9]+}}_combine_k0 vs @proj: agree

tgraph.graph @proj(%x: !tgraph.tensor<[16, 1024], f16>, %wq: !tgraph.tensor<[1024, 64], f16>, %wk: !tgraph.tensor<[32, 1024], f16>) -> (!tgraph.tensor<[16, 64], f16>, !tgraph.tensor<[16, 32], f16>) {
  %q = tgraph.matmul %x, %wq : !tgraph.tensor<[16, 1024], f16>, !tgraph.tensor<[1024, 64], f16> -> !tgraph.tensor<[16, 64], f16>
  %k = tgraph.matmul %x, %wk transpose_b : !tgraph.tensor<[16, 1024], f16>, !tgraph.tensor<[32, 1024], f16> -> !tgraph.tensor<[16, 32], f16>
  %g = tgraph.silu %q : !tgraph.tensor<[16, 64], f16>
  tgraph.output %g, %k : !tgraph.tensor<[16, 64], f16>, !tgraph.tensor<[16, 32], f16>
}
