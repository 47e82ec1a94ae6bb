// cleave-superoptimize keeps the input graph and adds each equivalent graph it finds next to it,
// tagged with what changed: here rowsum(A B) = A rowsum(B), and the Split-K form.
// RUN: cleave-opt %s -p 'cleave-superoptimize{max-ops=6}' 2>%t.err | filecheck %s
// RUN: filecheck %s --check-prefix=SUMMARY < %t.err

// CHECK:      tgraph.graph @rowsum(%a: !tgraph.tensor<[d0, d1], f32>, %b: !tgraph.tensor<[d1, d2], f32>)
// CHECK:      tgraph.graph @rowsum_c1(%a: !tgraph.tensor<[d0, d1], f32>, %b: !tgraph.tensor<[d1, d2], f32>)
// CHECK-SAME: cleave.candidate_of = @rowsum, cleave.note = "reduce sum moved before matmul"
// CHECK-NEXT:   %[[R:.*]] = tgraph.reduce sum %b dim 1 : !tgraph.tensor<[d1, d2], f32> -> !tgraph.tensor<[d1, 1], f32>
// CHECK-NEXT:   %[[M:.*]] = tgraph.matmul %a, %[[R]]
// CHECK-NEXT:   tgraph.output %[[M]]
// CHECK:      tgraph.graph @rowsum_c2
// CHECK-SAME: cleave.note = "split %a dim 1 by s, split %b dim 0 by s, 1 partial result combined over s"
// CHECK:        tgraph.split %a dim 1 : !tgraph.tensor<[d0, d1], f32> -> !tgraph.tensor<[s, d0, d1/s], f32>
// CHECK:        tgraph.split %b dim 0 : !tgraph.tensor<[d1, d2], f32> -> !tgraph.tensor<[s, d1/s, d2], f32>

// SUMMARY: cleave-superoptimize @rowsum: explored {{[0-9]+}}, pruned {{[0-9]+}}, classes {{[0-9]+}}, candidates {{[0-9]+}}

tgraph.graph @rowsum(%a: !tgraph.tensor<[64, 32], f32>, %b: !tgraph.tensor<[32, 48], f32>) -> !tgraph.tensor<[64, 1], f32> {
  %y = tgraph.matmul %a, %b : !tgraph.tensor<[64, 32], f32>, !tgraph.tensor<[32, 48], f32> -> !tgraph.tensor<[64, 48], f32>
  %r = tgraph.reduce sum %y dim 1 : !tgraph.tensor<[64, 48], f32> -> !tgraph.tensor<[64, 1], f32>
  tgraph.output %r : !tgraph.tensor<[64, 1], f32>
}
