// cleave-schedule: an input graph that no single kernel schedules, whose complete candidates are all
// Split-K pairs (here of x @ W_lm whose combine is cut in three: it re-reads the
// 32768-wide logits), is also cut into kernels of its own ops: the GEMM, the row max and sum, the
// output (gpt2's log-softmax over the vocabulary). Before, that cut was made only when no candidate
// was complete.
// REQUIRES: slow
// RUN: cleave-opt %s -p 'cleave-superoptimize,cleave-concretize,cleave-partition-split-k,cleave-schedule{top-k=1}' 2>/dev/null | filecheck %s

// CHECK:      tgraph.graph @gpt2_log_softmax_p0(%x: !tgraph.tensor<[16, 64], f16>, %w_lm: !tgraph.tensor<[64, 32768], f16>) -> !tgraph.tensor<[16, 32768], f16>
// CHECK-SAME:   cleave.note = "cut into 3 kernels (no single kernel schedules)"
// CHECK:        tgraph.matmul %x, %w_lm
// CHECK-NOT:    tgraph.reduce
// CHECK:      itgraph.kernel @gpt2_log_softmax_p0_k0
// CHECK:      tgraph.graph @gpt2_log_softmax_p1(%{{.*}}: !tgraph.tensor<[16, 32768], f16>) -> (!tgraph.tensor<[16, 1], f16>, !tgraph.tensor<[16, 1], f16>)
// CHECK:      itgraph.kernel @gpt2_log_softmax_p1_k0
// CHECK:      tgraph.graph @gpt2_log_softmax_p2(
// CHECK:      itgraph.kernel @gpt2_log_softmax_p2_k0
// the Split-K candidates stay beside it
// CHECK:      itgraph.kernel @gpt2_log_softmax_c{{[0-9]+}}_s{{[0-9]+}}_split_k0

tgraph.graph @gpt2_log_softmax(%x: !tgraph.tensor<[16, 64], f16>, %w_lm: !tgraph.tensor<[64, 32768], f16>) -> !tgraph.tensor<[16, 32768], f16> {
  %logits = tgraph.matmul %x, %w_lm : !tgraph.tensor<[16, 64], f16>, !tgraph.tensor<[64, 32768], f16> -> !tgraph.tensor<[16, 32768], f16>
  %m = tgraph.reduce max %logits dim 1 : !tgraph.tensor<[16, 32768], f16> -> !tgraph.tensor<[16, 1], f16>
  %z = tgraph.sub %logits, %m : !tgraph.tensor<[16, 32768], f16>, !tgraph.tensor<[16, 1], f16> -> !tgraph.tensor<[16, 32768], f16>
  %e = tgraph.exp %z : !tgraph.tensor<[16, 32768], f16>
  %r = tgraph.reduce sum %e dim 1 : !tgraph.tensor<[16, 32768], f16> -> !tgraph.tensor<[16, 1], f16>
  %lse = tgraph.log %r : !tgraph.tensor<[16, 1], f16>
  %logp = tgraph.sub %z, %lse : !tgraph.tensor<[16, 32768], f16>, !tgraph.tensor<[16, 1], f16> -> !tgraph.tensor<[16, 32768], f16>
  tgraph.output %logp : !tgraph.tensor<[16, 32768], f16>
}
