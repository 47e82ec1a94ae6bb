// cleave-pipeline's horizontal-fusion ablation on swiglu (T=1, K=4096, N scaled to 1024), input graph
// only (no-search): by default the two reductions over K (X Wg and X Wu share the X tile) run in one
// sequential loop; with horizontal-fusion=false they run in two separate loops.
// RUN: cleave-opt %s -p 'cleave-pipeline{no-search=true}' | filecheck %s --check-prefix=FUSED
// RUN: cleave-opt %s -p 'cleave-pipeline{no-search=true horizontal-fusion=false}' | filecheck %s --check-prefix=SEPARATE

// FUSED:          itgraph.kernel @swiglu_k0(
// FUSED:            %g, %u = itgraph.sequential r0 in {{[0-9]+}} accumulate (sum, sum)
// FUSED-NOT:        itgraph.sequential

// SEPARATE:       itgraph.kernel @swiglu_k0(
// SEPARATE:         %g = itgraph.sequential r0 in {{[0-9]+}} accumulate (sum) :
// SEPARATE:         %u = itgraph.sequential r1 in {{[0-9]+}} accumulate (sum) :
// SEPARATE-NOT:     itgraph.sequential

tgraph.graph @swiglu(%x: !tgraph.tensor<[1, 4096], f16> {dynamic = array<i64: 0>}, %wg: !tgraph.tensor<[4096, 1024], f16>, %wu: !tgraph.tensor<[4096, 1024], f16>) -> !tgraph.tensor<[1, 1024], f16> {
  %g = tgraph.matmul %x, %wg : !tgraph.tensor<[1, 4096], f16>, !tgraph.tensor<[4096, 1024], f16> -> !tgraph.tensor<[1, 1024], f16>
  %u = tgraph.matmul %x, %wu : !tgraph.tensor<[1, 4096], f16>, !tgraph.tensor<[4096, 1024], f16> -> !tgraph.tensor<[1, 1024], f16>
  %sg = tgraph.silu %g : !tgraph.tensor<[1, 1024], f16>
  %o = tgraph.mul %sg, %u : !tgraph.tensor<[1, 1024], f16>, !tgraph.tensor<[1, 1024], f16> -> !tgraph.tensor<[1, 1024], f16>
  tgraph.output %o : !tgraph.tensor<[1, 1024], f16>
}
