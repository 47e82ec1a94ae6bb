// cleave-place-memory: an LM head at decode (4 rows, Llama-2's 32000-word vocabulary) streams
// [128, 256] weight tiles; three stages of them (192 KiB) leave no room for x's 4 rows padded to a
// 64-row tensor-core tile (3 x 16 KiB), so the loop gets two stages and the matmul runs as T.gemm.
// With three, the lowering folded the 4-row matmul on the CUDA cores inside the K loop (the H200:
// the whole LM-head softmax 193.5 -> 90.2 us, bench/results/few_row_padding_2026-12-04s21_H200.md).
// RUN: cleave-opt %s -p 'cleave-schedule{top-k=1},cleave-place-memory' 2>/dev/null | filecheck %s
// RUN: cleave-opt %s -p 'cleave-schedule{top-k=1},cleave-place-memory' -t tilelang 2>/dev/null | filecheck %s --check-prefix=TL
// RUN: cleave-opt %s -p 'cleave-schedule{top-k=1},cleave-place-memory,cleave-lower-tilelang' 2>/dev/null | cleave-run - | filecheck %s --check-prefix=CMP

// CHECK:      itgraph.kernel @lm_head_k0(
// CHECK-SAME: cleave.tiles = #cleave.tiles<out = [4, 256], reduce = 128>
// CHECK-SAME: cleave.threads = 128 : i64, cleave.stages = 2 : i64

// TL:          x_1 = T.alloc_shared((64, 128), "float16")
// TL:          for r0 in T.Pipelined(4, num_stages=2):
// TL:              T.gemm(x_1, w_1,
// TL-NOT:          T.serial
// TL:          T.copy({{.*}}_s[0:4, 0:256], out0[0:4, 256*bx:256*bx + 256]
// CMP: @lm_head_k0 vs @lm_head: agree

tgraph.graph @lm_head(%x: !tgraph.tensor<[4, 512], f16>, %w: !tgraph.tensor<[512, 32000], f16>) -> !tgraph.tensor<[4, 32000], f16> {
  %l = tgraph.matmul %x, %w : !tgraph.tensor<[4, 512], f16>, !tgraph.tensor<[512, 32000], f16> -> !tgraph.tensor<[4, 32000], f16>
  tgraph.output %l : !tgraph.tensor<[4, 32000], f16>
}
