// ViT MLP (transformers models/vit/modeling_vit.py, ViTIntermediate + ViTOutput, hidden_act gelu, the erf form):
// gelu_erf(x W1 + b1) W2 + b2 (the residual add left out).
// Test shape: T=64, hidden 48, inner 192. Real shape (ViT-B/16 at 224, batch 16, tokens padded 197 -> 208):
// T=3328, hidden 768, inner 3072.
// gpu-resize: 64=3328 48=768 192=3072
tgraph.graph @vit_mlp(%x: !tgraph.tensor<[64, 48], f16>, %w1: !tgraph.tensor<[48, 192], f16>, %b1: !tgraph.tensor<[1, 192], f16>, %w2: !tgraph.tensor<[192, 48], f16>, %b2: !tgraph.tensor<[1, 48], f16>) -> !tgraph.tensor<[64, 48], f16> {
  %xw = tgraph.matmul %x, %w1 : !tgraph.tensor<[64, 48], f16>, !tgraph.tensor<[48, 192], f16> -> !tgraph.tensor<[64, 192], f16>
  %h = tgraph.add %xw, %b1 : !tgraph.tensor<[64, 192], f16>, !tgraph.tensor<[1, 192], f16> -> !tgraph.tensor<[64, 192], f16>
  %g = tgraph.gelu erf %h : !tgraph.tensor<[64, 192], f16>
  %gw = tgraph.matmul %g, %w2 : !tgraph.tensor<[64, 192], f16>, !tgraph.tensor<[192, 48], f16> -> !tgraph.tensor<[64, 48], f16>
  %y = tgraph.add %gw, %b2 : !tgraph.tensor<[64, 48], f16>, !tgraph.tensor<[1, 48], f16> -> !tgraph.tensor<[64, 48], f16>
  tgraph.output %y : !tgraph.tensor<[64, 48], f16>
}
