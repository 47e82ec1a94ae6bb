// RUN: cleave-opt %s --split-input-file --parsing-diagnostics | filecheck %s
// The tilelang checks made while parsing, one per chunk: a buffer scope and a gemm warp policy are
// each one of a closed set.

tilelang.kernel @scope(%x: !tilelang.buffer<[128, 64], f16, global>, %y: !tilelang.buffer<[128, 64], f16, local>) grid (bx) in (2) threads 128 outputs 1 {
}

// CHECK: !tilelang.buffer<[128, 64], f16, local>
// CHECK-NEXT: {{^ +\^\^\^\^\^$}}
// CHECK-NEXT: tilelang.buffer scope must be global, shared, fragment, got 'local'

// -----

"test.op"() {s = #tilelang<scope fragment>} : () -> ()

// CHECK: -----
// CHECK:      "test.op"() {s = #tilelang<scope fragment>} : () -> ()

// -----

tilelang.kernel @policy(%x: !tilelang.buffer<[64, 64], f16, global>) grid (bx) in (1) threads 128 outputs 1 {
  %a = tilelang.alloc_shared : !tilelang.buffer<[64, 64], f16, shared>
  %c = tilelang.alloc_fragment : !tilelang.buffer<[64, 64], f32, fragment>
  tilelang.gemm %a, %a, %c policy Diagonal : !tilelang.buffer<[64, 64], f16, shared>, !tilelang.buffer<[64, 64], f16, shared>, !tilelang.buffer<[64, 64], f32, fragment>
}

// CHECK: -----
// CHECK: tilelang.gemm %a, %a, %c policy Diagonal
// CHECK-NEXT: {{^ +\^\^\^\^\^\^\^\^$}}
// CHECK-NEXT: unknown warp policy 'Diagonal' (expected Square, FullRow, FullCol)

// -----

tilelang.kernel @no_policy(%x: !tilelang.buffer<[64, 64], f16, global>) grid (bx) in (1) threads 128 outputs 1 {
  %a = tilelang.alloc_shared : !tilelang.buffer<[64, 64], f16, shared>
  %c = tilelang.alloc_fragment : !tilelang.buffer<[64, 64], f32, fragment>
  tilelang.gemm %a, %a, %c policy : !tilelang.buffer<[64, 64], f16, shared>, !tilelang.buffer<[64, 64], f16, shared>, !tilelang.buffer<[64, 64], f32, fragment>
}

// CHECK: -----
// CHECK: expected a warp policy (Square, FullRow, FullCol)

// -----

"test.op"() {p = #tilelang<policy "fullrow">} : () -> ()

// CHECK: -----
// CHECK: "test.op"() {p = #tilelang<policy "fullrow">} : () -> ()
// CHECK-NEXT: {{^ +\^{9}$}}
// CHECK-NEXT: unknown warp policy 'fullrow' (expected Square, FullRow, FullCol)
