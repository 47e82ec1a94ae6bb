// cleave-canonicalize: a softmax's max shift is removed only where the outputs provably do not
// depend on it (degree 0 in exp(-max)); norms are written with rsqrt as examples/rmsnorm_matmul.mlir.
// RUN: cleave-opt %s --split-input-file -p cleave-canonicalize | filecheck %s
// RUN: cleave-opt %S/Inputs/mha_max.mlir -p cleave-canonicalize | filecheck %s --check-prefix=MHA
// RUN: cleave-opt %S/Inputs/gqa_decode_max.mlir -p cleave-canonicalize | filecheck %s --check-prefix=GQA

// The max-subtracted attention becomes examples/mha.mlir and examples/gqa_decode.mlir exactly.
// MHA:      %t = tgraph.scale %s, 0.088388347648318447
// MHA-NEXT: %e = tgraph.exp %t
// MHA-NEXT: %r = tgraph.reduce sum %e dim 3
// MHA-NEXT: %p = tgraph.div %e, %r
// MHA-NEXT: %o = tgraph.matmul %p, %v
// MHA-NOT:  max
// GQA:      %s = tgraph.matmul %q, %k transpose_b
// GQA-NEXT: %t = tgraph.scale %s, 0.088388347648318447
// GQA-NEXT: %e = tgraph.exp %t
// GQA-NEXT: %r = tgraph.reduce sum %e dim 3
// GQA-NOT:  max

// A softmax whose row max is also an output: the shift goes, the max stays for the output.
// CHECK-LABEL: tgraph.graph @softmax_and_max
// CHECK-NEXT:    %m = tgraph.reduce max %x dim 1
// CHECK-NEXT:    %e = tgraph.exp %x
// CHECK-NEXT:    %r = tgraph.reduce sum %e dim 1
// CHECK-NEXT:    %p = tgraph.div %e, %r
// CHECK-NEXT:    tgraph.output %p, %m
tgraph.graph @softmax_and_max(%x: !tgraph.tensor<[4, 64], f32>) -> (!tgraph.tensor<[4, 64], f32>, !tgraph.tensor<[4, 1], f32>) {
  %m = tgraph.reduce max %x dim 1 : !tgraph.tensor<[4, 64], f32> -> !tgraph.tensor<[4, 1], f32>
  %d = tgraph.sub %x, %m : !tgraph.tensor<[4, 64], f32>, !tgraph.tensor<[4, 1], f32> -> !tgraph.tensor<[4, 64], f32>
  %e = tgraph.exp %d : !tgraph.tensor<[4, 64], f32>
  %r = tgraph.reduce sum %e dim 1 : !tgraph.tensor<[4, 64], f32> -> !tgraph.tensor<[4, 1], f32>
  %p = tgraph.div %e, %r : !tgraph.tensor<[4, 64], f32>, !tgraph.tensor<[4, 1], f32> -> !tgraph.tensor<[4, 64], f32>
  tgraph.output %p, %m : !tgraph.tensor<[4, 64], f32>, !tgraph.tensor<[4, 1], f32>
}

// -----

// Degrees that cancel through sqrt and a product: e / sqrt(sum(e^2)) has degree 1 - 2/2 = 0.
// CHECK-LABEL: tgraph.graph @l2_normalized_exp
// CHECK-NEXT:    %e = tgraph.exp %x
// CHECK-NOT:     max
tgraph.graph @l2_normalized_exp(%x: !tgraph.tensor<[4, 64], f32>) -> !tgraph.tensor<[4, 64], f32> {
  %m = tgraph.reduce max %x dim 1 : !tgraph.tensor<[4, 64], f32> -> !tgraph.tensor<[4, 1], f32>
  %d = tgraph.sub %x, %m : !tgraph.tensor<[4, 64], f32>, !tgraph.tensor<[4, 1], f32> -> !tgraph.tensor<[4, 64], f32>
  %e = tgraph.exp %d : !tgraph.tensor<[4, 64], f32>
  %sq = tgraph.square %e : !tgraph.tensor<[4, 64], f32>
  %ss = tgraph.reduce sum %sq dim 1 : !tgraph.tensor<[4, 64], f32> -> !tgraph.tensor<[4, 1], f32>
  %n = tgraph.rsqrt %ss : !tgraph.tensor<[4, 1], f32>
  %o = tgraph.mul %e, %n : !tgraph.tensor<[4, 64], f32>, !tgraph.tensor<[4, 1], f32> -> !tgraph.tensor<[4, 64], f32>
  tgraph.output %o : !tgraph.tensor<[4, 64], f32>
}

