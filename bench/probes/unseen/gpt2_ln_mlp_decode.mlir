// GPT-2 block's MLP at decode with its LayerNorm: LN(x) g + b (eps 1e-5), @ W_fc + b_fc, gelu_new (tanh), @ W_proj + b_proj; T=1, hidden 768.
tgraph.graph @gpt2_ln_mlp_decode(%x: !tgraph.tensor<[1, 768], f16>, %g: !tgraph.tensor<[1, 768], f16>, %b: !tgraph.tensor<[1, 768], f16>, %w1: !tgraph.tensor<[768, 3072], f16>, %b1: !tgraph.tensor<[1, 3072], f16>, %w2: !tgraph.tensor<[3072, 768], f16>, %b2: !tgraph.tensor<[1, 768], f16>) -> !tgraph.tensor<[1, 768], f16> {
  %mu = tgraph.reduce mean %x dim 1 : !tgraph.tensor<[1, 768], f16> -> !tgraph.tensor<[1, 1], f16>
  %xc = tgraph.sub %x, %mu : !tgraph.tensor<[1, 768], f16>, !tgraph.tensor<[1, 1], f16> -> !tgraph.tensor<[1, 768], f16>
  %sq = tgraph.square %xc : !tgraph.tensor<[1, 768], f16>
  %var = tgraph.reduce mean %sq dim 1 : !tgraph.tensor<[1, 768], f16> -> !tgraph.tensor<[1, 1], f16>
  %ve = tgraph.scalar add %var, 1.000000e-05 : !tgraph.tensor<[1, 1], f16>
  %rs = tgraph.rsqrt %ve : !tgraph.tensor<[1, 1], f16>
  %n = tgraph.mul %xc, %rs : !tgraph.tensor<[1, 768], f16>, !tgraph.tensor<[1, 1], f16> -> !tgraph.tensor<[1, 768], f16>
  %ng = tgraph.mul %n, %g : !tgraph.tensor<[1, 768], f16>, !tgraph.tensor<[1, 768], f16> -> !tgraph.tensor<[1, 768], f16>
  %nb = tgraph.add %ng, %b : !tgraph.tensor<[1, 768], f16>, !tgraph.tensor<[1, 768], f16> -> !tgraph.tensor<[1, 768], f16>
  %h = tgraph.matmul %nb, %w1 : !tgraph.tensor<[1, 768], f16>, !tgraph.tensor<[768, 3072], f16> -> !tgraph.tensor<[1, 3072], f16>
  %hb = tgraph.add %h, %b1 : !tgraph.tensor<[1, 3072], f16>, !tgraph.tensor<[1, 3072], f16> -> !tgraph.tensor<[1, 3072], f16>
  %a = tgraph.gelu tanh %hb : !tgraph.tensor<[1, 3072], f16>
  %o = tgraph.matmul %a, %w2 : !tgraph.tensor<[1, 3072], f16>, !tgraph.tensor<[3072, 768], f16> -> !tgraph.tensor<[1, 768], f16>
  %ob = tgraph.add %o, %b2 : !tgraph.tensor<[1, 768], f16>, !tgraph.tensor<[1, 768], f16> -> !tgraph.tensor<[1, 768], f16>
  tgraph.output %ob : !tgraph.tensor<[1, 768], f16>
}
