// Causal self-attention, Llama-3-8B (transformers models/llama/modeling_llama.py, LlamaAttention with
// eager_attention_forward): softmax(Q K^T / sqrt(D) masked causally) V, max-subtracted softmax as written there.
// The causal mask is a 0/1 input (1 where key <= query); masked logits become -1e4 through tgraph.select.
// Test shape: B=1, H=2, S=64, D=32. Real shape (GPU benchmark): H=32, S=2048, D=128.
// gpu-resize: 2=32 64=2048 32=128
tgraph.graph @llama3_causal_attention(%q: !tgraph.tensor<[1, 2, 64, 32], f16>, %k: !tgraph.tensor<[1, 2, 64, 32], f16>, %v: !tgraph.tensor<[1, 2, 64, 32], f16>, %mask: !tgraph.tensor<[1, 1, 64, 64], f16>) -> !tgraph.tensor<[1, 2, 64, 32], f16> {
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[1, 2, 64, 32], f16>, !tgraph.tensor<[1, 2, 64, 32], f16> -> !tgraph.tensor<[1, 2, 64, 64], f16>
  %t = tgraph.scale %s, 0.088388347648318433 : !tgraph.tensor<[1, 2, 64, 64], f16>
  %fill = tgraph.scalar sub %mask, 1.000000e+04 : !tgraph.tensor<[1, 1, 64, 64], f16>
  %tm = tgraph.select %mask, %t, %fill : !tgraph.tensor<[1, 1, 64, 64], f16>, !tgraph.tensor<[1, 2, 64, 64], f16>, !tgraph.tensor<[1, 1, 64, 64], f16> -> !tgraph.tensor<[1, 2, 64, 64], f16>
  %m = tgraph.reduce max %tm dim 3 : !tgraph.tensor<[1, 2, 64, 64], f16> -> !tgraph.tensor<[1, 2, 64, 1], f16>
  %0 = tgraph.sub %tm, %m : !tgraph.tensor<[1, 2, 64, 64], f16>, !tgraph.tensor<[1, 2, 64, 1], f16> -> !tgraph.tensor<[1, 2, 64, 64], f16>
  %e = tgraph.exp %0 : !tgraph.tensor<[1, 2, 64, 64], f16>
  %r = tgraph.reduce sum %e dim 3 : !tgraph.tensor<[1, 2, 64, 64], f16> -> !tgraph.tensor<[1, 2, 64, 1], f16>
  %p = tgraph.div %e, %r : !tgraph.tensor<[1, 2, 64, 64], f16>, !tgraph.tensor<[1, 2, 64, 1], f16> -> !tgraph.tensor<[1, 2, 64, 64], f16>
  %o = tgraph.matmul %p, %v : !tgraph.tensor<[1, 2, 64, 64], f16>, !tgraph.tensor<[1, 2, 64, 32], f16> -> !tgraph.tensor<[1, 2, 64, 32], f16>
  tgraph.output %o : !tgraph.tensor<[1, 2, 64, 32], f16>
}
