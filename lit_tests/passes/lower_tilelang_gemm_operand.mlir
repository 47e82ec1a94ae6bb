// cleave-lower-tilelang: a gemm of 16 rows takes its computed A operand (%10, an fp32 fragment) from
// shared memory, through a plain fp16 shared tile: the fragment is copied there, then that tile into
// the gemm's operand. A fragment copied straight into the operand (swizzled by the gemm) is written by
// one replica of the threads under an `if`, and TileLang's sync planner hoists a barrier out of that
// `if` ("[ThreadSync] Hoisting sync out of an if ... the race remains"); the suite's mla_decode combine
// kernel (this one, at B1 L4096) did. tests/test_tilelang.py lowers kernels and fails on that warning.
// RUN: cleave-opt %s -p cleave-lower-tilelang | filecheck %s
// RUN: cleave-opt %s -t tilelang | filecheck %s --check-prefix=PY

// CHECK:      tilelang.kernel @mla_decode_c2_s2_combine_k0
// CHECK:        tilelang.copy %[[A:.*]] to %[[HS:.*]] : !tilelang.buffer<[16, 128], f32, fragment>, !tilelang.buffer<[16, 128], f16, shared>
// CHECK-NEXT:   tilelang.copy %[[HS]] to %[[H:.*]] : !tilelang.buffer<[16, 128], f16, shared>, !tilelang.buffer<[16, 128], f16, shared>
// CHECK-NEXT:   tilelang.copy %v at
// CHECK-NEXT:   tilelang.gemm %[[H]], %{{.*}}, %{{.*}} policy FullRow
// CHECK-NOT:    tilelang.copy {{.*}} fragment>, !tilelang.buffer<[16, 128], f16, shared>
// CHECK:        tilelang.copy %{{.*}} to %out0

// PY:      T.copy(red, red_hs)
// PY-NEXT: T.copy(red_hs, red_h)
// PY-NEXT: T.copy(v[0, 128*r0:128*r0 + 128, 32*by:32*by + 32], v_1)
// PY-NEXT: T.gemm(red_h, v_1, acc_acc, transpose_B=False, policy=T.GemmWarpPolicy.FullRow)

builtin.module {
  itgraph.kernel @mla_decode_c2_s2_combine_k0(%partial0: !tgraph.tensor<[2, 1, 128, k_d1], f16>, %v: !tgraph.tensor<[1, k_d1, 512], f16>, %out0: !tgraph.tensor<[1, 128, 512], f16>) attributes {num_outputs = 1 : i64, cleave.threads = 128 : i64, cleave.stages = 3 : i64, cleave.smem_bytes = 57344 : i64, cleave.schedule_of = @mla_decode_c2_s2_combine, cleave.tiles = #cleave.tiles<out = [1, 16, 32], reduce = 128>, cleave.estimated_us = 2.136600e+01 : f64, cleave.dynamic = {k_d1 = 128 : i64}, cleave.representative = {k_d1 = 4096 : i64}} {
    itgraph.parallel (p1, p2) in (8, 16) {
      %0, %1, %2 = itgraph.sequential r0 in k_d1/128 accumulate (rescaled_sum, rescaled_sum, max) : !tgraph.tensor<[1, 1, 16, 32], f16>, !tgraph.tensor<[1, 1, 16, 1], f16>, !tgraph.tensor<[1, 1, 16, 1], f16> {
        %partial0_1 = itgraph.load %partial0 at #itgraph.tmap<[0, 0, 16*p1, 128*r0], [2, 1, 16, 128]> {cleave.mem = #cleave<mem shared>} : !tgraph.tensor<[2, 1, 128, k_d1], f16> -> !tgraph.tensor<[2, 1, 16, 128], f16>
        %3 = tgraph.reduce sum %partial0_1 dim 0 {cleave.mem = #cleave<mem fragment>} : !tgraph.tensor<[2, 1, 16, 128], f16> -> !tgraph.tensor<[1, 1, 16, 128], f16>
        %4 = tgraph.scale %3, 0.07216878364870323 {cleave.mem = #cleave<mem fragment>} : !tgraph.tensor<[1, 1, 16, 128], f16>
        %5 = itgraph.mask %4 dim 3 offset "128*r0" bound "k_d1" fill "neg_inf" {cleave.mem = #cleave<mem fragment>} : !tgraph.tensor<[1, 1, 16, 128], f16> -> !tgraph.tensor<[1, 1, 16, 128], f16>
        %6 = tgraph.reduce max %5 dim 3 {cleave.mem = #cleave<mem fragment>} : !tgraph.tensor<[1, 1, 16, 128], f16> -> !tgraph.tensor<[1, 1, 16, 1], f16>
        %7 = tgraph.sub %4, %6 {cleave.mem = #cleave<mem fragment>} : !tgraph.tensor<[1, 1, 16, 128], f16>, !tgraph.tensor<[1, 1, 16, 1], f16> -> !tgraph.tensor<[1, 1, 16, 128], f16>
        %8 = tgraph.exp %7 {cleave.mem = #cleave<mem fragment>} : !tgraph.tensor<[1, 1, 16, 128], f16>
        %v_1 = itgraph.load %v at #itgraph.tmap<[0, 128*r0, 32*p2], [1, 128, 32]> {cleave.mem = #cleave<mem shared>} : !tgraph.tensor<[1, k_d1, 512], f16> -> !tgraph.tensor<[1, 128, 32], f16>
        %9 = tgraph.reshape %v_1 {cleave.mem = #cleave<mem shared>} : !tgraph.tensor<[1, 128, 32], f16> -> !tgraph.tensor<[1, 1, 128, 32], f16>
        %10 = itgraph.mask %8 dim 3 offset "128*r0" bound "k_d1" fill "zero" {cleave.mem = #cleave<mem fragment>} : !tgraph.tensor<[1, 1, 16, 128], f16> -> !tgraph.tensor<[1, 1, 16, 128], f16>
        %11 = tgraph.matmul %10, %9 {cleave.mem = #cleave<mem fragment>} : !tgraph.tensor<[1, 1, 16, 128], f16>, !tgraph.tensor<[1, 1, 128, 32], f16> -> !tgraph.tensor<[1, 1, 16, 32], f16>
        %12 = tgraph.reduce sum %10 dim 3 {cleave.mem = #cleave<mem fragment>} : !tgraph.tensor<[1, 1, 16, 128], f16> -> !tgraph.tensor<[1, 1, 16, 1], f16>
        itgraph.yield %11, %12, %6 : !tgraph.tensor<[1, 1, 16, 32], f16>, !tgraph.tensor<[1, 1, 16, 1], f16>, !tgraph.tensor<[1, 1, 16, 1], f16>
      }
      %13 = tgraph.div %0, %1 {cleave.mem = #cleave<mem fragment>} : !tgraph.tensor<[1, 1, 16, 32], f16>, !tgraph.tensor<[1, 1, 16, 1], f16> -> !tgraph.tensor<[1, 1, 16, 32], f16>
      %14 = tgraph.reshape %13 {cleave.mem = #cleave<mem fragment>} : !tgraph.tensor<[1, 1, 16, 32], f16> -> !tgraph.tensor<[1, 16, 32], f16>
      itgraph.store %14, %out0 at #itgraph.tmap<[0, 16*p1, 32*p2], [1, 16, 32]> : !tgraph.tensor<[1, 16, 32], f16>, !tgraph.tensor<[1, 128, 512], f16>
    }
  }
}
