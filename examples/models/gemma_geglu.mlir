// GeGLU MLP up-projection, Gemma-2B (transformers models/gemma/modeling_gemma.py, GemmaMLP with
// hidden_activation gelu_pytorch_tanh): gelu_tanh(x W_gate) * (x W_up).
// Test shape: T=64, hidden 48, intermediate 192. Real shape: T=2048, hidden 2048, intermediate 16384.
// gpu-resize: 64=2048 48=2048 192=16384
tgraph.graph @gemma_geglu(%x: !tgraph.tensor<[64, 48], f16>, %w_gate: !tgraph.tensor<[48, 192], f16>, %w_up: !tgraph.tensor<[48, 192], f16>) -> !tgraph.tensor<[64, 192], f16> {
  %xg = tgraph.matmul %x, %w_gate : !tgraph.tensor<[64, 48], f16>, !tgraph.tensor<[48, 192], f16> -> !tgraph.tensor<[64, 192], f16>
  %g = tgraph.gelu tanh %xg : !tgraph.tensor<[64, 192], f16>
  %xu = tgraph.matmul %x, %w_up : !tgraph.tensor<[64, 48], f16>, !tgraph.tensor<[48, 192], f16> -> !tgraph.tensor<[64, 192], f16>
  %h = tgraph.mul %g, %xu : !tgraph.tensor<[64, 192], f16>, !tgraph.tensor<[64, 192], f16> -> !tgraph.tensor<[64, 192], f16>
  tgraph.output %h : !tgraph.tensor<[64, 192], f16>
}
