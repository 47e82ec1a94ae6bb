// Gemma-2's final logit softcap (30 tanh(l / 30)) and log-softmax at T=2 over an 8192-word vocabulary.
tgraph.graph @softcap_logits(%x: !tgraph.tensor<[2, 2304], f16>, %w: !tgraph.tensor<[8192, 2304], f16>) -> !tgraph.tensor<[2, 8192], f16> {
  %l = tgraph.matmul %x, %w transpose_b : !tgraph.tensor<[2, 2304], f16>, !tgraph.tensor<[8192, 2304], f16> -> !tgraph.tensor<[2, 8192], f16>
  %a = tgraph.scale %l, 0.033333333333333333 : !tgraph.tensor<[2, 8192], f16>
  %t = tgraph.tanh %a : !tgraph.tensor<[2, 8192], f16>
  %c = tgraph.scale %t, 30.0 : !tgraph.tensor<[2, 8192], f16>
  %m = tgraph.reduce max %c dim 1 : !tgraph.tensor<[2, 8192], f16> -> !tgraph.tensor<[2, 1], f16>
  %z = tgraph.sub %c, %m : !tgraph.tensor<[2, 8192], f16>, !tgraph.tensor<[2, 1], f16> -> !tgraph.tensor<[2, 8192], f16>
  %e = tgraph.exp %z : !tgraph.tensor<[2, 8192], f16>
  %s = tgraph.reduce sum %e dim 1 : !tgraph.tensor<[2, 8192], f16> -> !tgraph.tensor<[2, 1], f16>
  %lg = tgraph.log %s : !tgraph.tensor<[2, 1], f16>
  %o = tgraph.sub %z, %lg : !tgraph.tensor<[2, 8192], f16>, !tgraph.tensor<[2, 1], f16> -> !tgraph.tensor<[2, 8192], f16>
  tgraph.output %o : !tgraph.tensor<[2, 8192], f16>
}
