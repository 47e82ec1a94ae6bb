// RUN: cleave-opt %s | filecheck %s
// RUN: cleave-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: ROUNDTRIP
// RUN: cleave-opt %s | cleave-opt - | filecheck %s
// tilelang.exp2_split: 2^x of a T.Parallel body, one block of 8 columns in `every` on the FMA pipes
// (the column a variable of the enclosing loop), printed with its column and share.

// CHECK:      tilelang.parallel (i0, i1) in (64, 64) {
// CHECK-NEXT:   %[[V:.*]] = tilelang.load %s[i0, i1]
// CHECK-NEXT:   %[[E:.*]] = tilelang.exp2_split %[[V]] column "i1" every 4 : f32
// CHECK-NEXT:   tilelang.store %[[E]], %s[i0, i1]

// GENERIC: "tilelang.exp2_split"(%{{.*}}) <{column = "i1", every = 4 : i64}> : (f32) -> f32

tilelang.kernel @split(%x: !tilelang.buffer<[64, 64], f32, global>) grid (bx) in (1) threads 128 outputs 1 {
  %s = tilelang.alloc_fragment : !tilelang.buffer<[64, 64], f32, fragment>
  tilelang.parallel (i0, i1) in (64, 64) {
    %v = tilelang.load %s[i0, i1] : !tilelang.buffer<[64, 64], f32, fragment>
    %e = tilelang.exp2_split %v column "i1" every 4 : f32
    tilelang.store %e, %s[i0, i1] : f32, !tilelang.buffer<[64, 64], f32, fragment>
  }
}
