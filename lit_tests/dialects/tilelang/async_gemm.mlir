// RUN: cleave-opt %s | cleave-opt | filecheck %s
// RUN: ROUNDTRIP

// An async gemm (T.wgmma_gemm; `clear`: clear_accum=True) and the waits that retire it: `wait_gemm 1` leaves the newest gemm
// running; `retires` names the shared tiles the finished gemms read.
// CHECK:      tilelang.gemm %[[Q:.*]], %[[K:.*]], %[[S:.*]] transpose_b clear async policy FullRow
// CHECK-NEXT: tilelang.gemm %[[P:.*]], %[[V:.*]], %[[O:.*]] async policy FullRow
// CHECK-NEXT: tilelang.wait_gemm 1 retires %[[K]] : !tilelang.buffer<[128, 64], f16, shared>
// CHECK-NEXT: tilelang.wait_gemm 0 retires %[[V]] : !tilelang.buffer<[128, 64], f16, shared>
// CHECK-NEXT: tilelang.wait_gemm 0{{$}}
// A held [K, M] (a tile loaded from a tensor stored transposed): `transpose_a`, T.gemm(transpose_A=True).
// CHECK:      tilelang.gemm %[[V]], %[[K]], %{{.*}} transpose_a policy FullRow : !tilelang.buffer<[128, 64], f16, shared>, !tilelang.buffer<[128, 64], f16, shared>, !tilelang.buffer<[64, 64], f32, fragment>
tilelang.kernel @k(%x: !tilelang.buffer<[128, 64], f16, global>) grid (bx) in (1) threads 256 outputs 1 {
  %q = tilelang.alloc_shared : !tilelang.buffer<[128, 64], f16, shared>
  %k = tilelang.alloc_shared : !tilelang.buffer<[128, 64], f16, shared>
  %v = tilelang.alloc_shared : !tilelang.buffer<[128, 64], f16, shared>
  %s = tilelang.alloc_fragment : !tilelang.buffer<[128, 128], f32, fragment>
  %p = tilelang.alloc_fragment : !tilelang.buffer<[128, 128], f16, fragment>
  %o = tilelang.alloc_fragment : !tilelang.buffer<[128, 64], f32, fragment>
  tilelang.gemm %q, %k, %s transpose_b clear async policy FullRow : !tilelang.buffer<[128, 64], f16, shared>, !tilelang.buffer<[128, 64], f16, shared>, !tilelang.buffer<[128, 128], f32, fragment>
  tilelang.gemm %p, %v, %o async policy FullRow : !tilelang.buffer<[128, 128], f16, fragment>, !tilelang.buffer<[128, 64], f16, shared>, !tilelang.buffer<[128, 64], f32, fragment>
  tilelang.wait_gemm 1 retires %k : !tilelang.buffer<[128, 64], f16, shared>
  tilelang.wait_gemm 0 retires %v : !tilelang.buffer<[128, 64], f16, shared>
  tilelang.wait_gemm 0
  %t = tilelang.alloc_fragment : !tilelang.buffer<[64, 64], f32, fragment>
  tilelang.gemm %v, %k, %t transpose_a policy FullRow : !tilelang.buffer<[128, 64], f16, shared>, !tilelang.buffer<[128, 64], f16, shared>, !tilelang.buffer<[64, 64], f32, fragment>
}
