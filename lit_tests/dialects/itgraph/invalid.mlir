// RUN: cleave-opt %s --split-input-file --verify-diagnostics | filecheck %s
// Every verifier message of the itgraph dialect, one bad kernel per chunk. Every chunk must fail: the
// CHECK-NEXT chain leaves no room for a chunk that verifies (it would print a module between the errors).

itgraph.kernel @two_bodies(%x: !tgraph.tensor<[64, 32], f32>, %y: !tgraph.tensor<[64, 32], f32>) attributes {num_outputs = 1 : i64} {
  itgraph.parallel (p0) in (4) {
    %t = itgraph.load %x at #itgraph.tmap<[16*p0, 0], [16, 32]> : !tgraph.tensor<[64, 32], f32> -> !tgraph.tensor<[16, 32], f32>
    itgraph.store %t, %y at #itgraph.tmap<[16*p0, 0], [16, 32]> : !tgraph.tensor<[16, 32], f32>, !tgraph.tensor<[64, 32], f32>
  }
  itgraph.parallel (p0) in (4) {
    %t = itgraph.load %x at #itgraph.tmap<[16*p0, 0], [16, 32]> : !tgraph.tensor<[64, 32], f32> -> !tgraph.tensor<[16, 32], f32>
    itgraph.store %t, %y at #itgraph.tmap<[16*p0, 0], [16, 32]> : !tgraph.tensor<[16, 32], f32>, !tgraph.tensor<[64, 32], f32>
  }
}

// CHECK: error: itgraph.kernel @two_bodies: body must be exactly one itgraph.parallel

// -----

