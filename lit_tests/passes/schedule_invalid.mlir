// Bad input to cleave-schedule: one line, exit 1.
// RUN: not cleave-opt %s -p 'cleave-schedule{top-k=0}' 2>&1 | filecheck %s --check-prefix=TOPK
// RUN: not cleave-opt %s -p 'cleave-symbolize,cleave-schedule' 2>&1 | filecheck %s --check-prefix=SYM

// TOPK: error: cleave-schedule: top-k must be at least 1
// SYM: error: cleave-schedule: @g cannot be {{.*}}symbolic shape ['d0', 'd1']: concretize the graph first

tgraph.graph @g(%x: !tgraph.tensor<[64, 32], f32>) -> !tgraph.tensor<[64, 32], f32> {
  %e = tgraph.exp %x : !tgraph.tensor<[64, 32], f32>
  tgraph.output %e : !tgraph.tensor<[64, 32], f32>
}
