// RUN: cleave-opt %s | cleave-opt | filecheck %s
// RUN: ROUNDTRIP

// select with a 0/1 mask (causal), transpose, slice and concat along one dim.
// CHECK-LABEL: tgraph.graph @layout
// CHECK-NEXT:    %[[A:.*]] = tgraph.select %mask, %x, %y : !tgraph.tensor<[1, 4, 8], f32>, !tgraph.tensor<[2, 4, 8], f32>, !tgraph.tensor<[2, 4, 8], f32> -> !tgraph.tensor<[2, 4, 8], f32>
// CHECK-NEXT:    %[[B:.*]] = tgraph.transpose %[[A]] perm [0, 2, 1] : !tgraph.tensor<[2, 4, 8], f32> -> !tgraph.tensor<[2, 8, 4], f32>
// CHECK-NEXT:    %[[C:.*]] = tgraph.slice %[[B]] dim 1 start 4 : !tgraph.tensor<[2, 8, 4], f32> -> !tgraph.tensor<[2, 4, 4], f32>
// CHECK-NEXT:    %[[D:.*]] = tgraph.slice %[[B]] dim 1 start 0 : !tgraph.tensor<[2, 8, 4], f32> -> !tgraph.tensor<[2, 4, 4], f32>
// CHECK-NEXT:    %[[E:.*]] = tgraph.concat %[[C]], %[[D]] dim 1 : !tgraph.tensor<[2, 4, 4], f32>, !tgraph.tensor<[2, 4, 4], f32> -> !tgraph.tensor<[2, 8, 4], f32>
// CHECK-NEXT:    tgraph.output %[[E]]
tgraph.graph @layout(%x: !tgraph.tensor<[2, 4, 8], f32>, %y: !tgraph.tensor<[2, 4, 8], f32>, %mask: !tgraph.tensor<[1, 4, 8], f32>) -> !tgraph.tensor<[2, 8, 4], f32> {
  %a = tgraph.select %mask, %x, %y : !tgraph.tensor<[1, 4, 8], f32>, !tgraph.tensor<[2, 4, 8], f32>, !tgraph.tensor<[2, 4, 8], f32> -> !tgraph.tensor<[2, 4, 8], f32>
  %b = tgraph.transpose %a perm [0, 2, 1] : !tgraph.tensor<[2, 4, 8], f32> -> !tgraph.tensor<[2, 8, 4], f32>
  %c = tgraph.slice %b dim 1 start 4 : !tgraph.tensor<[2, 8, 4], f32> -> !tgraph.tensor<[2, 4, 4], f32>
  %d = tgraph.slice %b dim 1 start 0 : !tgraph.tensor<[2, 8, 4], f32> -> !tgraph.tensor<[2, 4, 4], f32>
  %e = tgraph.concat %c, %d dim 1 : !tgraph.tensor<[2, 4, 4], f32>, !tgraph.tensor<[2, 4, 4], f32> -> !tgraph.tensor<[2, 8, 4], f32>
  tgraph.output %e : !tgraph.tensor<[2, 8, 4], f32>
}
