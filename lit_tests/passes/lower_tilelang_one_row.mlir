// cleave-lower-tilelang: matmuls of one row (a decode query row, a T=1 GEMV row). The one-row A tile
// of @one_row_k0 (row axis: a size-1 dim, dropped from its buffer until padded) is padded to a
// 64-row shared tile, cleared, with only its real row loaded (no TMA); the products are T.gemm into
// 64-row fragments, the silu runs over the padded rows (in place, in the product's fragment), and only the real row is stored, through
// shared memory. @gemv_k0's padded A tile (64 x 4096 fp16, 512 KiB) would not fit in shared memory:
// its matmul takes TileLang's GEMV form instead over a staged [4096, 16] slab: 64 partial sums per
// column, eight a thread, each step adding 64 rows (`gemv_rows_per_step`: 64 steps, not 512 of one
// dependent add), the partials added by one block-wide T.reduce_sum. @gemv_t_k0 is the same GEMV against a weight stored
// [N, K] (nn.Linear's layout, transpose_b): each thread takes 8 consecutive k of a row (one 16-byte
// vector load; eight threads cover a row's 128 bytes without shared-memory bank conflicts), 64
// partials per column, added up by one block-wide T.reduce_sum (`GEMV_BLOCK_REDUCE`), not 64 serial
// steps over a shared copy. @row_sum_k0 reduces its one row of 4096 to one value with one block-wide
// T.reduce_sum of the row held in fp32 registers (`LONG_VECTOR`).
// RUN: cleave-opt %s -p cleave-lower-tilelang | filecheck %s
// RUN: cleave-opt %s -t tilelang | filecheck %s --check-prefix=PY

// CHECK:      tilelang.kernel @one_row_k0
// CHECK-NEXT:   %[[X:.*]] = tilelang.alloc_shared : !tilelang.buffer<[64, 512], f16, shared>
// CHECK:        %[[G:.*]] = tilelang.alloc_fragment : !tilelang.buffer<[64, 64], f32, fragment>
// CHECK:        %[[O:.*]] = tilelang.alloc_shared : !tilelang.buffer<[64, 64], f16, shared>
// CHECK-NEXT:   tilelang.wait_prior_grids
// CHECK-NEXT:   tilelang.clear %[[X]]
// CHECK-NEXT:   tilelang.copy %x at <[0, 0], [1, 512]> to %[[X]] at <[0, 0], [1, 512]> no_tma
// CHECK:        tilelang.gemm %[[X]], %{{.*}}, %[[G]] policy FullRow
// CHECK-NEXT:   tilelang.parallel (i0, i1) in (64, 64)
// CHECK:        tilelang.store %{{.*}}, %[[G]][i0, i1]
// CHECK:        tilelang.copy %[[G]] to %[[O]]
// CHECK-NEXT:   tilelang.copy %[[O]] at <[0, 0], [1, 64]> to %out0 at <[0, 64*bx], [1, 64]> no_tma

// CHECK:      tilelang.kernel @gemv_k0
// CHECK-NOT:    tilelang.gemm
// CHECK:        %[[P:.*]] = tilelang.alloc_fragment : !tilelang.buffer<[64, 16], f32, fragment>
// CHECK:        tilelang.serial kk in 64 {
// CHECK-NEXT:     tilelang.parallel (i0, i1) in (64, 16) {
// CHECK:        tilelang.reduce_sum %[[P]], %{{.*}} dim 0 clear : !tilelang.buffer<[64, 16], f32, fragment>, !tilelang.buffer<[16], f32, fragment>

