// SwiGLU MLP with the down projection, Llama-3.2-1B (transformers models/llama/modeling_llama.py, LlamaMLP):
// (silu(x W_gate) * (x W_up)) W_down.
// Test shape: T=64, hidden 48, intermediate 192. Real shape: T=2048, hidden 2048, intermediate 8192.
// gpu-resize: 64=2048 48=2048 192=8192
tgraph.graph @llama_swiglu_mlp(%x: !tgraph.tensor<[64, 48], f16>, %w_gate: !tgraph.tensor<[48, 192], f16>, %w_up: !tgraph.tensor<[48, 192], f16>, %w_down: !tgraph.tensor<[192, 48], f16>) -> !tgraph.tensor<[64, 48], f16> {
  %xg = tgraph.matmul %x, %w_gate : !tgraph.tensor<[64, 48], f16>, !tgraph.tensor<[48, 192], f16> -> !tgraph.tensor<[64, 192], f16>
  %g = tgraph.silu %xg : !tgraph.tensor<[64, 192], f16>
  %xu = tgraph.matmul %x, %w_up : !tgraph.tensor<[64, 48], f16>, !tgraph.tensor<[48, 192], f16> -> !tgraph.tensor<[64, 192], f16>
  %h = tgraph.mul %g, %xu : !tgraph.tensor<[64, 192], f16>, !tgraph.tensor<[64, 192], f16> -> !tgraph.tensor<[64, 192], f16>
  %y = tgraph.matmul %h, %w_down : !tgraph.tensor<[64, 192], f16>, !tgraph.tensor<[192, 48], f16> -> !tgraph.tensor<[64, 48], f16>
  tgraph.output %y : !tgraph.tensor<[64, 48], f16>
}
