// cleave-whole-small-copies: a pipelined loop's per-step copy that gives each thread under 4 bytes
// (no cp.async: TileLang loads it synchronously, every iteration, behind all the copies in flight)
// is done once, whole, before the loop; the loop's reads index the whole range by the loop variable.
// RUN: cleave-opt %S/Inputs/scaled_projection_loop.mlir -p cleave-whole-small-copies | filecheck %s
// The rewritten kernel still computes its graph:
// RUN: cleave-opt %S/Inputs/scaled_projection_loop.mlir -p cleave-whole-small-copies | cleave-run - | filecheck %s --check-prefix=CMP
// RUN: cleave-opt %S/Inputs/scaled_projection_loop.mlir -p cleave-whole-small-copies -t tilelang | filecheck %s --check-prefix=PY
// Copies the rewrite does not apply to are left in their loops:
// RUN: cleave-opt %s --split-input-file -p cleave-whole-small-copies | filecheck %s --check-prefix=KEEP

// g's [128] halves a K step over 128 threads: 2 bytes each. Whole: 8 KiB, in place of 5 stages' 1280 bytes.
// CHECK:      tilelang.kernel @scaled_proj_k0
// CHECK-SAME: cleave.smem_bytes = 38912 : i64
// CHECK:      %[[G:g_1]] = tilelang.alloc_shared : !tilelang.buffer<[4096], f16, shared>
// CHECK:      tilelang.copy %g at <[0, 0], [1, 4096]> to %[[G]] :
// CHECK-NEXT: tilelang.pipelined r0 in 32 stages 5 {
// CHECK-NEXT:   tilelang.copy %x at <[0, 128*r0], [64, 128]>
// CHECK-NEXT:   tilelang.parallel (i0, i1) in (64, 128) {
// CHECK-NEXT:     tilelang.load %x_1[i0, i1]
// CHECK-NEXT:     tilelang.load %[[G]][128*r0 + i1]
// CHECK-NOT:  tilelang.copy %g

// CMP: @scaled_proj_k0 vs @scaled_proj: agree

// PY:      T.copy(g[0, 0:4096], g_1)
// PY-NEXT: for r0 in T.Pipelined(32, num_stages=5):
// PY:          mul[i0, i1] = x_1[i0, i1] * g_1[i1 + 128*r0]

// A kernel with warp specialization copies g by TMA (asynchronous at any size).
// KEEP-LABEL: @tma_copy
// KEEP:       tilelang.pipelined r0 in 32 stages 2 {
// KEEP-NEXT:    tilelang.copy %g at <[0, 128*r0], [1, 128]> to %g_1
tilelang.kernel @tma_copy(%g: !tilelang.buffer<[1, 4096], f16, global>, %out0: !tilelang.buffer<[128], f32, global>) grid (bx) in (1) threads 128 outputs 1 {
  %acc = tilelang.alloc_fragment : !tilelang.buffer<[128], f32, fragment>
  %g_1 = tilelang.alloc_shared : !tilelang.buffer<[128], f16, shared>
  tilelang.clear %acc : !tilelang.buffer<[128], f32, fragment>
  tilelang.pipelined r0 in 32 stages 2 {
    tilelang.copy %g at <[0, 128*r0], [1, 128]> to %g_1 : !tilelang.buffer<[1, 4096], f16, global>, !tilelang.buffer<[128], f16, shared>
    tilelang.parallel (i0) in (128) {
      %0 = tilelang.load %g_1[i0] : !tilelang.buffer<[128], f16, shared>
      %1 = arith.extf %0 : f16 to f32
      tilelang.store %1, %acc[i0] accumulate : f32, !tilelang.buffer<[128], f32, fragment>
    }
  }
  tilelang.copy %acc to %out0 : !tilelang.buffer<[128], f32, fragment>, !tilelang.buffer<[128], f32, global>
}

// -----

