// cleave-schedule{per-matmul-cut=true} (what cleave-pipeline runs): an input graph whose matmul reads
// another matmul's result (an MLP) is also scheduled cut into one kernel per matmul, the first
// piece's result passed on in global memory by name: the candidate @mlp_mm, of the form cuBLAS
// runs. A graph whose matmuls do not feed each other (@gate_up) gets no such cut, and without the
// option nothing is cut.
// RUN: cleave-opt %s -p 'cleave-schedule{per-matmul-cut=true top-k=1}' 2>&1 | filecheck %s
// RUN: cleave-opt %s -p 'cleave-schedule{top-k=1}' 2>&1 | filecheck %s --check-prefix=OFF

// CHECK:      tgraph.graph @mlp_mm(%x: {{.*}}) -> !tgraph.tensor<[64, 192], f16> attributes {cleave.stage = #cleave<stage first>, cleave.output_names = ["g_c"], cleave.next = @mlp_mm_p1, cleave.candidate_of = @mlp, cleave.note = "one kernel per matmul (2 kernels, intermediates in global memory)"}
// CHECK-NEXT:   tgraph.matmul
// CHECK-NEXT:   tgraph.gelu
// CHECK-NEXT:   tgraph.output
// CHECK:      itgraph.kernel @mlp_mm_k0
// CHECK:      tgraph.graph @mlp_mm_p1(%g_c: !tgraph.tensor<[64, 192], f16>, %w2: !tgraph.tensor<[192, 48], f16>) -> !tgraph.tensor<[64, 48], f16> attributes {cleave.stage = #cleave<stage part>, cleave.passthrough = ["w2"]
// CHECK-NEXT:   tgraph.matmul
// CHECK-NEXT:   tgraph.output
// CHECK:      itgraph.kernel @mlp_mm_p1_k0
// CHECK-NOT:  @gate_up_mm
// OFF-NOT:    _mm

tgraph.graph @mlp(%x: !tgraph.tensor<[64, 48], f16>, %w1: !tgraph.tensor<[48, 192], f16>, %w2: !tgraph.tensor<[192, 48], f16>) -> !tgraph.tensor<[64, 48], f16> {
  %h = tgraph.matmul %x, %w1 : !tgraph.tensor<[64, 48], f16>, !tgraph.tensor<[48, 192], f16> -> !tgraph.tensor<[64, 192], f16>
  %g = tgraph.gelu tanh %h : !tgraph.tensor<[64, 192], f16>
  %o = tgraph.matmul %g, %w2 : !tgraph.tensor<[64, 192], f16>, !tgraph.tensor<[192, 48], f16> -> !tgraph.tensor<[64, 48], f16>
  tgraph.output %o : !tgraph.tensor<[64, 48], f16>
}

tgraph.graph @gate_up(%x: !tgraph.tensor<[64, 48], f16>, %wg: !tgraph.tensor<[48, 192], f16>, %wu: !tgraph.tensor<[48, 192], f16>) -> !tgraph.tensor<[64, 192], f16> {
  %g = tgraph.matmul %x, %wg : !tgraph.tensor<[64, 48], f16>, !tgraph.tensor<[48, 192], f16> -> !tgraph.tensor<[64, 192], f16>
  %u = tgraph.matmul %x, %wu : !tgraph.tensor<[64, 48], f16>, !tgraph.tensor<[48, 192], f16> -> !tgraph.tensor<[64, 192], f16>
  %o = tgraph.mul %g, %u : !tgraph.tensor<[64, 192], f16>, !tgraph.tensor<[64, 192], f16> -> !tgraph.tensor<[64, 192], f16>
  tgraph.output %o : !tgraph.tensor<[64, 192], f16>
}

