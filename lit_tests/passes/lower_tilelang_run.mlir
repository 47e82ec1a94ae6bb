// cleave-run interprets tilelang kernels (fp16 buffers, fp32 fragments) and compares them with the
// graph they were scheduled from, within the fp16 tolerance.
// RUN: cleave-opt %s -p 'cleave-schedule{top-k=1},cleave-place-memory,cleave-lower-tilelang' 2>/dev/null | cleave-run - | filecheck %s

// CHECK:      @g output 0: shape [128, 1] f16
// CHECK:      @g_k0 output 0: shape [128, 1]
// CHECK:      @g_k0 vs @g: agree (max relative error {{.*}}, tolerance 0.02)

tgraph.graph @g(%x: !tgraph.tensor<[128, 64], f16>, %w: !tgraph.tensor<[64, 64], f16>) -> !tgraph.tensor<[128, 1], f16> {
  %y = tgraph.matmul %x, %w : !tgraph.tensor<[128, 64], f16>, !tgraph.tensor<[64, 64], f16> -> !tgraph.tensor<[128, 64], f16>
  %t = tgraph.scale %y, 0.125 : !tgraph.tensor<[128, 64], f16>
  %e = tgraph.exp %t : !tgraph.tensor<[128, 64], f16>
  %s = tgraph.reduce sum %e dim 1 : !tgraph.tensor<[128, 64], f16> -> !tgraph.tensor<[128, 1], f16>
  tgraph.output %s : !tgraph.tensor<[128, 1], f16>
}
