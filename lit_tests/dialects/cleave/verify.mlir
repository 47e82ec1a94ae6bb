// RUN: cleave-opt %s --split-input-file --verify-diagnostics | filecheck %s
// A declared `cleave.*` key holding another attribute type (a string from an older IR) fails to verify.

tgraph.graph @old(%a: !tgraph.tensor<[4], f16>) -> !tgraph.tensor<[4], f16> attributes {cleave.stage = "split"} {
  tgraph.output %a : !tgraph.tensor<[4], f16>
}

// CHECK: error: tgraph.graph: cleave.stage must be a cleave.stage attribute, got "split"

// -----

itgraph.kernel @mem(%x: !tgraph.tensor<[64, 32], f32>, %y: !tgraph.tensor<[64, 32], f32>) attributes {num_outputs = 1 : i64} {
  itgraph.parallel (p0) in (4) {
    %t = itgraph.load %x at #itgraph.tmap<[16*p0, 0], [16, 32]> {cleave.mem = "shared"} : !tgraph.tensor<[64, 32], f32> -> !tgraph.tensor<[16, 32], f32>
    itgraph.store %t, %y at #itgraph.tmap<[16*p0, 0], [16, 32]> : !tgraph.tensor<[16, 32], f32>, !tgraph.tensor<[64, 32], f32>
  }
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: itgraph.load: cleave.mem must be a cleave.mem attribute, got "shared"

// -----

itgraph.kernel @tiles(%x: !tgraph.tensor<[64, 32], f32>, %y: !tgraph.tensor<[64, 32], f32>) attributes {num_outputs = 1 : i64, cleave.tiles = "out=[16, 32] reduce=none"} {
  itgraph.parallel (p0) in (4) {
    %t = itgraph.load %x at #itgraph.tmap<[16*p0, 0], [16, 32]> : !tgraph.tensor<[64, 32], f32> -> !tgraph.tensor<[16, 32], f32>
    itgraph.store %t, %y at #itgraph.tmap<[16*p0, 0], [16, 32]> : !tgraph.tensor<[16, 32], f32>, !tgraph.tensor<[64, 32], f32>
  }
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: itgraph.kernel: cleave.tiles must be a cleave.tiles attribute, got "out=[16, 32] reduce=none"

// -----

"test.op"() {v = #cleave.view<input = 0, perm = [0, 0]>} : () -> ()

// CHECK-NEXT: -----
// CHECK-NEXT: cleave.view: perm [0, 0] is not a permutation

// -----

"test.op"() {v = #cleave.view<input = 0, slices = [[1, 0, 0]]>} : () -> ()

// CHECK-NEXT: -----
// CHECK-NEXT: cleave.view: a slice is [dim, start >= 0, size >= 1], got [1, 0, 0]

// -----

"test.op"() {p = #cleave.part<output = 0, dim = 1, perm = [1, 1]>} : () -> ()

// CHECK-NEXT: -----
// CHECK-NEXT: cleave.part: perm [1, 1] is not a permutation

// -----

"test.op"() {j = #cleave.join<dim = 1, parts = [#cleave.view<input = 0>]>} : () -> ()

// CHECK-NEXT: -----
// CHECK-NEXT: cleave.join: joins at least 2 views, got 1
