// Log-softmax over the vocabulary for the token log-probabilities, GPT-2 (transformers
// models/gpt2/modeling_gpt2.py, GPT2LMHeadModel logits -> CrossEntropyLoss's log_softmax):
// l - max(l) - log(sum(exp(l - max(l)))) with l = x W_lm.
// Test shape: T=32, hidden 48, vocab 512. Real shape: T=512, hidden 768, vocab 32768 (50257 cut to a power of two).
// gpu-resize: 32=512 48=768 512=32768
tgraph.graph @gpt2_log_softmax(%x: !tgraph.tensor<[32, 48], f16>, %w_lm: !tgraph.tensor<[48, 512], f16>) -> !tgraph.tensor<[32, 512], f16> {
  %logits = tgraph.matmul %x, %w_lm : !tgraph.tensor<[32, 48], f16>, !tgraph.tensor<[48, 512], f16> -> !tgraph.tensor<[32, 512], f16>
  %m = tgraph.reduce max %logits dim 1 : !tgraph.tensor<[32, 512], f16> -> !tgraph.tensor<[32, 1], f16>
  %z = tgraph.sub %logits, %m : !tgraph.tensor<[32, 512], f16>, !tgraph.tensor<[32, 1], f16> -> !tgraph.tensor<[32, 512], f16>
  %e = tgraph.exp %z : !tgraph.tensor<[32, 512], f16>
  %r = tgraph.reduce sum %e dim 1 : !tgraph.tensor<[32, 512], f16> -> !tgraph.tensor<[32, 1], f16>
  %lse = tgraph.log %r : !tgraph.tensor<[32, 1], f16>
  %logp = tgraph.sub %z, %lse : !tgraph.tensor<[32, 512], f16>, !tgraph.tensor<[32, 1], f16> -> !tgraph.tensor<[32, 512], f16>
  tgraph.output %logp : !tgraph.tensor<[32, 512], f16>
}