// CHECK:      tilelang.kernel @gemv_t_k0
// CHECK-NOT:    tilelang.gemm
// CHECK:        %[[PT:.*]] = tilelang.alloc_fragment : !tilelang.buffer<[16, 64], f32, fragment>
// CHECK:        tilelang.serial kk in 64 {
// CHECK-NEXT:     tilelang.parallel (i0, i1) in (16, 64) {
// CHECK:        tilelang.reduce_sum %[[PT]], %{{.*}} dim 1 clear : !tilelang.buffer<[16, 64], f32, fragment>, !tilelang.buffer<[16], f32, fragment>
// CHECK-NOT:    tilelang.serial
// CHECK:      tilelang.kernel @row_sum_k0
// CHECK:        %[[RF:.*]] = tilelang.alloc_fragment : !tilelang.buffer<[4096], f32, fragment>
// CHECK:        tilelang.copy %{{.*}} to %[[RF]] : !tilelang.buffer<[4096], f16, shared>, !tilelang.buffer<[4096], f32, fragment>
// CHECK-NEXT:   tilelang.reduce_sum %[[RF]], %{{.*}} dim 0 clear : !tilelang.buffer<[4096], f32, fragment>, !tilelang.buffer<[1], f32, fragment>

// PY:      def one_row_k0(
// PY:          T.copy(x[0, 0:512], x_1[0, 0:512], annotations={"disable_tma": True})
// PY:          T.gemm(x_1, w_1, g, transpose_B=False, policy=T.GemmWarpPolicy.FullRow)
// PY:          T.copy(g_s[0, 0:64], out0[0, 64*bx:64*bx + 64], annotations={"disable_tma": True})
// Products in fp32, as a tensor core's: fp16 products of 1e3-scale operands each lose 0.5 (tests/test_input_ranges.py).
// PY:      def gemv_k0(
// PY:          for kk in T.serial(64):
// PY-NEXT:         for i0, i1 in T.Parallel(64, 16):
// PY-NEXT:             acc_part[i0, i1] += T.Cast("float32", x_1[i0 + 64*kk]) * T.Cast("float32", w_1[i0 + 64*kk, i1])
// PY-NEXT:     T.reduce_sum(acc_part, acc_sums, dim=0, clear=True)
// PY:      def gemv_t_k0(
// PY:          for kk in T.serial(64):
// PY-NEXT:         for i0, i1 in T.Parallel(16, 64):
// PY-NEXT:             acc_part[i0, i1] += T.Cast("float32", x_1[i1 + 64*kk]) * T.Cast("float32", w_1[i0, i1 + 64*kk])
// PY:      def row_sum_k0(
// PY:          T.copy(x_1, s_f)
// PY-NEXT:     T.reduce_sum(s_f, s_w, dim=0, clear=True)

