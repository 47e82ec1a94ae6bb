// Jensen-Shannon-style symmetric KL of two logit rows (KL(p||q) + KL(q||p)), 4 rows over 32000 words:
// sum((softmax(p) - softmax(q)) * ((p - mp) - (q - mq))) with each softmax normalized by its own sum.
tgraph.graph @sym_kl(%p: !tgraph.tensor<[4, 32000], f16>, %q: !tgraph.tensor<[4, 32000], f16>) -> !tgraph.tensor<[4, 1], f32> {
  %mp = tgraph.reduce max %p dim 1 : !tgraph.tensor<[4, 32000], f16> -> !tgraph.tensor<[4, 1], f16>
  %mq = tgraph.reduce max %q dim 1 : !tgraph.tensor<[4, 32000], f16> -> !tgraph.tensor<[4, 1], f16>
  %zp = tgraph.sub %p, %mp : !tgraph.tensor<[4, 32000], f16>, !tgraph.tensor<[4, 1], f16> -> !tgraph.tensor<[4, 32000], f16>
  %zq = tgraph.sub %q, %mq : !tgraph.tensor<[4, 32000], f16>, !tgraph.tensor<[4, 1], f16> -> !tgraph.tensor<[4, 32000], f16>
  %ep = tgraph.exp %zp : !tgraph.tensor<[4, 32000], f16>
  %eq = tgraph.exp %zq : !tgraph.tensor<[4, 32000], f16>
  %sp = tgraph.reduce sum %ep dim 1 : !tgraph.tensor<[4, 32000], f16> -> !tgraph.tensor<[4, 1], f16>
  %sq = tgraph.reduce sum %eq dim 1 : !tgraph.tensor<[4, 32000], f16> -> !tgraph.tensor<[4, 1], f16>
  %pp = tgraph.div %ep, %sp : !tgraph.tensor<[4, 32000], f16>, !tgraph.tensor<[4, 1], f16> -> !tgraph.tensor<[4, 32000], f16>
  %pq = tgraph.div %eq, %sq : !tgraph.tensor<[4, 32000], f16>, !tgraph.tensor<[4, 1], f16> -> !tgraph.tensor<[4, 32000], f16>
  %dpq = tgraph.sub %pp, %pq : !tgraph.tensor<[4, 32000], f16>, !tgraph.tensor<[4, 32000], f16> -> !tgraph.tensor<[4, 32000], f16>
  %d = tgraph.sub %zp, %zq : !tgraph.tensor<[4, 32000], f16>, !tgraph.tensor<[4, 32000], f16> -> !tgraph.tensor<[4, 32000], f16>
  %w = tgraph.mul %dpq, %d : !tgraph.tensor<[4, 32000], f16>, !tgraph.tensor<[4, 32000], f16> -> !tgraph.tensor<[4, 32000], f16>
  %t = tgraph.reduce sum %w dim 1 : !tgraph.tensor<[4, 32000], f16> -> !tgraph.tensor<[4, 1], f16>
  %o = tgraph.cast %t : !tgraph.tensor<[4, 1], f16> -> !tgraph.tensor<[4, 1], f32>
  tgraph.output %o : !tgraph.tensor<[4, 1], f32>
}
