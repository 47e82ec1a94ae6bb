// KL(softmax(p) || softmax(q)) per row between a student and a teacher model's logits (distillation), 128 rows
// over 32000 words: sum(softmax(p) * ((p - mp) - (q - mq))) - log(sum exp(p - mp)) + log(sum exp(q - mq)).
tgraph.graph @kl_logits(%p: !tgraph.tensor<[128, 32000], f16>, %q: !tgraph.tensor<[128, 32000], f16>) -> !tgraph.tensor<[128, 1], f32> {
  %mp = tgraph.reduce max %p dim 1 : !tgraph.tensor<[128, 32000], f16> -> !tgraph.tensor<[128, 1], f16>
  %mq = tgraph.reduce max %q dim 1 : !tgraph.tensor<[128, 32000], f16> -> !tgraph.tensor<[128, 1], f16>
  %zp = tgraph.sub %p, %mp : !tgraph.tensor<[128, 32000], f16>, !tgraph.tensor<[128, 1], f16> -> !tgraph.tensor<[128, 32000], f16>
  %zq = tgraph.sub %q, %mq : !tgraph.tensor<[128, 32000], f16>, !tgraph.tensor<[128, 1], f16> -> !tgraph.tensor<[128, 32000], f16>
  %ep = tgraph.exp %zp : !tgraph.tensor<[128, 32000], f16>
  %eq = tgraph.exp %zq : !tgraph.tensor<[128, 32000], f16>
  %sp = tgraph.reduce sum %ep dim 1 : !tgraph.tensor<[128, 32000], f16> -> !tgraph.tensor<[128, 1], f16>
  %sq = tgraph.reduce sum %eq dim 1 : !tgraph.tensor<[128, 32000], f16> -> !tgraph.tensor<[128, 1], f16>
  %d = tgraph.sub %zp, %zq : !tgraph.tensor<[128, 32000], f16>, !tgraph.tensor<[128, 32000], f16> -> !tgraph.tensor<[128, 32000], f16>
  %w = tgraph.mul %ep, %d : !tgraph.tensor<[128, 32000], f16>, !tgraph.tensor<[128, 32000], f16> -> !tgraph.tensor<[128, 32000], f16>
  %t = tgraph.reduce sum %w dim 1 : !tgraph.tensor<[128, 32000], f16> -> !tgraph.tensor<[128, 1], f16>
  %c = tgraph.div %t, %sp : !tgraph.tensor<[128, 1], f16>, !tgraph.tensor<[128, 1], f16> -> !tgraph.tensor<[128, 1], f16>
  %lp = tgraph.log %sp : !tgraph.tensor<[128, 1], f16>
  %lq = tgraph.log %sq : !tgraph.tensor<[128, 1], f16>
  %a = tgraph.sub %c, %lp : !tgraph.tensor<[128, 1], f16>, !tgraph.tensor<[128, 1], f16> -> !tgraph.tensor<[128, 1], f16>
  %k16 = tgraph.add %a, %lq : !tgraph.tensor<[128, 1], f16>, !tgraph.tensor<[128, 1], f16> -> !tgraph.tensor<[128, 1], f16>
  %kl = tgraph.cast %k16 : !tgraph.tensor<[128, 1], f16> -> !tgraph.tensor<[128, 1], f32>
  tgraph.output %kl : !tgraph.tensor<[128, 1], f32>
}
