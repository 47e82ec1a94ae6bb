// RUN: cleave-opt %s --split-input-file --parsing-diagnostics | filecheck %s
// The itgraph checks made while parsing, one per chunk (xDSL prints the source line, a caret line,
// then the message).

itgraph.kernel @tmap_dims(%x: !tgraph.tensor<[64, 32], f32>, %y: !tgraph.tensor<[64, 32], f32>) attributes {num_outputs = 1 : i64} {
  itgraph.parallel (p0) in (4) {
    %t = itgraph.load %x at #itgraph.tmap<[16*p0], [16, 32]> : !tgraph.tensor<[64, 32], f32> -> !tgraph.tensor<[16, 32], f32>
    itgraph.store %t, %y at #itgraph.tmap<[16*p0, 0], [16, 32]> : !tgraph.tensor<[16, 32], f32>, !tgraph.tensor<[64, 32], f32>
  }
}

// CHECK: itgraph.tmap: 1 offsets for 2 tile dims

// -----

itgraph.kernel @no_outputs(%x: !tgraph.tensor<[64, 32], f32>, %y: !tgraph.tensor<[64, 32], f32>) {
  itgraph.parallel (p0) in (4) {
    %t = itgraph.load %x at #itgraph.tmap<[16*p0, 0], [16, 32]> : !tgraph.tensor<[64, 32], f32> -> !tgraph.tensor<[16, 32], f32>
    itgraph.store %t, %y at #itgraph.tmap<[16*p0, 0], [16, 32]> : !tgraph.tensor<[16, 32], f32>, !tgraph.tensor<[64, 32], f32>
  }
}

// CHECK: -----
// CHECK: itgraph.kernel @no_outputs needs attributes {num_outputs = N}

// -----

itgraph.kernel @zero_tile(%x: !tgraph.tensor<[64, 32], f32>, %y: !tgraph.tensor<[64, 32], f32>) attributes {num_outputs = 1 : i64} {
  itgraph.parallel (p0) in (4) {
    %t = itgraph.load %x at #itgraph.tmap<[16*p0, 0], [16, 0]> : !tgraph.tensor<[64, 32], f32> -> !tgraph.tensor<[16, 0], f32>
  }
}

// CHECK: -----
// CHECK: tile dims must be positive integers, got 0

// -----

itgraph.kernel @zero_extent(%x: !tgraph.tensor<[64, 32], f32>, %y: !tgraph.tensor<[64, 32], f32>) attributes {num_outputs = 1 : i64} {
  itgraph.parallel (p0) in (0) {
  }
}

// CHECK: -----
// CHECK: loop extents must be positive integers, got 0
