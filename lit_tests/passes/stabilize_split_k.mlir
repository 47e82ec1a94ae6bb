// cleave-stabilize-split-k on a FlashDecoding candidate: exp(QK^T) per KV chunk overflows fp32 for
// logits above ~88, so the exp reads QK^T minus the chunk max, and the combine side rescales every
// chunk's partial sums by exp(chunk max - max over the chunks) before summing them (log-sum-exp).
// RUN: cleave-opt %s -p cleave-stabilize-split-k | filecheck %s
// RUN: cleave-opt %s -p cleave-stabilize-split-k | cleave-run - | filecheck %s --check-prefix=SAME
// RUN: cleave-opt %s -p cleave-stabilize-split-k,cleave-stabilize-split-k | filecheck %s

// CHECK:      tgraph.graph @fd(
// CHECK-SAME: cleave.note = "split %k dim 1 by s, split %v dim 1 by s, 2 partial results combined over s, exp shifted by the chunk max (log-sum-exp combine)"
// CHECK:        %s = tgraph.matmul %q1, %ks transpose_b
// CHECK-NEXT:   %chunk_max = tgraph.reduce max %s dim 3 : !tgraph.tensor<[4, 2, 4, 1024], f16> -> !tgraph.tensor<[4, 2, 4, 1], f16>
// CHECK-NEXT:   %[[X:.*]] = tgraph.sub %s, %chunk_max
// CHECK-NEXT:   %e = tgraph.exp %[[X]]
// CHECK-NEXT:   %pv = tgraph.matmul %e, %vs
// CHECK-NEXT:   %l = tgraph.reduce sum %e dim 3
// CHECK-NEXT:   %global_max = tgraph.reduce max %chunk_max dim 0 : !tgraph.tensor<[4, 2, 4, 1], f16> -> !tgraph.tensor<[1, 2, 4, 1], f16>
// CHECK-NEXT:   %[[D:.*]] = tgraph.sub %chunk_max, %global_max
// CHECK-NEXT:   %rescale = tgraph.exp %[[D]]
// CHECK-NEXT:   %[[PV:.*]] = tgraph.mul %pv, %rescale
// CHECK-NEXT:   %o = tgraph.reduce sum %[[PV]] dim 0
// CHECK-NEXT:   %[[L:.*]] = tgraph.mul %l, %rescale
// CHECK-NEXT:   %lsum = tgraph.reduce sum %[[L]] dim 0
// CHECK-NEXT:   %d = tgraph.div %o, %lsum
// The plain attention graph has no parts dim: unchanged.
// CHECK:      tgraph.graph @attention(
// CHECK-NEXT:   %s = tgraph.matmul %q, %k transpose_b
// CHECK-NEXT:   %e = tgraph.exp %s

// SAME: @attention vs @fd: agree

