// cleave-stabilize-split-k on a Split-K logsumexp whose exp is shifted by the whole row's max: that max
// would make the split kernel and the combine each read every chunk's whole row. Each chunk shifts by
// its own max instead; the combine rescales the chunk sums by exp(chunk max - max over the chunks)
// and reads that max (equal to the row max: a max is exact) where the graph read the row max.
// RUN: cleave-opt %s -p cleave-stabilize-split-k | filecheck %s
// RUN: cleave-opt %s -p cleave-stabilize-split-k | cleave-run - | filecheck %s --check-prefix=SAME
// RUN: cleave-opt %s -p cleave-stabilize-split-k,cleave-stabilize-split-k | filecheck %s

// CHECK:      tgraph.graph @lse_s4(
// CHECK-SAME: cleave.note = "split %x dim 1 by s, 1 partial result combined over s, exp shifted by the chunk max (log-sum-exp combine)"
// CHECK-NEXT:   %xs = tgraph.split %x dim 1
// CHECK-NEXT:   %chunk_max = tgraph.reduce max %xs dim 2 : !tgraph.tensor<[4, 8, 1024], f16> -> !tgraph.tensor<[4, 8, 1], f16>
// CHECK-NEXT:   %[[Z:.*]] = tgraph.sub %xs, %chunk_max
// CHECK-NEXT:   %e = tgraph.exp %[[Z]]
// CHECK-NEXT:   %s = tgraph.reduce sum %e dim 2
// CHECK-NEXT:   %global_max = tgraph.reduce max %chunk_max dim 0 : !tgraph.tensor<[4, 8, 1], f16> -> !tgraph.tensor<[1, 8, 1], f16>
// CHECK-NEXT:   %[[D:.*]] = tgraph.sub %chunk_max, %global_max
// CHECK-NEXT:   %rescale = tgraph.exp %[[D]]
// CHECK-NEXT:   %[[S:.*]] = tgraph.mul %s, %rescale
// CHECK-NEXT:   %[[M:.*]] = tgraph.reshape %global_max : !tgraph.tensor<[1, 8, 1], f16> -> !tgraph.tensor<[8, 1], f16>
// CHECK-NEXT:   %c = tgraph.reduce sum %[[S]] dim 0
// CHECK-NEXT:   %c2 = tgraph.reshape %c
// CHECK-NEXT:   %l = tgraph.log %c2
// CHECK-NEXT:   %o = tgraph.add %l, %[[M]]
// CHECK-NEXT:   tgraph.output %o
// The input graph has no split: unchanged.
// CHECK:      tgraph.graph @lse(
// CHECK-NEXT:   %m = tgraph.reduce max %x dim 1

// SAME: @lse vs @lse_s4: agree

// Partition: the split kernel's partials are the chunk max and sum; the combine reads no x.
// RUN: cleave-opt %s -p cleave-stabilize-split-k,cleave-partition-split-k | filecheck %s --check-prefix=PART
// RUN: cleave-opt %s -p cleave-stabilize-split-k,cleave-partition-split-k | cleave-run - | filecheck %s --check-prefix=PAIR
// PART:      tgraph.graph @lse_s4_split(%x: !tgraph.tensor<[8, 4096], f16>) -> (!tgraph.tensor<[4, 8, 1], f32>, !tgraph.tensor<[4, 8, 1], f32>)
// PART:      tgraph.graph @lse_s4_combine(%partial0: !tgraph.tensor<[4, 8, 1], f32>, %partial1: !tgraph.tensor<[4, 8, 1], f32>) -> !tgraph.tensor<[8, 1], f16>
// PART-SAME:    cleave.passthrough = []
// PAIR: @lse vs @lse_s4_split + @lse_s4_combine: agree

tgraph.graph @lse_s4(%x: !tgraph.tensor<[8, 4096], f16>) -> !tgraph.tensor<[8, 1], f16> attributes {cleave.candidate_of = @lse, cleave.note = "split %x dim 1 by s, 1 partial result combined over s"} {
  %m = tgraph.reduce max %x dim 1 : !tgraph.tensor<[8, 4096], f16> -> !tgraph.tensor<[8, 1], f16>
  %xs = tgraph.split %x dim 1 : !tgraph.tensor<[8, 4096], f16> -> !tgraph.tensor<[4, 8, 1024], f16>
  %x1 = tgraph.reshape %x : !tgraph.tensor<[8, 4096], f16> -> !tgraph.tensor<[1, 8, 4096], f16>
  %m1 = tgraph.reduce max %x1 dim 2 : !tgraph.tensor<[1, 8, 4096], f16> -> !tgraph.tensor<[1, 8, 1], f16>
  %z = tgraph.sub %xs, %m1 : !tgraph.tensor<[4, 8, 1024], f16>, !tgraph.tensor<[1, 8, 1], f16> -> !tgraph.tensor<[4, 8, 1024], f16>
  %e = tgraph.exp %z : !tgraph.tensor<[4, 8, 1024], f16>
  %s = tgraph.reduce sum %e dim 2 : !tgraph.tensor<[4, 8, 1024], f16> -> !tgraph.tensor<[4, 8, 1], f16>
  %c = tgraph.reduce sum %s dim 0 : !tgraph.tensor<[4, 8, 1], f16> -> !tgraph.tensor<[1, 8, 1], f16>
  %c2 = tgraph.reshape %c : !tgraph.tensor<[1, 8, 1], f16> -> !tgraph.tensor<[8, 1], f16>
  %l = tgraph.log %c2 : !tgraph.tensor<[8, 1], f16>
  %o = tgraph.add %l, %m : !tgraph.tensor<[8, 1], f16>, !tgraph.tensor<[8, 1], f16> -> !tgraph.tensor<[8, 1], f16>
  tgraph.output %o : !tgraph.tensor<[8, 1], f16>
}

tgraph.graph @lse(%x: !tgraph.tensor<[8, 4096], f16>) -> !tgraph.tensor<[8, 1], f16> {
  %m = tgraph.reduce max %x dim 1 : !tgraph.tensor<[8, 4096], f16> -> !tgraph.tensor<[8, 1], f16>
  %z = tgraph.sub %x, %m : !tgraph.tensor<[8, 4096], f16>, !tgraph.tensor<[8, 1], f16> -> !tgraph.tensor<[8, 4096], f16>
  %e = tgraph.exp %z : !tgraph.tensor<[8, 4096], f16>
  %s = tgraph.reduce sum %e dim 1 : !tgraph.tensor<[8, 4096], f16> -> !tgraph.tensor<[8, 1], f16>
  %l = tgraph.log %s : !tgraph.tensor<[8, 1], f16>
  %o = tgraph.add %l, %m : !tgraph.tensor<[8, 1], f16>, !tgraph.tensor<[8, 1], f16> -> !tgraph.tensor<[8, 1], f16>
  tgraph.output %o : !tgraph.tensor<[8, 1], f16>
}
