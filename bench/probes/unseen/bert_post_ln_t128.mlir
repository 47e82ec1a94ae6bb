// BERT's post-norm output block: LayerNorm(x W + b + residual), hidden 768, 128 tokens.
tgraph.graph @bert_post_ln(%x: !tgraph.tensor<[128, 3072], f16>, %w: !tgraph.tensor<[3072, 768], f16>, %b: !tgraph.tensor<[1, 768], f16>, %r: !tgraph.tensor<[128, 768], f16>, %g: !tgraph.tensor<[1, 768], f16>, %beta: !tgraph.tensor<[1, 768], f16>) -> !tgraph.tensor<[128, 768], f16> {
  %y = tgraph.matmul %x, %w : !tgraph.tensor<[128, 3072], f16>, !tgraph.tensor<[3072, 768], f16> -> !tgraph.tensor<[128, 768], f16>
  %yb = tgraph.add %y, %b : !tgraph.tensor<[128, 768], f16>, !tgraph.tensor<[1, 768], f16> -> !tgraph.tensor<[128, 768], f16>
  %h = tgraph.add %yb, %r : !tgraph.tensor<[128, 768], f16>, !tgraph.tensor<[128, 768], f16> -> !tgraph.tensor<[128, 768], f16>
  %mu = tgraph.reduce mean %h dim 1 : !tgraph.tensor<[128, 768], f16> -> !tgraph.tensor<[128, 1], f16>
  %hc = tgraph.sub %h, %mu : !tgraph.tensor<[128, 768], f16>, !tgraph.tensor<[128, 1], f16> -> !tgraph.tensor<[128, 768], f16>
  %sq = tgraph.square %hc : !tgraph.tensor<[128, 768], f16>
  %var = tgraph.reduce mean %sq dim 1 : !tgraph.tensor<[128, 768], f16> -> !tgraph.tensor<[128, 1], f16>
  %e = tgraph.scalar add %var, 1.000000e-12 : !tgraph.tensor<[128, 1], f16>
  %rs = tgraph.rsqrt %e : !tgraph.tensor<[128, 1], f16>
  %n = tgraph.mul %hc, %rs : !tgraph.tensor<[128, 768], f16>, !tgraph.tensor<[128, 1], f16> -> !tgraph.tensor<[128, 768], f16>
  %ng = tgraph.mul %n, %g : !tgraph.tensor<[128, 768], f16>, !tgraph.tensor<[1, 768], f16> -> !tgraph.tensor<[128, 768], f16>
  %o = tgraph.add %ng, %beta : !tgraph.tensor<[128, 768], f16>, !tgraph.tensor<[1, 768], f16> -> !tgraph.tensor<[128, 768], f16>
  tgraph.output %o : !tgraph.tensor<[128, 768], f16>
}
