// MoE router, Mixtral-8x7B (transformers models/mixtral/modeling_mixtral.py, MixtralSparseMoeBlock): the
// top-k-free part, routing probabilities softmax(x W_gate) over the experts (top-2 selection left out).
// Test shape: T=64, hidden 48, experts 16. Real shape: T=4096, hidden 4096, experts 8 (16 here: tiles hold
// at least 16 columns).
// gpu-resize: 64=4096 48=4096
tgraph.graph @mixtral_router_softmax(%x: !tgraph.tensor<[64, 48], f16>, %w_gate: !tgraph.tensor<[48, 16], f16>) -> !tgraph.tensor<[64, 16], f16> {
  %logits = tgraph.matmul %x, %w_gate : !tgraph.tensor<[64, 48], f16>, !tgraph.tensor<[48, 16], f16> -> !tgraph.tensor<[64, 16], f16>
  %m = tgraph.reduce max %logits dim 1 : !tgraph.tensor<[64, 16], f16> -> !tgraph.tensor<[64, 1], f16>
  %0 = tgraph.sub %logits, %m : !tgraph.tensor<[64, 16], f16>, !tgraph.tensor<[64, 1], f16> -> !tgraph.tensor<[64, 16], f16>
  %e = tgraph.exp %0 : !tgraph.tensor<[64, 16], f16>
  %r = tgraph.reduce sum %e dim 1 : !tgraph.tensor<[64, 16], f16> -> !tgraph.tensor<[64, 1], f16>
  %p = tgraph.div %e, %r : !tgraph.tensor<[64, 16], f16>, !tgraph.tensor<[64, 1], f16> -> !tgraph.tensor<[64, 16], f16>
  tgraph.output %p : !tgraph.tensor<[64, 16], f16>
}
