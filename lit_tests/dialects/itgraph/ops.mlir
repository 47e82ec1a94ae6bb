// RUN: cleave-opt %s | filecheck %s
// RUN: ROUNDTRIP
// Every itgraph op in its custom form: a kernel, its parallel grid, a sequential loop accumulating
// (rescaled_sum, rescaled_sum, max), loads and stores with tmaps, a mask of a dynamic dim (the quoted
// form older files hold parses to the same op), and the enum attributes in their generic form.

// CHECK:      itgraph.kernel @attn(%q: !tgraph.tensor<[8, 256, 64], f16>, %k: !tgraph.tensor<[8, 256, 64], f16>, %v: !tgraph.tensor<[8, 256, 64], f16>, %o: !tgraph.tensor<[8, 256, 64], f16>) attributes {num_outputs = 1 : i64} {
// CHECK-NEXT:   itgraph.parallel (p0, p1) in (8, 4) {
// CHECK-NEXT:     %q_1 = itgraph.load %q at #itgraph.tmap<[p0, 64*p1, 0], [1, 64, 64]> : !tgraph.tensor<[8, 256, 64], f16> -> !tgraph.tensor<[1, 64, 64], f16>
// CHECK-NEXT:     %acc, %sum, %max = itgraph.sequential r0 in 4 accumulate (rescaled_sum, rescaled_sum, max) : !tgraph.tensor<[1, 64, 64], f16>, !tgraph.tensor<[1, 64, 1], f16>, !tgraph.tensor<[1, 64, 1], f16> {
// CHECK-NEXT:       %k_1 = itgraph.load %k at #itgraph.tmap<[p0, 64*r0, 0], [1, 64, 64]>
// CHECK:            itgraph.yield %pv, %l, %m : !tgraph.tensor<[1, 64, 64], f16>, !tgraph.tensor<[1, 64, 1], f16>, !tgraph.tensor<[1, 64, 1], f16>
// CHECK-NEXT:     }
// CHECK-NEXT:     %out = tgraph.div %acc, %sum
// CHECK-NEXT:     itgraph.store %out, %o at #itgraph.tmap<[p0, 64*p1, 0], [1, 64, 64]> : !tgraph.tensor<[1, 64, 64], f16>, !tgraph.tensor<[8, 256, 64], f16>
// CHECK-NEXT:   }
// CHECK-NEXT: }

itgraph.kernel @attn(%q: !tgraph.tensor<[8, 256, 64], f16>, %k: !tgraph.tensor<[8, 256, 64], f16>, %v: !tgraph.tensor<[8, 256, 64], f16>, %o: !tgraph.tensor<[8, 256, 64], f16>) attributes {num_outputs = 1 : i64} {
  itgraph.parallel (p0, p1) in (8, 4) {
    %q_1 = itgraph.load %q at #itgraph.tmap<[p0, p1*64, 0], [1, 64, 64]> : !tgraph.tensor<[8, 256, 64], f16> -> !tgraph.tensor<[1, 64, 64], f16>
    %acc, %sum, %max = itgraph.sequential r0 in 4 accumulate (rescaled_sum, rescaled_sum, max) : !tgraph.tensor<[1, 64, 64], f16>, !tgraph.tensor<[1, 64, 1], f16>, !tgraph.tensor<[1, 64, 1], f16> {
      %k_1 = itgraph.load %k at #itgraph.tmap<[p0, r0*64, 0], [1, 64, 64]> : !tgraph.tensor<[8, 256, 64], f16> -> !tgraph.tensor<[1, 64, 64], f16>
      %s = tgraph.matmul %q_1, %k_1 transpose_b : !tgraph.tensor<[1, 64, 64], f16>, !tgraph.tensor<[1, 64, 64], f16> -> !tgraph.tensor<[1, 64, 64], f16>
      %m = tgraph.reduce max %s dim 2 : !tgraph.tensor<[1, 64, 64], f16> -> !tgraph.tensor<[1, 64, 1], f16>
      %e = tgraph.exp %s : !tgraph.tensor<[1, 64, 64], f16>
      %v_1 = itgraph.load %v at #itgraph.tmap<[p0, r0*64, 0], [1, 64, 64]> : !tgraph.tensor<[8, 256, 64], f16> -> !tgraph.tensor<[1, 64, 64], f16>
      %pv = tgraph.matmul %e, %v_1 : !tgraph.tensor<[1, 64, 64], f16>, !tgraph.tensor<[1, 64, 64], f16> -> !tgraph.tensor<[1, 64, 64], f16>
      %l = tgraph.reduce sum %e dim 2 : !tgraph.tensor<[1, 64, 64], f16> -> !tgraph.tensor<[1, 64, 1], f16>
      itgraph.yield %pv, %l, %m : !tgraph.tensor<[1, 64, 64], f16>, !tgraph.tensor<[1, 64, 1], f16>, !tgraph.tensor<[1, 64, 1], f16>
    }
    %out = tgraph.div %acc, %sum : !tgraph.tensor<[1, 64, 64], f16>, !tgraph.tensor<[1, 64, 1], f16> -> !tgraph.tensor<[1, 64, 64], f16>
    itgraph.store %out, %o at #itgraph.tmap<[p0, p1*64, 0], [1, 64, 64]> : !tgraph.tensor<[1, 64, 64], f16>, !tgraph.tensor<[8, 256, 64], f16>
  }
}

