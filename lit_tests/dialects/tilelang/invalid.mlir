// RUN: cleave-opt %s --split-input-file --verify-diagnostics | filecheck %s
// One bad kernel per chunk; each error names what is wrong. Every chunk must fail: the CHECK-NEXT
// chain leaves no room for a chunk that verifies (it would print a module between the errors).

tilelang.kernel @copy_shape(%x: !tilelang.buffer<[128, 64], f16, global>, %y: !tilelang.buffer<[128, 64], f16, global>) grid (bx) in (2) threads 128 outputs 1 {
  %s = tilelang.alloc_shared : !tilelang.buffer<[64, 32], f16, shared>
  tilelang.copy %x at <[64*bx, 0], [64, 64]> to %s : !tilelang.buffer<[128, 64], f16, global>, !tilelang.buffer<[64, 32], f16, shared>
}

// CHECK: error: tilelang.copy: source [64, 64] and destination [64, 32] differ in shape

// -----

tilelang.kernel @gemm_b_fragment(%x: !tilelang.buffer<[64, 64], f16, global>) grid (bx) in (1) threads 128 outputs 1 {
  %a = tilelang.alloc_shared : !tilelang.buffer<[64, 64], f16, shared>
  %b = tilelang.alloc_fragment : !tilelang.buffer<[64, 64], f16, fragment>
  %c = tilelang.alloc_fragment : !tilelang.buffer<[64, 64], f32, fragment>
  tilelang.gemm %a, %b, %c policy FullRow : !tilelang.buffer<[64, 64], f16, shared>, !tilelang.buffer<[64, 64], f16, fragment>, !tilelang.buffer<[64, 64], f32, fragment>
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: tilelang.gemm: B operand must be in shared memory, got a fragment buffer

// -----

tilelang.kernel @gemm_dims(%x: !tilelang.buffer<[64, 64], f16, global>) grid (bx) in (1) threads 128 outputs 1 {
  %a = tilelang.alloc_shared : !tilelang.buffer<[64, 32], f16, shared>
  %b = tilelang.alloc_shared : !tilelang.buffer<[64, 16], f16, shared>
  %c = tilelang.alloc_fragment : !tilelang.buffer<[64, 16], f32, fragment>
  tilelang.gemm %a, %b, %c transpose_b policy FullRow : !tilelang.buffer<[64, 32], f16, shared>, !tilelang.buffer<[64, 16], f16, shared>, !tilelang.buffer<[64, 16], f32, fragment>
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: tilelang.gemm: A [64, 32] and B [64, 16] (transpose_b) differ in the contracted dim

// -----

tilelang.kernel @gemm_transposed_a_fragment(%x: !tilelang.buffer<[64, 64], f16, global>) grid (bx) in (1) threads 128 outputs 1 {
  %a = tilelang.alloc_fragment : !tilelang.buffer<[32, 64], f16, fragment>
  %b = tilelang.alloc_shared : !tilelang.buffer<[32, 16], f16, shared>
  %c = tilelang.alloc_fragment : !tilelang.buffer<[64, 16], f32, fragment>
  tilelang.gemm %a, %b, %c transpose_a policy FullRow : !tilelang.buffer<[32, 64], f16, fragment>, !tilelang.buffer<[32, 16], f16, shared>, !tilelang.buffer<[64, 16], f32, fragment>
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: tilelang.gemm: a transposed A operand must be in shared memory, got a fragment buffer

// -----

tilelang.kernel @alloc_scope(%x: !tilelang.buffer<[64], f32, global>) grid (bx) in (1) threads 128 outputs 1 {
  %a = tilelang.alloc_shared : !tilelang.buffer<[64], f32, fragment>
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: tilelang.alloc_shared: result must be a shared buffer, got a fragment one

// -----

tilelang.kernel @unknown_var(%x: !tilelang.buffer<[128, 64], f16, global>, %y: !tilelang.buffer<[128, 64], f16, global>) grid (bx) in (2) threads 128 outputs 1 {
  %s = tilelang.alloc_shared : !tilelang.buffer<[64, 64], f16, shared>
  tilelang.copy %x at <[64*by, 0], [64, 64]> to %s : !tilelang.buffer<[128, 64], f16, global>, !tilelang.buffer<[64, 64], f16, shared>
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: tilelang.copy: source region uses unknown variable(s) by

// -----

tilelang.kernel @store_type(%x: !tilelang.buffer<[64], f32, global>) grid (bx) in (1) threads 128 outputs 1 {
  %f = tilelang.alloc_fragment : !tilelang.buffer<[64], f32, fragment>
  %h = tilelang.alloc_fragment : !tilelang.buffer<[64], f16, fragment>
  tilelang.parallel (i0) in (64) {
    %v = tilelang.load %h[i0] : !tilelang.buffer<[64], f16, fragment>
    tilelang.store %v, %f[i0] : f16, !tilelang.buffer<[64], f32, fragment>
  }
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: tilelang.store: value type f16 differs from the buffer's f32

// -----

tilelang.kernel @index_rank(%x: !tilelang.buffer<[64], f32, global>) grid (bx) in (1) threads 128 outputs 1 {
  %f = tilelang.alloc_fragment : !tilelang.buffer<[64, 8], f32, fragment>
  tilelang.parallel (i0) in (64) {
    %v = tilelang.load %f[i0] : !tilelang.buffer<[64, 8], f32, fragment>
  }
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: tilelang.load: 1 indices for a rank-2 buffer [64, 8]

// -----

tilelang.kernel @reduce_shape(%x: !tilelang.buffer<[64], f32, global>) grid (bx) in (1) threads 128 outputs 1 {
  %s = tilelang.alloc_fragment : !tilelang.buffer<[64, 32], f32, fragment>
  %r = tilelang.alloc_fragment : !tilelang.buffer<[32], f32, fragment>
  tilelang.reduce_sum %s, %r dim 1 clear : !tilelang.buffer<[64, 32], f32, fragment>, !tilelang.buffer<[32], f32, fragment>
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: tilelang.reduce_sum: destination is [32], reducing dim 1 of [64, 32] gives [64]

// -----

tilelang.kernel @grid_vars(%x: !tilelang.buffer<[64], f32, global>) grid (by) in (1) threads 128 outputs 1 {
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: tilelang.kernel @grid_vars: the grid variables must be (bx), (bx, by) or (bx, by, bz), got (by)

// -----

tilelang.kernel @shared_symbolic(%x: !tilelang.buffer<[L], f32, global>) grid (bx) in (1) threads 128 outputs 1 {
  %s = tilelang.alloc_shared : !tilelang.buffer<[L], f32, shared>
}

// CHECK-NEXT: -----
// CHECK-NEXT: tilelang.buffer: a shared buffer needs a static shape, got [L]

// -----

// The warp policy is an enum attribute: a string (in generic form) is named with the accepted values.
"tilelang.kernel"() <{sym_name = "policy_string", grid_vars = ["bx"], grid = [#cleave.expr<1>], threads = 128 : i64, num_outputs = 1 : i64}> ({
^bb0(%x: !tilelang.buffer<[64, 64], f16, global>):
  %a = "tilelang.alloc_shared"() : () -> !tilelang.buffer<[64, 64], f16, shared>
  %c = "tilelang.alloc_fragment"() : () -> !tilelang.buffer<[64, 64], f32, fragment>
  "tilelang.gemm"(%a, %a, %c) <{policy = "FullRow"}> : (!tilelang.buffer<[64, 64], f16, shared>, !tilelang.buffer<[64, 64], f16, shared>, !tilelang.buffer<[64, 64], f32, fragment>) -> ()
}) : () -> ()

// CHECK-NEXT: -----
// CHECK-NEXT: error: tilelang.gemm: policy must be one of Square, FullRow, FullCol, got "FullRow"

// -----

// Loop extents are `cleave.expr` attributes, not strings.
"tilelang.kernel"() <{sym_name = "extent_string", grid_vars = ["bx"], grid = [#cleave.expr<1>], threads = 128 : i64, num_outputs = 1 : i64}> ({
^bb0(%x: !tilelang.buffer<[64], f32, global>):
  "tilelang.serial"() <{var = "kk", extent = "4"}> ({
  ^bb1:
  }) : () -> ()
}) : () -> ()

// CHECK-NEXT: -----
// CHECK-NEXT: error: "4" should be of base attribute cleave.expr

// -----

// An unrolled loop is written out when TileLang compiles it: its extent must be a constant.
"tilelang.kernel"() <{sym_name = "unroll_symbolic", grid_vars = ["bx"], grid = [#cleave.expr<1>], threads = 128 : i64, num_outputs = 1 : i64}> ({
^bb0(%x: !tilelang.buffer<[L], f32, global>):
  "tilelang.serial"() <{var = "kk", extent = #cleave.expr<L>, unroll}> ({
  ^bb1:
  }) : () -> ()
}) : () -> ()

// CHECK-NEXT: -----
// CHECK-NEXT: error: tilelang.serial: an unrolled loop needs a constant extent, not L

// -----

// A wait retires shared tiles (what TileLang's producer refills); a fragment is the threads' own.
tilelang.kernel @wait_retires_fragment(%x: !tilelang.buffer<[64, 64], f16, global>) grid (bx) in (1) threads 128 outputs 1 {
  %c = tilelang.alloc_fragment : !tilelang.buffer<[64, 64], f32, fragment>
  tilelang.wait_gemm 0 retires %c : !tilelang.buffer<[64, 64], f32, fragment>
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: tilelang.wait_gemm: retires shared tiles, got a fragment buffer

// -----

// The wait for prior kernels comes before any read of global memory: first after the allocations.
tilelang.kernel @wait_prior_grids_late(%x: !tilelang.buffer<[64, 64], f16, global>) grid (bx) in (1) threads 128 outputs 1 {
  %c = tilelang.alloc_fragment : !tilelang.buffer<[64, 64], f32, fragment>
  tilelang.clear %c : !tilelang.buffer<[64, 64], f32, fragment>
  tilelang.wait_prior_grids
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: tilelang.wait_prior_grids: must come before every statement but allocations, found tilelang.clear before it

// -----

// 16 row maxima on 128 threads: TileLang gives each row several threads, which would read and
// overwrite the same shared element (compute-sanitizer racecheck found it in MLA decode's KV loop).
tilelang.kernel @replicated_shared_update(%x: !tilelang.buffer<[16], f32, global>) grid (bx) in (1) threads 128 outputs 1 {
  %ms = tilelang.alloc_shared : !tilelang.buffer<[16], f32, shared>
  %acc = tilelang.alloc_fragment : !tilelang.buffer<[16], f32, fragment>
  tilelang.parallel (i0) in (16) {
    %a = tilelang.load %acc[i0] : !tilelang.buffer<[16], f32, fragment>
    %m = tilelang.load %ms[i0] : !tilelang.buffer<[16], f32, shared>
    %n = arith.maximumf %a, %m : f32
    tilelang.store %n, %ms[i0] : f32, !tilelang.buffer<[16], f32, shared>
  }
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: tilelang.kernel @replicated_shared_update: a tilelang.parallel of 16 elements on 128 threads reads and writes the shared buffer ms: threads that hold the same element race (write the new value into a fragment, then copy it)

// -----

// x's tile, copied without TMA, is read by the gate's gemm and, after the up weight's copy, by the
// up's: TileLang's warp-specialized pipeline refills it after the first reader (wrong results for
// swiglu on the H200). Without warp specialization (`cleave.no_warp_specialization`) it verifies.
tilelang.kernel @released_before_read(%x: !tilelang.buffer<[7, 1024], f16, global>, %wg: !tilelang.buffer<[1024, 64], f16, global>, %wu: !tilelang.buffer<[1024, 64], f16, global>, %out0: !tilelang.buffer<[7, 64], f16, global>) grid (bx) in (1) threads 128 outputs 1 {
  %xs = tilelang.alloc_shared : !tilelang.buffer<[64, 128], f16, shared>
  %gs = tilelang.alloc_shared : !tilelang.buffer<[128, 64], f16, shared>
  %us = tilelang.alloc_shared : !tilelang.buffer<[128, 64], f16, shared>
  %g = tilelang.alloc_fragment : !tilelang.buffer<[64, 64], f32, fragment>
  %u = tilelang.alloc_fragment : !tilelang.buffer<[64, 64], f32, fragment>
  tilelang.pipelined r0 in 8 stages 2 {
    tilelang.copy %x at <[0, 128*r0], [64, 128]> to %xs no_tma : !tilelang.buffer<[7, 1024], f16, global>, !tilelang.buffer<[64, 128], f16, shared>
    tilelang.copy %wg at <[128*r0, 0], [128, 64]> to %gs : !tilelang.buffer<[1024, 64], f16, global>, !tilelang.buffer<[128, 64], f16, shared>
    tilelang.gemm %xs, %gs, %g policy FullRow : !tilelang.buffer<[64, 128], f16, shared>, !tilelang.buffer<[128, 64], f16, shared>, !tilelang.buffer<[64, 64], f32, fragment>
    tilelang.copy %wu at <[128*r0, 0], [128, 64]> to %us : !tilelang.buffer<[1024, 64], f16, global>, !tilelang.buffer<[128, 64], f16, shared>
    tilelang.gemm %xs, %us, %u policy FullRow : !tilelang.buffer<[64, 128], f16, shared>, !tilelang.buffer<[128, 64], f16, shared>, !tilelang.buffer<[64, 64], f32, fragment>
  }
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: tilelang.kernel @released_before_read: a tilelang.pipelined loop reads the shared buffer xs, copied without TMA, in several statements or before and after another copy: TileLang's warp-specialized pipeline hands it back to its producer too early (mark the kernel cleave.no_warp_specialization, or copy it by TMA)

// -----

// x's tile, copied without TMA, is read by the gemm and then by the sum of its squares, both after
// the weight's copy: the pipeline releases it after the gemm while the sum still reads it
// (rmsnorm_matmul T=5's one kernel: 8 racecheck errors on the H200, none without warp specialization).
tilelang.kernel @read_twice(%x: !tilelang.buffer<[5, 1024], f16, global>, %w: !tilelang.buffer<[1024, 32], f16, global>, %out0: !tilelang.buffer<[5, 32], f16, global>) grid (bx) in (1) threads 128 outputs 1 {
  %xs = tilelang.alloc_shared : !tilelang.buffer<[64, 128], f16, shared>
  %ws = tilelang.alloc_shared : !tilelang.buffer<[128, 32], f16, shared>
  %acc = tilelang.alloc_fragment : !tilelang.buffer<[64, 32], f32, fragment>
  %sq = tilelang.alloc_fragment : !tilelang.buffer<[64, 128], f32, fragment>
  tilelang.pipelined r0 in 8 stages 2 {
    tilelang.copy %x at <[0, 128*r0], [64, 128]> to %xs no_tma : !tilelang.buffer<[5, 1024], f16, global>, !tilelang.buffer<[64, 128], f16, shared>
    tilelang.copy %w at <[128*r0, 0], [128, 32]> to %ws : !tilelang.buffer<[1024, 32], f16, global>, !tilelang.buffer<[128, 32], f16, shared>
    tilelang.gemm %xs, %ws, %acc policy FullRow : !tilelang.buffer<[64, 128], f16, shared>, !tilelang.buffer<[128, 32], f16, shared>, !tilelang.buffer<[64, 32], f32, fragment>
    tilelang.parallel (i0, i1) in (64, 128) {
      %v = tilelang.load %xs[i0, i1] : !tilelang.buffer<[64, 128], f16, shared>
      %f = arith.extf %v : f16 to f32
      %p = arith.mulf %f, %f : f32
      tilelang.store %p, %sq[i0, i1] : f32, !tilelang.buffer<[64, 128], f32, fragment>
    }
  }
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: tilelang.kernel @read_twice: a tilelang.pipelined loop reads the shared buffer xs, copied without TMA, in several statements or before and after another copy: TileLang's warp-specialized pipeline hands it back to its producer too early (mark the kernel cleave.no_warp_specialization, or copy it by TMA)

// -----

tilelang.kernel @exp2_split_column(%x: !tilelang.buffer<[64, 64], f32, global>) grid (bx) in (1) threads 128 outputs 1 {
  %s = tilelang.alloc_fragment : !tilelang.buffer<[64, 64], f32, fragment>
  tilelang.parallel (i0, i1) in (64, 64) {
    %v = tilelang.load %s[i0, i1] : !tilelang.buffer<[64, 64], f32, fragment>
    %e = tilelang.exp2_split %v column "j" every 4 : f32
    tilelang.store %e, %s[i0, i1] : f32, !tilelang.buffer<[64, 64], f32, fragment>
  }
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: tilelang.exp2_split: column j is not a variable of its T.Parallel loop ['i0', 'i1']