// -----

// The numerator alone is an output (degree 1): the max stays.
// CHECK-LABEL: tgraph.graph @numerator_out
// CHECK-NEXT:    %m = tgraph.reduce max %x dim 1
// CHECK-NEXT:    %d = tgraph.sub %x, %m
// CHECK-NEXT:    %e = tgraph.exp %d
tgraph.graph @numerator_out(%x: !tgraph.tensor<[4, 64], f32>) -> !tgraph.tensor<[4, 64], f32> {
  %m = tgraph.reduce max %x dim 1 : !tgraph.tensor<[4, 64], f32> -> !tgraph.tensor<[4, 1], f32>
  %d = tgraph.sub %x, %m : !tgraph.tensor<[4, 64], f32>, !tgraph.tensor<[4, 1], f32> -> !tgraph.tensor<[4, 64], f32>
  %e = tgraph.exp %d : !tgraph.tensor<[4, 64], f32>
  tgraph.output %e : !tgraph.tensor<[4, 64], f32>
}

// -----

// A nonlinear op reads the shifted exp: the max stays.
// CHECK-LABEL: tgraph.graph @nonlinear_after
// CHECK:         %d = tgraph.sub %x, %m
// CHECK-NEXT:    %e = tgraph.exp %d
tgraph.graph @nonlinear_after(%x: !tgraph.tensor<[4, 64], f32>) -> !tgraph.tensor<[4, 64], f32> {
  %m = tgraph.reduce max %x dim 1 : !tgraph.tensor<[4, 64], f32> -> !tgraph.tensor<[4, 1], f32>
  %d = tgraph.sub %x, %m : !tgraph.tensor<[4, 64], f32>, !tgraph.tensor<[4, 1], f32> -> !tgraph.tensor<[4, 64], f32>
  %e = tgraph.exp %d : !tgraph.tensor<[4, 64], f32>
  %s = tgraph.sigmoid %e : !tgraph.tensor<[4, 64], f32>
  %r = tgraph.reduce sum %s dim 1 : !tgraph.tensor<[4, 64], f32> -> !tgraph.tensor<[4, 1], f32>
  %p = tgraph.div %s, %r : !tgraph.tensor<[4, 64], f32>, !tgraph.tensor<[4, 1], f32> -> !tgraph.tensor<[4, 64], f32>
  tgraph.output %p : !tgraph.tensor<[4, 64], f32>
}

// -----

// The max runs over dim 1 but the sum over dim 0, where exp(-max) varies: the max stays.
// CHECK-LABEL: tgraph.graph @sum_where_max_varies
// CHECK:         %d = tgraph.sub %x, %m
// CHECK-NEXT:    %e = tgraph.exp %d
tgraph.graph @sum_where_max_varies(%x: !tgraph.tensor<[4, 64], f32>) -> !tgraph.tensor<[4, 64], f32> {
  %m = tgraph.reduce max %x dim 1 : !tgraph.tensor<[4, 64], f32> -> !tgraph.tensor<[4, 1], f32>
  %d = tgraph.sub %x, %m : !tgraph.tensor<[4, 64], f32>, !tgraph.tensor<[4, 1], f32> -> !tgraph.tensor<[4, 64], f32>
  %e = tgraph.exp %d : !tgraph.tensor<[4, 64], f32>
  %r = tgraph.reduce sum %e dim 0 : !tgraph.tensor<[4, 64], f32> -> !tgraph.tensor<[1, 64], f32>
  %p = tgraph.div %e, %r : !tgraph.tensor<[4, 64], f32>, !tgraph.tensor<[1, 64], f32> -> !tgraph.tensor<[4, 64], f32>
  tgraph.output %p : !tgraph.tensor<[4, 64], f32>
}

// -----

