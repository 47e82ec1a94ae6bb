// The loss normalizer over Llama-3's 128256-word vocabulary at decode, bf16 logits, 2 sequences: log(sum exp(x - m)) + m.
tgraph.graph @logsumexp_llama3(%x: !tgraph.tensor<[2, 128256], bf16>) -> !tgraph.tensor<[2, 1], bf16> {
  %m = tgraph.reduce max %x dim 1 : !tgraph.tensor<[2, 128256], bf16> -> !tgraph.tensor<[2, 1], bf16>
  %z = tgraph.sub %x, %m : !tgraph.tensor<[2, 128256], bf16>, !tgraph.tensor<[2, 1], bf16> -> !tgraph.tensor<[2, 128256], bf16>
  %e = tgraph.exp %z : !tgraph.tensor<[2, 128256], bf16>
  %s = tgraph.reduce sum %e dim 1 : !tgraph.tensor<[2, 128256], bf16> -> !tgraph.tensor<[2, 1], bf16>
  %l = tgraph.log %s : !tgraph.tensor<[2, 1], bf16>
  %o = tgraph.add %l, %m : !tgraph.tensor<[2, 1], bf16>, !tgraph.tensor<[2, 1], bf16> -> !tgraph.tensor<[2, 1], bf16>
  tgraph.output %o : !tgraph.tensor<[2, 1], bf16>
}
