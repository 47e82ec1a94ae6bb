// cleave-lower-tilelang: attention's exp(c * s - max(c * s)) is one pass over the score tile. The row
// max is taken of the unscaled scores (4 threads to a row, then a warp reduction) and scaled after
// (max(c s) = c max(s) for c > 0), the scale is
// computed inside the exp's loop, and exp2's argument is one FMA, s * (c log2 e) - m * log2 e, not
// three passes (scale, subtract, exp). The loop body is ordered as TileLang's examples: the row sum
// of P and its running update before P @ V, V's tile loaded right before its gemm (`order_loop_bodies`).
// RUN: cleave-opt %s -p 'cleave-schedule{top-k=1},cleave-place-memory' -t tilelang 2>/dev/null | filecheck %s
// The same fold without a KV loop (the whole row in one tile), run against its graph:
// RUN: cleave-opt %S/Inputs/attention_scaled_small.mlir -p 'cleave-schedule{top-k=1},cleave-place-memory,cleave-lower-tilelang' 2>/dev/null | cleave-run - | filecheck %s --check-prefix=CMP

// CHECK:      for r0 in T.Pipelined(
// CHECK:          T.gemm(q_1, k_1, [[S:[a-z_0-9]+]], transpose_B=True
// CHECK-NOT:      [[S]][i0, i1] = [[S]][i0, i1] * 0.125
// CHECK:          [[PART:[a-z_0-9]+]][i0, i1] = T.max([[PART]][i0, i1], {{.*}}[[S]]{{.*}}[i0, i1 + 4*kk])
// CHECK:          T.reduce_max([[PART]], {{[a-z_0-9]+}}, dim=1, clear=True)
// CHECK-NEXT:     T.copy({{[a-z_0-9]+}}, [[RED:[a-z_0-9]+]])
// The row maxima in shared memory have several threads a row: their new values go to registers and
// are copied back after the loop that reads them (no thread overwrites what another still reads).
// CHECK:          [[SCALED:[a-z_0-9]+]][i0] = [[RED]][i0] * 0.125
// CHECK-NEXT:     T.copy([[SCALED]], [[RED]])
// CHECK:          m_new[i0] = T.max(
// CHECK-NEXT:         alpha[i0] = T.exp2(
// CHECK-NEXT:         ref[i0] = T.if_then_else(m_new[i0] != T.Cast("float32", -T.infinity("float32")), m_new[i0], T.Cast("float32", 0.0))
// CHECK-NEXT:         {{.*}} = m_new[i0]
// CHECK-NEXT:     T.copy(ref, [[RED]])
// CHECK-NEXT:     for i0, i1 in T.Parallel(16, 128):
// CHECK-NEXT:         [[S]][i0, i1] = T.exp2([[S]][i0, i1] * 0.18033688011112042 - [[RED]][i0] * 1.4426950408889634)
// CHECK-NOT:      * alpha
// CHECK:          l_part[i0, i1] = l_part[i0, i1] + {{.*}}
// CHECK:          T.reduce_sum(l_part, l, dim=1, clear=True)
// CHECK-NEXT:     T.copy(l, l_s)
// CHECK-NEXT:     for i0 in T.Parallel(16):
// CHECK-NEXT:         l_acc[i0] = l_acc[i0] * alpha[i0] + l_s[i0]
// CHECK-NEXT:     for i0, i1 in T.Parallel(16, 16):
// CHECK-NEXT:         o_acc[i0, i1] = o_acc[i0, i1] * alpha[i0]
// CHECK:          T.copy(v[
// CHECK-NEXT:     T.gemm({{.*}}, v_1, o_acc

// CMP:      @fa_small_k0 vs @fa_small: agree

tgraph.graph @fa(%q: !tgraph.tensor<[1, 256, 64], f16>, %k: !tgraph.tensor<[1, 2048, 64], f16>, %v: !tgraph.tensor<[1, 2048, 64], f16>) -> !tgraph.tensor<[1, 256, 64], f16> {
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[1, 256, 64], f16>, !tgraph.tensor<[1, 2048, 64], f16> -> !tgraph.tensor<[1, 256, 2048], f16>
  %t = tgraph.scale %s, 0.125 : !tgraph.tensor<[1, 256, 2048], f16>
  %e = tgraph.exp %t : !tgraph.tensor<[1, 256, 2048], f16>
  %o = tgraph.matmul %e, %v : !tgraph.tensor<[1, 256, 2048], f16>, !tgraph.tensor<[1, 2048, 64], f16> -> !tgraph.tensor<[1, 256, 64], f16>
  %l = tgraph.reduce sum %e dim 2 : !tgraph.tensor<[1, 256, 2048], f16> -> !tgraph.tensor<[1, 256, 1], f16>
  %r = tgraph.div %o, %l : !tgraph.tensor<[1, 256, 64], f16>, !tgraph.tensor<[1, 256, 1], f16> -> !tgraph.tensor<[1, 256, 64], f16>
  tgraph.output %r : !tgraph.tensor<[1, 256, 64], f16>
}
