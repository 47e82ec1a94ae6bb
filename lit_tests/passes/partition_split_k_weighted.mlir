// A weighted sum E @ V of non-negative weights whose row sum also crosses the cut is stored divided
// by that sum (bounded by max |V|, where E @ V grows with the chunk's length past f16's range); the
// combine multiplies it back in f32.
// RUN: cleave-opt %s -p cleave-partition-split-k | filecheck %s
// RUN: cleave-opt %s -p cleave-partition-split-k | cleave-run - | filecheck %s --check-prefix=PAIR

// CHECK:      tgraph.graph @fd_split
// CHECK:        %[[PV:.*]] = tgraph.matmul %{{.*}}, %{{.*}} : !tgraph.tensor<[4, 2, 4, 16], f16>, !tgraph.tensor<[4, 2, 16, 16], f16> -> !tgraph.tensor<[4, 2, 4, 16], f32>
// CHECK:        %[[L:.*]] = tgraph.reduce sum %[[E:.*]] dim 3
// CHECK:        %[[LW:.*]] = tgraph.cast %[[L]] : !tgraph.tensor<[4, 2, 4, 1], f16> -> !tgraph.tensor<[4, 2, 4, 1], f32>
// CHECK-NEXT:   %[[SAFE:.*]] = tgraph.scalar max %[[LW]], 1.000000e-30
// CHECK-NEXT:   %[[N:.*]] = tgraph.div %[[PV]], %[[SAFE]]
// CHECK-NEXT:   %[[NH:.*]] = tgraph.cast %[[N]] : !tgraph.tensor<[4, 2, 4, 16], f32> -> !tgraph.tensor<[4, 2, 4, 16], f16>
// CHECK-NEXT:   tgraph.output %[[NH]], %[[LW]] : !tgraph.tensor<[4, 2, 4, 16], f16>, !tgraph.tensor<[4, 2, 4, 1], f32>
// CHECK:      tgraph.graph @fd_combine(%partial0: !tgraph.tensor<[4, 2, 4, 16], f16>, %partial1: !tgraph.tensor<[4, 2, 4, 1], f32>)
// CHECK-NEXT:   %[[W:.*]] = tgraph.cast %partial0 : !tgraph.tensor<[4, 2, 4, 16], f16> -> !tgraph.tensor<[4, 2, 4, 16], f32>
// CHECK-NEXT:   %[[B:.*]] = tgraph.mul %[[W]], %partial1
// CHECK-NEXT:   %{{.*}} = tgraph.reduce sum %[[B]] dim 0 : !tgraph.tensor<[4, 2, 4, 16], f32>

// PAIR: @fd_split + @fd_combine vs @attention: agree

tgraph.graph @attention(%q: !tgraph.tensor<[2, 4, 16], f16>, %k: !tgraph.tensor<[2, 64, 16], f16>, %v: !tgraph.tensor<[2, 64, 16], f16>) -> !tgraph.tensor<[2, 4, 16], f16> {
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[2, 4, 16], f16>, !tgraph.tensor<[2, 64, 16], f16> -> !tgraph.tensor<[2, 4, 64], f16>
  %e = tgraph.exp %s : !tgraph.tensor<[2, 4, 64], f16>
  %r = tgraph.reduce sum %e dim 2 : !tgraph.tensor<[2, 4, 64], f16> -> !tgraph.tensor<[2, 4, 1], f16>
  %p = tgraph.div %e, %r : !tgraph.tensor<[2, 4, 64], f16>, !tgraph.tensor<[2, 4, 1], f16> -> !tgraph.tensor<[2, 4, 64], f16>
  %o = tgraph.matmul %p, %v : !tgraph.tensor<[2, 4, 64], f16>, !tgraph.tensor<[2, 64, 16], f16> -> !tgraph.tensor<[2, 4, 16], f16>
  tgraph.output %o : !tgraph.tensor<[2, 4, 16], f16>
}

tgraph.graph @fd(%q: !tgraph.tensor<[2, 4, 16], f16>, %k: !tgraph.tensor<[2, 64, 16], f16>, %v: !tgraph.tensor<[2, 64, 16], f16>) -> !tgraph.tensor<[2, 4, 16], f16> attributes {cleave.candidate_of = @attention} {
  %q1 = tgraph.reshape %q : !tgraph.tensor<[2, 4, 16], f16> -> !tgraph.tensor<[1, 2, 4, 16], f16>
  %ks = tgraph.split %k dim 1 : !tgraph.tensor<[2, 64, 16], f16> -> !tgraph.tensor<[4, 2, 16, 16], f16>
  %vs = tgraph.split %v dim 1 : !tgraph.tensor<[2, 64, 16], f16> -> !tgraph.tensor<[4, 2, 16, 16], f16>
  %s = tgraph.matmul %q1, %ks transpose_b : !tgraph.tensor<[1, 2, 4, 16], f16>, !tgraph.tensor<[4, 2, 16, 16], f16> -> !tgraph.tensor<[4, 2, 4, 16], f16>
  %e = tgraph.exp %s : !tgraph.tensor<[4, 2, 4, 16], f16>
  %pv = tgraph.matmul %e, %vs : !tgraph.tensor<[4, 2, 4, 16], f16>, !tgraph.tensor<[4, 2, 16, 16], f16> -> !tgraph.tensor<[4, 2, 4, 16], f16>
  %l = tgraph.reduce sum %e dim 3 : !tgraph.tensor<[4, 2, 4, 16], f16> -> !tgraph.tensor<[4, 2, 4, 1], f16>
  %o = tgraph.reduce sum %pv dim 0 : !tgraph.tensor<[4, 2, 4, 16], f16> -> !tgraph.tensor<[1, 2, 4, 16], f16>
  %lsum = tgraph.reduce sum %l dim 0 : !tgraph.tensor<[4, 2, 4, 1], f16> -> !tgraph.tensor<[1, 2, 4, 1], f16>
  %d = tgraph.div %o, %lsum : !tgraph.tensor<[1, 2, 4, 16], f16>, !tgraph.tensor<[1, 2, 4, 1], f16> -> !tgraph.tensor<[1, 2, 4, 16], f16>
  %out = tgraph.reshape %d : !tgraph.tensor<[1, 2, 4, 16], f16> -> !tgraph.tensor<[2, 4, 16], f16>
  tgraph.output %out : !tgraph.tensor<[2, 4, 16], f16>
}