// P V with the max over the wrong dim (dim 0: the factor varies along the contracted dim): stays.
// CHECK-LABEL: tgraph.graph @contract_where_max_varies
// CHECK:         %d = tgraph.sub %x, %m
// CHECK-NEXT:    %e = tgraph.exp %d
tgraph.graph @contract_where_max_varies(%x: !tgraph.tensor<[4, 64], f32>, %v: !tgraph.tensor<[64, 16], f32>) -> !tgraph.tensor<[4, 16], f32> {
  %m = tgraph.reduce max %x dim 0 : !tgraph.tensor<[4, 64], f32> -> !tgraph.tensor<[1, 64], f32>
  %d = tgraph.sub %x, %m : !tgraph.tensor<[4, 64], f32>, !tgraph.tensor<[1, 64], f32> -> !tgraph.tensor<[4, 64], f32>
  %e = tgraph.exp %d : !tgraph.tensor<[4, 64], f32>
  %pv = tgraph.matmul %e, %v : !tgraph.tensor<[4, 64], f32>, !tgraph.tensor<[64, 16], f32> -> !tgraph.tensor<[4, 16], f32>
  %r = tgraph.reduce sum %e dim 1 : !tgraph.tensor<[4, 64], f32> -> !tgraph.tensor<[4, 1], f32>
  %o = tgraph.div %pv, %r : !tgraph.tensor<[4, 16], f32>, !tgraph.tensor<[4, 1], f32> -> !tgraph.tensor<[4, 16], f32>
  tgraph.output %o : !tgraph.tensor<[4, 16], f32>
}

// -----

// Softmax plus the input (degrees 0 and 1 added): the max stays.
// CHECK-LABEL: tgraph.graph @mixed_degrees
// CHECK:         %d = tgraph.sub %x, %m
// CHECK-NEXT:    %e = tgraph.exp %d
tgraph.graph @mixed_degrees(%x: !tgraph.tensor<[4, 64], f32>) -> !tgraph.tensor<[4, 64], f32> {
  %m = tgraph.reduce max %x dim 1 : !tgraph.tensor<[4, 64], f32> -> !tgraph.tensor<[4, 1], f32>
  %d = tgraph.sub %x, %m : !tgraph.tensor<[4, 64], f32>, !tgraph.tensor<[4, 1], f32> -> !tgraph.tensor<[4, 64], f32>
  %e = tgraph.exp %d : !tgraph.tensor<[4, 64], f32>
  %r = tgraph.reduce sum %e dim 1 : !tgraph.tensor<[4, 64], f32> -> !tgraph.tensor<[4, 1], f32>
  %p = tgraph.div %e, %r : !tgraph.tensor<[4, 64], f32>, !tgraph.tensor<[4, 1], f32> -> !tgraph.tensor<[4, 64], f32>
  %o = tgraph.add %p, %e : !tgraph.tensor<[4, 64], f32>, !tgraph.tensor<[4, 64], f32> -> !tgraph.tensor<[4, 64], f32>
  tgraph.output %o : !tgraph.tensor<[4, 64], f32>
}

// -----

// RMSNorm written with div and sqrt (and x * x) becomes the rsqrt form of examples/rmsnorm_matmul.mlir.
// CHECK-LABEL: tgraph.graph @rmsnorm_div_sqrt
// CHECK-NEXT:    %sq = tgraph.square %x
// CHECK-NEXT:    %ss = tgraph.reduce sum %sq dim 1
// CHECK-NEXT:    %ms = tgraph.scale %ss, 0.000244140625
// CHECK-NEXT:    %rs = tgraph.rsqrt %ms
// CHECK-NEXT:    %n = tgraph.mul %x, %rs : !tgraph.tensor<[1, 4096], f16>, !tgraph.tensor<[1, 1], f16>
// CHECK-NEXT:    %o = tgraph.matmul %n, %w
tgraph.graph @rmsnorm_div_sqrt(%x: !tgraph.tensor<[1, 4096], f16>, %w: !tgraph.tensor<[4096, 64], f16>) -> !tgraph.tensor<[1, 64], f16> {
  %sq = tgraph.mul %x, %x : !tgraph.tensor<[1, 4096], f16>, !tgraph.tensor<[1, 4096], f16> -> !tgraph.tensor<[1, 4096], f16>
  %ss = tgraph.reduce sum %sq dim 1 : !tgraph.tensor<[1, 4096], f16> -> !tgraph.tensor<[1, 1], f16>
  %ms = tgraph.scale %ss, 0.000244140625 : !tgraph.tensor<[1, 1], f16>
  %rs = tgraph.sqrt %ms : !tgraph.tensor<[1, 1], f16>
  %n = tgraph.div %x, %rs : !tgraph.tensor<[1, 4096], f16>, !tgraph.tensor<[1, 1], f16> -> !tgraph.tensor<[1, 4096], f16>
  %o = tgraph.matmul %n, %w : !tgraph.tensor<[1, 4096], f16>, !tgraph.tensor<[4096, 64], f16> -> !tgraph.tensor<[1, 64], f16>
  tgraph.output %o : !tgraph.tensor<[1, 64], f16>
}

