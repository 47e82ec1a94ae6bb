// cleave-place-memory leaves the weight rows of a decode projection (x [1, K] @ W^T, W [N, K] as
// nn.Linear stores it) in global memory when K is too long for the A operand padded to 64 rows
// (4096: 512 KiB): the GEMV reads them there (`#cleave<mem global>`), they take no shared memory
// (only x's 8 KiB), and the lowering reads each thread's 16 bytes of a row straight into registers,
// a warp per row, the lanes summed by a warp reduction; the K loop is unrolled (more loads in flight). At K = 128 (a decode attention's query row
// against a key tile) the padded T.gemm form stays: the key tile is loaded into shared memory.
// A [K, N] weight matrix (x @ W, GPT-2's Conv1D) is read from global memory too, whole 16-byte
// vectors of a slab of its rows per step, the slab's rows summed at the end (dim 0); a decode
// attention's value tile (P @ V against a [B, H, L, D] cache: not a weight matrix) stays shared.
// RUN: cleave-opt %s -p 'cleave-schedule{top-k=1},cleave-place-memory' 2>/dev/null | filecheck %s
// RUN: cleave-opt %s -p 'cleave-schedule{top-k=1},cleave-place-memory,cleave-lower-tilelang' -t tilelang 2>/dev/null | filecheck %s --check-prefix=PY

// CHECK:      itgraph.kernel @linear_k0(
// CHECK-SAME:   cleave.smem_bytes = 8192 : i64
// CHECK:        itgraph.load %x at {{.*}} {cleave.mem = #cleave<mem shared>}
// CHECK-NEXT:   itgraph.load %w at {{.*}} {cleave.mem = #cleave<mem global>}
// CHECK:      itgraph.kernel @scores_k0(
// CHECK:        itgraph.load %q at {{.*}} {cleave.mem = #cleave<mem shared>}
// CHECK-NEXT:   itgraph.load %k at {{.*}} {cleave.mem = #cleave<mem shared>}
// CHECK:      itgraph.kernel @linear_kn_k0(
// CHECK:        itgraph.load %x at {{.*}} {cleave.mem = #cleave<mem shared>}
// CHECK-NEXT:   itgraph.load %w at {{.*}} {cleave.mem = #cleave<mem global>}
// CHECK:      itgraph.kernel @pv_k0(
// CHECK:        itgraph.load %v at {{.*}} {cleave.mem = #cleave<mem shared>}

// PY:      def linear_k0(
// PY-NOT:      w_1 = T.alloc_shared
// PY:          y_part = T.alloc_fragment(({{[0-9]+}}, 256), "float32")
// PY:          for kk in T.unroll(16):
// PY-NEXT:         for i0, i1 in T.Parallel({{[0-9]+}}, 256):
// PY-NEXT:             y_part[i0, i1] += T.Cast("float32", x_1[i1 + 256*kk]) * T.Cast("float32", w[{{[0-9]+}}*bx + i0, i1 + 256*kk])
// PY-NEXT:     T.reduce_sum(y_part, y, dim=1, clear=True)
// PY:      def scores_k0(
// PY:          T.gemm(
// PY:      def linear_kn_k0(
// PY-NOT:      w_1 = T.alloc_shared
// PY:          y_part = T.alloc_fragment(({{[0-9]+}}, {{[0-9]+}}), "float32")
// PY:          for kk in T.serial({{[0-9]+}}):
// PY-NEXT:         for i0, i1 in T.Parallel({{[0-9]+}}, {{[0-9]+}}):
// PY-NEXT:             y_part[i0, i1] += T.Cast("float32", x_1[i0 + {{[0-9]+}}*kk]) * T.Cast("float32", w[i0 + {{[0-9]+}}*kk, {{.*}}i1])
// PY-NEXT:     T.reduce_sum(y_part, y, dim=0, clear=True)
// PY:      def pv_k0(
// PY:          T.gemm(

tgraph.graph @linear(%x: !tgraph.tensor<[1, 4096], f16>, %w: !tgraph.tensor<[1024, 4096], f16>) -> !tgraph.tensor<[1, 1024], f16> {
  %y = tgraph.matmul %x, %w transpose_b : !tgraph.tensor<[1, 4096], f16>, !tgraph.tensor<[1024, 4096], f16> -> !tgraph.tensor<[1, 1024], f16>
  tgraph.output %y : !tgraph.tensor<[1, 1024], f16>
}
tgraph.graph @scores(%q: !tgraph.tensor<[1, 128], f16>, %k: !tgraph.tensor<[256, 128], f16>) -> !tgraph.tensor<[1, 256], f16> {
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[1, 128], f16>, !tgraph.tensor<[256, 128], f16> -> !tgraph.tensor<[1, 256], f16>
  tgraph.output %s : !tgraph.tensor<[1, 256], f16>
}
tgraph.graph @linear_kn(%x: !tgraph.tensor<[1, 2048], f16>, %w: !tgraph.tensor<[2048, 512], f16>) -> !tgraph.tensor<[1, 512], f16> {
  %y = tgraph.matmul %x, %w : !tgraph.tensor<[1, 2048], f16>, !tgraph.tensor<[2048, 512], f16> -> !tgraph.tensor<[1, 512], f16>
  tgraph.output %y : !tgraph.tensor<[1, 512], f16>
}
tgraph.graph @pv(%p: !tgraph.tensor<[1, 8, 1, 512], f16>, %v: !tgraph.tensor<[1, 8, 512, 128], f16>) -> !tgraph.tensor<[1, 8, 1, 128], f16> {
  %o = tgraph.matmul %p, %v : !tgraph.tensor<[1, 8, 1, 512], f16>, !tgraph.tensor<[1, 8, 512, 128], f16> -> !tgraph.tensor<[1, 8, 1, 128], f16>
  tgraph.output %o : !tgraph.tensor<[1, 8, 1, 128], f16>
}
