// Small matmuls on the tensor cores. cleave-place-memory pads the 4 query rows of a decode-attention
// split kernel (one GQA head group) to 64 (`cleave.pad_rows`; `cleave.pad_axes` on every tile that
// carries the rows); cleave-lower-tilelang allocates those tiles with 64 rows, reads and writes only
// the 4 real ones, and uses T.gemm (P cast to an fp16 fragment) and warp reductions in between.
// A single row times a matrix (GEMV) is not padded: it multiplies on all threads into an
// (outputs, K chunk) fragment and ends in one warp reduction.
// RUN: cleave-opt %s -p cleave-place-memory | filecheck %s
// RUN: cleave-opt %s -p cleave-place-memory,cleave-lower-tilelang | filecheck %s --check-prefix=TL

// CHECK:      itgraph.kernel @decode_k0(
// CHECK-SAME: cleave.pad_rows = 64 : i64, cleave.threads = 128 : i64
// CHECK:        itgraph.load %q {{.*}} {cleave.pad_axes = [2 : i64], cleave.mem = "shared"}
// CHECK:        itgraph.sequential r0
// CHECK:          tgraph.reshape %q_1 {cleave.pad_axes = [3 : i64], cleave.mem = "fragment"}
// CHECK:          itgraph.load %k {{.*}} {cleave.mem = "shared"} :
// CHECK:          tgraph.matmul {{.*}} {cleave.pad_axes = [3 : i64], cleave.mem = "fragment"}
// CHECK:          tgraph.reduce max {{.*}} {cleave.pad_axes = [3 : i64], cleave.mem = "fragment"}
// CHECK:      itgraph.kernel @gemv_k0(
// CHECK-NOT:  cleave.pad
// CHECK:      }

// TL:      tilelang.kernel @decode_k0(
// TL:        %[[Q:.*]] = tilelang.alloc_shared : !tilelang.buffer<[64, 128], f16, shared>
// TL:        %[[ACC:.*]] = tilelang.alloc_fragment : !tilelang.buffer<[64, 128], f32, fragment>
// TL:        tilelang.parallel (i0, i1) in (4, 128) {
// TL-NEXT:     %{{.*}} = tilelang.load %q[0, bx, i0, i1]
// TL-NEXT:     tilelang.store %{{.*}}, %[[Q]][i0, i1]
// TL:        tilelang.pipelined r0 in 32 stages
// TL:          tilelang.gemm %[[Q]], %{{.*}}, %[[S:.*]] transpose_b policy "FullRow" : !tilelang.buffer<[64, 128], f16, shared>, !tilelang.buffer<[128, 128], f16, shared>, !tilelang.buffer<[64, 128], f32, fragment>
// TL:          tilelang.reduce_max %{{.*}}, %{{.*}} dim 1 clear
// TL:          tilelang.copy %[[P:.*]] to %[[PH:.*]] : !tilelang.buffer<[64, 128], f32, fragment>, !tilelang.buffer<[64, 128], f16, fragment>
// TL:          tilelang.gemm %[[PH]], %{{.*}}, %{{.*}} policy "FullRow"
// TL:          tilelang.reduce_sum %[[P]], %{{.*}} dim 1 clear
// TL:        tilelang.copy %[[ACC]] at <[0, 0], [4, 128]> to %out1 at <[0, 0, bx, 0, 0], [1, 1, 1, 4, 128]>
// TL:      tilelang.kernel @gemv_k0(
// TL:        %[[PART:.*]] = tilelang.alloc_fragment : !tilelang.buffer<[64, 128], f32, fragment>
// TL:        tilelang.clear %[[PART]]
// TL-NEXT:   tilelang.serial kk in 4 {
// TL-NEXT:     tilelang.parallel (i0, i1) in (64, 128) {
// TL-NEXT:       %{{.*}} = tilelang.load %{{.*}}[128*kk + i1]
// TL-NEXT:       %{{.*}} = tilelang.load %{{.*}}[128*kk + i1, i0]
// TL:            tilelang.store %{{.*}}, %[[PART]][i0, i1] accumulate
// TL:        tilelang.reduce_sum %[[PART]], %{{.*}} dim 1 clear

