// cleave-superoptimize sets aside a cone of element-wise ops of one input (GPT-2's gelu_new, written
// out as transformers does: nine ops) while it searches, and puts it back in front of every candidate:
// the search stays a few hundred constructions (with the cone in, it ran into the 600 s time limit),
// and each candidate keeps the activation computed from %h before the matmul.
// RUN: cleave-opt %s -p cleave-superoptimize 2>&1 >/dev/null | filecheck %s --check-prefix=STATS
// RUN: cleave-opt %s -p cleave-superoptimize 2>/dev/null | filecheck %s

// STATS: cleave-superoptimize @gelu_new_proj: explored {{[0-9]+}}, {{.*}}; a cone of 9 element-wise ops of one input set aside

// CHECK:      tgraph.graph @gelu_new_proj_c1(
// CHECK-NEXT:   tgraph.scale %h, 5.000000e-01
// CHECK:        tgraph.tanh
// CHECK:        tgraph.matmul

tgraph.graph @gelu_new_proj(%h: !tgraph.tensor<[16, 256], f16>, %w: !tgraph.tensor<[256, 64], f16>, %b: !tgraph.tensor<[1, 64], f16>, %x: !tgraph.tensor<[16, 64], f16>) -> !tgraph.tensor<[16, 64], f16> {
  %0 = tgraph.scale %h, 5.000000e-01 : !tgraph.tensor<[16, 256], f16>
  %1 = tgraph.square %h : !tgraph.tensor<[16, 256], f16>
  %2 = tgraph.mul %h, %1 : !tgraph.tensor<[16, 256], f16>, !tgraph.tensor<[16, 256], f16> -> !tgraph.tensor<[16, 256], f16>
  %3 = tgraph.scale %2, 4.471500e-02 : !tgraph.tensor<[16, 256], f16>
  %4 = tgraph.add %h, %3 : !tgraph.tensor<[16, 256], f16>, !tgraph.tensor<[16, 256], f16> -> !tgraph.tensor<[16, 256], f16>
  %5 = tgraph.scale %4, 0.79788456080286541 : !tgraph.tensor<[16, 256], f16>
  %6 = tgraph.tanh %5 : !tgraph.tensor<[16, 256], f16>
  %7 = tgraph.scalar add %6, 1.000000e+00 : !tgraph.tensor<[16, 256], f16>
  %8 = tgraph.mul %0, %7 : !tgraph.tensor<[16, 256], f16>, !tgraph.tensor<[16, 256], f16> -> !tgraph.tensor<[16, 256], f16>
  %9 = tgraph.matmul %8, %w : !tgraph.tensor<[16, 256], f16>, !tgraph.tensor<[256, 64], f16> -> !tgraph.tensor<[16, 64], f16>
  %10 = tgraph.add %9, %b : !tgraph.tensor<[16, 64], f16>, !tgraph.tensor<[1, 64], f16> -> !tgraph.tensor<[16, 64], f16>
  %11 = tgraph.add %x, %10 : !tgraph.tensor<[16, 64], f16>, !tgraph.tensor<[16, 64], f16> -> !tgraph.tensor<[16, 64], f16>
  tgraph.output %11 : !tgraph.tensor<[16, 64], f16>
}
