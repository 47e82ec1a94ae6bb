// RUN: cleave-opt %s --split-input-file --parsing-diagnostics | filecheck %s
// The tilelang checks made while parsing, one per chunk: a buffer scope is one of a closed set.

tilelang.kernel @scope(%x: !tilelang.buffer<[128, 64], f16, global>, %y: !tilelang.buffer<[128, 64], f16, local>) grid (bx) in (2) threads 128 outputs 1 {
}

// CHECK: !tilelang.buffer<[128, 64], f16, local>
// CHECK-NEXT: {{^ +\^\^\^\^\^$}}
// CHECK-NEXT: tilelang.buffer scope must be global, shared, fragment, got 'local'

// -----

"test.op"() {s = #tilelang<scope fragment>} : () -> ()

// CHECK: -----
// CHECK:      "test.op"() {s = #tilelang<scope fragment>} : () -> ()
