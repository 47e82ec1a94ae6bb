// Entropy of next-token distributions at decode (sampling diagnostics, speculative-decoding acceptance): for logits x
// over Llama-2's 32000-word vocabulary, H = log(sum exp(x - m)) + m - sum(exp(x - m) x) / sum exp(x - m), T=4.
tgraph.graph @softmax_entropy(%x: !tgraph.tensor<[4, 32000], f16>) -> !tgraph.tensor<[4, 1], f32> {
  %m = tgraph.reduce max %x dim 1 : !tgraph.tensor<[4, 32000], f16> -> !tgraph.tensor<[4, 1], f16>
  %z = tgraph.sub %x, %m : !tgraph.tensor<[4, 32000], f16>, !tgraph.tensor<[4, 1], f16> -> !tgraph.tensor<[4, 32000], f16>
  %e = tgraph.exp %z : !tgraph.tensor<[4, 32000], f16>
  %s = tgraph.reduce sum %e dim 1 : !tgraph.tensor<[4, 32000], f16> -> !tgraph.tensor<[4, 1], f16>
  %ex = tgraph.mul %e, %x : !tgraph.tensor<[4, 32000], f16>, !tgraph.tensor<[4, 32000], f16> -> !tgraph.tensor<[4, 32000], f16>
  %t = tgraph.reduce sum %ex dim 1 : !tgraph.tensor<[4, 32000], f16> -> !tgraph.tensor<[4, 1], f16>
  %mean = tgraph.div %t, %s : !tgraph.tensor<[4, 1], f16>, !tgraph.tensor<[4, 1], f16> -> !tgraph.tensor<[4, 1], f16>
  %l = tgraph.log %s : !tgraph.tensor<[4, 1], f16>
  %lse = tgraph.add %l, %m : !tgraph.tensor<[4, 1], f16>, !tgraph.tensor<[4, 1], f16> -> !tgraph.tensor<[4, 1], f16>
  %h = tgraph.sub %lse, %mean : !tgraph.tensor<[4, 1], f16>, !tgraph.tensor<[4, 1], f16> -> !tgraph.tensor<[4, 1], f16>
  %o = tgraph.cast %h : !tgraph.tensor<[4, 1], f16> -> !tgraph.tensor<[4, 1], f32>
  tgraph.output %o : !tgraph.tensor<[4, 1], f32>
}
