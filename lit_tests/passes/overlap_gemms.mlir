// cleave-overlap-gemms: in a pipelined loop of two gemms, the second (P @ V) runs one iteration late
// as an async WGMMA, beside the next iteration's softmax: wait(1) lets S = Q K^T finish and keeps
// P @ V running; the work that does not touch P or O runs then; wait(0); O's rescale and P's new
// value last. P starts at 0 (the late gemm at r0 = 0 adds 0 @ V's last tile), V's tile is
// (r0 - 1) mod n, and the last tile's product runs after the loop.
// RUN: cleave-opt %S/Inputs/attention_kv_loop_128.mlir -p cleave-overlap-gemms | filecheck %s
// The rewritten kernel computes its graph (the interpreter runs async gemms to completion):
// RUN: cleave-opt %S/Inputs/attention_kv_loop_128.mlir -p cleave-overlap-gemms | cleave-run - | filecheck %s --check-prefix=CMP
// TileLang: T.wgmma_gemm, T.wait_wgmma, and a read of each retired tile after its wait (TileLang's
// pipeline refills a tile after the last statement that reads it):
// RUN: cleave-opt %S/Inputs/attention_kv_loop_128.mlir -p cleave-overlap-gemms -t tilelang | filecheck %s --check-prefix=PY
// Loops the rewrite does not apply to are left as they are:
// RUN: cleave-opt %s --split-input-file -p cleave-overlap-gemms | filecheck %s --check-prefix=KEEP

// CHECK:      %[[V:v_1]] = tilelang.alloc_shared : !tilelang.buffer<[128, 64], f16, shared>
// CHECK-NEXT: %[[VL:v_last]] = tilelang.alloc_shared : !tilelang.buffer<[128, 64], f16, shared>
// CHECK-NEXT: %[[P:.*]] = tilelang.alloc_fragment : !tilelang.buffer<[128, 128], f16, fragment>
// CHECK:      tilelang.clear %[[P]]
// S's clear is the gemm's own (`clear`: clear_accum=True)
// CHECK-NEXT: tilelang.pipelined r0 in 8 stages 2 {
// CHECK-NEXT:   tilelang.copy %k at <[by, 128*r0, 0], [1, 128, 64]> to %[[K:[a-z_0-9]+]]
// CHECK-NEXT:   tilelang.gemm %q_1, %[[K]], %[[S:[a-z_0-9]+]] transpose_b clear async policy FullRow
// CHECK-NEXT:   tilelang.copy %v at <[by, 128*((r0 + 7) mod 8), 0], [1, 128, 64]> to %[[V]]
// CHECK-NEXT:   tilelang.gemm %[[P]], %[[V]], %[[O:[a-z_0-9]+]] async policy FullRow
// CHECK-NEXT:   tilelang.wait_gemm 1 retires %[[K]]
// CHECK-NEXT:   tilelang.reduce_max %[[S]]
// CHECK:        tilelang.reduce_sum %[[S]]
// CHECK:        tilelang.wait_gemm 0 retires %[[V]]
// CHECK-NEXT:   tilelang.parallel (i0, i1) in (128, 64) {
// CHECK:          tilelang.store {{.*}}, %[[O]][i0, i1]
// CHECK:        tilelang.copy %[[S]] to %[[P]]
// CHECK-NEXT: }
// CHECK-NEXT: tilelang.copy %v at <[by, 896, 0], [1, 128, 64]> to %[[VL]]
// CHECK-NEXT: tilelang.gemm %[[P]], %[[VL]], %[[O]] policy FullRow
// CHECK-NOT:  async

// CMP: @fa_k0 vs @fa: agree

// PY:      hold = T.alloc_local((1,), "float16")
// PY:      for r0 in T.Pipelined(8, num_stages=2):
// PY:          T.wgmma_gemm(q_1, k_1, s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow, clear_accum=True)
// PY-NEXT:     T.copy(v[by, 128*(((r0 + 7) % 8)):128*(((r0 + 7) % 8)) + 128, 0:64], v_1)
// PY-NEXT:     T.wgmma_gemm(s_h, v_1, o_acc, transpose_B=False, policy=T.GemmWarpPolicy.FullRow)
// PY-NEXT:     T.wait_wgmma(1)
// PY-NEXT:     hold[0] = k_1[0, 0]
// PY:          T.wait_wgmma(0)
// PY-NEXT:     hold[0] = v_1[0, 0]
// PY:      T.gemm(s_h, v_last, o_acc, transpose_B=False, policy=T.GemmWarpPolicy.FullRow)

