// BERT-style MLP at 64 tokens: gelu(x @ W1 + b1) @ W2, hidden 1024, intermediate 4096.
tgraph.graph @mlp_gelu(%x: !tgraph.tensor<[64, 1024], f16>, %w1: !tgraph.tensor<[1024, 4096], f16>, %b1: !tgraph.tensor<[1, 4096], f16>, %w2: !tgraph.tensor<[4096, 1024], f16>) -> !tgraph.tensor<[64, 1024], f16> {
  %h = tgraph.matmul %x, %w1 : !tgraph.tensor<[64, 1024], f16>, !tgraph.tensor<[1024, 4096], f16> -> !tgraph.tensor<[64, 4096], f16>
  %hb = tgraph.add %h, %b1 : !tgraph.tensor<[64, 4096], f16>, !tgraph.tensor<[1, 4096], f16> -> !tgraph.tensor<[64, 4096], f16>
  %a = tgraph.gelu erf %hb : !tgraph.tensor<[64, 4096], f16>
  %o = tgraph.matmul %a, %w2 : !tgraph.tensor<[64, 4096], f16>, !tgraph.tensor<[4096, 1024], f16> -> !tgraph.tensor<[64, 1024], f16>
  tgraph.output %o : !tgraph.tensor<[64, 1024], f16>
}