// -----

// RMSNorm with reciprocal(sqrt) and the scale on the left.
// CHECK-LABEL: tgraph.graph @rmsnorm_reciprocal
// CHECK-NEXT:    %sq = tgraph.square %x
// CHECK-NEXT:    %ss = tgraph.reduce sum %sq dim 1
// CHECK-NEXT:    %ms = tgraph.scale %ss, 0.000244140625
// CHECK-NEXT:    %rs = tgraph.rsqrt %ms
// CHECK-NEXT:    %n = tgraph.mul %x, %rs : !tgraph.tensor<[1, 4096], f16>, !tgraph.tensor<[1, 1], f16>
tgraph.graph @rmsnorm_reciprocal(%x: !tgraph.tensor<[1, 4096], f16>, %w: !tgraph.tensor<[4096, 64], f16>) -> !tgraph.tensor<[1, 64], f16> {
  %sq = tgraph.square %x : !tgraph.tensor<[1, 4096], f16>
  %ss = tgraph.reduce sum %sq dim 1 : !tgraph.tensor<[1, 4096], f16> -> !tgraph.tensor<[1, 1], f16>
  %ms = tgraph.scale %ss, 0.000244140625 : !tgraph.tensor<[1, 1], f16>
  %sd = tgraph.sqrt %ms : !tgraph.tensor<[1, 1], f16>
  %rs = tgraph.reciprocal %sd : !tgraph.tensor<[1, 1], f16>
  %n = tgraph.mul %rs, %x : !tgraph.tensor<[1, 1], f16>, !tgraph.tensor<[1, 4096], f16> -> !tgraph.tensor<[1, 4096], f16>
  %o = tgraph.matmul %n, %w : !tgraph.tensor<[1, 4096], f16>, !tgraph.tensor<[4096, 64], f16> -> !tgraph.tensor<[1, 64], f16>
  tgraph.output %o : !tgraph.tensor<[1, 64], f16>
}

// -----

// A softmax written with a reciprocal of its sum: the division form.
// CHECK-LABEL: tgraph.graph @softmax_reciprocal
// CHECK-NEXT:    %e = tgraph.exp %x
// CHECK-NEXT:    %r = tgraph.reduce sum %e dim 1
// CHECK-NEXT:    %p = tgraph.div %e, %r
tgraph.graph @softmax_reciprocal(%x: !tgraph.tensor<[4, 64], f32>) -> !tgraph.tensor<[4, 64], f32> {
  %m = tgraph.reduce max %x dim 1 : !tgraph.tensor<[4, 64], f32> -> !tgraph.tensor<[4, 1], f32>
  %d = tgraph.sub %x, %m : !tgraph.tensor<[4, 64], f32>, !tgraph.tensor<[4, 1], f32> -> !tgraph.tensor<[4, 64], f32>
  %e = tgraph.exp %d : !tgraph.tensor<[4, 64], f32>
  %r = tgraph.reduce sum %e dim 1 : !tgraph.tensor<[4, 64], f32> -> !tgraph.tensor<[4, 1], f32>
  %ri = tgraph.reciprocal %r : !tgraph.tensor<[4, 1], f32>
  %p = tgraph.mul %e, %ri : !tgraph.tensor<[4, 64], f32>, !tgraph.tensor<[4, 1], f32> -> !tgraph.tensor<[4, 64], f32>
  tgraph.output %p : !tgraph.tensor<[4, 64], f32>
}
