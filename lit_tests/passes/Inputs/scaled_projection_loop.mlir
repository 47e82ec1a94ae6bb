builtin.module {
  tgraph.graph @scaled_proj(%x: !tgraph.tensor<[8, 4096], f16>, %g: !tgraph.tensor<[1, 4096], f16>, %w: !tgraph.tensor<[4096, 2048], f16>) -> !tgraph.tensor<[8, 2048], f16> {
    %0 = tgraph.mul %x, %g : !tgraph.tensor<[8, 4096], f16>, !tgraph.tensor<[1, 4096], f16> -> !tgraph.tensor<[8, 4096], f16>
    %1 = tgraph.matmul %0, %w : !tgraph.tensor<[8, 4096], f16>, !tgraph.tensor<[4096, 2048], f16> -> !tgraph.tensor<[8, 2048], f16>
    tgraph.output %1 : !tgraph.tensor<[8, 2048], f16>
  }
  tilelang.kernel @scaled_proj_k0(%x: !tilelang.buffer<[8, 4096], f16, global>, %g: !tilelang.buffer<[1, 4096], f16, global>, %w: !tilelang.buffer<[4096, 2048], f16, global>, %out0: !tilelang.buffer<[8, 2048], f16, global>) grid (bx) in (128) threads 128 outputs 1 attributes {cleave.schedule_of = @scaled_proj, cleave.tiles = #cleave.tiles<out = [8, 16], reduce = 128>, cleave.estimated_us = 1.388300e+01 : f64, cleave.smem_bytes = 32000 : i64, cleave.input_names = ["x", "g", "w"], cleave.passthrough = [], cleave.fast_math, cleave.no_warp_specialization} {
    %acc_acc = tilelang.alloc_fragment : !tilelang.buffer<[64, 16], f32, fragment>
    %x_1 = tilelang.alloc_shared : !tilelang.buffer<[64, 128], f16, shared>
    %g_1 = tilelang.alloc_shared : !tilelang.buffer<[128], f16, shared>
    %mul = tilelang.alloc_fragment : !tilelang.buffer<[64, 128], f32, fragment>
    %w_1 = tilelang.alloc_shared : !tilelang.buffer<[128, 16], f16, shared>
    %mul_h = tilelang.alloc_fragment : !tilelang.buffer<[64, 128], f16, fragment>
    %acc_acc_s = tilelang.alloc_shared : !tilelang.buffer<[64, 16], f16, shared>
    tilelang.wait_prior_grids
    tilelang.clear %acc_acc : !tilelang.buffer<[64, 16], f32, fragment>
    tilelang.pipelined r0 in 32 stages 5 {
      tilelang.copy %x at <[0, 128*r0], [64, 128]> to %x_1 no_tma : !tilelang.buffer<[8, 4096], f16, global>, !tilelang.buffer<[64, 128], f16, shared>
      tilelang.copy %g at <[0, 128*r0], [1, 128]> to %g_1 : !tilelang.buffer<[1, 4096], f16, global>, !tilelang.buffer<[128], f16, shared>
      tilelang.parallel (i0, i1) in (64, 128) {
        %0 = tilelang.load %x_1[i0, i1] : !tilelang.buffer<[64, 128], f16, shared>
        %1 = tilelang.load %g_1[i1] : !tilelang.buffer<[128], f16, shared>
        %2 = arith.mulf %0, %1 : f16
        %3 = arith.extf %2 : f16 to f32
        tilelang.store %3, %mul[i0, i1] : f32, !tilelang.buffer<[64, 128], f32, fragment>
      }
      tilelang.copy %mul to %mul_h : !tilelang.buffer<[64, 128], f32, fragment>, !tilelang.buffer<[64, 128], f16, fragment>
      tilelang.copy %w at <[128*r0, 16*bx], [128, 16]> to %w_1 : !tilelang.buffer<[4096, 2048], f16, global>, !tilelang.buffer<[128, 16], f16, shared>
      tilelang.gemm %mul_h, %w_1, %acc_acc policy FullRow : !tilelang.buffer<[64, 128], f16, fragment>, !tilelang.buffer<[128, 16], f16, shared>, !tilelang.buffer<[64, 16], f32, fragment>
    }
    tilelang.copy %acc_acc to %acc_acc_s : !tilelang.buffer<[64, 16], f32, fragment>, !tilelang.buffer<[64, 16], f16, shared>
    tilelang.copy %acc_acc_s at <[0, 0], [8, 16]> to %out0 at <[0, 16*bx], [8, 16]> no_tma : !tilelang.buffer<[64, 16], f16, shared>, !tilelang.buffer<[8, 2048], f16, global>
  }
}

