// cleave-lower-tilelang: swiglu at T = 7, two matmuls reading one x tile per K step. x's 7 rows are
// padded to a 16-row MMA tile (`row_padding`: no reduction reads the padded rows), read whole from x
// by TMA in every iteration (TMA zero-fills rows past the input), so TileLang's warp-specialized
// pipeline releases the tile after the second gemm and the kernel keeps warp specialization; the
// store writes the 7 real rows.
// RUN: cleave-opt %s -p 'cleave-schedule{top-k=1},cleave-place-memory' -t tilelang 2>/dev/null | filecheck %s
// RUN: cleave-opt %s -p 'cleave-schedule{top-k=1},cleave-place-memory,cleave-lower-tilelang' 2>/dev/null | cleave-run - | filecheck %s --check-prefix=CMP

// CHECK:          x_1 = T.alloc_shared((16, 128), "float16")
// CHECK:          for r0 in T.Pipelined(32, num_stages={{[0-9]}}):
// CHECK-NEXT:         T.copy(x[0:16, 128*r0:128*r0 + 128], x_1){{$}}
// CHECK:              T.gemm(x_1, wg_1, [[G:[a-z_]+]], transpose_B=False
// CHECK:              T.gemm(x_1, wu_1, [[U:[a-z_]+]], transpose_B=False
// CHECK:          T.copy([[G]]_s[0:7, 0:32], out0[0:7, 32*bx:32*bx + 32], annotations={"disable_tma": True})
// CHECK:      'swiglu_k0': {{.*}}'pass_configs': {'tl.enable_fast_math': True}, 'shapes'
// CMP: @swiglu_k0 vs @swiglu: agree

tgraph.graph @swiglu(%x: !tgraph.tensor<[7, 4096], f16>, %wg: !tgraph.tensor<[4096, 4096], f16>, %wu: !tgraph.tensor<[4096, 4096], f16>) -> !tgraph.tensor<[7, 4096], f16> {
  %g = tgraph.matmul %x, %wg : !tgraph.tensor<[7, 4096], f16>, !tgraph.tensor<[4096, 4096], f16> -> !tgraph.tensor<[7, 4096], f16>
  %u = tgraph.matmul %x, %wu : !tgraph.tensor<[7, 4096], f16>, !tgraph.tensor<[4096, 4096], f16> -> !tgraph.tensor<[7, 4096], f16>
  %sg = tgraph.silu %g : !tgraph.tensor<[7, 4096], f16>
  %o = tgraph.mul %sg, %u : !tgraph.tensor<[7, 4096], f16>, !tgraph.tensor<[7, 4096], f16> -> !tgraph.tensor<[7, 4096], f16>
  tgraph.output %o : !tgraph.tensor<[7, 4096], f16>
}