// Partition: the chunk max is one more partial of the split graph; its max over the chunks, the
// rescale and the combine sums form the combine graph. The chunk max and sum are stored in f32 (a chunk max
// rounded to f16 is off by up to |max| * 2^-11, which exp(m - M) turns into a relative error). P.V
// crosses in f16 divided by its chunk's sum (bounded by max |V|, where P.V grows with the chunk);
// the combine multiplies it back, computes in f32 and casts its result to the declared f16.
// RUN: cleave-opt %s -p cleave-stabilize-split-k,cleave-partition-split-k | filecheck %s --check-prefix=PART
// RUN: cleave-opt %s -p cleave-stabilize-split-k,cleave-partition-split-k | cleave-run - | filecheck %s --check-prefix=PAIR
// PART:      tgraph.graph @fd_split({{.*}}) -> (!tgraph.tensor<[4, 2, 4, 1], f32>, !tgraph.tensor<[4, 2, 4, 64], f16>, !tgraph.tensor<[4, 2, 4, 1], f32>)
// PART:        %[[M:.*]] = tgraph.cast %chunk_max : !tgraph.tensor<[4, 2, 4, 1], f16> -> !tgraph.tensor<[4, 2, 4, 1], f32>
// PART-NEXT:   %[[S:.*]] = tgraph.cast %l
// PART-NEXT:   %[[SAFE:.*]] = tgraph.scalar max %[[S]], 1.000000e-30
// PART-NEXT:   %[[N:.*]] = tgraph.div %pv, %[[SAFE]] : !tgraph.tensor<[4, 2, 4, 64], f32>, !tgraph.tensor<[4, 2, 4, 1], f32>
// PART-NEXT:   %[[NH:.*]] = tgraph.cast %[[N]] : !tgraph.tensor<[4, 2, 4, 64], f32> -> !tgraph.tensor<[4, 2, 4, 64], f16>
// PART-NEXT:   tgraph.output %[[M]], %[[NH]], %[[S]]
// PART:      tgraph.graph @fd_combine(%partial0: !tgraph.tensor<[4, 2, 4, 1], f32>, %partial1: !tgraph.tensor<[4, 2, 4, 64], f16>, %partial2: !tgraph.tensor<[4, 2, 4, 1], f32>) -> !tgraph.tensor<[2, 4, 64], f16>
// PART-NEXT:   %[[PV32:.*]] = tgraph.cast %partial1 : !tgraph.tensor<[4, 2, 4, 64], f16> -> !tgraph.tensor<[4, 2, 4, 64], f32>
// PART-NEXT:   %[[BACK:.*]] = tgraph.mul %[[PV32]], %partial2
// PART-NEXT:   %global_max = tgraph.reduce max %partial0 dim 0
// PART-NEXT:   %[[D:.*]] = tgraph.sub %partial0, %global_max
// PART-NEXT:   %rescale = tgraph.exp %[[D]]
// PART-NEXT:   %[[PV:.*]] = tgraph.mul %[[BACK]], %rescale
// PART-NEXT:   %o = tgraph.reduce sum %[[PV]] dim 0
// PART-NEXT:   %[[L:.*]] = tgraph.mul %partial2, %rescale
// PART-NEXT:   %lsum = tgraph.reduce sum %[[L]] dim 0
// PART-NEXT:   %d = tgraph.div %o, %lsum : !tgraph.tensor<[1, 2, 4, 64], f32>, !tgraph.tensor<[1, 2, 4, 1], f32>
// PART-NEXT:   %out = tgraph.reshape %d
// PART-NEXT:   %[[O:.*]] = tgraph.cast %out : !tgraph.tensor<[2, 4, 64], f32> -> !tgraph.tensor<[2, 4, 64], f16>
// PART-NEXT:   tgraph.output %[[O]]
// PAIR: @attention vs @fd_split + @fd_combine: agree

// Scheduling: the split kernel is one online-softmax pass over each KV chunk, the chunk max its
// running max (no second pass for the max); tests/test_stabilize.py checks it equals its graph.
// RUN: cleave-opt %s -p 'cleave-stabilize-split-k,cleave-partition-split-k,cleave-schedule{top-k=1}' 2>/dev/null | filecheck %s --check-prefix=KERNEL
// KERNEL:      itgraph.kernel @fd_split_k0(
// KERNEL-NEXT:   itgraph.parallel
// KERNEL-NEXT:     %[[PV:.*]], %[[L:.*]], %[[M:.*]] = itgraph.sequential r0 in {{[0-9]+}} accumulate (rescaled_sum, rescaled_sum, max)
// KERNEL:            %[[CM:.*]] = tgraph.reduce max
// KERNEL-NEXT:       %[[X:.*]] = tgraph.sub {{.*}}, %[[CM]]
// KERNEL-NEXT:       %[[E:.*]] = tgraph.exp %[[X]]
// KERNEL:            itgraph.yield {{.*}}, {{.*}}, %[[CM]]
// KERNEL-NEXT:     }
// KERNEL-NEXT:     %[[M32:.*]] = tgraph.cast %[[M]] : !tgraph.tensor<[1, 1, 4, 1], f16> -> !tgraph.tensor<[1, 1, 4, 1], f32>
// KERNEL:          itgraph.store %[[M32]], %out0
// KERNEL-NOT:    itgraph.sequential
// KERNEL:      itgraph.kernel @fd_combine_k0(

