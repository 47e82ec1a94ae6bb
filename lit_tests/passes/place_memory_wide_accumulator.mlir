// A [64, 512] accumulator (MLA decode's 64 heads x 512 latent values, as TileLang's deepseek_mla
// example tiles them): 128 KiB of fp32 takes two warpgroups (256 threads, 128 registers each for it),
// whose gemms split the columns; P, the first gemm's result, then reaches the second gemm through
// shared memory (it cannot keep the first gemm's register layout), and P @ V accumulates in place.
// RUN: cleave-opt %s -p 'cleave-place-memory,cleave-lower-tilelang' | filecheck %s

// CHECK:      tilelang.kernel @mla_decode_c1_k0
// CHECK-SAME: threads 256
// CHECK:        %[[ACC:.*]] = tilelang.alloc_fragment : !tilelang.buffer<[64, 512], f32, fragment>
// CHECK:        %[[P:.*]] = tilelang.alloc_shared : !tilelang.buffer<[64, 64], f16, shared>
// CHECK:        tilelang.gemm %[[P]], %{{.*}}, %[[ACC]] policy

builtin.module {
  tgraph.graph @mla_decode_c1(%q: !tgraph.tensor<[1, 64, 576], f16>, %k: !tgraph.tensor<[1, 256, 576], f16>, %v: !tgraph.tensor<[1, 256, 512], f16>) -> !tgraph.tensor<[1, 64, 512], f16> attributes {cleave.candidate_of = @mla_decode, cleave.note = "div moved after matmul"} {
    %0 = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[1, 64, 576], f16>, !tgraph.tensor<[1, 256, 576], f16> -> !tgraph.tensor<[1, 64, 256], f16>
    %1 = tgraph.scale %0, 0.07216878364870323 : !tgraph.tensor<[1, 64, 256], f16>
    %2 = tgraph.exp %1 : !tgraph.tensor<[1, 64, 256], f16>
    %3 = tgraph.matmul %2, %v : !tgraph.tensor<[1, 64, 256], f16>, !tgraph.tensor<[1, 256, 512], f16> -> !tgraph.tensor<[1, 64, 512], f16>
    %4 = tgraph.reduce sum %2 dim 2 : !tgraph.tensor<[1, 64, 256], f16> -> !tgraph.tensor<[1, 64, 1], f16>
    %5 = tgraph.div %3, %4 : !tgraph.tensor<[1, 64, 512], f16>, !tgraph.tensor<[1, 64, 1], f16> -> !tgraph.tensor<[1, 64, 512], f16>
    tgraph.output %5 : !tgraph.tensor<[1, 64, 512], f16>
  }
  itgraph.kernel @mla_decode_c1_k0(%q: !tgraph.tensor<[1, 64, 576], f16>, %k: !tgraph.tensor<[1, 256, 576], f16>, %v: !tgraph.tensor<[1, 256, 512], f16>, %out0: !tgraph.tensor<[1, 64, 512], f16>) attributes {num_outputs = 1 : i64, cleave.schedule_of = @mla_decode_c1, cleave.tiles = #cleave.tiles<out = [1, 64, 512], reduce = 64>} {
    itgraph.parallel (p) in (1) {
      %0, %1, %2 = itgraph.sequential r0 in 4 accumulate (rescaled_sum, rescaled_sum, max) : !tgraph.tensor<[1, 64, 512], f16>, !tgraph.tensor<[1, 64, 1], f16>, !tgraph.tensor<[1, 64, 1], f16> {
        %q_1 = itgraph.load %q at #itgraph.tmap<[0, 0, 0], [1, 64, 576]> : !tgraph.tensor<[1, 64, 576], f16> -> !tgraph.tensor<[1, 64, 576], f16>
        %k_1 = itgraph.load %k at #itgraph.tmap<[0, 64*r0, 0], [1, 64, 576]> : !tgraph.tensor<[1, 256, 576], f16> -> !tgraph.tensor<[1, 64, 576], f16>
        %3 = tgraph.matmul %q_1, %k_1 transpose_b : !tgraph.tensor<[1, 64, 576], f16>, !tgraph.tensor<[1, 64, 576], f16> -> !tgraph.tensor<[1, 64, 64], f16>
        %4 = tgraph.scale %3, 0.07216878364870323 : !tgraph.tensor<[1, 64, 64], f16>
        %5 = tgraph.reduce max %4 dim 2 : !tgraph.tensor<[1, 64, 64], f16> -> !tgraph.tensor<[1, 64, 1], f16>
        %6 = tgraph.sub %4, %5 : !tgraph.tensor<[1, 64, 64], f16>, !tgraph.tensor<[1, 64, 1], f16> -> !tgraph.tensor<[1, 64, 64], f16>
        %7 = tgraph.exp %6 : !tgraph.tensor<[1, 64, 64], f16>
        %v_1 = itgraph.load %v at #itgraph.tmap<[0, 64*r0, 0], [1, 64, 512]> : !tgraph.tensor<[1, 256, 512], f16> -> !tgraph.tensor<[1, 64, 512], f16>
        %8 = tgraph.matmul %7, %v_1 : !tgraph.tensor<[1, 64, 64], f16>, !tgraph.tensor<[1, 64, 512], f16> -> !tgraph.tensor<[1, 64, 512], f16>
        %9 = tgraph.reduce sum %7 dim 2 : !tgraph.tensor<[1, 64, 64], f16> -> !tgraph.tensor<[1, 64, 1], f16>
        itgraph.yield %8, %9, %5 : !tgraph.tensor<[1, 64, 512], f16>, !tgraph.tensor<[1, 64, 1], f16>, !tgraph.tensor<[1, 64, 1], f16>
      }
      %10 = tgraph.div %0, %1 : !tgraph.tensor<[1, 64, 512], f16>, !tgraph.tensor<[1, 64, 1], f16> -> !tgraph.tensor<[1, 64, 512], f16>
      itgraph.store %10, %out0 at #itgraph.tmap<[0, 0, 0], [1, 64, 512]> : !tgraph.tensor<[1, 64, 512], f16>, !tgraph.tensor<[1, 64, 512], f16>
    }
  }
}
