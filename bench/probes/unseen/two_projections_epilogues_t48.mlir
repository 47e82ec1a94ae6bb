// Two projections of one x with different widths and epilogues: gelu(x @ W1 + b1) [48, 768] beside tanh(x @ W2) [48, 192].
tgraph.graph @two_heads(%x: !tgraph.tensor<[48, 512], f16>, %w1: !tgraph.tensor<[512, 768], f16>, %b1: !tgraph.tensor<[1, 768], f16>, %w2: !tgraph.tensor<[512, 192], f16>) -> (!tgraph.tensor<[48, 768], f16>, !tgraph.tensor<[48, 192], f16>) {
  %h = tgraph.matmul %x, %w1 : !tgraph.tensor<[48, 512], f16>, !tgraph.tensor<[512, 768], f16> -> !tgraph.tensor<[48, 768], f16>
  %hb = tgraph.add %h, %b1 : !tgraph.tensor<[48, 768], f16>, !tgraph.tensor<[1, 768], f16> -> !tgraph.tensor<[48, 768], f16>
  %g = tgraph.gelu erf %hb : !tgraph.tensor<[48, 768], f16>
  %p = tgraph.matmul %x, %w2 : !tgraph.tensor<[48, 512], f16>, !tgraph.tensor<[512, 192], f16> -> !tgraph.tensor<[48, 192], f16>
  %t = tgraph.tanh %p : !tgraph.tensor<[48, 192], f16>
  tgraph.output %g, %t : !tgraph.tensor<[48, 768], f16>, !tgraph.tensor<[48, 192], f16>
}
