// Non-causal linear attention (feature map relu): phi(Q) (phi(K)^T V), 8 heads, 1024 tokens, head dim 64, no normalizer.
tgraph.graph @linear_attention(%q: !tgraph.tensor<[8, 1024, 64], f16>, %k: !tgraph.tensor<[8, 1024, 64], f16>, %v: !tgraph.tensor<[8, 1024, 64], f16>) -> !tgraph.tensor<[8, 1024, 64], f16> {
  %pq = tgraph.scalar max %q, 0.000000e+00 : !tgraph.tensor<[8, 1024, 64], f16>
  %pk = tgraph.scalar max %k, 0.000000e+00 : !tgraph.tensor<[8, 1024, 64], f16>
  %s = tgraph.matmul %pq, %pk transpose_b : !tgraph.tensor<[8, 1024, 64], f16>, !tgraph.tensor<[8, 1024, 64], f16> -> !tgraph.tensor<[8, 1024, 1024], f16>
  %ss = tgraph.scale %s, 9.765625e-04 : !tgraph.tensor<[8, 1024, 1024], f16>
  %o = tgraph.matmul %ss, %v : !tgraph.tensor<[8, 1024, 1024], f16>, !tgraph.tensor<[8, 1024, 64], f16> -> !tgraph.tensor<[8, 1024, 64], f16>
  tgraph.output %o : !tgraph.tensor<[8, 1024, 64], f16>
}
