// RUN: cleave-opt %s | filecheck %s
// RUN: cleave-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: ROUNDTRIP
// RUN: cleave-opt %s -t tilelang | filecheck %s --check-prefix=PY

// Index expressions are `cleave.expr` attributes (printed bare in the custom syntax, canonicalized:
// `bx*64` prints `64*bx`); the gemm warp policy is an enum attribute (the quoted form of older files
// still parses and prints bare).

// CHECK:      grid (bx) in (L ceildiv 64)
// CHECK:      tilelang.copy %x at <[64*bx, 0], [64, 64]> to
// CHECK:      tilelang.gemm %{{.*}}, %{{.*}}, %{{.*}} transpose_b policy Square :
// CHECK-NEXT: tilelang.gemm %{{.*}}, %{{.*}}, %{{.*}} policy FullCol :
// CHECK-NEXT: tilelang.parallel (i0, i1) in (64, 64) {
// CHECK-NEXT:   %{{.*}} = tilelang.load %{{.*}}[i0, i1] :
// CHECK-NEXT:   %{{.*}} = tilelang.index_below 64*bx + i0 < L

// GENERIC:      "tilelang.kernel"() <{sym_name = "masked", grid_vars = ["bx"], grid = [#cleave.expr<L ceildiv 64>], threads = 128 : i64, num_outputs = 1 : i64}>
// GENERIC:      "tilelang.copy"(%x, %xs) <{src_region = #tilelang.region<[64*bx, 0], [64, 64]>}>
// GENERIC:      "tilelang.gemm"(%xs, %ws, %acc) <{transpose_b, policy = #tilelang<policy Square>}>
// GENERIC-NEXT: "tilelang.gemm"(%xs, %ws, %acc) <{policy = #tilelang<policy FullCol>}>
// GENERIC-NEXT: "tilelang.parallel"() <{vars = ["i0", "i1"], extents = [#cleave.expr<64>, #cleave.expr<64>]}>
// GENERIC-NEXT:   "tilelang.load"(%acc) <{indices = [#cleave.expr<i0>, #cleave.expr<i1>]}>
// GENERIC-NEXT:   "tilelang.index_below"() <{index = #cleave.expr<64*bx + i0>, bound = #cleave.expr<L>}>

// PY:      with T.Kernel(T.ceildiv(L, 64), threads=128) as (bx,):
// PY:      T.gemm(xs, ws, acc, transpose_B=True, policy=T.GemmWarpPolicy.Square)
// PY-NEXT: T.gemm(xs, ws, acc, transpose_B=False, policy=T.GemmWarpPolicy.FullCol)
// PY-NEXT: for i0, i1 in T.Parallel(64, 64):
// PY-NEXT:     out[i0, i1] = T.if_then_else(64*bx + i0 < L, acc[i0, i1], 0.0)

tilelang.kernel @masked(%x: !tilelang.buffer<[L, 64], f16, global>, %w: !tilelang.buffer<[64, 64], f16, global>, %y: !tilelang.buffer<[L, 64], f16, global>) grid (bx) in (L ceildiv 64) threads 128 outputs 1 {
  %xs = tilelang.alloc_shared : !tilelang.buffer<[64, 64], f16, shared>
  %ws = tilelang.alloc_shared : !tilelang.buffer<[64, 64], f16, shared>
  %acc = tilelang.alloc_fragment : !tilelang.buffer<[64, 64], f32, fragment>
  %out = tilelang.alloc_fragment : !tilelang.buffer<[64, 64], f32, fragment>
  tilelang.copy %x at <[bx*64, 0], [64, 64]> to %xs : !tilelang.buffer<[L, 64], f16, global>, !tilelang.buffer<[64, 64], f16, shared>
  tilelang.copy %w to %ws : !tilelang.buffer<[64, 64], f16, global>, !tilelang.buffer<[64, 64], f16, shared>
  tilelang.clear %acc : !tilelang.buffer<[64, 64], f32, fragment>
  tilelang.gemm %xs, %ws, %acc transpose_b policy "Square" : !tilelang.buffer<[64, 64], f16, shared>, !tilelang.buffer<[64, 64], f16, shared>, !tilelang.buffer<[64, 64], f32, fragment>
  tilelang.gemm %xs, %ws, %acc policy FullCol : !tilelang.buffer<[64, 64], f16, shared>, !tilelang.buffer<[64, 64], f16, shared>, !tilelang.buffer<[64, 64], f32, fragment>
  tilelang.parallel (i0, i1) in (64, 64) {
    %v = tilelang.load %acc[i0, i1] : !tilelang.buffer<[64, 64], f32, fragment>
    %in = tilelang.index_below bx*64 + i0 < L
    %z = arith.constant 0.0 : f32
    %m = arith.select %in, %v, %z : f32
    tilelang.store %m, %out[i0, i1] : f32, !tilelang.buffer<[64, 64], f32, fragment>
  }
  tilelang.copy %out to %y at <[64*bx, 0], [64, 64]> : !tilelang.buffer<[64, 64], f32, fragment>, !tilelang.buffer<[L, 64], f16, global>
}
