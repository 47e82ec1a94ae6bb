// cleave-lower-tilelang: the placed FlashAttention kernel of schedule.mlir as a tilelang kernel. Every
// decision is in the IR: the hoisted Q tile copied once into shared memory, a pipelined KV loop, two
// gemms (the P operand cast to an fp16 fragment for 128 rows), warp reductions, and the online softmax
// in FlashAttention-2's form (running max, alpha, P @ V accumulated in place), exp as exp2. The query
// blocks of one batch entry launch next to each other (bx): they read the same K and V (`cleave.raster`).
// P @ V runs one iteration late, beside the next softmax (cleave-overlap-gemms, part of this pass:
// lit_tests/passes/overlap_gemms.mlir).
// RUN: cleave-opt %S/schedule.mlir -p 'cleave-schedule{top-k=1},cleave-place-memory,cleave-lower-tilelang' 2>/dev/null | filecheck %s
// The printer gives the same Python from the lowered IR, from its textual form, and from itgraph directly.
// RUN: cleave-opt %S/schedule.mlir -p 'cleave-schedule{top-k=1},cleave-place-memory' -t tilelang 2>/dev/null > %t.direct.py
// RUN: cleave-opt %S/schedule.mlir -p 'cleave-schedule{top-k=1},cleave-place-memory,cleave-lower-tilelang' 2>/dev/null | cleave-opt --print-op-generic | cleave-opt -t tilelang > %t.lowered.py
// RUN: diff %t.direct.py %t.lowered.py
// RUN: filecheck %s --check-prefix=PY < %t.lowered.py

// CHECK-NOT:  itgraph.kernel
// CHECK:      tilelang.kernel @fa_k0(%q: !tilelang.buffer<[8, 4096, 64], f16, global>, %k: {{.*}}, %v: {{.*}}, %out0: !tilelang.buffer<[8, 4096, 64], f16, global>)
// CHECK-SAME: grid (bx, by) in (32, 8) threads 256 outputs 1
// CHECK-SAME: cleave.schedule_of = @fa
// CHECK-SAME: cleave.input_names = ["q", "k", "v"], cleave.passthrough = []
// CHECK-NEXT:   %[[Q:.*]] = tilelang.alloc_shared : !tilelang.buffer<[128, 64], f16, shared>
// CHECK-NEXT:   %[[O:.*]] = tilelang.alloc_fragment : !tilelang.buffer<[128, 64], f32, fragment>
// CHECK:        %acc_acc = tilelang.alloc_fragment : !tilelang.buffer<[128], f32, fragment>
// CHECK:        tilelang.copy %q at <[by, 128*bx, 0], [1, 128, 64]> to %[[Q]]
// CHECK:        tilelang.fill %acc_acc, -inf
// CHECK-NEXT:   tilelang.clear %[[EH:[a-z_0-9]+]] :
// CHECK-NEXT:   tilelang.pipelined r0 in 32 stages 2 {
// CHECK-NEXT:     tilelang.copy %k at <[by, 128*r0, 0], [1, 128, 64]> to %[[K:[a-z_0-9]+]] :
// CHECK-NEXT:     tilelang.gemm %[[Q]], %[[K]], %[[S:[a-z_0-9]+]] transpose_b clear async policy FullRow
// CHECK-NEXT:     tilelang.copy %v at <[by, 128*((r0 + 31) mod 32), 0], [1, 128, 64]> to %[[V:[a-z_0-9]+]] :
// CHECK-NEXT:     tilelang.gemm %[[EH]], %[[V]], %[[O]] async policy FullRow
// CHECK-NEXT:     tilelang.wait_gemm 1 retires %[[K]]
// CHECK-NEXT:     tilelang.reduce_max %[[S]], %[[RED:.*]] dim 1 clear
// FlashAttention-2's form: the running max right after the chunk max; the body shifts by it
// CHECK-NEXT:     tilelang.parallel (i0) in (128) {
// CHECK-NEXT:       tilelang.load %acc_acc[i0]
// CHECK-NEXT:       tilelang.load %[[RED]][i0]
// CHECK-NEXT:       arith.maximumf
// CHECK-NEXT:       tilelang.store {{.*}}, %[[MNEW:.*]][i0]
// CHECK:            math.exp2
// CHECK-NEXT:       tilelang.store {{.*}}, %alpha[i0]
// CHECK-NEXT:       tilelang.store {{.*}}, %[[RED]][i0]
// CHECK-NEXT:       tilelang.load %[[MNEW]][i0]
// CHECK-NEXT:       tilelang.store {{.*}}, %acc_acc[i0]
// CHECK-NEXT:     }
// CHECK-NOT:      beta
// exp2's argument one FMA (x log2 e - m log2 e), at head dim 64 one block of 8 keys in 8 of it on the FMA
// pipes (cleave-emulate-exp2); the row sum of P and its running update before P @ V
// CHECK:          tilelang.exp2_split %{{.*}} column "i1" every 8 : f32
// CHECK:          tilelang.reduce_sum %[[E:[a-z_0-9]+]], %[[L:[a-z_0-9]+]] dim 1 clear
// CHECK-NEXT:     tilelang.parallel (i0) in (128) {
// CHECK:            tilelang.load %[[L]][i0]
// the output accumulator is rescaled once P @ V of the last iteration is done, then P is cast to fp16
// CHECK:          tilelang.wait_gemm 0 retires %[[V]]
// CHECK-NEXT:     tilelang.parallel (i0, i1) in (128, 64) {
// CHECK:            tilelang.store {{.*}}, %[[O]][i0, i1]
// CHECK:          tilelang.copy %[[E]] to %[[EH]] : !tilelang.buffer<[128, 128], f32, fragment>, !tilelang.buffer<[128, 128], f16, fragment>
// CHECK-NEXT:   }
// CHECK-NEXT:   tilelang.copy %v at <[by, 3968, 0], [1, 128, 64]> to %[[VL:[a-z_0-9]+]] :
// CHECK-NEXT:   tilelang.gemm %[[EH]], %[[VL]], %[[O]] policy FullRow
// CHECK:        tilelang.copy %{{.*}} to %out0 at <[by, 128*bx, 0], [1, 128, 64]>

