// Log-sum-exp of 4 rows of logits over a 32000-word vocabulary (an LM head's decode rows), stable form.
tgraph.graph @logsumexp(%x: !tgraph.tensor<[4, 32000], f16>) -> !tgraph.tensor<[4, 1], f16> {
  %m = tgraph.reduce max %x dim 1 : !tgraph.tensor<[4, 32000], f16> -> !tgraph.tensor<[4, 1], f16>
  %z = tgraph.sub %x, %m : !tgraph.tensor<[4, 32000], f16>, !tgraph.tensor<[4, 1], f16> -> !tgraph.tensor<[4, 32000], f16>
  %e = tgraph.exp %z : !tgraph.tensor<[4, 32000], f16>
  %s = tgraph.reduce sum %e dim 1 : !tgraph.tensor<[4, 32000], f16> -> !tgraph.tensor<[4, 1], f16>
  %l = tgraph.log %s : !tgraph.tensor<[4, 1], f16>
  %o = tgraph.add %l, %m : !tgraph.tensor<[4, 1], f16>, !tgraph.tensor<[4, 1], f16> -> !tgraph.tensor<[4, 1], f16>
  tgraph.output %o : !tgraph.tensor<[4, 1], f16>
}
