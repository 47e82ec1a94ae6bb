// cleave-lower-tilelang: every kernel waits for the kernels launched before it (`tilelang.wait_prior_grids`,
// `T.pdl_sync()`) first after its allocations, before it reads global memory. TileLang then launches it with
// programmatic stream serialization: its launch overlaps the end of the kernel before it (a Split-K part
// before its combine, a GEMM before the row sum of its output). On the H200 (bench/results/launch_overlap_2026-12-03_H200.md) candidates of two
// kernels ran 0.3-0.6 us faster (matmul_rowsum S1024 6.09 -> 5.76 us). `overlap-launches=false` leaves it out.
// A kernel that loads elements of a global buffer itself (@gemv_k0 reads its weight rows from global
// memory) does without: with the wait, TileLang drops `__restrict__` and those loads lose the
// read-only cache path (Llama-3-8B's decode projections ran 0.3-1.1 us slower with it).
// RUN: cleave-opt %s -p 'cleave-schedule{top-k=1},cleave-place-memory,cleave-lower-tilelang' 2>/dev/null | filecheck %s
// RUN: cleave-opt %s -p 'cleave-schedule{top-k=1},cleave-place-memory,cleave-lower-tilelang{overlap-launches=false}' 2>/dev/null | filecheck %s --check-prefix=OFF
// RUN: cleave-opt %s -p 'cleave-schedule{top-k=1},cleave-place-memory' -t tilelang 2>/dev/null | filecheck %s --check-prefix=PY

// CHECK:      tilelang.kernel @mm_k0
// CHECK:        tilelang.alloc_
// CHECK-NOT:    tilelang.copy
// CHECK:        tilelang.wait_prior_grids
// CHECK-NEXT:   tilelang.{{[a-z_]+}}
// CHECK-NOT:    tilelang.alloc_
// CHECK-NOT:    tilelang.wait_prior_grids
// CHECK:      tilelang.kernel @rowsum_k0
// CHECK-NOT:    tilelang.copy
// CHECK:        tilelang.wait_prior_grids
// CHECK-NEXT:   tilelang.copy

// CHECK:      tilelang.kernel @gemv_k0
// CHECK-NOT:    tilelang.wait_prior_grids
// CHECK:        tilelang.load %w[{{.*}}] : !tilelang.buffer<[4096, 4096], f16, global>
// CHECK-NOT:    tilelang.wait_prior_grids

// OFF-NOT:    tilelang.wait_prior_grids

// PY:         def mm_k0(
// PY:           T.pdl_sync()
// PY:         def rowsum_k0(
// PY:           T.alloc_
// PY-NOT:       T.copy
// PY:           T.pdl_sync()
// PY-NEXT:      T.copy(

tgraph.graph @mm(%a: !tgraph.tensor<[256, 128], f16>, %b: !tgraph.tensor<[128, 256], f16>) -> !tgraph.tensor<[256, 256], f16> {
  %ab = tgraph.matmul %a, %b : !tgraph.tensor<[256, 128], f16>, !tgraph.tensor<[128, 256], f16> -> !tgraph.tensor<[256, 256], f16>
  tgraph.output %ab : !tgraph.tensor<[256, 256], f16>
}
tgraph.graph @rowsum(%x: !tgraph.tensor<[256, 256], f16>) -> !tgraph.tensor<[256, 1], f16> {
  %o = tgraph.reduce sum %x dim 1 : !tgraph.tensor<[256, 256], f16> -> !tgraph.tensor<[256, 1], f16>
  tgraph.output %o : !tgraph.tensor<[256, 1], f16>
}
tgraph.graph @gemv(%x: !tgraph.tensor<[1, 4096], f16>, %w: !tgraph.tensor<[4096, 4096], f16>) -> !tgraph.tensor<[1, 4096], f16> {
  %o = tgraph.matmul %x, %w transpose_b : !tgraph.tensor<[1, 4096], f16>, !tgraph.tensor<[4096, 4096], f16> -> !tgraph.tensor<[1, 4096], f16>
  tgraph.output %o : !tgraph.tensor<[1, 4096], f16>
}
