// Softmax written the usual way, exp(s - max s) / sum(...), under the default cleave-pipeline
// (cleave-canonicalize on): the search explores exactly as many terms as for the max-free form of
// lit_tests/passes/pipeline_ablation.mlir (explored 879 at L=512) and reaches FlashDecoding (a
// Split-K over L in log-sum-exp form: each chunk's exp shifted by its max, partials stored in f32);
// mha reaches FlashAttention (the "div moved after matmul" candidate: one sequential loop of rescaled
// sums with a running max over K/V). L is dynamic: the kept FlashDecoding candidates serve every L
// (the split kernel loops over L/s; the combine's shapes are the split count's, so it is static);
// kernels that only serve L=512 (their tile would grow with L) are dropped.
// REQUIRES: slow
// RUN: cleave-opt %s -p cleave-pipeline > %t.max 2>&1
// RUN: cleave-opt %S/pipeline_ablation.mlir -p cleave-pipeline > %t.free 2>&1
// RUN: filecheck %s --check-prefix=GQA < %t.max
// RUN: filecheck %s --check-prefix=GQA < %t.free
// The two forms' search costs are equal (the counts themselves are not pinned here):
// RUN: cat %t.max %t.free | grep 'cleave-superoptimize @gqa_decode' | filecheck %s --check-prefix=SAME
// RUN: cleave-opt %S/Inputs/mha_small_max.mlir -p 'cleave-pipeline{keep=20}' 2>&1 | filecheck %s --check-prefix=MHA

// SAME:      cleave-superoptimize @gqa_decode: explored [[E:[0-9]+]], pruned [[P:[0-9]+]], classes [[C:[0-9]+]], candidates 4,
// SAME-NEXT: cleave-superoptimize @gqa_decode: explored [[E]], pruned [[P]], classes [[C]], candidates 4,
// GQA:      cleave-superoptimize @gqa_decode: explored {{[0-9]+}}, pruned {{[0-9]+}}, classes {{[0-9]+}}, candidates 4,
// GQA:      cleave-pipeline: #{{[0-9]+}} @gqa_decode_c4_s8_split: kernels @gqa_decode_c4_s8_split_k{{[0-9]+}}, @gqa_decode_c4_s8_combine_k0
// GQA:      tgraph.graph @gqa_decode_c4_s8_split({{.*}}exp shifted by the chunk max (log-sum-exp combine)
// GQA-NOT:  tgraph.graph
// GQA:      %chunk_max = tgraph.reduce max
// GQA:      itgraph.kernel @gqa_decode_c4_s8_split_k{{[0-9]+}}(%q: {{.*}}, %k: !tgraph.tensor<[1, 8, k_d2, 128], f16>{{.*}}%out0: !tgraph.tensor<[8, 1, 8, 4, 1], f32>
// GQA:        itgraph.sequential r0 in k_d2/512 accumulate (rescaled_sum, rescaled_sum, max)
// GQA:        %[[M:chunk_max[_0-9]*]] = tgraph.reduce max
// GQA-NEXT:   %[[X:.*]] = tgraph.sub {{.*}}, %[[M]]
// GQA:        tgraph.exp %[[X]]
// GQA:      tgraph.graph @gqa_decode_c4_s8_combine(
// GQA:      %global_max = tgraph.reduce max

// MHA:      cleave-superoptimize @mha: explored 771, pruned 7858, classes 485, candidates 4,
// MHA:      cleave-pipeline: #{{[0-9]+}} @mha_c1: kernels @mha_c1_k0,
// MHA:      tgraph.graph @mha_c1({{.*}}cleave.note = "div moved after matmul"
// MHA:      itgraph.kernel @mha_c1_k0(
// MHA-NEXT:   itgraph.parallel
// MHA:          itgraph.sequential r0 in 16 accumulate (rescaled_sum, rescaled_sum, max)
// MHA-NOT:  itgraph.kernel
// MHA:        tgraph.exp

// examples/gqa_decode.mlir at L=512 with softmax written as exp(scale * (s - max s)) / sum(...).
tgraph.graph @gqa_decode(%q: !tgraph.tensor<[1, 8, 4, 128], f16>, %k: !tgraph.tensor<[1, 8, 512, 128], f16> {dynamic = array<i64: 2>}, %v: !tgraph.tensor<[1, 8, 512, 128], f16> {dynamic = array<i64: 2>}) -> !tgraph.tensor<[1, 8, 4, 128], f16> {
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[1, 8, 4, 128], f16>, !tgraph.tensor<[1, 8, 512, 128], f16> -> !tgraph.tensor<[1, 8, 4, 512], f16>
  %m = tgraph.reduce max %s dim 3 : !tgraph.tensor<[1, 8, 4, 512], f16> -> !tgraph.tensor<[1, 8, 4, 1], f16>
  %d = tgraph.sub %s, %m : !tgraph.tensor<[1, 8, 4, 512], f16>, !tgraph.tensor<[1, 8, 4, 1], f16> -> !tgraph.tensor<[1, 8, 4, 512], f16>
  %t = tgraph.scale %d, 0.088388347648318447 : !tgraph.tensor<[1, 8, 4, 512], f16>
  %e = tgraph.exp %t : !tgraph.tensor<[1, 8, 4, 512], f16>
  %r = tgraph.reduce sum %e dim 3 : !tgraph.tensor<[1, 8, 4, 512], f16> -> !tgraph.tensor<[1, 8, 4, 1], f16>
  %p = tgraph.div %e, %r : !tgraph.tensor<[1, 8, 4, 512], f16>, !tgraph.tensor<[1, 8, 4, 1], f16> -> !tgraph.tensor<[1, 8, 4, 512], f16>
  %o = tgraph.matmul %p, %v : !tgraph.tensor<[1, 8, 4, 512], f16>, !tgraph.tensor<[1, 8, 512, 128], f16> -> !tgraph.tensor<[1, 8, 4, 128], f16>
  tgraph.output %o : !tgraph.tensor<[1, 8, 4, 128], f16>
}
