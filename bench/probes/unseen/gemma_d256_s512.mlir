// Attention at Gemma-7B's head dim 256 over 512 tokens (B1 H8, f16; session 44)
tgraph.graph @gemma_d256(%q: !tgraph.tensor<[1, 8, 512, 256], f16>, %k: !tgraph.tensor<[1, 8, 512, 256], f16>, %v: !tgraph.tensor<[1, 8, 512, 256], f16>) -> !tgraph.tensor<[1, 8, 512, 256], f16> {
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[1, 8, 512, 256], f16>, !tgraph.tensor<[1, 8, 512, 256], f16> -> !tgraph.tensor<[1, 8, 512, 512], f16>
  %t = tgraph.scale %s, 0.0625 : !tgraph.tensor<[1, 8, 512, 512], f16>
  %e = tgraph.exp %t : !tgraph.tensor<[1, 8, 512, 512], f16>
  %d = tgraph.reduce sum %e dim 3 : !tgraph.tensor<[1, 8, 512, 512], f16> -> !tgraph.tensor<[1, 8, 512, 1], f16>
  %p = tgraph.div %e, %d : !tgraph.tensor<[1, 8, 512, 512], f16>, !tgraph.tensor<[1, 8, 512, 1], f16> -> !tgraph.tensor<[1, 8, 512, 512], f16>
  %o = tgraph.matmul %p, %v : !tgraph.tensor<[1, 8, 512, 512], f16>, !tgraph.tensor<[1, 8, 512, 256], f16> -> !tgraph.tensor<[1, 8, 512, 256], f16>
  tgraph.output %o : !tgraph.tensor<[1, 8, 512, 256], f16>
}