itgraph.kernel @outputs(%x: !tgraph.tensor<[64, 32], f32>, %y: !tgraph.tensor<[64, 32], f32>) attributes {num_outputs = 3 : i64} {
  itgraph.parallel (p0) in (4) {
    %t = itgraph.load %x at #itgraph.tmap<[16*p0, 0], [16, 32]> : !tgraph.tensor<[64, 32], f32> -> !tgraph.tensor<[16, 32], f32>
    itgraph.store %t, %y at #itgraph.tmap<[16*p0, 0], [16, 32]> : !tgraph.tensor<[16, 32], f32>, !tgraph.tensor<[64, 32], f32>
  }
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: itgraph.kernel @outputs: bad number of outputs

// -----

itgraph.kernel @tmap_rank(%x: !tgraph.tensor<[64, 32], f32>, %y: !tgraph.tensor<[64, 32], f32>) attributes {num_outputs = 1 : i64} {
  itgraph.parallel (p0) in (4) {
    %t = itgraph.load %x at #itgraph.tmap<[16*p0, 0, 0], [16, 32, 1]> : !tgraph.tensor<[64, 32], f32> -> !tgraph.tensor<[16, 32, 1], f32>
    %u = tgraph.reshape %t : !tgraph.tensor<[16, 32, 1], f32> -> !tgraph.tensor<[16, 32], f32>
    itgraph.store %u, %y at #itgraph.tmap<[16*p0, 0], [16, 32]> : !tgraph.tensor<[16, 32], f32>, !tgraph.tensor<[64, 32], f32>
  }
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: itgraph.load: tmap has 3 dims, source has 2

// -----

itgraph.kernel @tmap_shape(%x: !tgraph.tensor<[64, 32], f32>, %y: !tgraph.tensor<[64, 32], f32>) attributes {num_outputs = 1 : i64} {
  itgraph.parallel (p0) in (4) {
    %t = itgraph.load %x at #itgraph.tmap<[16*p0, 0], [16, 32]> : !tgraph.tensor<[64, 32], f32> -> !tgraph.tensor<[16, 16], f32>
    itgraph.store %t, %y at #itgraph.tmap<[16*p0, 0], [16, 16]> : !tgraph.tensor<[16, 16], f32>, !tgraph.tensor<[64, 32], f32>
  }
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: itgraph.load: tmap tile shape [16, 32] differs from the tile type [16, 16]

// -----

itgraph.kernel @tmap_var(%x: !tgraph.tensor<[64, 32], f32>, %y: !tgraph.tensor<[64, 32], f32>) attributes {num_outputs = 1 : i64} {
  itgraph.parallel (p0) in (4) {
    %t = itgraph.load %x at #itgraph.tmap<[16*q0, 0], [16, 32]> : !tgraph.tensor<[64, 32], f32> -> !tgraph.tensor<[16, 32], f32>
    itgraph.store %t, %y at #itgraph.tmap<[16*p0, 0], [16, 32]> : !tgraph.tensor<[16, 32], f32>, !tgraph.tensor<[64, 32], f32>
  }
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: itgraph.load: tmap dim 0 uses unknown loop variable(s) q0

// -----

itgraph.kernel @tmap_bounds(%x: !tgraph.tensor<[64, 32], f32>, %y: !tgraph.tensor<[64, 32], f32>) attributes {num_outputs = 1 : i64} {
  itgraph.parallel (p0) in (4) {
    %t = itgraph.load %x at #itgraph.tmap<[32*p0, 0], [32, 32]> : !tgraph.tensor<[64, 32], f32> -> !tgraph.tensor<[32, 32], f32>
    itgraph.store %t, %y at #itgraph.tmap<[32*p0, 0], [32, 32]> : !tgraph.tensor<[32, 32], f32>, !tgraph.tensor<[64, 32], f32>
  }
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: itgraph.load: tile out of bounds in dim 0: the last tile ends at 128 but the source has 64

// -----

itgraph.kernel @tmap_store_bounds(%x: !tgraph.tensor<[64, 32], f32>, %y: !tgraph.tensor<[64, 32], f32>) attributes {num_outputs = 1 : i64} {
  itgraph.parallel (p0) in (4) {
    %t = itgraph.load %x at #itgraph.tmap<[16*p0, 0], [16, 32]> : !tgraph.tensor<[64, 32], f32> -> !tgraph.tensor<[16, 32], f32>
    itgraph.store %t, %y at #itgraph.tmap<[16*p0, 16], [16, 32]> : !tgraph.tensor<[16, 32], f32>, !tgraph.tensor<[64, 32], f32>
  }
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: itgraph.store: tile out of bounds in dim 1: the last tile ends at 48 but the output has 32

// -----

itgraph.kernel @cover_zero(%x: !tgraph.tensor<[64, 32], f32>, %y: !tgraph.tensor<[64, 32], f32>) attributes {num_outputs = 1 : i64} {
  itgraph.parallel (p0) in (4) {
    %t = itgraph.load %x at #itgraph.tmap<[16*p0, 0], [16, 16]> : !tgraph.tensor<[64, 32], f32> -> !tgraph.tensor<[16, 16], f32>
    itgraph.store %t, %y at #itgraph.tmap<[16*p0, 0], [16, 16]> : !tgraph.tensor<[16, 16], f32>, !tgraph.tensor<[64, 32], f32>
  }
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: itgraph.parallel: the stores do not cover dim 1 of the output: offset 0, tile 16 of 32

// -----

itgraph.kernel @cover_form(%x: !tgraph.tensor<[64, 32], f32>, %y: !tgraph.tensor<[64, 32], f32>) attributes {num_outputs = 1 : i64} {
  itgraph.parallel (p0) in (4) {
    %t = itgraph.load %x at #itgraph.tmap<[8*p0, 0], [16, 32]> : !tgraph.tensor<[64, 32], f32> -> !tgraph.tensor<[16, 32], f32>
    itgraph.store %t, %y at #itgraph.tmap<[8*p0, 0], [16, 32]> : !tgraph.tensor<[16, 32], f32>, !tgraph.tensor<[64, 32], f32>
  }
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: itgraph.parallel: store offset 8*p0 in dim 0 is not <var>*<tile>

// -----

itgraph.kernel @cover_overlap(%x: !tgraph.tensor<[4, 4], f32>, %y: !tgraph.tensor<[4, 4], f32>) attributes {num_outputs = 1 : i64} {
  itgraph.parallel (p0) in (4) {
    %t = itgraph.load %x at #itgraph.tmap<[p0, p0], [1, 1]> : !tgraph.tensor<[4, 4], f32> -> !tgraph.tensor<[1, 1], f32>
    itgraph.store %t, %y at #itgraph.tmap<[p0, p0], [1, 1]> : !tgraph.tensor<[1, 1], f32>, !tgraph.tensor<[4, 4], f32>
  }
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: itgraph.parallel: loop variable p0 tiles two output dims: tiles overlap

// -----

itgraph.kernel @cover_extent(%x: !tgraph.tensor<[64, 32], f32>, %y: !tgraph.tensor<[64, 32], f32>) attributes {num_outputs = 1 : i64} {
  itgraph.parallel (p0) in (2) {
    %t = itgraph.load %x at #itgraph.tmap<[16*p0, 0], [16, 32]> : !tgraph.tensor<[64, 32], f32> -> !tgraph.tensor<[16, 32], f32>
    itgraph.store %t, %y at #itgraph.tmap<[16*p0, 0], [16, 32]> : !tgraph.tensor<[16, 32], f32>, !tgraph.tensor<[64, 32], f32>
  }
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: itgraph.parallel: p0 in (0..2) with tile 16 does not cover dim 0 of size 64

// -----

itgraph.kernel @cover_twice(%x: !tgraph.tensor<[64, 32], f32>, %y: !tgraph.tensor<[64, 32], f32>) attributes {num_outputs = 1 : i64} {
  itgraph.parallel (p0, p1) in (4, 2) {
    %t = itgraph.load %x at #itgraph.tmap<[16*p0, 0], [16, 32]> : !tgraph.tensor<[64, 32], f32> -> !tgraph.tensor<[16, 32], f32>
    itgraph.store %t, %y at #itgraph.tmap<[16*p0, 0], [16, 32]> : !tgraph.tensor<[16, 32], f32>, !tgraph.tensor<[64, 32], f32>
  }
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: itgraph.parallel: loop variable(s) p1 write the same tile twice

// -----

itgraph.kernel @seq_kinds(%x: !tgraph.tensor<[64, 32], f32>, %y: !tgraph.tensor<[64, 1], f32>) attributes {num_outputs = 1 : i64} {
  itgraph.parallel (p0) in (4) {
    %t = itgraph.load %x at #itgraph.tmap<[16*p0, 0], [16, 32]> : !tgraph.tensor<[64, 32], f32> -> !tgraph.tensor<[16, 32], f32>
    %a = itgraph.sequential r0 in 2 accumulate (sum, max) : !tgraph.tensor<[16, 1], f32> {
      %s = tgraph.reduce sum %t dim 1 : !tgraph.tensor<[16, 32], f32> -> !tgraph.tensor<[16, 1], f32>
      itgraph.yield %s : !tgraph.tensor<[16, 1], f32>
    }
    itgraph.store %a, %y at #itgraph.tmap<[16*p0, 0], [16, 1]> : !tgraph.tensor<[16, 1], f32>, !tgraph.tensor<[64, 1], f32>
  }
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: itgraph.sequential: 2 accumulate kinds for 1 results

// -----

itgraph.kernel @seq_kind(%x: !tgraph.tensor<[64, 32], f32>, %y: !tgraph.tensor<[64, 1], f32>) attributes {num_outputs = 1 : i64} {
  itgraph.parallel (p0) in (4) {
    %t = itgraph.load %x at #itgraph.tmap<[16*p0, 0], [16, 32]> : !tgraph.tensor<[64, 32], f32> -> !tgraph.tensor<[16, 32], f32>
    %a = "itgraph.sequential"() <{var = "r0", extent = #cleave.expr<2>, kinds = ["prod"]}> ({
      %s = tgraph.reduce sum %t dim 1 : !tgraph.tensor<[16, 32], f32> -> !tgraph.tensor<[16, 1], f32>
      itgraph.yield %s : !tgraph.tensor<[16, 1], f32>
    }) : () -> !tgraph.tensor<[16, 1], f32>
    itgraph.store %a, %y at #itgraph.tmap<[16*p0, 0], [16, 1]> : !tgraph.tensor<[16, 1], f32>, !tgraph.tensor<[64, 1], f32>
  }
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: itgraph.sequential: accumulate kinds must be one of sum, max, rescaled_sum, got "prod"

// -----

itgraph.kernel @seq_rescaled(%x: !tgraph.tensor<[64, 32], f32>, %y: !tgraph.tensor<[64, 1], f32>) attributes {num_outputs = 1 : i64} {
  itgraph.parallel (p0) in (4) {
    %t = itgraph.load %x at #itgraph.tmap<[16*p0, 0], [16, 32]> : !tgraph.tensor<[64, 32], f32> -> !tgraph.tensor<[16, 32], f32>
    %a = itgraph.sequential r0 in 2 accumulate (rescaled_sum) : !tgraph.tensor<[16, 1], f32> {
      %s = tgraph.reduce sum %t dim 1 : !tgraph.tensor<[16, 32], f32> -> !tgraph.tensor<[16, 1], f32>
      itgraph.yield %s : !tgraph.tensor<[16, 1], f32>
    }
    itgraph.store %a, %y at #itgraph.tmap<[16*p0, 0], [16, 1]> : !tgraph.tensor<[16, 1], f32>, !tgraph.tensor<[64, 1], f32>
  }
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: itgraph.sequential: rescaled_sum needs exactly one max result (the running max)

// -----

itgraph.kernel @seq_types(%x: !tgraph.tensor<[64, 32], f32>, %y: !tgraph.tensor<[64, 1], f32>) attributes {num_outputs = 1 : i64} {
  itgraph.parallel (p0) in (4) {
    %t = itgraph.load %x at #itgraph.tmap<[16*p0, 0], [16, 32]> : !tgraph.tensor<[64, 32], f32> -> !tgraph.tensor<[16, 32], f32>
    %a = itgraph.sequential r0 in 2 accumulate (sum) : !tgraph.tensor<[16, 1], f32> {
      itgraph.yield %t : !tgraph.tensor<[16, 32], f32>
    }
    itgraph.store %a, %y at #itgraph.tmap<[16*p0, 0], [16, 1]> : !tgraph.tensor<[16, 1], f32>, !tgraph.tensor<[64, 1], f32>
  }
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: itgraph.sequential: yielded tile types differ from the results

// -----

itgraph.kernel @mask_type(%x: !tgraph.tensor<[64, 32], f32>, %y: !tgraph.tensor<[64, 32], f32>) attributes {num_outputs = 1 : i64} {
  itgraph.parallel (p0) in (4) {
    %t = itgraph.load %x at #itgraph.tmap<[16*p0, 0], [16, 32]> : !tgraph.tensor<[64, 32], f32> -> !tgraph.tensor<[16, 32], f32>
    %m = itgraph.mask %t dim 1 offset 0 bound 32 fill zero : !tgraph.tensor<[16, 32], f32> -> !tgraph.tensor<[16, 16], f32>
    itgraph.store %t, %y at #itgraph.tmap<[16*p0, 0], [16, 32]> : !tgraph.tensor<[16, 32], f32>, !tgraph.tensor<[64, 32], f32>
  }
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: itgraph.mask: the result type must equal the input type

// -----

itgraph.kernel @mask_dim(%x: !tgraph.tensor<[64, 32], f32>, %y: !tgraph.tensor<[64, 32], f32>) attributes {num_outputs = 1 : i64} {
  itgraph.parallel (p0) in (4) {
    %t = itgraph.load %x at #itgraph.tmap<[16*p0, 0], [16, 32]> : !tgraph.tensor<[64, 32], f32> -> !tgraph.tensor<[16, 32], f32>
    %m = itgraph.mask %t dim 2 offset 0 bound 32 fill zero : !tgraph.tensor<[16, 32], f32> -> !tgraph.tensor<[16, 32], f32>
    itgraph.store %m, %y at #itgraph.tmap<[16*p0, 0], [16, 32]> : !tgraph.tensor<[16, 32], f32>, !tgraph.tensor<[64, 32], f32>
  }
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: itgraph.mask: dim 2 out of range for rank 2

// -----

itgraph.kernel @mask_fill(%x: !tgraph.tensor<[64, 32], f32>, %y: !tgraph.tensor<[64, 32], f32>) attributes {num_outputs = 1 : i64} {
  itgraph.parallel (p0) in (4) {
    %t = itgraph.load %x at #itgraph.tmap<[16*p0, 0], [16, 32]> : !tgraph.tensor<[64, 32], f32> -> !tgraph.tensor<[16, 32], f32>
    %m = "itgraph.mask"(%t) <{axis = 1 : i64, offset = #cleave.expr<0>, bound = #cleave.expr<32>, fill = "pos_inf"}> : (!tgraph.tensor<[16, 32], f32>) -> !tgraph.tensor<[16, 32], f32>
    itgraph.store %m, %y at #itgraph.tmap<[16*p0, 0], [16, 32]> : !tgraph.tensor<[16, 32], f32>, !tgraph.tensor<[64, 32], f32>
  }
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: itgraph.mask: fill must be one of zero, neg_inf, got "pos_inf"
// -----

itgraph.kernel @seq_yield(%x: !tgraph.tensor<[64, 32], f32>, %y: !tgraph.tensor<[64, 1], f32>) attributes {num_outputs = 1 : i64} {
  itgraph.parallel (p0) in (4) {
    %t = itgraph.load %x at #itgraph.tmap<[16*p0, 0], [16, 32]> : !tgraph.tensor<[64, 32], f32> -> !tgraph.tensor<[16, 32], f32>
    %a = itgraph.sequential r0 in 2 accumulate (sum) : !tgraph.tensor<[16, 1], f32> {
      %s = tgraph.reduce sum %t dim 1 : !tgraph.tensor<[16, 32], f32> -> !tgraph.tensor<[16, 1], f32>
      "test.termop"() : () -> ()
    }
    itgraph.store %a, %y at #itgraph.tmap<[16*p0, 0], [16, 1]> : !tgraph.tensor<[16, 1], f32>, !tgraph.tensor<[64, 1], f32>
  }
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: itgraph.sequential: body must end with itgraph.yield

// -----

// The generic form is the only way to give a loop variable no extent.
itgraph.kernel @extents(%x: !tgraph.tensor<[64, 32], f32>, %y: !tgraph.tensor<[64, 32], f32>) attributes {num_outputs = 1 : i64} {
  "itgraph.parallel"() <{vars = ["p0", "p1"], extents = [#cleave.expr<4>]}> ({
    %t = itgraph.load %x at #itgraph.tmap<[16*p0, 0], [16, 32]> : !tgraph.tensor<[64, 32], f32> -> !tgraph.tensor<[16, 32], f32>
    itgraph.store %t, %y at #itgraph.tmap<[16*p0, 0], [16, 32]> : !tgraph.tensor<[16, 32], f32>, !tgraph.tensor<[64, 32], f32>
  }) : () -> ()
}

// CHECK-NEXT: -----
// CHECK-NEXT: error: itgraph.parallel: one extent per loop variable