// 64 query rows over 256 threads: no WGMMA form with every warp on its own rows (T.wgmma_gemm would
// not compile).
// KEEP-LABEL: @rows_64
// KEEP-NOT:   async
// KEEP-NOT:   wait_gemm
tilelang.kernel @rows_64(%q: !tilelang.buffer<[64, 64], f16, global>, %k: !tilelang.buffer<[1024, 64], f16, global>, %v: !tilelang.buffer<[1024, 64], f16, global>, %out: !tilelang.buffer<[64, 64], f16, global>) grid (bx) in (1) threads 256 outputs 1 {
  %qs = tilelang.alloc_shared : !tilelang.buffer<[64, 64], f16, shared>
  %ks = tilelang.alloc_shared : !tilelang.buffer<[128, 64], f16, shared>
  %vs = tilelang.alloc_shared : !tilelang.buffer<[128, 64], f16, shared>
  %s = tilelang.alloc_fragment : !tilelang.buffer<[64, 128], f32, fragment>
  %p = tilelang.alloc_fragment : !tilelang.buffer<[64, 128], f16, fragment>
  %o = tilelang.alloc_fragment : !tilelang.buffer<[64, 64], f32, fragment>
  tilelang.copy %q to %qs : !tilelang.buffer<[64, 64], f16, global>, !tilelang.buffer<[64, 64], f16, shared>
  tilelang.clear %o : !tilelang.buffer<[64, 64], f32, fragment>
  tilelang.pipelined r0 in 8 stages 2 {
    tilelang.clear %s : !tilelang.buffer<[64, 128], f32, fragment>
    tilelang.copy %k at <[128*r0, 0], [128, 64]> to %ks : !tilelang.buffer<[1024, 64], f16, global>, !tilelang.buffer<[128, 64], f16, shared>
    tilelang.gemm %qs, %ks, %s transpose_b policy FullRow : !tilelang.buffer<[64, 64], f16, shared>, !tilelang.buffer<[128, 64], f16, shared>, !tilelang.buffer<[64, 128], f32, fragment>
    tilelang.copy %s to %p : !tilelang.buffer<[64, 128], f32, fragment>, !tilelang.buffer<[64, 128], f16, fragment>
    tilelang.copy %v at <[128*r0, 0], [128, 64]> to %vs : !tilelang.buffer<[1024, 64], f16, global>, !tilelang.buffer<[128, 64], f16, shared>
    tilelang.gemm %p, %vs, %o policy FullRow : !tilelang.buffer<[64, 128], f16, fragment>, !tilelang.buffer<[128, 64], f16, shared>, !tilelang.buffer<[64, 64], f32, fragment>
  }
  tilelang.copy %o to %out : !tilelang.buffer<[64, 64], f32, fragment>, !tilelang.buffer<[64, 64], f16, global>
}

// -----

// P is read after the loop: the late gemm would leave it one iteration behind there.
// KEEP-LABEL: @p_read_after
// KEEP-NOT:   async
tilelang.kernel @p_read_after(%q: !tilelang.buffer<[128, 64], f16, global>, %k: !tilelang.buffer<[1024, 64], f16, global>, %v: !tilelang.buffer<[1024, 64], f16, global>, %out: !tilelang.buffer<[128, 64], f16, global>) grid (bx) in (1) threads 256 outputs 1 {
  %qs = tilelang.alloc_shared : !tilelang.buffer<[128, 64], f16, shared>
  %ks = tilelang.alloc_shared : !tilelang.buffer<[128, 64], f16, shared>
  %vs = tilelang.alloc_shared : !tilelang.buffer<[128, 64], f16, shared>
  %s = tilelang.alloc_fragment : !tilelang.buffer<[128, 128], f32, fragment>
  %p = tilelang.alloc_fragment : !tilelang.buffer<[128, 128], f16, fragment>
  %o = tilelang.alloc_fragment : !tilelang.buffer<[128, 64], f32, fragment>
  tilelang.copy %q to %qs : !tilelang.buffer<[128, 64], f16, global>, !tilelang.buffer<[128, 64], f16, shared>
  tilelang.clear %o : !tilelang.buffer<[128, 64], f32, fragment>
  tilelang.pipelined r0 in 8 stages 2 {
    tilelang.clear %s : !tilelang.buffer<[128, 128], f32, fragment>
    tilelang.copy %k at <[128*r0, 0], [128, 64]> to %ks : !tilelang.buffer<[1024, 64], f16, global>, !tilelang.buffer<[128, 64], f16, shared>
    tilelang.gemm %qs, %ks, %s transpose_b policy FullRow : !tilelang.buffer<[128, 64], f16, shared>, !tilelang.buffer<[128, 64], f16, shared>, !tilelang.buffer<[128, 128], f32, fragment>
    tilelang.copy %s to %p : !tilelang.buffer<[128, 128], f32, fragment>, !tilelang.buffer<[128, 128], f16, fragment>
    tilelang.copy %v at <[128*r0, 0], [128, 64]> to %vs : !tilelang.buffer<[1024, 64], f16, global>, !tilelang.buffer<[128, 64], f16, shared>
    tilelang.gemm %p, %vs, %o policy FullRow : !tilelang.buffer<[128, 128], f16, fragment>, !tilelang.buffer<[128, 64], f16, shared>, !tilelang.buffer<[128, 64], f32, fragment>
  }
  tilelang.copy %p to %s : !tilelang.buffer<[128, 128], f16, fragment>, !tilelang.buffer<[128, 128], f32, fragment>
  tilelang.copy %o to %out : !tilelang.buffer<[128, 64], f32, fragment>, !tilelang.buffer<[128, 64], f16, global>
}

