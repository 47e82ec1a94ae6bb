// A FlashAttention kernel over 8 KV tiles of 128 (128 query rows, 256 threads), lowered with
// `cleave-lower-tilelang{overlap-gemms=false}` from lit_tests/passes/schedule.mlir and shrunk to
// Q [1, 128, 64], K and V [1, 1024, 64] so that the interpreter runs it in a second.
tgraph.graph @fa(%q: !tgraph.tensor<[1, 128, 64], f16>, %k: !tgraph.tensor<[1, 1024, 64], f16>, %v: !tgraph.tensor<[1, 1024, 64], f16>) -> !tgraph.tensor<[1, 128, 64], f16> {
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[1, 128, 64], f16>, !tgraph.tensor<[1, 1024, 64], f16> -> !tgraph.tensor<[1, 128, 1024], f16>
  %e = tgraph.exp %s : !tgraph.tensor<[1, 128, 1024], f16>
  %o = tgraph.matmul %e, %v : !tgraph.tensor<[1, 128, 1024], f16>, !tgraph.tensor<[1, 1024, 64], f16> -> !tgraph.tensor<[1, 128, 64], f16>
  %l = tgraph.reduce sum %e dim 2 : !tgraph.tensor<[1, 128, 1024], f16> -> !tgraph.tensor<[1, 128, 1], f16>
  %r = tgraph.div %o, %l : !tgraph.tensor<[1, 128, 64], f16>, !tgraph.tensor<[1, 128, 1], f16> -> !tgraph.tensor<[1, 128, 64], f16>
  tgraph.output %r : !tgraph.tensor<[1, 128, 64], f16>
}
tilelang.kernel @fa_k0(%q: !tilelang.buffer<[1, 128, 64], f16, global>, %k: !tilelang.buffer<[1, 1024, 64], f16, global>, %v: !tilelang.buffer<[1, 1024, 64], f16, global>, %out0: !tilelang.buffer<[1, 128, 64], f16, global>) grid (bx, by) in (1, 1) threads 256 outputs 1 attributes {cleave.schedule_of = @fa, cleave.tiles = #cleave.tiles<out = [1, 128, 64], reduce = 128>, cleave.smem_bytes = 81920 : i64, cleave.input_names = ["q", "k", "v"], cleave.passthrough = [], cleave.fast_math} {
  %q_1 = tilelang.alloc_shared : !tilelang.buffer<[128, 64], f16, shared>
  %o_acc = tilelang.alloc_fragment : !tilelang.buffer<[128, 64], f32, fragment>
  %l_acc = tilelang.alloc_fragment : !tilelang.buffer<[128], f32, fragment>
  %acc_acc = tilelang.alloc_fragment : !tilelang.buffer<[128], f32, fragment>
  %alpha = tilelang.alloc_fragment : !tilelang.buffer<[128], f32, fragment>
  %k_1 = tilelang.alloc_shared : !tilelang.buffer<[128, 64], f16, shared>
  %s = tilelang.alloc_fragment : !tilelang.buffer<[128, 128], f32, fragment>
  %red = tilelang.alloc_fragment : !tilelang.buffer<[128], f32, fragment>
  %m_new = tilelang.alloc_fragment : !tilelang.buffer<[128], f32, fragment>
  %l = tilelang.alloc_fragment : !tilelang.buffer<[128], f32, fragment>
  %v_1 = tilelang.alloc_shared : !tilelang.buffer<[128, 64], f16, shared>
  %s_h = tilelang.alloc_fragment : !tilelang.buffer<[128, 128], f16, fragment>
  %o_acc_s = tilelang.alloc_shared : !tilelang.buffer<[128, 64], f16, shared>
  tilelang.copy %q at <[by, 128*bx, 0], [1, 128, 64]> to %q_1 : !tilelang.buffer<[1, 128, 64], f16, global>, !tilelang.buffer<[128, 64], f16, shared>
  tilelang.clear %o_acc : !tilelang.buffer<[128, 64], f32, fragment>
  tilelang.clear %l_acc : !tilelang.buffer<[128], f32, fragment>
  tilelang.fill %acc_acc, -inf : !tilelang.buffer<[128], f32, fragment>
  tilelang.pipelined r0 in 8 stages 2 {
    tilelang.clear %s : !tilelang.buffer<[128, 128], f32, fragment>
    tilelang.copy %k at <[by, 128*r0, 0], [1, 128, 64]> to %k_1 : !tilelang.buffer<[1, 1024, 64], f16, global>, !tilelang.buffer<[128, 64], f16, shared>
    tilelang.gemm %q_1, %k_1, %s transpose_b policy FullRow : !tilelang.buffer<[128, 64], f16, shared>, !tilelang.buffer<[128, 64], f16, shared>, !tilelang.buffer<[128, 128], f32, fragment>
    tilelang.reduce_max %s, %red dim 1 clear : !tilelang.buffer<[128, 128], f32, fragment>, !tilelang.buffer<[128], f32, fragment>
    tilelang.parallel (i0) in (128) {
      %0 = tilelang.load %acc_acc[i0] : !tilelang.buffer<[128], f32, fragment>
      %1 = tilelang.load %red[i0] : !tilelang.buffer<[128], f32, fragment>
      %2 = arith.maximumf %0, %1 : f32
      tilelang.store %2, %m_new[i0] : f32, !tilelang.buffer<[128], f32, fragment>
      %3 = tilelang.load %m_new[i0] : !tilelang.buffer<[128], f32, fragment>
      %4 = arith.constant -3.000000e+38 : f64
      %5 = arith.truncf %4 : f64 to f32
      %6 = arith.maximumf %3, %5 : f32
      %7 = tilelang.load %acc_acc[i0] : !tilelang.buffer<[128], f32, fragment>
      %8 = arith.subf %7, %6 : f32
      %9 = arith.constant 1.4426950408889634 : f64
      %10 = arith.truncf %9 : f64 to f32
      %11 = arith.mulf %8, %10 : f32
      %12 = math.exp2 %11 : f32
      tilelang.store %12, %alpha[i0] : f32, !tilelang.buffer<[128], f32, fragment>
      tilelang.store %6, %red[i0] : f32, !tilelang.buffer<[128], f32, fragment>
      %13 = tilelang.load %m_new[i0] : !tilelang.buffer<[128], f32, fragment>
      tilelang.store %13, %acc_acc[i0] : f32, !tilelang.buffer<[128], f32, fragment>
    }
    tilelang.parallel (i0, i1) in (128, 128) {
      %14 = tilelang.load %s[i0, i1] : !tilelang.buffer<[128, 128], f32, fragment>
      %15 = arith.constant 1.4426950408889634 : f64
      %16 = arith.truncf %15 : f64 to f32
      %17 = arith.mulf %14, %16 : f32
      %18 = tilelang.load %red[i0] : !tilelang.buffer<[128], f32, fragment>
      %19 = arith.constant 1.4426950408889634 : f64
      %20 = arith.truncf %19 : f64 to f32
      %21 = arith.mulf %18, %20 : f32
      %22 = arith.subf %17, %21 : f32
      %23 = math.exp2 %22 : f32
      tilelang.store %23, %s[i0, i1] : f32, !tilelang.buffer<[128, 128], f32, fragment>
    }
    tilelang.reduce_sum %s, %l dim 1 clear : !tilelang.buffer<[128, 128], f32, fragment>, !tilelang.buffer<[128], f32, fragment>
    tilelang.parallel (i0) in (128) {
      %24 = tilelang.load %l_acc[i0] : !tilelang.buffer<[128], f32, fragment>
      %25 = tilelang.load %alpha[i0] : !tilelang.buffer<[128], f32, fragment>
      %26 = arith.mulf %24, %25 : f32
      %27 = tilelang.load %l[i0] : !tilelang.buffer<[128], f32, fragment>
      %28 = arith.addf %26, %27 : f32
      tilelang.store %28, %l_acc[i0] : f32, !tilelang.buffer<[128], f32, fragment>
    }
    tilelang.parallel (i0, i1) in (128, 64) {
      %29 = tilelang.load %o_acc[i0, i1] : !tilelang.buffer<[128, 64], f32, fragment>
      %30 = tilelang.load %alpha[i0] : !tilelang.buffer<[128], f32, fragment>
      %31 = arith.mulf %29, %30 : f32
      tilelang.store %31, %o_acc[i0, i1] : f32, !tilelang.buffer<[128, 64], f32, fragment>
    }
    tilelang.copy %s to %s_h : !tilelang.buffer<[128, 128], f32, fragment>, !tilelang.buffer<[128, 128], f16, fragment>
    tilelang.copy %v at <[by, 128*r0, 0], [1, 128, 64]> to %v_1 : !tilelang.buffer<[1, 1024, 64], f16, global>, !tilelang.buffer<[128, 64], f16, shared>
    tilelang.gemm %s_h, %v_1, %o_acc policy FullRow : !tilelang.buffer<[128, 128], f16, fragment>, !tilelang.buffer<[128, 64], f16, shared>, !tilelang.buffer<[128, 64], f32, fragment>
  }
  tilelang.parallel (i0, i1) in (128, 64) {
    %32 = tilelang.load %o_acc[i0, i1] : !tilelang.buffer<[128, 64], f32, fragment>
    %33 = tilelang.load %l_acc[i0] : !tilelang.buffer<[128], f32, fragment>
    %34 = arith.divf %32, %33 : f32
    tilelang.store %34, %o_acc[i0, i1] : f32, !tilelang.buffer<[128, 64], f32, fragment>
  }
  tilelang.copy %o_acc to %o_acc_s : !tilelang.buffer<[128, 64], f32, fragment>, !tilelang.buffer<[128, 64], f16, shared>
  tilelang.copy %o_acc_s to %out0 at <[by, 128*bx, 0], [1, 128, 64]> : !tilelang.buffer<[128, 64], f16, shared>, !tilelang.buffer<[1, 128, 64], f16, global>
}
