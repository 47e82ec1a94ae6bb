// cleave-split-shared-inputs: a graph input that both operands of a matmul read gets a copy for the right
// operand's side (an identity `#cleave.view` of the same input: the emitted `run` passes the caller's tensor
// twice), and the ops of that side that read it are computed again from the copy; one that an operand reads
// and an op computing no matmul operand reads too gets a copy for that op. The scheduler gives a value one tile per
// kernel, and `x @ x^T` needs two ([rows of the block, K] and [columns of the block, K]).
// RUN: cleave-opt %s -p cleave-split-shared-inputs | filecheck %s
// RUN: cleave-opt %s -p 'cleave-pipeline{no-search=true keep=1}' 2>&1 >/dev/null | filecheck %s --check-prefix=PIPE

// CHECK:      tgraph.graph @gram(%x: !tgraph.tensor<[512, 96], f16>, %x_r: !tgraph.tensor<[512, 96], f16>)
// CHECK-SAME:   cleave.boundary = #cleave.boundary<inputs = [#cleave.view<input = 0>, #cleave.view<input = 0>], outputs = [#cleave.part<output = 0>]>
// CHECK-NEXT:   %g = tgraph.matmul %x, %x_r transpose_b

// The normalized rows of cosine similarities: the right side's norm is computed again from the copy.
// CHECK:      tgraph.graph @cos_sim(%x: !tgraph.tensor<[512, 128], f16>, %x_r: !tgraph.tensor<[512, 128], f16>)
// CHECK:        %xn = tgraph.mul %x, %rn
// CHECK:        %sq_r = tgraph.square %x_r
// CHECK:        %xn_r = tgraph.mul %x_r, %rn_r
// CHECK-NEXT:   %g = tgraph.matmul %xn, %xn_r transpose_b

// A residual of the projection's own input: the add reads a copy ([rows, columns of the block], not [rows, K]).
// CHECK:      tgraph.graph @residual(%x: !tgraph.tensor<[256, 512], f16>, %w: !tgraph.tensor<[512, 512], f16>, %x_e: !tgraph.tensor<[256, 512], f16>)
// CHECK:        %y = tgraph.matmul %x, %w
// CHECK:        %o = tgraph.add %g, %x_e

// Two projections of one input (swiglu's gate and up) keep sharing it.
// CHECK:      tgraph.graph @gate_up(%x: !tgraph.tensor<[16, 256], f16>, %w1: !tgraph.tensor<[256, 512], f16>, %w3: !tgraph.tensor<[256, 512], f16>)
// CHECK-NOT:    cleave.boundary

// Inputs read by one side only are not copied.
// CHECK:      tgraph.graph @linear(%x: !tgraph.tensor<[64, 96], f16>, %w: !tgraph.tensor<[32, 96], f16>)
// CHECK-NOT:    cleave.boundary

// PIPE: cleave-pipeline: @gram: an input a matmul's operands read in two roles is read as two inputs (cleave-split-shared-inputs)

tgraph.graph @gram(%x: !tgraph.tensor<[512, 96], f16>) -> !tgraph.tensor<[512, 512], f16> {
  %g = tgraph.matmul %x, %x transpose_b : !tgraph.tensor<[512, 96], f16>, !tgraph.tensor<[512, 96], f16> -> !tgraph.tensor<[512, 512], f16>
  tgraph.output %g : !tgraph.tensor<[512, 512], f16>
}
tgraph.graph @cos_sim(%x: !tgraph.tensor<[512, 128], f16>) -> !tgraph.tensor<[512, 512], f16> {
  %sq = tgraph.square %x : !tgraph.tensor<[512, 128], f16>
  %ss = tgraph.reduce sum %sq dim 1 : !tgraph.tensor<[512, 128], f16> -> !tgraph.tensor<[512, 1], f16>
  %rn = tgraph.rsqrt %ss : !tgraph.tensor<[512, 1], f16>
  %xn = tgraph.mul %x, %rn : !tgraph.tensor<[512, 128], f16>, !tgraph.tensor<[512, 1], f16> -> !tgraph.tensor<[512, 128], f16>
  %g = tgraph.matmul %xn, %xn transpose_b : !tgraph.tensor<[512, 128], f16>, !tgraph.tensor<[512, 128], f16> -> !tgraph.tensor<[512, 512], f16>
  tgraph.output %g : !tgraph.tensor<[512, 512], f16>
}
tgraph.graph @residual(%x: !tgraph.tensor<[256, 512], f16>, %w: !tgraph.tensor<[512, 512], f16>) -> !tgraph.tensor<[256, 512], f16> {
  %y = tgraph.matmul %x, %w : !tgraph.tensor<[256, 512], f16>, !tgraph.tensor<[512, 512], f16> -> !tgraph.tensor<[256, 512], f16>
  %g = tgraph.silu %y : !tgraph.tensor<[256, 512], f16>
  %o = tgraph.add %g, %x : !tgraph.tensor<[256, 512], f16>, !tgraph.tensor<[256, 512], f16> -> !tgraph.tensor<[256, 512], f16>
  tgraph.output %o : !tgraph.tensor<[256, 512], f16>
}
tgraph.graph @gate_up(%x: !tgraph.tensor<[16, 256], f16>, %w1: !tgraph.tensor<[256, 512], f16>, %w3: !tgraph.tensor<[256, 512], f16>) -> !tgraph.tensor<[16, 512], f16> {
  %a = tgraph.matmul %x, %w1 : !tgraph.tensor<[16, 256], f16>, !tgraph.tensor<[256, 512], f16> -> !tgraph.tensor<[16, 512], f16>
  %b = tgraph.matmul %x, %w3 : !tgraph.tensor<[16, 256], f16>, !tgraph.tensor<[256, 512], f16> -> !tgraph.tensor<[16, 512], f16>
  %s = tgraph.silu %a : !tgraph.tensor<[16, 512], f16>
  %o = tgraph.mul %s, %b : !tgraph.tensor<[16, 512], f16>, !tgraph.tensor<[16, 512], f16> -> !tgraph.tensor<[16, 512], f16>
  tgraph.output %o : !tgraph.tensor<[16, 512], f16>
}
tgraph.graph @linear(%x: !tgraph.tensor<[64, 96], f16>, %w: !tgraph.tensor<[32, 96], f16>) -> !tgraph.tensor<[64, 32], f16> {
  %y = tgraph.matmul %x, %w transpose_b : !tgraph.tensor<[64, 96], f16>, !tgraph.tensor<[32, 96], f16> -> !tgraph.tensor<[64, 32], f16>
  tgraph.output %y : !tgraph.tensor<[64, 32], f16>
}
