// cleave-place-memory: a loop of one matmul gets a fourth pipelining stage where that costs no
// co-resident block. T=128 rows x [4096, 6144] (rmsnorm_matmul T128's GEMM): 64x128 tiles of 48 KiB
// per K step leave one block per SM at three stages (160 KiB) and at four (208 KiB); on the H200 the
// fourth stage took it from 20.8 to 18.6 us (bench/results/gemm_probe_2026-12-03_H200.md). At T=16,
// [16, 64] tiles of 20 KiB: three blocks per SM at three stages, two at four; but its 96 blocks are
// one wave (one block per SM whatever the stages), so it takes five (100 KiB): rmsnorm_matmul T=16's
// one kernel ran 16.1 us on three, 14.5 on five (bench/results/deep_stages_2026-12-04s22_H200.md).
// The 4096^3 GEMM's [128, 256] tiles with 128-wide K steps (96 KiB) would fit twice only: the schedule
// takes 64-wide steps (48 KiB), four stages (`cost_model.shallow_pipeline`; the H100: 216.1 -> 205.7 us,
// bench/results/gemm_inflight_2026-12-06s43_H100.md).
// RUN: cleave-opt %s -p 'cleave-schedule{top-k=1},cleave-place-memory' 2>/dev/null | filecheck %s

// CHECK:      itgraph.kernel @mm128_k0(
// CHECK-SAME: cleave.tiles = #cleave.tiles<out = [64, 128], reduce = 128>
// CHECK-SAME: cleave.smem_bytes = 196608 : i64, cleave.threads = 128 : i64, cleave.stages = 4 : i64
// CHECK:      itgraph.kernel @mm4096_k0(
// CHECK-SAME: cleave.tiles = #cleave.tiles<out = [128, 256], reduce = 64>
// CHECK-SAME: cleave.smem_bytes = 196608 : i64, cleave.threads = 256 : i64, cleave.stages = 4 : i64
// CHECK:      itgraph.kernel @mm16_k0(
// CHECK-SAME: cleave.tiles = #cleave.tiles<out = [16, 64], reduce = 128>
// CHECK-SAME: cleave.smem_bytes = 102400 : i64, cleave.threads = 128 : i64, cleave.stages = 5 : i64

tgraph.graph @mm128(%x: !tgraph.tensor<[128, 4096], f16>, %w: !tgraph.tensor<[4096, 6144], f16>) -> !tgraph.tensor<[128, 6144], f16> {
  %o = tgraph.matmul %x, %w : !tgraph.tensor<[128, 4096], f16>, !tgraph.tensor<[4096, 6144], f16> -> !tgraph.tensor<[128, 6144], f16>
  tgraph.output %o : !tgraph.tensor<[128, 6144], f16>
}
tgraph.graph @mm4096(%x: !tgraph.tensor<[4096, 4096], f16>, %w: !tgraph.tensor<[4096, 4096], f16>) -> !tgraph.tensor<[4096, 4096], f16> {
  %o = tgraph.matmul %x, %w : !tgraph.tensor<[4096, 4096], f16>, !tgraph.tensor<[4096, 4096], f16> -> !tgraph.tensor<[4096, 4096], f16>
  tgraph.output %o : !tgraph.tensor<[4096, 4096], f16>
}
tgraph.graph @mm16(%x: !tgraph.tensor<[16, 4096], f16>, %w: !tgraph.tensor<[4096, 6144], f16>) -> !tgraph.tensor<[16, 6144], f16> {
  %o = tgraph.matmul %x, %w : !tgraph.tensor<[16, 4096], f16>, !tgraph.tensor<[4096, 6144], f16> -> !tgraph.tensor<[16, 6144], f16>
  tgraph.output %o : !tgraph.tensor<[16, 6144], f16>
}
