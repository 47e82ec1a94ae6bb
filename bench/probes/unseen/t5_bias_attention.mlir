// T5 self-attention: softmax(Q K^T + position_bias) V, no 1/sqrt(d) scaling, bias [1, H, S, S] per head.
tgraph.graph @t5_bias_attention(%q: !tgraph.tensor<[1, 8, 512, 64], f16>, %k: !tgraph.tensor<[1, 8, 512, 64], f16>, %v: !tgraph.tensor<[1, 8, 512, 64], f16>, %bias: !tgraph.tensor<[1, 8, 512, 512], f16>) -> !tgraph.tensor<[1, 8, 512, 64], f16> {
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[1, 8, 512, 64], f16>, !tgraph.tensor<[1, 8, 512, 64], f16> -> !tgraph.tensor<[1, 8, 512, 512], f16>
  %t = tgraph.add %s, %bias : !tgraph.tensor<[1, 8, 512, 512], f16>, !tgraph.tensor<[1, 8, 512, 512], f16> -> !tgraph.tensor<[1, 8, 512, 512], f16>
  %m = tgraph.reduce max %t dim 3 : !tgraph.tensor<[1, 8, 512, 512], f16> -> !tgraph.tensor<[1, 8, 512, 1], f16>
  %z = tgraph.sub %t, %m : !tgraph.tensor<[1, 8, 512, 512], f16>, !tgraph.tensor<[1, 8, 512, 1], f16> -> !tgraph.tensor<[1, 8, 512, 512], f16>
  %e = tgraph.exp %z : !tgraph.tensor<[1, 8, 512, 512], f16>
  %r = tgraph.reduce sum %e dim 3 : !tgraph.tensor<[1, 8, 512, 512], f16> -> !tgraph.tensor<[1, 8, 512, 1], f16>
  %p = tgraph.div %e, %r : !tgraph.tensor<[1, 8, 512, 512], f16>, !tgraph.tensor<[1, 8, 512, 1], f16> -> !tgraph.tensor<[1, 8, 512, 512], f16>
  %o = tgraph.matmul %p, %v : !tgraph.tensor<[1, 8, 512, 512], f16>, !tgraph.tensor<[1, 8, 512, 64], f16> -> !tgraph.tensor<[1, 8, 512, 64], f16>
  tgraph.output %o : !tgraph.tensor<[1, 8, 512, 64], f16>
}
