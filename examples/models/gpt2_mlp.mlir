// GPT-2 MLP (transformers models/gpt2/modeling_gpt2.py, GPT2MLP with activation gelu_new, the tanh form):
// gelu_tanh(x W_fc + b_fc) W_proj + b_proj.
// Test shape: T=64, hidden 48, inner 192. Real shape (GPT-2 small): T=2048, hidden 768, inner 3072.
// gpu-resize: 64=2048 48=768 192=3072
tgraph.graph @gpt2_mlp(%x: !tgraph.tensor<[64, 48], f16>, %w_fc: !tgraph.tensor<[48, 192], f16>, %b_fc: !tgraph.tensor<[1, 192], f16>, %w_proj: !tgraph.tensor<[192, 48], f16>, %b_proj: !tgraph.tensor<[1, 48], f16>) -> !tgraph.tensor<[64, 48], f16> {
  %xw = tgraph.matmul %x, %w_fc : !tgraph.tensor<[64, 48], f16>, !tgraph.tensor<[48, 192], f16> -> !tgraph.tensor<[64, 192], f16>
  %h = tgraph.add %xw, %b_fc : !tgraph.tensor<[64, 192], f16>, !tgraph.tensor<[1, 192], f16> -> !tgraph.tensor<[64, 192], f16>
  %g = tgraph.gelu tanh %h : !tgraph.tensor<[64, 192], f16>
  %gw = tgraph.matmul %g, %w_proj : !tgraph.tensor<[64, 192], f16>, !tgraph.tensor<[192, 48], f16> -> !tgraph.tensor<[64, 48], f16>
  %y = tgraph.add %gw, %b_proj : !tgraph.tensor<[64, 48], f16>, !tgraph.tensor<[1, 48], f16> -> !tgraph.tensor<[64, 48], f16>
  tgraph.output %y : !tgraph.tensor<[64, 48], f16>
}
