// Decode attention over 18 keys with an additive 0/1 mask, (mask - 1) * 1e4, as older transformers models
// write it; the key length is dynamic. `bench/probes/odd_mask_tma.py` runs its kernels at odd lengths (TMA of a
// [1, 1, 1, 18] mask); its search needs the mask set aside (`passes/elementwise_cones.py: out_of_range`).
tgraph.graph @masked_decode(%q: !tgraph.tensor<[1, 4, 1, 64], f16>, %k: !tgraph.tensor<[1, 4, 18, 64], f16> {dynamic = array<i64: 2>}, %v: !tgraph.tensor<[1, 4, 18, 64], f16> {dynamic = array<i64: 2>}, %mask: !tgraph.tensor<[1, 1, 1, 18], f16> {dynamic = array<i64: 3>}) -> !tgraph.tensor<[1, 4, 1, 64], f16> {
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[1, 4, 1, 64], f16>, !tgraph.tensor<[1, 4, 18, 64], f16> -> !tgraph.tensor<[1, 4, 1, 18], f16>
  %t = tgraph.scale %s, 1.250000e-01 : !tgraph.tensor<[1, 4, 1, 18], f16>
  %m0 = tgraph.scalar add %mask, -1.000000e+00 : !tgraph.tensor<[1, 1, 1, 18], f16>
  %m1 = tgraph.scale %m0, 1.000000e+04 : !tgraph.tensor<[1, 1, 1, 18], f16>
  %u = tgraph.add %t, %m1 : !tgraph.tensor<[1, 4, 1, 18], f16>, !tgraph.tensor<[1, 1, 1, 18], f16> -> !tgraph.tensor<[1, 4, 1, 18], f16>
  %m = tgraph.reduce max %u dim 3 : !tgraph.tensor<[1, 4, 1, 18], f16> -> !tgraph.tensor<[1, 4, 1, 1], f16>
  %0 = tgraph.sub %u, %m : !tgraph.tensor<[1, 4, 1, 18], f16>, !tgraph.tensor<[1, 4, 1, 1], f16> -> !tgraph.tensor<[1, 4, 1, 18], f16>
  %e = tgraph.exp %0 : !tgraph.tensor<[1, 4, 1, 18], f16>
  %r = tgraph.reduce sum %e dim 3 : !tgraph.tensor<[1, 4, 1, 18], f16> -> !tgraph.tensor<[1, 4, 1, 1], f16>
  %p = tgraph.div %e, %r : !tgraph.tensor<[1, 4, 1, 18], f16>, !tgraph.tensor<[1, 4, 1, 1], f16> -> !tgraph.tensor<[1, 4, 1, 18], f16>
  %o = tgraph.matmul %p, %v : !tgraph.tensor<[1, 4, 1, 18], f16>, !tgraph.tensor<[1, 4, 18, 64], f16> -> !tgraph.tensor<[1, 4, 1, 64], f16>
  tgraph.output %o : !tgraph.tensor<[1, 4, 1, 64], f16>
}