// -----

// The work that touches O (a row sum of O into %a) comes before work that reads %a and touches
// neither P nor O: running it after wait(0) would reorder the two.
// KEEP-LABEL: @order_kept
// KEEP-NOT:   async
tilelang.kernel @order_kept(%q: !tilelang.buffer<[128, 64], f16, global>, %k: !tilelang.buffer<[1024, 64], f16, global>, %v: !tilelang.buffer<[1024, 64], f16, global>, %out: !tilelang.buffer<[128, 64], f16, global>) grid (bx) in (1) threads 256 outputs 1 {
  %qs = tilelang.alloc_shared : !tilelang.buffer<[128, 64], f16, shared>
  %ks = tilelang.alloc_shared : !tilelang.buffer<[128, 64], f16, shared>
  %vs = tilelang.alloc_shared : !tilelang.buffer<[128, 64], f16, shared>
  %s = tilelang.alloc_fragment : !tilelang.buffer<[128, 128], f32, fragment>
  %p = tilelang.alloc_fragment : !tilelang.buffer<[128, 128], f16, fragment>
  %o = tilelang.alloc_fragment : !tilelang.buffer<[128, 64], f32, fragment>
  %a = tilelang.alloc_fragment : !tilelang.buffer<[128], f32, fragment>
  tilelang.copy %q to %qs : !tilelang.buffer<[128, 64], f16, global>, !tilelang.buffer<[128, 64], f16, shared>
  tilelang.clear %o : !tilelang.buffer<[128, 64], f32, fragment>
  tilelang.pipelined r0 in 8 stages 2 {
    tilelang.clear %s : !tilelang.buffer<[128, 128], f32, fragment>
    tilelang.copy %k at <[128*r0, 0], [128, 64]> to %ks : !tilelang.buffer<[1024, 64], f16, global>, !tilelang.buffer<[128, 64], f16, shared>
    tilelang.gemm %qs, %ks, %s transpose_b policy FullRow : !tilelang.buffer<[128, 64], f16, shared>, !tilelang.buffer<[128, 64], f16, shared>, !tilelang.buffer<[128, 128], f32, fragment>
    tilelang.reduce_sum %o, %a dim 1 clear : !tilelang.buffer<[128, 64], f32, fragment>, !tilelang.buffer<[128], f32, fragment>
    tilelang.parallel (i0, i1) in (128, 128) {
      %x = tilelang.load %s[i0, i1] : !tilelang.buffer<[128, 128], f32, fragment>
      %y = tilelang.load %a[i0] : !tilelang.buffer<[128], f32, fragment>
      %z = arith.subf %x, %y : f32
      tilelang.store %z, %s[i0, i1] : f32, !tilelang.buffer<[128, 128], f32, fragment>
    }
    tilelang.copy %s to %p : !tilelang.buffer<[128, 128], f32, fragment>, !tilelang.buffer<[128, 128], f16, fragment>
    tilelang.copy %v at <[128*r0, 0], [128, 64]> to %vs : !tilelang.buffer<[1024, 64], f16, global>, !tilelang.buffer<[128, 64], f16, shared>
    tilelang.gemm %p, %vs, %o policy FullRow : !tilelang.buffer<[128, 128], f16, fragment>, !tilelang.buffer<[128, 64], f16, shared>, !tilelang.buffer<[128, 64], f32, fragment>
  }
  tilelang.copy %o to %out : !tilelang.buffer<[128, 64], f32, fragment>, !tilelang.buffer<[128, 64], f16, global>
}

