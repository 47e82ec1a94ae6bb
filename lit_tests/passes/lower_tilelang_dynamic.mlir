// A kernel made dynamic along the rows of %x (cleave-dynamic-shapes): global shapes and the grid are
// symbolic in the tilelang kernel, printed with T.dynamic; the grid covers the rows rounded up to the
// 16-row tile (T.ceildiv: the tail block's out-of-range rows are not written), and cleave-run checks
// it at its representative size (tests/test_dynamic.py runs other sizes).
// RUN: cleave-opt %s -p 'cleave-schedule{top-k=1},cleave-place-memory,cleave-dynamic-shapes,cleave-lower-tilelang' 2>/dev/null | filecheck %s
// RUN: cleave-opt %s -p 'cleave-schedule{top-k=1},cleave-place-memory,cleave-dynamic-shapes' -t tilelang 2>/dev/null | filecheck %s --check-prefix=PY
// RUN: cleave-opt %s -p 'cleave-schedule{top-k=1},cleave-place-memory,cleave-dynamic-shapes,cleave-lower-tilelang' 2>/dev/null | cleave-run - | filecheck %s --check-prefix=CMP

// CHECK:      tilelang.kernel @g_k0(%x: !tilelang.buffer<[x_d0, 512], f16, global>, %w: !tilelang.buffer<[512, 64], f16, global>, %out0: !tilelang.buffer<[x_d0, 64], f16, global>)
// CHECK-SAME: grid (bx, by) in (x_d0 ceildiv 16, 4)
// CHECK:      tilelang.copy %x at <[16*bx, 128*r0], [16, 128]>

// PY:      x_d0 = T.dynamic("x_d0")
// PY-NEXT: x_stride0 = T.dynamic("x_stride0")
// PY-NEXT: w_stride0 = T.dynamic("w_stride0")
// PY-NEXT: out0_stride0 = T.dynamic("out0_stride0")
// PY-NEXT: @T.prim_func
// PY-NEXT: def g_k0(x: T.StridedTensor((x_d0, 512), (x_stride0, 1), "float16"), w: T.StridedTensor((512, 64), (w_stride0, 1), "float16"), out0: T.StridedTensor((x_d0, 64), (out0_stride0, 1), "float16")):
// PY-NEXT:     with T.Kernel(T.ceildiv(x_d0, 16), 4, threads=64) as (bx, by):

// CMP: @g_k0 vs @g: agree (max relative error {{.*}}, tolerance 0.02)

tgraph.graph @g(%x: !tgraph.tensor<[256, 512], f16> {dynamic = array<i64: 0>}, %w: !tgraph.tensor<[512, 64], f16>) -> !tgraph.tensor<[256, 64], f16> {
  %y = tgraph.matmul %x, %w : !tgraph.tensor<[256, 512], f16>, !tgraph.tensor<[512, 64], f16> -> !tgraph.tensor<[256, 64], f16>
  tgraph.output %y : !tgraph.tensor<[256, 64], f16>
}