builtin.module {
  itgraph.kernel @decode_k0(%q: !tgraph.tensor<[1, 8, 4, 128], f16>, %k: !tgraph.tensor<[1, 8, 4096, 128], f16>, %v: !tgraph.tensor<[1, 8, 4096, 128], f16>, %out0: !tgraph.tensor<[1, 1, 8, 4, 1], f16>, %out1: !tgraph.tensor<[1, 1, 8, 4, 128], f16>, %out2: !tgraph.tensor<[1, 1, 8, 4, 1], f16>) attributes {num_outputs = 3 : i64} {
    itgraph.parallel (p0, p2) in (1, 8) {
      %0, %1, %m = itgraph.sequential r0 in 32 accumulate (rescaled_sum, rescaled_sum, max) : !tgraph.tensor<[1, 1, 1, 4, 128], f16>, !tgraph.tensor<[1, 1, 1, 4, 1], f16>, !tgraph.tensor<[1, 1, 1, 4, 1], f16> {
        %q_1 = itgraph.load %q at #itgraph.tmap<[0, p2, 0, 0], [1, 1, 4, 128]> : !tgraph.tensor<[1, 8, 4, 128], f16> -> !tgraph.tensor<[1, 1, 4, 128], f16>
        %2 = tgraph.reshape %q_1 : !tgraph.tensor<[1, 1, 4, 128], f16> -> !tgraph.tensor<[1, 1, 1, 4, 128], f16>
        %k_1 = itgraph.load %k at #itgraph.tmap<[0, p2, 128*r0, 0], [1, 1, 128, 128]> : !tgraph.tensor<[1, 8, 4096, 128], f16> -> !tgraph.tensor<[1, 1, 128, 128], f16>
        %3 = tgraph.reshape %k_1 : !tgraph.tensor<[1, 1, 128, 128], f16> -> !tgraph.tensor<[1, 1, 1, 128, 128], f16>
        %4 = tgraph.matmul %2, %3 transpose_b : !tgraph.tensor<[1, 1, 1, 4, 128], f16>, !tgraph.tensor<[1, 1, 1, 128, 128], f16> -> !tgraph.tensor<[1, 1, 1, 4, 128], f16>
        %5 = tgraph.scale %4, 0.088388347648318447 : !tgraph.tensor<[1, 1, 1, 4, 128], f16>
        %m_1 = tgraph.reduce max %5 dim 4 : !tgraph.tensor<[1, 1, 1, 4, 128], f16> -> !tgraph.tensor<[1, 1, 1, 4, 1], f16>
        %6 = tgraph.sub %5, %m_1 : !tgraph.tensor<[1, 1, 1, 4, 128], f16>, !tgraph.tensor<[1, 1, 1, 4, 1], f16> -> !tgraph.tensor<[1, 1, 1, 4, 128], f16>
        %7 = tgraph.exp %6 : !tgraph.tensor<[1, 1, 1, 4, 128], f16>
        %v_1 = itgraph.load %v at #itgraph.tmap<[0, p2, 128*r0, 0], [1, 1, 128, 128]> : !tgraph.tensor<[1, 8, 4096, 128], f16> -> !tgraph.tensor<[1, 1, 128, 128], f16>
        %8 = tgraph.reshape %v_1 : !tgraph.tensor<[1, 1, 128, 128], f16> -> !tgraph.tensor<[1, 1, 1, 128, 128], f16>
        %9 = tgraph.matmul %7, %8 : !tgraph.tensor<[1, 1, 1, 4, 128], f16>, !tgraph.tensor<[1, 1, 1, 128, 128], f16> -> !tgraph.tensor<[1, 1, 1, 4, 128], f16>
        %10 = tgraph.reduce sum %7 dim 4 : !tgraph.tensor<[1, 1, 1, 4, 128], f16> -> !tgraph.tensor<[1, 1, 1, 4, 1], f16>
        itgraph.yield %9, %10, %m_1 : !tgraph.tensor<[1, 1, 1, 4, 128], f16>, !tgraph.tensor<[1, 1, 1, 4, 1], f16>, !tgraph.tensor<[1, 1, 1, 4, 1], f16>
      }
      itgraph.store %m, %out0 at #itgraph.tmap<[p0, 0, p2, 0, 0], [1, 1, 1, 4, 1]> : !tgraph.tensor<[1, 1, 1, 4, 1], f16>, !tgraph.tensor<[1, 1, 8, 4, 1], f16>
      itgraph.store %0, %out1 at #itgraph.tmap<[p0, 0, p2, 0, 0], [1, 1, 1, 4, 128]> : !tgraph.tensor<[1, 1, 1, 4, 128], f16>, !tgraph.tensor<[1, 1, 8, 4, 128], f16>
      itgraph.store %1, %out2 at #itgraph.tmap<[p0, 0, p2, 0, 0], [1, 1, 1, 4, 1]> : !tgraph.tensor<[1, 1, 1, 4, 1], f16>, !tgraph.tensor<[1, 1, 8, 4, 1], f16>
    }
  }
  itgraph.kernel @gemv_k0(%x: !tgraph.tensor<[1, 512], f16>, %w: !tgraph.tensor<[512, 1024], f16>, %out0: !tgraph.tensor<[1, 1024], f16>) attributes {num_outputs = 1 : i64} {
    itgraph.parallel (p0, p1) in (1, 16) {
      %x_1 = itgraph.load %x at #itgraph.tmap<[0, 0], [1, 512]> : !tgraph.tensor<[1, 512], f16> -> !tgraph.tensor<[1, 512], f16>
      %w_1 = itgraph.load %w at #itgraph.tmap<[0, 64*p1], [512, 64]> : !tgraph.tensor<[512, 1024], f16> -> !tgraph.tensor<[512, 64], f16>
      %o = tgraph.matmul %x_1, %w_1 : !tgraph.tensor<[1, 512], f16>, !tgraph.tensor<[512, 64], f16> -> !tgraph.tensor<[1, 64], f16>
      itgraph.store %o, %out0 at #itgraph.tmap<[0, 64*p1], [1, 64]> : !tgraph.tensor<[1, 64], f16>, !tgraph.tensor<[1, 1024], f16>
    }
  }
}
