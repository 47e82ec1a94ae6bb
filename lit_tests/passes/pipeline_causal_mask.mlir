// Causal attention as Llama writes it (Inputs/mha_small_causal.mlir: scores masked to -1e4 by
// tgraph.select, then a max-subtracted softmax) reaches FlashAttention like the unmasked mha of
// pipeline_softmax_max.mlir: the search enumerates select and finds the "div moved after matmul"
// candidate (select kept on the scaled score tile before the row max; the scale is not moved over
// the select, which would scale the -1e4 fill too), and the scheduler turns it into one
// kernel with a sequential loop over K/V tiles (running max, rescaled sums) that loads the mask
// tile of each K/V tile alongside them. Its FlashDecoding form (K, V and the mask split over the
// key length, 15 ops: more than the default max-ops, which grows with the graph) is found too and
// ranks first at this size: each split kernel keeps its chunk max (log-sum-exp), the combine
// rescales. The search costs about as much as the unmasked one (explored 771, pruned 7858 for
// Inputs/mha_small_max.mlir).
// REQUIRES: slow
// RUN: cleave-opt %S/Inputs/mha_small_causal.mlir -p 'cleave-pipeline{keep=20}' 2>&1 | filecheck %s

// CHECK:      cleave-superoptimize @mha_causal: explored 921, pruned 11150, classes 506, candidates 4,
// CHECK:      cleave-pipeline: #1 @mha_causal_c4_s4_split: kernels @mha_causal_c4_s4_split_k0, @mha_causal_c4_s4_combine_k0,
// CHECK:      cleave-pipeline: #6 @mha_causal_c1: kernels @mha_causal_c1_k0,
// CHECK:      tgraph.graph @mha_causal_c1({{.*}}cleave.note = "div moved after matmul"
// CHECK:      itgraph.kernel @mha_causal_c1_k0(
// CHECK-NEXT:   itgraph.parallel
// CHECK:          itgraph.sequential r0 in 16 accumulate (rescaled_sum, rescaled_sum, max)
// CHECK-NEXT:       %[[K:.*]] = itgraph.load %k at #itgraph.tmap<[0, p1, 128*r0, 0], [1, 1, 128, 64]>
// CHECK-NEXT:       %[[S:.*]] = tgraph.matmul %{{.*}}, %[[K]] transpose_b
// CHECK-NEXT:       %[[T:.*]] = tgraph.scale %[[S]], 1.250000e-01
// CHECK-NEXT:       %[[M:.*]] = itgraph.load %mask at #itgraph.tmap<[0, 0, 32*p2, 128*r0], [1, 1, 32, 128]>
// CHECK-NEXT:       %[[F:.*]] = tgraph.scalar sub %[[M]], 1.000000e+04
// CHECK-NEXT:       %{{.*}} = tgraph.select %[[M]], %[[T]], %[[F]]
// CHECK:            %[[X:.*]] = tgraph.reduce max
// CHECK:            tgraph.exp
// CHECK:            itgraph.load %v at #itgraph.tmap<[0, p1, 128*r0, 0], [1, 1, 128, 64]>
// CHECK:            itgraph.yield
// CHECK-NEXT:     }
// CHECK-NEXT:     tgraph.div
// CHECK:      tgraph.graph @mha_causal_c4_s2_split({{.*}}cleave.note = "split %mask dim 3 by s, split %k dim 2 by s, split %v dim 2 by s, 2 partial results combined over s, exp shifted by the chunk max (log-sum-exp combine)"
// CHECK:      itgraph.kernel @mha_causal_c4_s2_split_k0(
// CHECK-NEXT:   itgraph.parallel (p0, p2, p3) in (2, 2, 32)
// CHECK:          itgraph.sequential r0 in 8 accumulate (rescaled_sum, rescaled_sum, max)
// CHECK-NEXT:       itgraph.load %mask at #itgraph.tmap<[0, 0, 64*p3, 1024*p0 + 128*r0], [1, 1, 64, 128]>
// CHECK:            tgraph.select
// CHECK:      tgraph.graph @mha_causal_c4_s2_combine(
// CHECK:        %global_max = tgraph.reduce max %partial0 dim 0
