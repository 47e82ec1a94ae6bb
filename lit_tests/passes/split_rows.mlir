// cleave-split-rows: row statistics (here the entropy of softmax rows) the search found no Split-K form
// for get one: x is split into s chunks along its rows; each sum over the rows becomes a sum per chunk
// and a sum over the chunks; the softmax's shift (a max the rows read back) is computed whole, as the
// search writes it, for cleave-stabilize-split-k to replace by each chunk's own max.
// RUN: cleave-opt %s -p cleave-symbolize,cleave-split-rows 2>/dev/null | filecheck %s
// RUN: cleave-opt %s -p 'cleave-symbolize,cleave-split-rows,cleave-concretize{split-counts=4}' 2>/dev/null | cleave-run - | filecheck %s --check-prefix=SAME
// RUN: cleave-opt %s -p 'cleave-symbolize,cleave-split-rows,cleave-concretize{split-counts=4},cleave-stabilize-split-k' 2>/dev/null | filecheck %s --check-prefix=STABLE
// RUN: cleave-opt %s -p 'cleave-symbolize,cleave-split-rows,cleave-split-rows' 2>/dev/null | filecheck %s --check-prefix=ONCE

// CHECK:      tgraph.graph @entropy_rows(%x: !tgraph.tensor<[d0, d1], f16>) -> !tgraph.tensor<[d0, 1], f32>
// CHECK-SAME:   cleave.candidate_of = @entropy, cleave.note = "split %x dim 1 by s, 2 partial results combined over s (cleave-split-rows)"
// CHECK-NEXT:   %[[XS:.*]] = tgraph.split %x dim 1 : !tgraph.tensor<[d0, d1], f16> -> !tgraph.tensor<[s, d0, d1/s], f16>
// CHECK-NEXT:   %[[X1:.*]] = tgraph.reshape %x : !tgraph.tensor<[d0, d1], f16> -> !tgraph.tensor<[1, d0, d1], f16>
// CHECK-NEXT:   %m = tgraph.reduce max %[[X1]] dim 2 : !tgraph.tensor<[1, d0, d1], f16> -> !tgraph.tensor<[1, d0, 1], f16>
// CHECK-NEXT:   %z = tgraph.sub %[[XS]], %m
// CHECK-NEXT:   %e = tgraph.exp %z : !tgraph.tensor<[s, d0, d1/s], f16>
// CHECK-NEXT:   %s_part = tgraph.reduce sum %e dim 2 : !tgraph.tensor<[s, d0, d1/s], f16> -> !tgraph.tensor<[s, d0, 1], f16>
// CHECK-NEXT:   %s = tgraph.reduce sum %s_part dim 0 : !tgraph.tensor<[s, d0, 1], f16> -> !tgraph.tensor<[1, d0, 1], f16>
// CHECK-NEXT:   %ex = tgraph.mul %e, %[[XS]]
// CHECK-NEXT:   %t_part = tgraph.reduce sum %ex dim 2
// CHECK-NEXT:   %t = tgraph.reduce sum %t_part dim 0
// CHECK:        %[[O:.*]] = tgraph.reshape %o : !tgraph.tensor<[1, d0, 1], f32> -> !tgraph.tensor<[d0, 1], f32>
// CHECK-NEXT:   tgraph.output %[[O]]

// SAME: @entropy_rows_s4 vs @entropy: agree

// Stabilized: each chunk shifts by its own max, the chunk sums of e and of e x are rescaled before
// their combines, and the row max read after them is the max over the chunks.
// STABLE:      tgraph.graph @entropy_rows_s4(
// STABLE:        %chunk_max = tgraph.reduce max %{{.*}} dim 2 : !tgraph.tensor<[4, 4, 2048], f16>
// STABLE:        %global_max = tgraph.reduce max %chunk_max dim 0
// STABLE:        %rescale = tgraph.exp
// STABLE:        tgraph.mul %s_part, %rescale
// STABLE:        tgraph.mul %t_part, %rescale
// STABLE:        %lse = tgraph.add %l, %global_max

// Run twice, one candidate.
// ONCE-COUNT-1: tgraph.graph @entropy_rows(
// ONCE-NOT:     tgraph.graph @entropy_rows_rows(

tgraph.graph @entropy(%x: !tgraph.tensor<[4, 8192], f16>) -> !tgraph.tensor<[4, 1], f32> {
  %m = tgraph.reduce max %x dim 1 : !tgraph.tensor<[4, 8192], f16> -> !tgraph.tensor<[4, 1], f16>
  %z = tgraph.sub %x, %m : !tgraph.tensor<[4, 8192], f16>, !tgraph.tensor<[4, 1], f16> -> !tgraph.tensor<[4, 8192], f16>
  %e = tgraph.exp %z : !tgraph.tensor<[4, 8192], f16>
  %s = tgraph.reduce sum %e dim 1 : !tgraph.tensor<[4, 8192], f16> -> !tgraph.tensor<[4, 1], f16>
  %ex = tgraph.mul %e, %x : !tgraph.tensor<[4, 8192], f16>, !tgraph.tensor<[4, 8192], f16> -> !tgraph.tensor<[4, 8192], f16>
  %t = tgraph.reduce sum %ex dim 1 : !tgraph.tensor<[4, 8192], f16> -> !tgraph.tensor<[4, 1], f16>
  %mean = tgraph.div %t, %s : !tgraph.tensor<[4, 1], f16>, !tgraph.tensor<[4, 1], f16> -> !tgraph.tensor<[4, 1], f16>
  %l = tgraph.log %s : !tgraph.tensor<[4, 1], f16>
  %lse = tgraph.add %l, %m : !tgraph.tensor<[4, 1], f16>, !tgraph.tensor<[4, 1], f16> -> !tgraph.tensor<[4, 1], f16>
  %h = tgraph.sub %lse, %mean : !tgraph.tensor<[4, 1], f16>, !tgraph.tensor<[4, 1], f16> -> !tgraph.tensor<[4, 1], f16>
  %o = tgraph.cast %h : !tgraph.tensor<[4, 1], f16> -> !tgraph.tensor<[4, 1], f32>
  tgraph.output %o : !tgraph.tensor<[4, 1], f32>
}
