// cleave-pipeline's ablations (the Cleave paper's Figure 12) on gqa_decode, scaled to L=512:
// no-split=true searches without the Split operator, so no Split-K / FlashDecoding candidate (no
// split or combine graph) is left; no-search=true skips the algebraic search, so only the input
// graph and its own kernel remain.
// RUN: cleave-opt %s -p 'cleave-pipeline{no-split=true}' 2>&1 | filecheck %s --check-prefix=NOSPLIT
// RUN: cleave-opt %s -p 'cleave-pipeline{no-search=true}' 2>&1 | filecheck %s --check-prefix=NOSEARCH

// NOSPLIT:     cleave-superoptimize @gqa_decode: {{.*}} candidates 1,
// NOSPLIT-NOT: _split
// NOSPLIT-NOT: _combine
// NOSPLIT-NOT: tgraph.split
// NOSPLIT:     cleave-pipeline: #1 @gqa_decode
// NOSPLIT-NOT: _split
// NOSPLIT-NOT: _combine
// NOSPLIT-NOT: tgraph.split
// NOSPLIT:     itgraph.kernel @gqa_decode
// NOSPLIT-NOT: _split
// NOSPLIT-NOT: _combine
// NOSPLIT-NOT: tgraph.split

// NOSEARCH-NOT: cleave-superoptimize
// NOSEARCH:     cleave-pipeline: #1 @gqa_decode: kernels @gqa_decode_k0,
// NOSEARCH-NOT: cleave-pipeline: #2
// NOSEARCH:     tgraph.graph @gqa_decode(
// NOSEARCH-NOT: tgraph.graph
// NOSEARCH:     itgraph.kernel @gqa_decode_k0(
// NOSEARCH-NOT: tgraph.graph
// NOSEARCH-NOT: itgraph.kernel

tgraph.graph @gqa_decode(%q: !tgraph.tensor<[1, 8, 4, 128], f16>, %k: !tgraph.tensor<[1, 8, 512, 128], f16> {dynamic = array<i64: 2>}, %v: !tgraph.tensor<[1, 8, 512, 128], f16> {dynamic = array<i64: 2>}) -> !tgraph.tensor<[1, 8, 4, 128], f16> {
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[1, 8, 4, 128], f16>, !tgraph.tensor<[1, 8, 512, 128], f16> -> !tgraph.tensor<[1, 8, 4, 512], f16>
  %t = tgraph.scale %s, 0.088388347648318447 : !tgraph.tensor<[1, 8, 4, 512], f16>
  %e = tgraph.exp %t : !tgraph.tensor<[1, 8, 4, 512], f16>
  %r = tgraph.reduce sum %e dim 3 : !tgraph.tensor<[1, 8, 4, 512], f16> -> !tgraph.tensor<[1, 8, 4, 1], f16>
  %p = tgraph.div %e, %r : !tgraph.tensor<[1, 8, 4, 512], f16>, !tgraph.tensor<[1, 8, 4, 1], f16> -> !tgraph.tensor<[1, 8, 4, 512], f16>
  %o = tgraph.matmul %p, %v : !tgraph.tensor<[1, 8, 4, 512], f16>, !tgraph.tensor<[1, 8, 512, 128], f16> -> !tgraph.tensor<[1, 8, 4, 128], f16>
  tgraph.output %o : !tgraph.tensor<[1, 8, 4, 128], f16>
}
