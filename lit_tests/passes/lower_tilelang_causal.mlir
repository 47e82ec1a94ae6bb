// A causal FlashAttention loop (the mask as the torch front end writes it: logits + (keep - 1) * 30000,
// keep a #cleave.causal input) is bounded at the diagonal: the pipelined loop over 128-key blocks of a
// 16-row query tile runs (-16*by + 511) floordiv 128 + 1 iterations, not 4 (the query tiles are the grid's
// slowest dim, by, launched last tile first: the longest loops first), and the mask tile is computed
// from its indices (index_below), never copied from %keep: the scores' accumulator starts at its penalty
// over the scale, (keep - 1) * 30000 * 8, in place of a clear, and the gemm adds Q K^T to it (no pass
// after the gemm adds the mask). The printer writes the same bound in Python.
// RUN: cleave-opt %s -p 'cleave-schedule{top-k=1},cleave-place-memory,cleave-lower-tilelang' 2>/dev/null | filecheck %s
// RUN: cleave-opt %s -p 'cleave-schedule{top-k=1},cleave-place-memory' -t tilelang 2>/dev/null | filecheck %s --check-prefix=PY
// The itgraph load keeps the promise in its text; printed generically and parsed back it lowers alike.
// RUN: cleave-opt %s -p 'cleave-schedule{top-k=1},cleave-place-memory' 2>/dev/null | filecheck %s --check-prefix=IT
// RUN: cleave-opt %s -p 'cleave-schedule{top-k=1},cleave-place-memory' -t tilelang 2>/dev/null > %t.direct.py
// RUN: cleave-opt %s -p 'cleave-schedule{top-k=1},cleave-place-memory' 2>/dev/null | cleave-opt --print-op-generic | cleave-opt -t tilelang > %t.reparsed.py
// RUN: diff %t.direct.py %t.reparsed.py

// CHECK:      tilelang.kernel @causal_k0(
// CHECK-NOT:  tilelang.copy %keep
// CHECK:      grid (bx, by) in (2, 32)
// CHECK:      tilelang.copy %q at <[0, 0, -16*by + 496, 0], [1, 1, 16, 32]>
// CHECK:      tilelang.pipelined r0 in (-16*by + 511) floordiv 128 + 1 stages
// CHECK-NEXT:   tilelang.parallel (i0, i1) in (16, 128) {
// CHECK-NEXT:     %{{.*}} = tilelang.index_below 128*r0 + i1 < -16*by + i0 + 497
// CHECK:          tilelang.store %{{.*}}, %[[S:[a-z_0-9]+]][i0, i1]
// CHECK-NOT:    tilelang.clear %[[S]]
// CHECK:        tilelang.gemm %q_1, %k_1, %[[S]] transpose_b
// CHECK-NOT:    tilelang.index_below
// CHECK-NOT:  tilelang.copy %keep

// IT:      itgraph.sequential r0 in 4 accumulate (rescaled_sum, rescaled_sum, max)
// IT:        itgraph.load %keep at #itgraph.tmap<[0, 0, 16*p2, 128*r0], [1, 1, 16, 128]> {cleave.causal = #cleave.causal<offset = 0>, cleave.mem = #cleave<mem fragment>}

// PY:      for r0 in T.Pipelined(((511 - 16*by) // 128) + 1, num_stages=
// PY:      T.if_then_else(i1 + 128*r0 < -16*by + i0 + 497,

tgraph.graph @causal(%q: !tgraph.tensor<[1, 1, 512, 32], f16>, %k: !tgraph.tensor<[1, 1, 512, 32], f16>, %v: !tgraph.tensor<[1, 1, 512, 32], f16>, %keep: !tgraph.tensor<[1, 1, 512, 512], f16> {cleave.causal = #cleave.causal<offset = 0>}) -> !tgraph.tensor<[1, 1, 512, 32], f16> {
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[1, 1, 512, 32], f16>, !tgraph.tensor<[1, 1, 512, 32], f16> -> !tgraph.tensor<[1, 1, 512, 512], f16>
  %t = tgraph.scale %s, 0.125 : !tgraph.tensor<[1, 1, 512, 512], f16>
  %m1 = tgraph.scalar add %keep, -1.0 : !tgraph.tensor<[1, 1, 512, 512], f16>
  %m2 = tgraph.scale %m1, 30000.0 : !tgraph.tensor<[1, 1, 512, 512], f16>
  %l = tgraph.add %t, %m2 : !tgraph.tensor<[1, 1, 512, 512], f16>, !tgraph.tensor<[1, 1, 512, 512], f16> -> !tgraph.tensor<[1, 1, 512, 512], f16>
  %e = tgraph.exp %l : !tgraph.tensor<[1, 1, 512, 512], f16>
  %r = tgraph.reduce sum %e dim 3 : !tgraph.tensor<[1, 1, 512, 512], f16> -> !tgraph.tensor<[1, 1, 512, 1], f16>
  %u = tgraph.matmul %e, %v : !tgraph.tensor<[1, 1, 512, 512], f16>, !tgraph.tensor<[1, 1, 512, 32], f16> -> !tgraph.tensor<[1, 1, 512, 32], f16>
  %o = tgraph.div %u, %r : !tgraph.tensor<[1, 1, 512, 32], f16>, !tgraph.tensor<[1, 1, 512, 1], f16> -> !tgraph.tensor<[1, 1, 512, 32], f16>
  tgraph.output %o : !tgraph.tensor<[1, 1, 512, 32], f16>
}