// 512 halves over 128 threads: 8 bytes each, a cp.async.
// KEEP-LABEL: @eight_bytes_a_thread
// KEEP:       tilelang.pipelined r0 in 8 stages 2 {
// KEEP-NEXT:    tilelang.copy %g at <[0, 512*r0], [1, 512]> to %g_1
tilelang.kernel @eight_bytes_a_thread(%g: !tilelang.buffer<[1, 4096], f16, global>, %out0: !tilelang.buffer<[512], f32, global>) grid (bx) in (1) threads 128 outputs 1 attributes {cleave.no_warp_specialization} {
  %acc = tilelang.alloc_fragment : !tilelang.buffer<[512], f32, fragment>
  %g_1 = tilelang.alloc_shared : !tilelang.buffer<[512], f16, shared>
  tilelang.clear %acc : !tilelang.buffer<[512], f32, fragment>
  tilelang.pipelined r0 in 8 stages 2 {
    tilelang.copy %g at <[0, 512*r0], [1, 512]> to %g_1 : !tilelang.buffer<[1, 4096], f16, global>, !tilelang.buffer<[512], f16, shared>
    tilelang.parallel (i0) in (512) {
      %0 = tilelang.load %g_1[i0] : !tilelang.buffer<[512], f16, shared>
      %1 = arith.extf %0 : f16 to f32
      tilelang.store %1, %acc[i0] accumulate : f32, !tilelang.buffer<[512], f32, fragment>
    }
  }
  tilelang.copy %acc to %out0 : !tilelang.buffer<[512], f32, fragment>, !tilelang.buffer<[512], f32, global>
}

// -----

// The whole range, 32768 halves, is more than WHOLE_COPY_MAX_BYTES.
// KEEP-LABEL: @whole_too_large
// KEEP:       tilelang.pipelined r0 in 256 stages 2 {
// KEEP-NEXT:    tilelang.copy %g at <[0, 128*r0], [1, 128]> to %g_1
tilelang.kernel @whole_too_large(%g: !tilelang.buffer<[1, 32768], f16, global>, %out0: !tilelang.buffer<[128], f32, global>) grid (bx) in (1) threads 128 outputs 1 attributes {cleave.no_warp_specialization} {
  %acc = tilelang.alloc_fragment : !tilelang.buffer<[128], f32, fragment>
  %g_1 = tilelang.alloc_shared : !tilelang.buffer<[128], f16, shared>
  tilelang.clear %acc : !tilelang.buffer<[128], f32, fragment>
  tilelang.pipelined r0 in 256 stages 2 {
    tilelang.copy %g at <[0, 128*r0], [1, 128]> to %g_1 : !tilelang.buffer<[1, 32768], f16, global>, !tilelang.buffer<[128], f16, shared>
    tilelang.parallel (i0) in (128) {
      %0 = tilelang.load %g_1[i0] : !tilelang.buffer<[128], f16, shared>
      %1 = arith.extf %0 : f16 to f32
      tilelang.store %1, %acc[i0] accumulate : f32, !tilelang.buffer<[128], f32, fragment>
    }
  }
  tilelang.copy %acc to %out0 : !tilelang.buffer<[128], f32, fragment>, !tilelang.buffer<[128], f32, global>
}

// -----

// The tiles overlap (a step of 64 for a tile of 128): no one range of side-by-side tiles.
// KEEP-LABEL: @overlapping_tiles
// KEEP:       tilelang.pipelined r0 in 32 stages 2 {
// KEEP-NEXT:    tilelang.copy %g at <[0, 64*r0], [1, 128]> to %g_1
tilelang.kernel @overlapping_tiles(%g: !tilelang.buffer<[1, 4096], f16, global>, %out0: !tilelang.buffer<[128], f32, global>) grid (bx) in (1) threads 128 outputs 1 attributes {cleave.no_warp_specialization} {
  %acc = tilelang.alloc_fragment : !tilelang.buffer<[128], f32, fragment>
  %g_1 = tilelang.alloc_shared : !tilelang.buffer<[128], f16, shared>
  tilelang.clear %acc : !tilelang.buffer<[128], f32, fragment>
  tilelang.pipelined r0 in 32 stages 2 {
    tilelang.copy %g at <[0, 64*r0], [1, 128]> to %g_1 : !tilelang.buffer<[1, 4096], f16, global>, !tilelang.buffer<[128], f16, shared>
    tilelang.parallel (i0) in (128) {
      %0 = tilelang.load %g_1[i0] : !tilelang.buffer<[128], f16, shared>
      %1 = arith.extf %0 : f16 to f32
      tilelang.store %1, %acc[i0] accumulate : f32, !tilelang.buffer<[128], f32, fragment>
    }
  }
  tilelang.copy %acc to %out0 : !tilelang.buffer<[128], f32, fragment>, !tilelang.buffer<[128], f32, global>
}
