// Whisper's encoder self-attention: 1500 audio frames, 6 heads, head dim 64 (whisper-base).
tgraph.graph @whisper_attention(%q: !tgraph.tensor<[1, 6, 1500, 64], f16>, %k: !tgraph.tensor<[1, 6, 1500, 64], f16>, %v: !tgraph.tensor<[1, 6, 1500, 64], f16>) -> !tgraph.tensor<[1, 6, 1500, 64], f16> {
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[1, 6, 1500, 64], f16>, !tgraph.tensor<[1, 6, 1500, 64], f16> -> !tgraph.tensor<[1, 6, 1500, 1500], f16>
  %t = tgraph.scale %s, 0.125 : !tgraph.tensor<[1, 6, 1500, 1500], f16>
  %m = tgraph.reduce max %t dim 3 : !tgraph.tensor<[1, 6, 1500, 1500], f16> -> !tgraph.tensor<[1, 6, 1500, 1], f16>
  %z = tgraph.sub %t, %m : !tgraph.tensor<[1, 6, 1500, 1500], f16>, !tgraph.tensor<[1, 6, 1500, 1], f16> -> !tgraph.tensor<[1, 6, 1500, 1500], f16>
  %e = tgraph.exp %z : !tgraph.tensor<[1, 6, 1500, 1500], f16>
  %l = tgraph.reduce sum %e dim 3 : !tgraph.tensor<[1, 6, 1500, 1500], f16> -> !tgraph.tensor<[1, 6, 1500, 1], f16>
  %p = tgraph.div %e, %l : !tgraph.tensor<[1, 6, 1500, 1500], f16>, !tgraph.tensor<[1, 6, 1500, 1], f16> -> !tgraph.tensor<[1, 6, 1500, 1500], f16>
  %o = tgraph.matmul %p, %v : !tgraph.tensor<[1, 6, 1500, 1500], f16>, !tgraph.tensor<[1, 6, 1500, 64], f16> -> !tgraph.tensor<[1, 6, 1500, 64], f16>
  tgraph.output %o : !tgraph.tensor<[1, 6, 1500, 64], f16>
}