tgraph.graph @fd(%q: !tgraph.tensor<[2, 4, 64], f16>, %k: !tgraph.tensor<[2, 4096, 64], f16>, %v: !tgraph.tensor<[2, 4096, 64], f16>) -> !tgraph.tensor<[2, 4, 64], f16> attributes {cleave.candidate_of = @attention, cleave.note = "split %k dim 1 by s, split %v dim 1 by s, 2 partial results combined over s"} {
  %q1 = tgraph.reshape %q : !tgraph.tensor<[2, 4, 64], f16> -> !tgraph.tensor<[1, 2, 4, 64], f16>
  %ks = tgraph.split %k dim 1 : !tgraph.tensor<[2, 4096, 64], f16> -> !tgraph.tensor<[4, 2, 1024, 64], f16>
  %vs = tgraph.split %v dim 1 : !tgraph.tensor<[2, 4096, 64], f16> -> !tgraph.tensor<[4, 2, 1024, 64], f16>
  %s = tgraph.matmul %q1, %ks transpose_b : !tgraph.tensor<[1, 2, 4, 64], f16>, !tgraph.tensor<[4, 2, 1024, 64], f16> -> !tgraph.tensor<[4, 2, 4, 1024], f16>
  %e = tgraph.exp %s : !tgraph.tensor<[4, 2, 4, 1024], f16>
  %pv = tgraph.matmul %e, %vs : !tgraph.tensor<[4, 2, 4, 1024], f16>, !tgraph.tensor<[4, 2, 1024, 64], f16> -> !tgraph.tensor<[4, 2, 4, 64], f16>
  %l = tgraph.reduce sum %e dim 3 : !tgraph.tensor<[4, 2, 4, 1024], f16> -> !tgraph.tensor<[4, 2, 4, 1], f16>
  %o = tgraph.reduce sum %pv dim 0 : !tgraph.tensor<[4, 2, 4, 64], f16> -> !tgraph.tensor<[1, 2, 4, 64], f16>
  %lsum = tgraph.reduce sum %l dim 0 : !tgraph.tensor<[4, 2, 4, 1], f16> -> !tgraph.tensor<[1, 2, 4, 1], f16>
  %d = tgraph.div %o, %lsum : !tgraph.tensor<[1, 2, 4, 64], f16>, !tgraph.tensor<[1, 2, 4, 1], f16> -> !tgraph.tensor<[1, 2, 4, 64], f16>
  %out = tgraph.reshape %d : !tgraph.tensor<[1, 2, 4, 64], f16> -> !tgraph.tensor<[2, 4, 64], f16>
  tgraph.output %out : !tgraph.tensor<[2, 4, 64], f16>
}

tgraph.graph @attention(%q: !tgraph.tensor<[2, 4, 64], f16>, %k: !tgraph.tensor<[2, 4096, 64], f16>, %v: !tgraph.tensor<[2, 4096, 64], f16>) -> !tgraph.tensor<[2, 4, 64], f16> {
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[2, 4, 64], f16>, !tgraph.tensor<[2, 4096, 64], f16> -> !tgraph.tensor<[2, 4, 4096], f16>
  %e = tgraph.exp %s : !tgraph.tensor<[2, 4, 4096], f16>
  %r = tgraph.reduce sum %e dim 2 : !tgraph.tensor<[2, 4, 4096], f16> -> !tgraph.tensor<[2, 4, 1], f16>
  %p = tgraph.div %e, %r : !tgraph.tensor<[2, 4, 4096], f16>, !tgraph.tensor<[2, 4, 1], f16> -> !tgraph.tensor<[2, 4, 4096], f16>
  %o = tgraph.matmul %p, %v : !tgraph.tensor<[2, 4, 4096], f16>, !tgraph.tensor<[2, 4096, 64], f16> -> !tgraph.tensor<[2, 4, 64], f16>
  tgraph.output %o : !tgraph.tensor<[2, 4, 64], f16>
}