// -----

// Kernels compiled without TileLang's warp specialization keep synchronous gemms.
// KEEP-LABEL: @no_warp_specialization
// KEEP-NOT:   async
tilelang.kernel @no_warp_specialization(%q: !tilelang.buffer<[128, 64], f16, global>, %k: !tilelang.buffer<[1024, 64], f16, global>, %v: !tilelang.buffer<[1024, 64], f16, global>, %out: !tilelang.buffer<[128, 64], f16, global>) grid (bx) in (1) threads 256 outputs 1 attributes {cleave.no_warp_specialization} {
  %qs = tilelang.alloc_shared : !tilelang.buffer<[128, 64], f16, shared>
  %ks = tilelang.alloc_shared : !tilelang.buffer<[128, 64], f16, shared>
  %vs = tilelang.alloc_shared : !tilelang.buffer<[128, 64], f16, shared>
  %s = tilelang.alloc_fragment : !tilelang.buffer<[128, 128], f32, fragment>
  %p = tilelang.alloc_fragment : !tilelang.buffer<[128, 128], f16, fragment>
  %o = tilelang.alloc_fragment : !tilelang.buffer<[128, 64], f32, fragment>
  tilelang.copy %q to %qs : !tilelang.buffer<[128, 64], f16, global>, !tilelang.buffer<[128, 64], f16, shared>
  tilelang.clear %o : !tilelang.buffer<[128, 64], f32, fragment>
  tilelang.pipelined r0 in 8 stages 2 {
    tilelang.clear %s : !tilelang.buffer<[128, 128], f32, fragment>
    tilelang.copy %k at <[128*r0, 0], [128, 64]> to %ks : !tilelang.buffer<[1024, 64], f16, global>, !tilelang.buffer<[128, 64], f16, shared>
    tilelang.gemm %qs, %ks, %s transpose_b policy FullRow : !tilelang.buffer<[128, 64], f16, shared>, !tilelang.buffer<[128, 64], f16, shared>, !tilelang.buffer<[128, 128], f32, fragment>
    tilelang.copy %s to %p : !tilelang.buffer<[128, 128], f32, fragment>, !tilelang.buffer<[128, 128], f16, fragment>
    tilelang.copy %v at <[128*r0, 0], [128, 64]> to %vs : !tilelang.buffer<[1024, 64], f16, global>, !tilelang.buffer<[128, 64], f16, shared>
    tilelang.gemm %p, %vs, %o policy FullRow : !tilelang.buffer<[128, 128], f16, fragment>, !tilelang.buffer<[128, 64], f16, shared>, !tilelang.buffer<[128, 64], f32, fragment>
  }
  tilelang.copy %o to %out : !tilelang.buffer<[128, 64], f32, fragment>, !tilelang.buffer<[128, 64], f16, global>
}

// -----

// Four KV tiles: the one tile more that the rewrite loads per block is not paid back (MIN_TRIPS).
// KEEP-LABEL: @few_trips
// KEEP-NOT:   async
tilelang.kernel @few_trips(%q: !tilelang.buffer<[128, 64], f16, global>, %k: !tilelang.buffer<[512, 64], f16, global>, %v: !tilelang.buffer<[512, 64], f16, global>, %out: !tilelang.buffer<[128, 64], f16, global>) grid (bx) in (1) threads 256 outputs 1 {
  %qs = tilelang.alloc_shared : !tilelang.buffer<[128, 64], f16, shared>
  %ks = tilelang.alloc_shared : !tilelang.buffer<[128, 64], f16, shared>
  %vs = tilelang.alloc_shared : !tilelang.buffer<[128, 64], f16, shared>
  %s = tilelang.alloc_fragment : !tilelang.buffer<[128, 128], f32, fragment>
  %p = tilelang.alloc_fragment : !tilelang.buffer<[128, 128], f16, fragment>
  %o = tilelang.alloc_fragment : !tilelang.buffer<[128, 64], f32, fragment>
  tilelang.copy %q to %qs : !tilelang.buffer<[128, 64], f16, global>, !tilelang.buffer<[128, 64], f16, shared>
  tilelang.clear %o : !tilelang.buffer<[128, 64], f32, fragment>
  tilelang.pipelined r0 in 4 stages 2 {
    tilelang.clear %s : !tilelang.buffer<[128, 128], f32, fragment>
    tilelang.copy %k at <[128*r0, 0], [128, 64]> to %ks : !tilelang.buffer<[512, 64], f16, global>, !tilelang.buffer<[128, 64], f16, shared>
    tilelang.gemm %qs, %ks, %s transpose_b policy FullRow : !tilelang.buffer<[128, 64], f16, shared>, !tilelang.buffer<[128, 64], f16, shared>, !tilelang.buffer<[128, 128], f32, fragment>
    tilelang.copy %s to %p : !tilelang.buffer<[128, 128], f32, fragment>, !tilelang.buffer<[128, 128], f16, fragment>
    tilelang.copy %v at <[128*r0, 0], [128, 64]> to %vs : !tilelang.buffer<[512, 64], f16, global>, !tilelang.buffer<[128, 64], f16, shared>
    tilelang.gemm %p, %vs, %o policy FullRow : !tilelang.buffer<[128, 128], f16, fragment>, !tilelang.buffer<[128, 64], f16, shared>, !tilelang.buffer<[128, 64], f32, fragment>
  }
  tilelang.copy %o to %out : !tilelang.buffer<[128, 64], f32, fragment>, !tilelang.buffer<[128, 64], f16, global>
}

