// cleave-schedule: the KL divergence of two logit rows needs both maxes before either exp sum, and no
// one loop holds two running maxes, so no single kernel schedules it. Besides the cut in graph order,
// it is cut by reduction level (`partition_kernels.partition_by_level`): the two maxes, then the three
// exp sums shifted by them in one loop over p and q (their groups joined by the sum that reads both),
// streamed in steps of 1280 columns.
// RUN: cleave-opt %s -p 'cleave-schedule{top-k=1}' 2>/dev/null | filecheck %s

// CHECK:      tgraph.graph @kl_lv(%p: !tgraph.tensor<[4, 32000], f16>, %q: !tgraph.tensor<[4, 32000], f16>) -> (!tgraph.tensor<[4, 1], f16>, !tgraph.tensor<[4, 1], f16>)
// CHECK-SAME:   cleave.note = "cut by reduction level into 2 kernels (no single kernel schedules)"
// CHECK-COUNT-2: tgraph.reduce max
// CHECK-NOT:  tgraph.exp
// CHECK:      itgraph.kernel @kl_lv_k0
// CHECK:      tgraph.graph @kl_lv_p1(%{{.*}}: !tgraph.tensor<[4, 1], f16>, %{{.*}}: !tgraph.tensor<[4, 1], f16>, %{{.*}}: !tgraph.tensor<[4, 32000], f16>, %{{.*}}: !tgraph.tensor<[4, 32000], f16>) -> !tgraph.tensor<[4, 1], f32>
// CHECK:      itgraph.kernel @kl_lv_p1_k0
// CHECK:        itgraph.sequential r0 in 25 accumulate (sum, sum, sum)
// CHECK-NOT:    itgraph.sequential
// the cut in graph order (three kernels, shifted rows of q between them) stays a candidate
// CHECK:      tgraph.graph @kl_p0(

tgraph.graph @kl(%p: !tgraph.tensor<[4, 32000], f16>, %q: !tgraph.tensor<[4, 32000], f16>) -> !tgraph.tensor<[4, 1], f32> {
  %mp = tgraph.reduce max %p dim 1 : !tgraph.tensor<[4, 32000], f16> -> !tgraph.tensor<[4, 1], f16>
  %mq = tgraph.reduce max %q dim 1 : !tgraph.tensor<[4, 32000], f16> -> !tgraph.tensor<[4, 1], f16>
  %zp = tgraph.sub %p, %mp : !tgraph.tensor<[4, 32000], f16>, !tgraph.tensor<[4, 1], f16> -> !tgraph.tensor<[4, 32000], f16>
  %zq = tgraph.sub %q, %mq : !tgraph.tensor<[4, 32000], f16>, !tgraph.tensor<[4, 1], f16> -> !tgraph.tensor<[4, 32000], f16>
  %ep = tgraph.exp %zp : !tgraph.tensor<[4, 32000], f16>
  %eq = tgraph.exp %zq : !tgraph.tensor<[4, 32000], f16>
  %sp = tgraph.reduce sum %ep dim 1 : !tgraph.tensor<[4, 32000], f16> -> !tgraph.tensor<[4, 1], f16>
  %sq = tgraph.reduce sum %eq dim 1 : !tgraph.tensor<[4, 32000], f16> -> !tgraph.tensor<[4, 1], f16>
  %d = tgraph.sub %zp, %zq : !tgraph.tensor<[4, 32000], f16>, !tgraph.tensor<[4, 32000], f16> -> !tgraph.tensor<[4, 32000], f16>
  %w = tgraph.mul %ep, %d : !tgraph.tensor<[4, 32000], f16>, !tgraph.tensor<[4, 32000], f16> -> !tgraph.tensor<[4, 32000], f16>
  %t = tgraph.reduce sum %w dim 1 : !tgraph.tensor<[4, 32000], f16> -> !tgraph.tensor<[4, 1], f16>
  %c = tgraph.div %t, %sp : !tgraph.tensor<[4, 1], f16>, !tgraph.tensor<[4, 1], f16> -> !tgraph.tensor<[4, 1], f16>
  %lp = tgraph.log %sp : !tgraph.tensor<[4, 1], f16>
  %lq = tgraph.log %sq : !tgraph.tensor<[4, 1], f16>
  %a = tgraph.sub %c, %lp : !tgraph.tensor<[4, 1], f16>, !tgraph.tensor<[4, 1], f16> -> !tgraph.tensor<[4, 1], f16>
  %k16 = tgraph.add %a, %lq : !tgraph.tensor<[4, 1], f16>, !tgraph.tensor<[4, 1], f16> -> !tgraph.tensor<[4, 1], f16>
  %kl = tgraph.cast %k16 : !tgraph.tensor<[4, 1], f16> -> !tgraph.tensor<[4, 1], f32>
  tgraph.output %kl : !tgraph.tensor<[4, 1], f32>
}