// CHECK:      itgraph.kernel @rowmax(%x: !tgraph.tensor<[4, L], f32>, %y: !tgraph.tensor<[4, 1], f32>) attributes {num_outputs = 1 : i64, cleave.dynamic = {L = 16 : i64}} {
// CHECK-NEXT:   itgraph.parallel (p0) in (4) {
// CHECK-NEXT:     %m = itgraph.sequential r0 in L/16 accumulate (max) : !tgraph.tensor<[1, 1], f32> {
// CHECK-NEXT:       %t = itgraph.load %x at #itgraph.tmap<[p0, 16*r0], [1, 16]> : !tgraph.tensor<[4, L], f32> -> !tgraph.tensor<[1, 16], f32>
// CHECK-NEXT:       %tm = itgraph.mask %t dim 1 offset 16*r0 bound L fill neg_inf : !tgraph.tensor<[1, 16], f32> -> !tgraph.tensor<[1, 16], f32>
// CHECK-NEXT:       %old = itgraph.mask %t dim 1 offset 16*r0 + 4 bound L fill zero : !tgraph.tensor<[1, 16], f32> -> !tgraph.tensor<[1, 16], f32>
// CHECK-NEXT:       %r = tgraph.reduce max %tm dim 1

itgraph.kernel @rowmax(%x: !tgraph.tensor<[4, L], f32>, %y: !tgraph.tensor<[4, 1], f32>) attributes {num_outputs = 1 : i64, cleave.dynamic = {L = 16 : i64}} {
  itgraph.parallel (p0) in (4) {
    %m = itgraph.sequential r0 in L/16 accumulate (max) : !tgraph.tensor<[1, 1], f32> {
      %t = itgraph.load %x at #itgraph.tmap<[p0, 16*r0], [1, 16]> : !tgraph.tensor<[4, L], f32> -> !tgraph.tensor<[1, 16], f32>
      %tm = itgraph.mask %t dim 1 offset 16*r0 bound L fill neg_inf : !tgraph.tensor<[1, 16], f32> -> !tgraph.tensor<[1, 16], f32>
      %old = itgraph.mask %t dim 1 offset "4 + r0*16" bound "L" fill "zero" : !tgraph.tensor<[1, 16], f32> -> !tgraph.tensor<[1, 16], f32>
      %r = tgraph.reduce max %tm dim 1 : !tgraph.tensor<[1, 16], f32> -> !tgraph.tensor<[1, 1], f32>
      itgraph.yield %r : !tgraph.tensor<[1, 1], f32>
    }
    itgraph.store %m, %y at #itgraph.tmap<[p0, 0], [1, 1]> : !tgraph.tensor<[1, 1], f32>, !tgraph.tensor<[4, 1], f32>
  }
}

// CHECK:      "test.op"() {acc = #itgraph<accumulate rescaled_sum>, fill = #itgraph<fill neg_inf>} : () -> ()
"test.op"() {acc = #itgraph<accumulate rescaled_sum>, fill = #itgraph<fill neg_inf>} : () -> ()
