// GPT-2's token log-probabilities at decode over its real vocabulary (50257 words, a prime: no tile divides it): l = x W_lm, l - max(l) - log(sum(exp(l - max(l)))), T=4, hidden 768.
tgraph.graph @gpt2_logprobs(%x: !tgraph.tensor<[4, 768], f16>, %w: !tgraph.tensor<[768, 50257], f16>) -> !tgraph.tensor<[4, 50257], f16> {
  %l = tgraph.matmul %x, %w : !tgraph.tensor<[4, 768], f16>, !tgraph.tensor<[768, 50257], f16> -> !tgraph.tensor<[4, 50257], f16>
  %m = tgraph.reduce max %l dim 1 : !tgraph.tensor<[4, 50257], f16> -> !tgraph.tensor<[4, 1], f16>
  %d = tgraph.sub %l, %m : !tgraph.tensor<[4, 50257], f16>, !tgraph.tensor<[4, 1], f16> -> !tgraph.tensor<[4, 50257], f16>
  %e = tgraph.exp %d : !tgraph.tensor<[4, 50257], f16>
  %s = tgraph.reduce sum %e dim 1 : !tgraph.tensor<[4, 50257], f16> -> !tgraph.tensor<[4, 1], f16>
  %lg = tgraph.log %s : !tgraph.tensor<[4, 1], f16>
  %o = tgraph.sub %d, %lg : !tgraph.tensor<[4, 50257], f16>, !tgraph.tensor<[4, 1], f16> -> !tgraph.tensor<[4, 50257], f16>
  tgraph.output %o : !tgraph.tensor<[4, 50257], f16>
}
