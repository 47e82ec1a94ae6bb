// cleave-lower-tilelang: a matmul of 5 rows whose A tile a K loop loads (rmsnorm(x) @ W as the search
// writes it, (x @ W) * rsqrt(mean(x^2))) runs on the tensor cores: x's rows are padded to a 64-row
// tile, read whole from x in every iteration (each pipelining stage has a buffer of its own, which no
// clear before the loop reaches; rows past the input read as zeros), and the store writes the 5 real
// rows. x's tile is read twice (its squares and the gemm): TileLang's warp-specialized pipeline hands
// a thread-copied tile back to its producer after its first reader, so it is copied by TMA (which
// zero-fills the rows past the input) and the kernel keeps warp specialization.
// RUN: cleave-opt %s -p 'cleave-schedule{top-k=1},cleave-place-memory' -t tilelang 2>/dev/null | filecheck %s
// RUN: cleave-opt %s -p 'cleave-schedule{top-k=1},cleave-place-memory,cleave-lower-tilelang' 2>/dev/null | cleave-run - | filecheck %s --check-prefix=CMP

// CHECK:          x_1 = T.alloc_shared((64, 128), "float16")
// CHECK-NOT:      x_1[i0, i1] = T.Cast("float16", 0.0)
// CHECK:          for r0 in T.Pipelined(128, num_stages={{[0-9]}}):
// CHECK-NEXT:         T.copy(x[0:64, 128*r0:128*r0 + 128], x_1)
// CHECK:              T.gemm(x_1, w_1, [[ACC:[a-z_]+]], transpose_B=False
// CHECK:          T.copy([[ACC]]_s[0:5, 0:16], out0[0:5, 16*bx:16*bx + 16], annotations={"disable_tma": True})
// CHECK:      'rmsnorm_matmul_k0':
// CHECK-NOT:  'tl.disable_warp_specialized'
// CHECK-SAME: 'shapes':
// CMP: @rmsnorm_matmul_k0 vs @rmsnorm_matmul: agree

tgraph.graph @rmsnorm_matmul(%x: !tgraph.tensor<[5, 16384], f16>, %w: !tgraph.tensor<[16384, 64], f16>) -> !tgraph.tensor<[5, 64], f16> {
  %sq = tgraph.square %x : !tgraph.tensor<[5, 16384], f16>
  %ss = tgraph.reduce sum %sq dim 1 : !tgraph.tensor<[5, 16384], f16> -> !tgraph.tensor<[5, 1], f16>
  %ms = tgraph.scale %ss, 6.103515625e-05 : !tgraph.tensor<[5, 1], f16>
  %rs = tgraph.rsqrt %ms : !tgraph.tensor<[5, 1], f16>
  %p = tgraph.matmul %x, %w : !tgraph.tensor<[5, 16384], f16>, !tgraph.tensor<[16384, 64], f16> -> !tgraph.tensor<[5, 64], f16>
  %o = tgraph.mul %p, %rs : !tgraph.tensor<[5, 64], f16>, !tgraph.tensor<[5, 1], f16> -> !tgraph.tensor<[5, 64], f16>
  tgraph.output %o : !tgraph.tensor<[5, 64], f16>
}
