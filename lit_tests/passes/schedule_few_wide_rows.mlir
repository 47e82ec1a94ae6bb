// cleave-schedule: an RMSNorm over 4096-column rows, 512 of them. No tile of 16 whole rows fits (16 x 4096 fp32 is
// 256 KiB of registers), so the last fallback (`schedule.FALLBACKS`) takes a few whole rows per block:
// one kernel that reads each row once, its sum of squares by TileLang's warp reduction, on the 256
// threads that keep a thread's tiles within 192 fp32 registers (cleave-place-memory).
// RUN: cleave-opt %s -p 'cleave-schedule{top-k=1},cleave-place-memory' -t tilelang 2>&1 | filecheck %s
// RUN: cleave-opt %s -p 'cleave-schedule{top-k=1},cleave-place-memory,cleave-lower-tilelang' 2>/dev/null | cleave-run - | filecheck %s --check-prefix=CMP

// CHECK:      cleave-schedule @rmsnorm: 1 kernels kept, {{[0-9]+}} configurations dropped; best out=[{{[1248]}}, 4096] reduce=none
// CHECK:      with T.Kernel({{[0-9]+}}, threads=256) as (bx,):
// CHECK-NOT:  T.serial(4096)
// CHECK:      T.reduce_sum(sq, {{.*}}, dim=1, clear=True)
// CHECK-NOT:  T.serial(4096)

// CMP: @rmsnorm_k0 vs @rmsnorm: agree

tgraph.graph @rmsnorm(%x: !tgraph.tensor<[512, 4096], f16>, %g: !tgraph.tensor<[1, 4096], f16>) -> !tgraph.tensor<[512, 4096], f16> {
  %sq = tgraph.square %x : !tgraph.tensor<[512, 4096], f16>
  %ss = tgraph.reduce sum %sq dim 1 : !tgraph.tensor<[512, 4096], f16> -> !tgraph.tensor<[512, 1], f16>
  %ms = tgraph.scale %ss, 0.000244140625 : !tgraph.tensor<[512, 1], f16>
  %r = tgraph.rsqrt %ms : !tgraph.tensor<[512, 1], f16>
  %y = tgraph.mul %x, %r : !tgraph.tensor<[512, 4096], f16>, !tgraph.tensor<[512, 1], f16> -> !tgraph.tensor<[512, 4096], f16>
  %z = tgraph.mul %y, %g : !tgraph.tensor<[512, 4096], f16>, !tgraph.tensor<[1, 4096], f16> -> !tgraph.tensor<[512, 4096], f16>
  tgraph.output %z : !tgraph.tensor<[512, 4096], f16>
}
