// cleave-lower-tilelang: rows too wide for one warp reduction (GPT-2's layer_norm over 256 rows of 768, a
// width no power of two; 2 whole rows a block since `schedule.configs` offers a kernel without matmuls 1-8
// such rows beside 16: 128 blocks, not 16) are folded by 64 threads per row (every 64th element, 12 steps),
// then the partials warp-reduced; the row values a wider loop broadcasts (mean, rsqrt of the variance) are
// read from shared memory, so TileLang lays that loop out over all threads, not one thread per whole row
// (before: two serial loops of 768 steps, `float xc[768]` per thread, 0.02x PyTorch on the H200).
// RUN: cleave-opt %s -p 'cleave-schedule{top-k=1},cleave-place-memory' -t tilelang 2>/dev/null | filecheck %s
// RUN: cleave-opt %s -p 'cleave-schedule{top-k=1},cleave-place-memory,cleave-lower-tilelang' 2>/dev/null | cleave-run - | filecheck %s --check-prefix=CMP

// CHECK:      with T.Kernel(128, threads=128) as (bx,):
// CHECK-NOT:  T.serial(768)
// CHECK:      for kk in T.serial(12):
// CHECK-NEXT:     for i0, i1 in T.Parallel(2, 64):
// CHECK-NEXT:         s_part[i0, i1] = s_part[i0, i1] + x_1[i0, i1 + 64*kk]
// CHECK-NEXT: T.reduce_sum(s_part, s_w, dim=1, clear=True)
// CHECK-NEXT: T.copy(s_w, s_w_s)
// CHECK:      T.copy(m, m_s)
// CHECK-NEXT: for i0, i1 in T.Parallel(2, 768):
// CHECK-NEXT:     xc[i0, i1] = x_1[i0, i1] - m_s[i0]
// CHECK:      for kk in T.serial(12):
// CHECK:      T.reduce_sum(ss_part, ss_w, dim=1, clear=True)
// the variance's scale, epsilon and rsqrt in one row loop; normalize, weight and bias in one pass
// CHECK:      r[i0] = T.rsqrt(ss_w_s[i0] * 0.0013020833333333333 + 1e-05)
// CHECK:      T.copy(r, r_s)
// CHECK-NEXT: for i0, i1 in T.Parallel(2, 768):
// CHECK-NEXT:     xc[i0, i1] = xc[i0, i1] * r_s[i0] * w_1[i1] + b_1[i1]
// CHECK-NOT:  T.serial(768)

// CMP: @layer_norm_k0 vs @layer_norm: agree

tgraph.graph @layer_norm(%x: !tgraph.tensor<[256, 768], f16>, %w: !tgraph.tensor<[1, 768], f16>, %b: !tgraph.tensor<[1, 768], f16>) -> !tgraph.tensor<[256, 768], f16> {
  %s = tgraph.reduce sum %x dim 1 : !tgraph.tensor<[256, 768], f16> -> !tgraph.tensor<[256, 1], f16>
  %m = tgraph.scale %s, 0.0013020833333333333 : !tgraph.tensor<[256, 1], f16>
  %xc = tgraph.sub %x, %m : !tgraph.tensor<[256, 768], f16>, !tgraph.tensor<[256, 1], f16> -> !tgraph.tensor<[256, 768], f16>
  %sq = tgraph.square %xc : !tgraph.tensor<[256, 768], f16>
  %ss = tgraph.reduce sum %sq dim 1 : !tgraph.tensor<[256, 768], f16> -> !tgraph.tensor<[256, 1], f16>
  %v = tgraph.scale %ss, 0.0013020833333333333 : !tgraph.tensor<[256, 1], f16>
  %ve = tgraph.scalar add %v, 1.000000e-05 : !tgraph.tensor<[256, 1], f16>
  %r = tgraph.rsqrt %ve : !tgraph.tensor<[256, 1], f16>
  %n = tgraph.mul %xc, %r : !tgraph.tensor<[256, 768], f16>, !tgraph.tensor<[256, 1], f16> -> !tgraph.tensor<[256, 768], f16>
  %nw = tgraph.mul %n, %w : !tgraph.tensor<[256, 768], f16>, !tgraph.tensor<[1, 768], f16> -> !tgraph.tensor<[256, 768], f16>
  %o = tgraph.add %nw, %b : !tgraph.tensor<[256, 768], f16>, !tgraph.tensor<[1, 768], f16> -> !tgraph.tensor<[256, 768], f16>
  tgraph.output %o : !tgraph.tensor<[256, 768], f16>
}
