// cleave-concretize binds the original shapes, makes one graph per split count that divides the split
// dim, re-checks each against the input at those shapes, and drops (with a warning) what disagrees.
// RUN: cleave-opt %s -p 'cleave-symbolize,cleave-concretize{split-counts=2,3,4}' 2>%t.err | filecheck %s
// RUN: filecheck %s --check-prefix=ERR < %t.err

// CHECK:      tgraph.graph @mm(%a: !tgraph.tensor<[8, 12], f32>, %b: !tgraph.tensor<[12, 4], f32>) -> !tgraph.tensor<[8, 4], f32> {
// CHECK:      tgraph.graph @mm_k_s2(%a: !tgraph.tensor<[8, 12], f32>, %b: !tgraph.tensor<[12, 4], f32>)
// CHECK-SAME: cleave.split_count = 2 : i64
// CHECK-NEXT:   tgraph.split %a dim 1 : !tgraph.tensor<[8, 12], f32> -> !tgraph.tensor<[2, 8, 6], f32>
// CHECK:      tgraph.graph @mm_k_s3(
// CHECK:        tgraph.split %a dim 1 : !tgraph.tensor<[8, 12], f32> -> !tgraph.tensor<[3, 8, 4], f32>
// CHECK:      tgraph.graph @mm_k_s4(
// CHECK-NOT:  @mm_wrong

// ERR: warning: cleave-concretize: dropped @mm_wrong_s2: differs from @mm at the original shapes
// ERR: cleave-concretize @mm: 3 concrete candidates checked at the original shapes, 3 dropped

tgraph.graph @mm(%a: !tgraph.tensor<[8, 12], f32>, %b: !tgraph.tensor<[12, 4], f32>) -> !tgraph.tensor<[8, 4], f32> {
  %c = tgraph.matmul %a, %b : !tgraph.tensor<[8, 12], f32>, !tgraph.tensor<[12, 4], f32> -> !tgraph.tensor<[8, 4], f32>
  tgraph.output %c : !tgraph.tensor<[8, 4], f32>
}

tgraph.graph @mm_k(%a: !tgraph.tensor<[8, 12], f32>, %b: !tgraph.tensor<[12, 4], f32>) -> !tgraph.tensor<[8, 4], f32> attributes {cleave.candidate_of = @mm, cleave.note = "split K"} {
  %as = tgraph.split %a dim 1 : !tgraph.tensor<[8, 12], f32> -> !tgraph.tensor<[s, 8, 12/s], f32>
  %bs = tgraph.split %b dim 0 : !tgraph.tensor<[12, 4], f32> -> !tgraph.tensor<[s, 12/s, 4], f32>
  %p = tgraph.matmul %as, %bs : !tgraph.tensor<[s, 8, 12/s], f32>, !tgraph.tensor<[s, 12/s, 4], f32> -> !tgraph.tensor<[s, 8, 4], f32>
  %r = tgraph.reduce sum %p dim 0 : !tgraph.tensor<[s, 8, 4], f32> -> !tgraph.tensor<[1, 8, 4], f32>
  %o = tgraph.reshape %r : !tgraph.tensor<[1, 8, 4], f32> -> !tgraph.tensor<[8, 4], f32>
  tgraph.output %o : !tgraph.tensor<[8, 4], f32>
}

// A wrong candidate (the partial products are maxed, not summed) must not survive.
tgraph.graph @mm_wrong(%a: !tgraph.tensor<[8, 12], f32>, %b: !tgraph.tensor<[12, 4], f32>) -> !tgraph.tensor<[8, 4], f32> attributes {cleave.candidate_of = @mm} {
  %as = tgraph.split %a dim 1 : !tgraph.tensor<[8, 12], f32> -> !tgraph.tensor<[2, 8, 6], f32>
  %bs = tgraph.split %b dim 0 : !tgraph.tensor<[12, 4], f32> -> !tgraph.tensor<[2, 6, 4], f32>
  %p = tgraph.matmul %as, %bs : !tgraph.tensor<[2, 8, 6], f32>, !tgraph.tensor<[2, 6, 4], f32> -> !tgraph.tensor<[2, 8, 4], f32>
  %r = tgraph.reduce max %p dim 0 : !tgraph.tensor<[2, 8, 4], f32> -> !tgraph.tensor<[1, 8, 4], f32>
  %o = tgraph.reshape %r : !tgraph.tensor<[1, 8, 4], f32> -> !tgraph.tensor<[8, 4], f32>
  tgraph.output %o : !tgraph.tensor<[8, 4], f32>
}
