// cleave-schedule on the FlashAttention form: one parallel loop over query tiles (and heads), one
// sequential loop over KV tiles holding QK^T, exp, the row sum and P.V (horizontally fused, as
// rescaled sums with a running max: online softmax), the division after the loop.
// RUN: cleave-opt %s -p 'cleave-schedule{top-k=1}' 2>&1 | filecheck %s

// CHECK:      cleave-schedule @fa: 1 kernels kept, {{[0-9]+}} configurations dropped
// CHECK:      itgraph.kernel @fa_k0(%q: !tgraph.tensor<[8, 4096, 64], f16>, %k: !tgraph.tensor<[8, 4096, 64], f16>, %v: !tgraph.tensor<[8, 4096, 64], f16>, %out0: !tgraph.tensor<[8, 4096, 64], f16>)
// CHECK-SAME: cleave.schedule_of = @fa
// CHECK-NEXT:   itgraph.parallel (p0, p1) in (8, [[ROWS:[0-9]+]]) {
// CHECK-NEXT:     %[[O:.*]], %[[L:.*]], %[[M:.*]] = itgraph.sequential r0 in [[TRIPS:[0-9]+]] accumulate (rescaled_sum, rescaled_sum, max)
// CHECK:            itgraph.load %q at #itgraph.tmap<[p0, [[BM:[0-9]+]]*p1, 0], [1, [[BM]], 64]>
// CHECK:            itgraph.load %k at #itgraph.tmap<[p0, [[BN:[0-9]+]]*r0, 0], [1, [[BN]], 64]>
// CHECK:            tgraph.matmul {{.*}} transpose_b
// CHECK:            %[[MAX:.*]] = tgraph.reduce max
// CHECK:            tgraph.sub
// CHECK:            %[[E:.*]] = tgraph.exp
// CHECK:            itgraph.load %v at #itgraph.tmap<[p0, [[BN]]*r0, 0], [1, [[BN]], 64]>
// CHECK:            tgraph.matmul %[[E]]
// CHECK:            tgraph.reduce sum %[[E]] dim 2
// CHECK:            itgraph.yield {{.*}}, {{.*}}, %[[MAX]]
// CHECK:          }
// CHECK-NEXT:     %[[D:.*]] = tgraph.div %[[O]], %[[L]]
// CHECK-NEXT:     itgraph.store %[[D]], %out0 at #itgraph.tmap<[p0, [[BM]]*p1, 0], [1, [[BM]], 64]>

tgraph.graph @fa(%q: !tgraph.tensor<[8, 4096, 64], f16>, %k: !tgraph.tensor<[8, 4096, 64], f16>, %v: !tgraph.tensor<[8, 4096, 64], f16>) -> !tgraph.tensor<[8, 4096, 64], f16> {
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[8, 4096, 64], f16>, !tgraph.tensor<[8, 4096, 64], f16> -> !tgraph.tensor<[8, 4096, 4096], f16>
  %e = tgraph.exp %s : !tgraph.tensor<[8, 4096, 4096], f16>
  %o = tgraph.matmul %e, %v : !tgraph.tensor<[8, 4096, 4096], f16>, !tgraph.tensor<[8, 4096, 64], f16> -> !tgraph.tensor<[8, 4096, 64], f16>
  %l = tgraph.reduce sum %e dim 2 : !tgraph.tensor<[8, 4096, 4096], f16> -> !tgraph.tensor<[8, 4096, 1], f16>
  %r = tgraph.div %o, %l : !tgraph.tensor<[8, 4096, 64], f16>, !tgraph.tensor<[8, 4096, 1], f16> -> !tgraph.tensor<[8, 4096, 64], f16>
  tgraph.output %r : !tgraph.tensor<[8, 4096, 64], f16>
}
