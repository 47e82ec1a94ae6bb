// Bad options and graphs for cleave-superoptimize: one line, exit 1.
// RUN: not cleave-opt %s -p 'cleave-superoptimize{max-ops=0}' 2>&1 | filecheck %s --check-prefix=ZERO
// RUN: not cleave-opt %s -p 'cleave-superoptimize{max-opz=3}' 2>&1 | filecheck %s --check-prefix=OPTION
// RUN: not cleave-opt %S/Inputs/no_outputs.mlir -p cleave-superoptimize 2>&1 | filecheck %s --check-prefix=NOOUT

// ZERO: error: cleave-superoptimize: max-ops must be at least 1
// OPTION: error: cleave-superoptimize: unknown option 'max-opz' (options: max-ops, max-splits, budget, time-limit, seed, max-candidates)
// NOOUT: error: cleave-superoptimize: @empty must have exactly one output

tgraph.graph @g(%x: !tgraph.tensor<[4, 8], f32>) -> !tgraph.tensor<[4, 8], f32> {
  %e = tgraph.exp %x : !tgraph.tensor<[4, 8], f32>
  tgraph.output %e : !tgraph.tensor<[4, 8], f32>
}
