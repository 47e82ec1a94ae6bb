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

// -----

itgraph.kernel @seq_kind(%x: !tgraph.tensor<[64, 32], f32>, %y: !tgraph.tensor<[64, 1], f32>) attributes {num_outputs = 1 : i64} {
  itgraph.parallel (p0) in (4) {
    %t = itgraph.load %x at #itgraph.tmap<[16*p0, 0], [16, 32]> : !tgraph.tensor<[64, 32], f32> -> !tgraph.tensor<[16, 32], f32>
    %a = itgraph.sequential r0 in 2 accumulate (sum, prod) : !tgraph.tensor<[16, 1], f32>, !tgraph.tensor<[16, 1], f32> {
      %s = tgraph.reduce sum %t dim 1 : !tgraph.tensor<[16, 32], f32> -> !tgraph.tensor<[16, 1], f32>
      itgraph.yield %s, %s : !tgraph.tensor<[16, 1], f32>, !tgraph.tensor<[16, 1], f32>
    }
  }
}

// CHECK: -----
// CHECK: accumulate (sum, prod)
// CHECK-NEXT: {{^ +\^\^\^\^$}}
// CHECK-NEXT: itgraph.sequential: unknown accumulate kind 'prod' (expected sum, max, rescaled_sum)

// -----

itgraph.kernel @mask_fill(%x: !tgraph.tensor<[64, 32], f32>, %y: !tgraph.tensor<[64, 32], f32>) attributes {num_outputs = 1 : i64} {
  itgraph.parallel (p0) in (4) {
    %t = itgraph.load %x at #itgraph.tmap<[16*p0, 0], [16, 32]> : !tgraph.tensor<[64, 32], f32> -> !tgraph.tensor<[16, 32], f32>
    %m = itgraph.mask %t dim 1 offset 0 bound 32 fill pos_inf : !tgraph.tensor<[16, 32], f32> -> !tgraph.tensor<[16, 32], f32>
  }
}

// CHECK: -----
// CHECK: itgraph.mask: unknown fill 'pos_inf' (expected zero, neg_inf)

// -----

itgraph.kernel @mask_old_fill(%x: !tgraph.tensor<[64, 32], f32>, %y: !tgraph.tensor<[64, 32], f32>) attributes {num_outputs = 1 : i64} {
  itgraph.parallel (p0) in (4) {
    %t = itgraph.load %x at #itgraph.tmap<[16*p0, 0], [16, 32]> : !tgraph.tensor<[64, 32], f32> -> !tgraph.tensor<[16, 32], f32>
    %m = itgraph.mask %t dim 1 offset "0" bound "32" fill "inf" : !tgraph.tensor<[16, 32], f32> -> !tgraph.tensor<[16, 32], f32>
  }
}

// CHECK: -----
// CHECK: itgraph.mask: unknown fill 'inf' (expected zero, neg_inf)

// -----

itgraph.kernel @mask_offset(%x: !tgraph.tensor<[64, 32], f32>, %y: !tgraph.tensor<[64, 32], f32>) attributes {num_outputs = 1 : i64} {
  itgraph.parallel (p0) in (4) {
    %t = itgraph.load %x at #itgraph.tmap<[16*p0, 0], [16, 32]> : !tgraph.tensor<[64, 32], f32> -> !tgraph.tensor<[16, 32], f32>
    %m = itgraph.mask %t dim 1 offset "16*" bound "32" fill "zero" : !tgraph.tensor<[16, 32], f32> -> !tgraph.tensor<[16, 32], f32>
  }
}

// CHECK: -----
// CHECK: itgraph.mask: expected an integer, a name or '(' in index expression '16*'

// -----

itgraph.kernel @mask_dim(%x: !tgraph.tensor<[64, 32], f32>, %y: !tgraph.tensor<[64, 32], f32>) attributes {num_outputs = 1 : i64} {
  itgraph.parallel (p0) in (4) {
    %t = itgraph.load %x at #itgraph.tmap<[16*p0, 0], [16, 32]> : !tgraph.tensor<[64, 32], f32> -> !tgraph.tensor<[16, 32], f32>
    %m = itgraph.mask %t dim 99999999999999999999999 offset 0 bound 32 fill zero : !tgraph.tensor<[16, 32], f32> -> !tgraph.tensor<[16, 32], f32>
  }
}

// CHECK: -----
// CHECK: itgraph.mask: dim 99999999999999999999999 out of range