builtin.module {
  itgraph.kernel @one_row_k0(%x: !tgraph.tensor<[1, 512], f16>, %w: !tgraph.tensor<[512, 1024], f16>, %out0: !tgraph.tensor<[1, 1024], f16>) attributes {num_outputs = 1 : i64, cleave.threads = 128 : i64, cleave.stages = 1 : i64, cleave.smem_bytes = 66560 : i64, cleave.tiles = #cleave.tiles<out = [1, 64], reduce = none>} {
    itgraph.parallel (p0, p1) in (1, 16) {
      %x_1 = itgraph.load %x at #itgraph.tmap<[p0, 0], [1, 512]> {cleave.mem = #cleave<mem shared>} : !tgraph.tensor<[1, 512], f16> -> !tgraph.tensor<[1, 512], f16>
      %w_1 = itgraph.load %w at #itgraph.tmap<[0, 64*p1], [512, 64]> {cleave.mem = #cleave<mem shared>} : !tgraph.tensor<[512, 1024], f16> -> !tgraph.tensor<[512, 64], f16>
      %g = tgraph.matmul %x_1, %w_1 {cleave.mem = #cleave<mem fragment>} : !tgraph.tensor<[1, 512], f16>, !tgraph.tensor<[512, 64], f16> -> !tgraph.tensor<[1, 64], f16>
      %silu = tgraph.silu %g {cleave.mem = #cleave<mem fragment>} : !tgraph.tensor<[1, 64], f16>
      itgraph.store %silu, %out0 at #itgraph.tmap<[p0, 64*p1], [1, 64]> : !tgraph.tensor<[1, 64], f16>, !tgraph.tensor<[1, 1024], f16>
    }
  }
  itgraph.kernel @gemv_k0(%x: !tgraph.tensor<[1, 4096], f16>, %w: !tgraph.tensor<[4096, 1024], f16>, %out0: !tgraph.tensor<[1, 1024], f16>) attributes {num_outputs = 1 : i64, cleave.threads = 128 : i64, cleave.stages = 1 : i64, cleave.smem_bytes = 139264 : i64, cleave.tiles = #cleave.tiles<out = [1, 16], reduce = none>} {
    itgraph.parallel (p0, p1) in (1, 64) {
      %x_1 = itgraph.load %x at #itgraph.tmap<[p0, 0], [1, 4096]> {cleave.mem = #cleave<mem shared>} : !tgraph.tensor<[1, 4096], f16> -> !tgraph.tensor<[1, 4096], f16>
      %w_1 = itgraph.load %w at #itgraph.tmap<[0, 16*p1], [4096, 16]> {cleave.mem = #cleave<mem shared>} : !tgraph.tensor<[4096, 1024], f16> -> !tgraph.tensor<[4096, 16], f16>
      %acc = tgraph.matmul %x_1, %w_1 {cleave.mem = #cleave<mem fragment>} : !tgraph.tensor<[1, 4096], f16>, !tgraph.tensor<[4096, 16], f16> -> !tgraph.tensor<[1, 16], f16>
      itgraph.store %acc, %out0 at #itgraph.tmap<[p0, 16*p1], [1, 16]> : !tgraph.tensor<[1, 16], f16>, !tgraph.tensor<[1, 1024], f16>
    }
  }
  itgraph.kernel @gemv_t_k0(%x: !tgraph.tensor<[1, 4096], f16>, %w: !tgraph.tensor<[1024, 4096], f16>, %out0: !tgraph.tensor<[1, 1024], f16>) attributes {num_outputs = 1 : i64, cleave.threads = 128 : i64, cleave.stages = 1 : i64, cleave.smem_bytes = 139264 : i64, cleave.tiles = #cleave.tiles<out = [1, 16], reduce = none>} {
    itgraph.parallel (p0, p1) in (1, 64) {
      %x_1 = itgraph.load %x at #itgraph.tmap<[p0, 0], [1, 4096]> {cleave.mem = #cleave<mem shared>} : !tgraph.tensor<[1, 4096], f16> -> !tgraph.tensor<[1, 4096], f16>
      %w_1 = itgraph.load %w at #itgraph.tmap<[16*p1, 0], [16, 4096]> {cleave.mem = #cleave<mem shared>} : !tgraph.tensor<[1024, 4096], f16> -> !tgraph.tensor<[16, 4096], f16>
      %acc = tgraph.matmul %x_1, %w_1 transpose_b {cleave.mem = #cleave<mem fragment>} : !tgraph.tensor<[1, 4096], f16>, !tgraph.tensor<[16, 4096], f16> -> !tgraph.tensor<[1, 16], f16>
      itgraph.store %acc, %out0 at #itgraph.tmap<[p0, 16*p1], [1, 16]> : !tgraph.tensor<[1, 16], f16>, !tgraph.tensor<[1, 1024], f16>
    }
  }
  itgraph.kernel @row_sum_k0(%x: !tgraph.tensor<[1, 4096], f16>, %out0: !tgraph.tensor<[1, 1], f16>) attributes {num_outputs = 1 : i64, cleave.threads = 128 : i64, cleave.stages = 1 : i64, cleave.smem_bytes = 8192 : i64, cleave.tiles = #cleave.tiles<out = [1, 1], reduce = none>} {
    itgraph.parallel (p0) in (1) {
      %x_1 = itgraph.load %x at #itgraph.tmap<[p0, 0], [1, 4096]> {cleave.mem = #cleave<mem shared>} : !tgraph.tensor<[1, 4096], f16> -> !tgraph.tensor<[1, 4096], f16>
      %s = tgraph.reduce sum %x_1 dim 1 {cleave.mem = #cleave<mem fragment>} : !tgraph.tensor<[1, 4096], f16> -> !tgraph.tensor<[1, 1], f16>
      itgraph.store %s, %out0 at #itgraph.tmap<[p0, 0], [1, 1]> : !tgraph.tensor<[1, 1], f16>, !tgraph.tensor<[1, 1], f16>
    }
  }
}
