// cleave-lower-tilelang: a row reduction whose chunks a sequential loop sums (or maxes) is kept element
// by element in a wide fp32 accumulator of the chunk's shape, and its rows are reduced once after the
// loop: no warp reduction (shuffles and a barrier) inside the pipelined gemm loop. The reduced rows of
// a fragment that T.Parallel laid out reach the gemm's rows through shared memory.
// RUN: cleave-opt %s -p 'cleave-schedule{top-k=1},cleave-place-memory,cleave-lower-tilelang' 2>/dev/null | filecheck %s
// RUN: cleave-opt %s -p 'cleave-schedule{top-k=1},cleave-place-memory' -t tilelang 2>/dev/null | filecheck %s --check-prefix=PY

// CHECK:      tilelang.kernel @rms_k0
// CHECK:        %[[W:.*]] = tilelang.alloc_fragment : !tilelang.buffer<[16, 128], f32, fragment>
// CHECK:        tilelang.clear %[[W]]
// CHECK:        tilelang.pipelined r0 in 64
// CHECK-NOT:      tilelang.reduce_sum
// CHECK:          tilelang.gemm
// CHECK-NOT:      tilelang.reduce_sum
// CHECK:          tilelang.store %{{.*}}, %[[W]][i0, i1]
// CHECK:        tilelang.reduce_sum %[[W]], %[[R:.*]] dim 1 clear
// CHECK-NEXT:   tilelang.copy %[[R]] to %{{.*}} : !tilelang.buffer<[16], f32, fragment>, !tilelang.buffer<[16], f32, shared>

// CHECK:      tilelang.kernel @absmax_k0
// CHECK:        %[[M:.*]] = tilelang.alloc_fragment : !tilelang.buffer<[16, 128], f32, fragment>
// CHECK:        tilelang.fill %[[M]], -inf
// CHECK:        tilelang.pipelined r0 in 64
// CHECK-NOT:      tilelang.reduce_max
// CHECK:          arith.maximumf
// CHECK:          tilelang.store %{{.*}}, %[[M]][i0, i1]
// CHECK:        tilelang.reduce_max %[[M]], %{{.*}} dim 1 clear

// PY:      T.clear(ss_wide)
// PY:      ss_wide[i0, i1] = ss_wide[i0, i1] + sq[i0, i1]
// PY:      T.reduce_sum(ss_wide, ss_w, dim=1, clear=True)
// PY-NEXT: T.copy(ss_w, ss_w_s)

tgraph.graph @rms(%x: !tgraph.tensor<[64, 8192], f16>, %w: !tgraph.tensor<[8192, 256], f16>) -> !tgraph.tensor<[64, 256], f16> {
  %o = tgraph.matmul %x, %w : !tgraph.tensor<[64, 8192], f16>, !tgraph.tensor<[8192, 256], f16> -> !tgraph.tensor<[64, 256], f16>
  %sq = tgraph.square %x : !tgraph.tensor<[64, 8192], f16>
  %ss = tgraph.reduce sum %sq dim 1 : !tgraph.tensor<[64, 8192], f16> -> !tgraph.tensor<[64, 1], f16>
  %ms = tgraph.scale %ss, 0.0001220703125 : !tgraph.tensor<[64, 1], f16>
  %rs = tgraph.rsqrt %ms : !tgraph.tensor<[64, 1], f16>
  %n = tgraph.mul %o, %rs : !tgraph.tensor<[64, 256], f16>, !tgraph.tensor<[64, 1], f16> -> !tgraph.tensor<[64, 256], f16>
  tgraph.output %n : !tgraph.tensor<[64, 256], f16>
}
tgraph.graph @absmax(%x: !tgraph.tensor<[64, 8192], f16>, %w: !tgraph.tensor<[8192, 256], f16>) -> !tgraph.tensor<[64, 256], f16> {
  %o = tgraph.matmul %x, %w : !tgraph.tensor<[64, 8192], f16>, !tgraph.tensor<[8192, 256], f16> -> !tgraph.tensor<[64, 256], f16>
  %a = tgraph.abs %x : !tgraph.tensor<[64, 8192], f16>
  %m = tgraph.reduce max %a dim 1 : !tgraph.tensor<[64, 8192], f16> -> !tgraph.tensor<[64, 1], f16>
  %d = tgraph.div %o, %m : !tgraph.tensor<[64, 256], f16>, !tgraph.tensor<[64, 1], f16> -> !tgraph.tensor<[64, 256], f16>
  tgraph.output %d : !tgraph.tensor<[64, 256], f16>
}
