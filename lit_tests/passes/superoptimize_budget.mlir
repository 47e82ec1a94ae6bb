// The search is bounded by work (constructions considered), not by the clock: a small budget stops it
// at the same point on any machine and says so; budget 0 is refused.
// RUN: cleave-opt %s -p 'cleave-superoptimize{budget=50}' 2>&1 >/dev/null | filecheck %s
// RUN: not cleave-opt %s -p 'cleave-superoptimize{budget=0}' 2>&1 | filecheck %s --check-prefix=ZERO

// CHECK: cleave-superoptimize @g: explored 15, pruned 35, {{.*}} (work budget reached: candidates may be incomplete)
// ZERO: error: cleave-superoptimize: budget must be at least 1

tgraph.graph @g(%x: !tgraph.tensor<[4, 6], f32>, %c: !tgraph.tensor<[4, 1], f32>) -> !tgraph.tensor<[1, 1], f32> {
  %m = tgraph.reduce max %x dim 1 : !tgraph.tensor<[4, 6], f32> -> !tgraph.tensor<[4, 1], f32>
  %a = tgraph.add %m, %c : !tgraph.tensor<[4, 1], f32>, !tgraph.tensor<[4, 1], f32> -> !tgraph.tensor<[4, 1], f32>
  %s = tgraph.square %a : !tgraph.tensor<[4, 1], f32>
  %o = tgraph.reduce max %s dim 0 : !tgraph.tensor<[4, 1], f32> -> !tgraph.tensor<[1, 1], f32>
  tgraph.output %o : !tgraph.tensor<[1, 1], f32>
}
