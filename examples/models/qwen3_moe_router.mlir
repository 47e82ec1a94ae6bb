// MoE router, Qwen3-30B-A3B (transformers models/qwen3_moe/modeling_qwen3_moe.py, Qwen3MoeSparseMoeBlock):
// routing probabilities softmax(x W_gate) over 128 experts (top-8 selection left out).
// Test shape: T=64, hidden 48, experts 32. Real shape: T=4096, hidden 2048, experts 128.
// gpu-resize: 64=4096 48=2048 32=128
tgraph.graph @qwen3_moe_router(%x: !tgraph.tensor<[64, 48], f16>, %w_gate: !tgraph.tensor<[48, 32], f16>) -> !tgraph.tensor<[64, 32], f16> {
  %logits = tgraph.matmul %x, %w_gate : !tgraph.tensor<[64, 48], f16>, !tgraph.tensor<[48, 32], f16> -> !tgraph.tensor<[64, 32], f16>
  %m = tgraph.reduce max %logits dim 1 : !tgraph.tensor<[64, 32], f16> -> !tgraph.tensor<[64, 1], f16>
  %0 = tgraph.sub %logits, %m : !tgraph.tensor<[64, 32], f16>, !tgraph.tensor<[64, 1], f16> -> !tgraph.tensor<[64, 32], f16>
  %e = tgraph.exp %0 : !tgraph.tensor<[64, 32], f16>
  %r = tgraph.reduce sum %e dim 1 : !tgraph.tensor<[64, 32], f16> -> !tgraph.tensor<[64, 1], f16>
  %p = tgraph.div %e, %r : !tgraph.tensor<[64, 32], f16>, !tgraph.tensor<[64, 1], f16> -> !tgraph.tensor<[64, 32], f16>
  tgraph.output %p : !tgraph.tensor<[64, 32], f16>
}
