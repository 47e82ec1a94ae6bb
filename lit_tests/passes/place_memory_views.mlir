// cleave-place-memory: a reshape of a shared tile is a view that the lowering reads in place, and
// its bytes count once. MLA decode's Split-K part (32 chunks of 128 keys, K [*, 576] and V [*, 512]
// tiles reshaped to the matmuls' rank): 64-key tiles take 36 KiB of Q + 72 KiB of K + 64 KiB of V =
// 176128 bytes and fit; counting the reshaped K and V again (315392 bytes) left only 32-key tiles,
// which ran slower on the H200 (15.7-17.0 us against 14.2: bench/results/tune_2026-12-03z_H200.md).
// Both tiles do not fit twice, so the loop has one stage.
// RUN: cleave-opt %s -p 'cleave-schedule{top-k=1},cleave-place-memory' 2>/dev/null | filecheck %s

// CHECK:      itgraph.kernel @mla_split_k0(
// CHECK-SAME: cleave.tiles = #cleave.tiles<out = [1, 1, 32, 1], reduce = 64>
// CHECK-SAME: cleave.smem_bytes = 176128 : i64, cleave.threads = 256 : i64, cleave.stages = 1 : i64
// CHECK:        %[[K:.*]] = itgraph.load %k at {{.*}} {cleave.mem = #cleave<mem shared>} : {{.*}} -> !tgraph.tensor<[1, 64, 576], f16>
// CHECK-NEXT:   tgraph.reshape %[[K]] {cleave.mem = #cleave<mem shared>}

tgraph.graph @mla_split(%q: !tgraph.tensor<[1, 128, 576], f16>, %k: !tgraph.tensor<[1, 4096, 576], f16>, %v: !tgraph.tensor<[1, 4096, 512], f16>) -> (!tgraph.tensor<[32, 1, 128, 1], f32>, !tgraph.tensor<[32, 1, 128, 512], f16>, !tgraph.tensor<[32, 1, 128, 1], f32>) {
  %0 = tgraph.reshape %q : !tgraph.tensor<[1, 128, 576], f16> -> !tgraph.tensor<[1, 1, 128, 576], f16>
  %1 = tgraph.split %k dim 1 : !tgraph.tensor<[1, 4096, 576], f16> -> !tgraph.tensor<[32, 1, 128, 576], f16>
  %2 = tgraph.matmul %0, %1 transpose_b : !tgraph.tensor<[1, 1, 128, 576], f16>, !tgraph.tensor<[32, 1, 128, 576], f16> -> !tgraph.tensor<[32, 1, 128, 128], f16>
  %3 = tgraph.scale %2, 0.07216878364870323 : !tgraph.tensor<[32, 1, 128, 128], f16>
  %chunk_max = tgraph.reduce max %3 dim 3 : !tgraph.tensor<[32, 1, 128, 128], f16> -> !tgraph.tensor<[32, 1, 128, 1], f16>
  %4 = tgraph.sub %3, %chunk_max : !tgraph.tensor<[32, 1, 128, 128], f16>, !tgraph.tensor<[32, 1, 128, 1], f16> -> !tgraph.tensor<[32, 1, 128, 128], f16>
  %5 = tgraph.exp %4 : !tgraph.tensor<[32, 1, 128, 128], f16>
  %6 = tgraph.split %v dim 1 : !tgraph.tensor<[1, 4096, 512], f16> -> !tgraph.tensor<[32, 1, 128, 512], f16>
  %7 = tgraph.matmul %5, %6 : !tgraph.tensor<[32, 1, 128, 128], f16>, !tgraph.tensor<[32, 1, 128, 512], f16> -> !tgraph.tensor<[32, 1, 128, 512], f16>
  %8 = tgraph.reduce sum %5 dim 3 : !tgraph.tensor<[32, 1, 128, 128], f16> -> !tgraph.tensor<[32, 1, 128, 1], f16>
  %9 = tgraph.cast %chunk_max : !tgraph.tensor<[32, 1, 128, 1], f16> -> !tgraph.tensor<[32, 1, 128, 1], f32>
  %10 = tgraph.cast %8 : !tgraph.tensor<[32, 1, 128, 1], f16> -> !tgraph.tensor<[32, 1, 128, 1], f32>
  tgraph.output %9, %7, %10 : !tgraph.tensor<[32, 1, 128, 1], f32>, !tgraph.tensor<[32, 1, 128, 512], f16>, !tgraph.tensor<[32, 1, 128, 1], f32>
}