// -----

// The positive control for the KEEP cases: the same loop as @p_read_after without the read after it.
// KEEP-LABEL: @applies
// KEEP:       tilelang.gemm %qs, %ks, %s transpose_b clear async policy FullRow
// KEEP-NEXT:  tilelang.copy %v at <[128*((r0 + 7) mod 8), 0], [128, 64]> to %vs
// KEEP-NEXT:  tilelang.gemm %p, %vs, %o async policy FullRow
// KEEP-NEXT:  tilelang.wait_gemm 1 retires %ks
// KEEP-NEXT:  tilelang.wait_gemm 0 retires %vs
// KEEP-NEXT:  tilelang.copy %s to %p
tilelang.kernel @applies(%q: !tilelang.buffer<[128, 64], f16, global>, %k: !tilelang.buffer<[1024, 64], f16, global>, %v: !tilelang.buffer<[1024, 64], f16, global>, %out: !tilelang.buffer<[128, 64], f16, global>) grid (bx) in (1) threads 256 outputs 1 {
  %qs = tilelang.alloc_shared : !tilelang.buffer<[128, 64], f16, shared>
  %ks = tilelang.alloc_shared : !tilelang.buffer<[128, 64], f16, shared>
  %vs = tilelang.alloc_shared : !tilelang.buffer<[128, 64], f16, shared>
  %s = tilelang.alloc_fragment : !tilelang.buffer<[128, 128], f32, fragment>
  %p = tilelang.alloc_fragment : !tilelang.buffer<[128, 128], f16, fragment>
  %o = tilelang.alloc_fragment : !tilelang.buffer<[128, 64], f32, fragment>
  tilelang.copy %q to %qs : !tilelang.buffer<[128, 64], f16, global>, !tilelang.buffer<[128, 64], f16, shared>
  tilelang.clear %o : !tilelang.buffer<[128, 64], f32, fragment>
  tilelang.pipelined r0 in 8 stages 2 {
    tilelang.clear %s : !tilelang.buffer<[128, 128], f32, fragment>
    tilelang.copy %k at <[128*r0, 0], [128, 64]> to %ks : !tilelang.buffer<[1024, 64], f16, global>, !tilelang.buffer<[128, 64], f16, shared>
    tilelang.gemm %qs, %ks, %s transpose_b policy FullRow : !tilelang.buffer<[128, 64], f16, shared>, !tilelang.buffer<[128, 64], f16, shared>, !tilelang.buffer<[128, 128], f32, fragment>
    tilelang.copy %s to %p : !tilelang.buffer<[128, 128], f32, fragment>, !tilelang.buffer<[128, 128], f16, fragment>
    tilelang.copy %v at <[128*r0, 0], [128, 64]> to %vs : !tilelang.buffer<[1024, 64], f16, global>, !tilelang.buffer<[128, 64], f16, shared>
    tilelang.gemm %p, %vs, %o policy FullRow : !tilelang.buffer<[128, 128], f16, fragment>, !tilelang.buffer<[128, 64], f16, shared>, !tilelang.buffer<[128, 64], f32, fragment>
  }
  tilelang.copy %o to %out : !tilelang.buffer<[128, 64], f32, fragment>, !tilelang.buffer<[128, 64], f16, global>
}
