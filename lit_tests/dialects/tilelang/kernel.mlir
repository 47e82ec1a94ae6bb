// RUN: cleave-opt %s | cleave-opt | filecheck %s
// RUN: ROUNDTRIP

// A row-softmax-weighted matmul with every construct: allocations, the wait for prior kernels, region
// copies, a gemm, a warp reduction, a pipelined loop, an unrolled serial loop, element-wise statements, and a symbolic dim L.
// CHECK-LABEL: tilelang.kernel @k(%x: !tilelang.buffer<[L, 64], f16, global>, %w: !tilelang.buffer<[64, 32], f16, global>, %y: !tilelang.buffer<[L, 32], f16, global>)
// CHECK-SAME:    grid (bx) in (L ceildiv 64) threads 128 outputs 1 attributes {cleave.note = "hand-written"} {
// CHECK-NEXT:    %[[XS:.*]] = tilelang.alloc_shared : !tilelang.buffer<[64, 64], f16, shared>
// CHECK-NEXT:    %[[WS:.*]] = tilelang.alloc_shared : !tilelang.buffer<[64, 32], f16, shared>
// CHECK-NEXT:    %[[WH:.*]] = tilelang.alloc_shared : !tilelang.buffer<[32, 32], f16, shared>
// CHECK-NEXT:    %[[ACC:.*]] = tilelang.alloc_fragment : !tilelang.buffer<[64, 32], f32, fragment>
// CHECK-NEXT:    %[[M:.*]] = tilelang.alloc_fragment : !tilelang.buffer<[64], f32, fragment>
// CHECK-NEXT:    tilelang.wait_prior_grids
// CHECK-NEXT:    tilelang.copy %x at <[64*bx, 0], [64, 64]> to %[[XS]] : !tilelang.buffer<[L, 64], f16, global>, !tilelang.buffer<[64, 64], f16, shared>
// CHECK-NEXT:    tilelang.clear %[[ACC]] : !tilelang.buffer<[64, 32], f32, fragment>
// CHECK-NEXT:    tilelang.pipelined r0 in 2 stages 2 {
// CHECK-NEXT:      tilelang.copy %w at <[32*r0, 0], [32, 32]> to %[[WH]] : !tilelang.buffer<[64, 32], f16, global>, !tilelang.buffer<[32, 32], f16, shared>
// CHECK-NEXT:    }
// CHECK-NEXT:    tilelang.copy %w at <[0, 0], [64, 32]> to %[[WS]]
// CHECK-NEXT:    tilelang.gemm %[[XS]], %[[WS]], %[[ACC]] policy FullRow : !tilelang.buffer<[64, 64], f16, shared>, !tilelang.buffer<[64, 32], f16, shared>, !tilelang.buffer<[64, 32], f32, fragment>
// CHECK-NEXT:    tilelang.reduce_max %[[ACC]], %[[M]] dim 1 clear : !tilelang.buffer<[64, 32], f32, fragment>, !tilelang.buffer<[64], f32, fragment>
// CHECK-NEXT:    tilelang.fill %[[M]], -inf : !tilelang.buffer<[64], f32, fragment>
// CHECK-NEXT:    tilelang.serial kk in 4 unroll {
// CHECK-NEXT:      tilelang.parallel (i0, i1) in (64, 32) {
// CHECK-NEXT:        %[[A:.*]] = tilelang.load %[[ACC]][i0, i1] : !tilelang.buffer<[64, 32], f32, fragment>
// CHECK-NEXT:        %[[B:.*]] = tilelang.load %[[M]][i0] : !tilelang.buffer<[64], f32, fragment>
// CHECK-NEXT:        %[[C:.*]] = arith.subf %[[A]], %[[B]] : f32
// CHECK-NEXT:        %[[D:.*]] = math.exp %[[C]] : f32
// CHECK-NEXT:        tilelang.store %[[D]], %[[ACC]][i0, i1] accumulate : f32, !tilelang.buffer<[64, 32], f32, fragment>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    tilelang.copy %[[ACC]] to %y at <[64*bx, (bx floordiv 4) mod 8 + 1], [64, 32]> : !tilelang.buffer<[64, 32], f32, fragment>, !tilelang.buffer<[L, 32], f16, global>
// CHECK-NEXT:  }
tilelang.kernel @k(%x: !tilelang.buffer<[L, 64], f16, global>, %w: !tilelang.buffer<[64, 32], f16, global>, %y: !tilelang.buffer<[L, 32], f16, global>) grid (bx) in (L ceildiv 64) threads 128 outputs 1 attributes {cleave.note = "hand-written"} {
  %xs = tilelang.alloc_shared : !tilelang.buffer<[64, 64], f16, shared>
  %ws = tilelang.alloc_shared : !tilelang.buffer<[64, 32], f16, shared>
  %wh = tilelang.alloc_shared : !tilelang.buffer<[32, 32], f16, shared>
  %acc = tilelang.alloc_fragment : !tilelang.buffer<[64, 32], f32, fragment>
  %m = tilelang.alloc_fragment : !tilelang.buffer<[64], f32, fragment>
  tilelang.wait_prior_grids
  tilelang.copy %x at <[bx*64, 0], [64, 64]> to %xs : !tilelang.buffer<[L, 64], f16, global>, !tilelang.buffer<[64, 64], f16, shared>
  tilelang.clear %acc : !tilelang.buffer<[64, 32], f32, fragment>
  tilelang.pipelined r0 in 2 stages 2 {
    tilelang.copy %w at <[r0*32, 0], [32, 32]> to %wh : !tilelang.buffer<[64, 32], f16, global>, !tilelang.buffer<[32, 32], f16, shared>
  }
  tilelang.copy %w at <[0, 0], [64, 32]> to %ws : !tilelang.buffer<[64, 32], f16, global>, !tilelang.buffer<[64, 32], f16, shared>
  tilelang.gemm %xs, %ws, %acc policy FullRow : !tilelang.buffer<[64, 64], f16, shared>, !tilelang.buffer<[64, 32], f16, shared>, !tilelang.buffer<[64, 32], f32, fragment>
  tilelang.reduce_max %acc, %m dim 1 clear : !tilelang.buffer<[64, 32], f32, fragment>, !tilelang.buffer<[64], f32, fragment>
  tilelang.fill %m, -inf : !tilelang.buffer<[64], f32, fragment>
  tilelang.serial kk in 4 unroll {
    tilelang.parallel (i0, i1) in (64, 32) {
      %a = tilelang.load %acc[i0, i1] : !tilelang.buffer<[64, 32], f32, fragment>
      %b = tilelang.load %m[i0] : !tilelang.buffer<[64], f32, fragment>
      %c = arith.subf %a, %b : f32
      %d = math.exp %c : f32
      tilelang.store %d, %acc[i0, i1] accumulate : f32, !tilelang.buffer<[64, 32], f32, fragment>
    }
  }
  tilelang.copy %acc to %y at <[64*bx, ((bx floordiv 4) mod 8) + 1], [64, 32]> : !tilelang.buffer<[64, 32], f32, fragment>, !tilelang.buffer<[L, 32], f16, global>
}
