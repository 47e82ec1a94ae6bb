// Last-token logits: the final position of each of 4 sequences of 512 tokens, through a 32000-word LM head.
tgraph.graph @last_token_lm_head(%h: !tgraph.tensor<[4, 512, 2048], f16>, %w: !tgraph.tensor<[32000, 2048], f16>) -> !tgraph.tensor<[4, 1, 32000], f16> {
  %last = tgraph.slice %h dim 1 start 511 : !tgraph.tensor<[4, 512, 2048], f16> -> !tgraph.tensor<[4, 1, 2048], f16>
  %l = tgraph.reshape %last : !tgraph.tensor<[4, 1, 2048], f16> -> !tgraph.tensor<[4, 2048], f16>
  %y = tgraph.matmul %l, %w transpose_b : !tgraph.tensor<[4, 2048], f16>, !tgraph.tensor<[32000, 2048], f16> -> !tgraph.tensor<[4, 32000], f16>
  %o = tgraph.reshape %y : !tgraph.tensor<[4, 32000], f16> -> !tgraph.tensor<[4, 1, 32000], f16>
  tgraph.output %o : !tgraph.tensor<[4, 1, 32000], f16>
}
