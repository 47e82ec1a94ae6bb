// cleave-partition-split-k cuts a Split-K graph at the reductions over the parts dim: the split graph
// returns the partials, the combine graph reduces them over s and finishes the computation.
// RUN: cleave-opt %s -p cleave-partition-split-k | filecheck %s
// RUN: cleave-opt %s -p cleave-partition-split-k | cleave-run - | filecheck %s --check-prefix=PAIR

// CHECK:      tgraph.graph @fd_split(%q: !tgraph.tensor<[2, 4, 16], f32>, %k: !tgraph.tensor<[2, 64, 16], f32>, %v: !tgraph.tensor<[2, 64, 16], f32>) -> (!tgraph.tensor<[4, 2, 4, 16], f32>, !tgraph.tensor<[4, 2, 4, 1], f32>)
// CHECK-SAME: cleave.stage = #cleave<stage split>, cleave.combine = @fd_combine
// CHECK:        tgraph.output %{{.*}}, %{{.*}} : !tgraph.tensor<[4, 2, 4, 16], f32>, !tgraph.tensor<[4, 2, 4, 1], f32>
// CHECK:      tgraph.graph @fd_combine(%partial0: !tgraph.tensor<[4, 2, 4, 16], f32>, %partial1: !tgraph.tensor<[4, 2, 4, 1], f32>) -> !tgraph.tensor<[2, 4, 16], f32>
// CHECK-SAME: cleave.stage = #cleave<stage combine>, cleave.split = @fd_split
// CHECK-NEXT:   %[[O:.*]] = tgraph.reduce sum %partial0 dim 0
// CHECK-NEXT:   %[[L:.*]] = tgraph.reduce sum %partial1 dim 0
// CHECK-NEXT:   %[[D:.*]] = tgraph.div %[[O]], %[[L]]
// CHECK-NEXT:   %[[R:.*]] = tgraph.reshape %[[D]]
// CHECK-NEXT:   tgraph.output %[[R]]

// PAIR: @fd_split + @fd_combine vs @attention: agree

tgraph.graph @attention(%q: !tgraph.tensor<[2, 4, 16], f32>, %k: !tgraph.tensor<[2, 64, 16], f32>, %v: !tgraph.tensor<[2, 64, 16], f32>) -> !tgraph.tensor<[2, 4, 16], f32> {
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[2, 4, 16], f32>, !tgraph.tensor<[2, 64, 16], f32> -> !tgraph.tensor<[2, 4, 64], f32>
  %e = tgraph.exp %s : !tgraph.tensor<[2, 4, 64], f32>
  %r = tgraph.reduce sum %e dim 2 : !tgraph.tensor<[2, 4, 64], f32> -> !tgraph.tensor<[2, 4, 1], f32>
  %p = tgraph.div %e, %r : !tgraph.tensor<[2, 4, 64], f32>, !tgraph.tensor<[2, 4, 1], f32> -> !tgraph.tensor<[2, 4, 64], f32>
  %o = tgraph.matmul %p, %v : !tgraph.tensor<[2, 4, 64], f32>, !tgraph.tensor<[2, 64, 16], f32> -> !tgraph.tensor<[2, 4, 16], f32>
  tgraph.output %o : !tgraph.tensor<[2, 4, 16], f32>
}

tgraph.graph @fd(%q: !tgraph.tensor<[2, 4, 16], f32>, %k: !tgraph.tensor<[2, 64, 16], f32>, %v: !tgraph.tensor<[2, 64, 16], f32>) -> !tgraph.tensor<[2, 4, 16], f32> attributes {cleave.candidate_of = @attention} {
  %q1 = tgraph.reshape %q : !tgraph.tensor<[2, 4, 16], f32> -> !tgraph.tensor<[1, 2, 4, 16], f32>
  %ks = tgraph.split %k dim 1 : !tgraph.tensor<[2, 64, 16], f32> -> !tgraph.tensor<[4, 2, 16, 16], f32>
  %vs = tgraph.split %v dim 1 : !tgraph.tensor<[2, 64, 16], f32> -> !tgraph.tensor<[4, 2, 16, 16], f32>
  %s = tgraph.matmul %q1, %ks transpose_b : !tgraph.tensor<[1, 2, 4, 16], f32>, !tgraph.tensor<[4, 2, 16, 16], f32> -> !tgraph.tensor<[4, 2, 4, 16], f32>
  %e = tgraph.exp %s : !tgraph.tensor<[4, 2, 4, 16], f32>
  %pv = tgraph.matmul %e, %vs : !tgraph.tensor<[4, 2, 4, 16], f32>, !tgraph.tensor<[4, 2, 16, 16], f32> -> !tgraph.tensor<[4, 2, 4, 16], f32>
  %l = tgraph.reduce sum %e dim 3 : !tgraph.tensor<[4, 2, 4, 16], f32> -> !tgraph.tensor<[4, 2, 4, 1], f32>
  %o = tgraph.reduce sum %pv dim 0 : !tgraph.tensor<[4, 2, 4, 16], f32> -> !tgraph.tensor<[1, 2, 4, 16], f32>
  %lsum = tgraph.reduce sum %l dim 0 : !tgraph.tensor<[4, 2, 4, 1], f32> -> !tgraph.tensor<[1, 2, 4, 1], f32>
  %d = tgraph.div %o, %lsum : !tgraph.tensor<[1, 2, 4, 16], f32>, !tgraph.tensor<[1, 2, 4, 1], f32> -> !tgraph.tensor<[1, 2, 4, 16], f32>
  %out = tgraph.reshape %d : !tgraph.tensor<[1, 2, 4, 16], f32> -> !tgraph.tensor<[2, 4, 16], f32>
  tgraph.output %out : !tgraph.tensor<[2, 4, 16], f32>
}