// PY:      @T.prim_func
// PY-NEXT: def fa_k0(q: T.StridedTensor((8, 4096, 64), (q_stride0, q_stride1, 1), "float16"), k: T.StridedTensor((8, 4096, 64), (k_stride0, k_stride1, 1), "float16"), v: T.StridedTensor((8, 4096, 64), (v_stride0, v_stride1, 1), "float16"), out0: T.StridedTensor((8, 4096, 64), (out0_stride0, out0_stride1, 1), "float16")):
// PY-NEXT:     with T.Kernel(32, 8, threads=256) as (bx, by):
// PY:              for r0 in T.Pipelined(32, num_stages=2):
// PY:                  T.wgmma_gemm(q_1, k_1, s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow, clear_accum=True)
// PY-NEXT:             T.copy(v[by, 128*(((r0 + 31) % 32)):128*(((r0 + 31) % 32)) + 128, 0:64], v_1)
// PY-NEXT:             T.wgmma_gemm(s_h, v_1, o_acc, transpose_B=False, policy=T.GemmWarpPolicy.FullRow)
// PY-NEXT:             T.wait_wgmma(1)
// PY-NEXT:             hold[0] = k_1[0, 0]
// PY:                  m_new[i0] = T.max(acc_acc[i0], red[i0])
// PY-NEXT:             alpha[i0] = T.exp2((acc_acc[i0] - T.if_then_else(m_new[i0] != T.Cast("float32", -T.infinity("float32")), m_new[i0], T.Cast("float32", 0.0))) * 1.4426950408889634)
// PY-NEXT:             red[i0] = T.if_then_else(m_new[i0] != T.Cast("float32", -T.infinity("float32")), m_new[i0], T.Cast("float32", 0.0))
// PY-NEXT:             acc_acc[i0] = m_new[i0]
// PY:                  e2_x = s[i0, i1] * 1.4426950408889634 - red[i0] * 1.4426950408889634
// PY:                  e2 = T.if_then_else(i1 // 8 % 8 == 0, {{.*}}, T.exp2(e2_x))
// PY-NEXT:             s[i0, i1] = e2
// PY:                  T.wait_wgmma(0)
// PY-NEXT:             hold[0] = v_1[0, 0]
// PY:                  o_acc[i0, i1] = o_acc[i0, i1] * alpha[i0]
// PY-NEXT:             T.copy(s, s_h)
// PY-NEXT:         T.copy(v[by, 3968:3968 + 128, 0:64], v_last)
// PY-NEXT:         T.gemm(s_h, v_last, o_acc, transpose_B=False, policy=T.GemmWarpPolicy.FullRow)
