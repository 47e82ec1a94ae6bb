// cleave-schedule{loop-dynamic=true}: a graph that reduces over a dim it declares dynamic keeps the best
// configuration that loops over a reduction beside its top-k. Multi-query decode attention (Falcon: one
// K/V head under four query heads) at 256 keys ranks its one-tile form first (every key in one tile),
// which serves 256 keys only; `cleave-pipeline`'s schedule at rounded sizes asks for the looping one,
// the online-softmax kernel over 128-key tiles that `cleave-dynamic-shapes` makes serve every length.
// RUN: cleave-opt %s -p 'cleave-schedule{top-k=1},cleave-place-memory,cleave-dynamic-shapes' 2>&1 | filecheck %s --check-prefix=PLAIN
// RUN: cleave-opt %s -p 'cleave-schedule{top-k=1 loop-dynamic=true},cleave-place-memory,cleave-dynamic-shapes' 2>&1 | filecheck %s --check-prefix=LOOP

// PLAIN:      warning: cleave-dynamic-shapes: @mqa_decode_k0 stays static: itgraph.load in @mqa_decode_k0: the tile size depends on the dynamic dim
// PLAIN:      itgraph.kernel @mqa_decode_k0(%q: !tgraph.tensor<[1, 4, 1, 16], f16>, %k: !tgraph.tensor<[1, 1, 256, 16], f16>
// PLAIN-NOT:  itgraph.sequential
// PLAIN-NOT:  itgraph.kernel

// LOOP:       cleave-schedule @mqa_decode: 2 kernels kept
// LOOP:       cleave-dynamic-shapes: dropped @mqa_decode_k0: it only serves the representative size
// LOOP-NOT:   itgraph.kernel @mqa_decode_k0
// LOOP:       itgraph.kernel @mqa_decode_k1(%q: !tgraph.tensor<[1, 4, 1, 16], f16>, %k: !tgraph.tensor<[1, 1, k_d2, 16], f16>, %v: !tgraph.tensor<[1, 1, k_d2, 16], f16>
// LOOP:       itgraph.sequential r0 in k_d2/128 accumulate (rescaled_sum, rescaled_sum, max)
// LOOP:       itgraph.mask {{.*}} bound k_d2 fill neg_inf

tgraph.graph @mqa_decode(%q: !tgraph.tensor<[1, 4, 1, 16], f16>, %k: !tgraph.tensor<[1, 1, 256, 16], f16> {dynamic = array<i64: 2>}, %v: !tgraph.tensor<[1, 1, 256, 16], f16> {dynamic = array<i64: 2>}) -> !tgraph.tensor<[1, 4, 1, 16], f16> {
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[1, 4, 1, 16], f16>, !tgraph.tensor<[1, 1, 256, 16], f16> -> !tgraph.tensor<[1, 4, 1, 256], f16>
  %e = tgraph.exp %s : !tgraph.tensor<[1, 4, 1, 256], f16>
  %o = tgraph.matmul %e, %v : !tgraph.tensor<[1, 4, 1, 256], f16>, !tgraph.tensor<[1, 1, 256, 16], f16> -> !tgraph.tensor<[1, 4, 1, 16], f16>
  %l = tgraph.reduce sum %e dim 3 : !tgraph.tensor<[1, 4, 1, 256], f16> -> !tgraph.tensor<[1, 4, 1, 1], f16>
  %r = tgraph.div %o, %l : !tgraph.tensor<[1, 4, 1, 16], f16>, !tgraph.tensor<[1, 4, 1, 1], f16> -> !tgraph.tensor<[1, 4, 1, 16], f16>
  tgraph.output %r : !tgraph.tensor<[1, 4, 1, 16], f16>
}