// A norm feeding a projection: the row sum of squares is reduced in a kernel before the matmul's
// (not inside its K loop); what the first kernel computes is passed on by name.
// CHECK:      tgraph.graph @norm_proj_mm(%x: {{.*}}) -> {{.*}} attributes {{{.*}}cleave.candidate_of = @norm_proj, cleave.note = "one kernel per matmul (2 kernels, intermediates in global memory)"}
// CHECK:        tgraph.reduce sum
// CHECK-NOT:    tgraph.matmul
// CHECK:      tgraph.graph @norm_proj_mm_p1(
// CHECK-NOT:    tgraph.reduce
// CHECK:        tgraph.matmul
// CHECK:      itgraph.kernel @norm_proj_mm_p1_k0

tgraph.graph @norm_proj(%x: !tgraph.tensor<[64, 256], f16>, %w: !tgraph.tensor<[256, 192], f16>) -> !tgraph.tensor<[64, 192], f16> {
  %sq = tgraph.square %x : !tgraph.tensor<[64, 256], f16>
  %ss = tgraph.reduce sum %sq dim 1 : !tgraph.tensor<[64, 256], f16> -> !tgraph.tensor<[64, 1], f16>
  %ms = tgraph.scale %ss, 0.00390625 : !tgraph.tensor<[64, 1], f16>
  %rs = tgraph.rsqrt %ms : !tgraph.tensor<[64, 1], f16>
  %n = tgraph.mul %x, %rs : !tgraph.tensor<[64, 256], f16>, !tgraph.tensor<[64, 1], f16> -> !tgraph.tensor<[64, 256], f16>
  %o = tgraph.matmul %n, %w : !tgraph.tensor<[64, 256], f16>, !tgraph.tensor<[256, 192], f16> -> !tgraph.tensor<[64, 192], f16>
  tgraph.output %o : !tgraph.tensor<[64, 192], f16>
}

// The norm's scale moved past the matmul (a candidate the search finds, written here matmul
// first): the statistics, computed from no matmul, go first into their own kernel, and the matmul's
// kernel is a plain GEMM whose epilogue rescales the rows.
// CHECK:      tgraph.graph @rescaled_proj_mm(%x: {{.*}}) -> !tgraph.tensor<[64, 1], f16> attributes {{{.*}}cleave.candidate_of = @rescaled_proj, cleave.note = "one kernel per matmul (2 kernels, intermediates in global memory)"}
// CHECK-NEXT:   tgraph.square
// CHECK-NEXT:   tgraph.reduce sum
// CHECK-NEXT:   tgraph.scale
// CHECK-NEXT:   tgraph.rsqrt
// CHECK-NEXT:   tgraph.output
// CHECK:      tgraph.graph @rescaled_proj_mm_p1(
// CHECK-NEXT:   tgraph.matmul
// CHECK-NEXT:   tgraph.mul
// CHECK-NEXT:   tgraph.output
// CHECK:      itgraph.kernel @rescaled_proj_mm_p1_k0

tgraph.graph @rescaled_proj(%x: !tgraph.tensor<[64, 256], f16>, %w: !tgraph.tensor<[256, 192], f16>) -> !tgraph.tensor<[64, 192], f16> {
  %p = tgraph.matmul %x, %w : !tgraph.tensor<[64, 256], f16>, !tgraph.tensor<[256, 192], f16> -> !tgraph.tensor<[64, 192], f16>
  %sq = tgraph.square %x : !tgraph.tensor<[64, 256], f16>
  %ss = tgraph.reduce sum %sq dim 1 : !tgraph.tensor<[64, 256], f16> -> !tgraph.tensor<[64, 1], f16>
  %ms = tgraph.scale %ss, 0.00390625 : !tgraph.tensor<[64, 1], f16>
  %rs = tgraph.rsqrt %ms : !tgraph.tensor<[64, 1], f16>
  %o = tgraph.mul %p, %rs : !tgraph.tensor<[64, 192], f16>, !tgraph.tensor<[64, 1], f16> -> !tgraph.tensor<[64, 192], f16>
  tgraph.output %o : !tgraph.tensor<[64, 192], f16>
}
