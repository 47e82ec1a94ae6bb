// QK-norm, Qwen3-8B (transformers models/qwen3/modeling_qwen3.py, Qwen3Attention: q_norm and k_norm, RMSNorm
// over each head's dim, eps 1e-6) followed by the attention logits: s = (RMSNorm(q) w_q)(RMSNorm(k) w_k)^T / sqrt(D).
// Test shape: H=2, S=64, D=32. Real shape: H=32, S=2048, D=128.
// gpu-resize: 2=32 64=2048 32=128
tgraph.graph @qwen3_qk_norm_scores(%q: !tgraph.tensor<[1, 2, 64, 32], f16>, %k: !tgraph.tensor<[1, 2, 64, 32], f16>, %w_q: !tgraph.tensor<[1, 1, 1, 32], f16>, %w_k: !tgraph.tensor<[1, 1, 1, 32], f16>) -> !tgraph.tensor<[1, 2, 64, 64], f16> {
  %sqq = tgraph.square %q : !tgraph.tensor<[1, 2, 64, 32], f16>
  %msq = tgraph.reduce mean %sqq dim 3 : !tgraph.tensor<[1, 2, 64, 32], f16> -> !tgraph.tensor<[1, 2, 64, 1], f16>
  %0 = tgraph.scalar add %msq, 1.000000e-06 : !tgraph.tensor<[1, 2, 64, 1], f16>
  %rsq = tgraph.rsqrt %0 : !tgraph.tensor<[1, 2, 64, 1], f16>
  %xnq = tgraph.mul %q, %rsq : !tgraph.tensor<[1, 2, 64, 32], f16>, !tgraph.tensor<[1, 2, 64, 1], f16> -> !tgraph.tensor<[1, 2, 64, 32], f16>
  %qn = tgraph.mul %xnq, %w_q : !tgraph.tensor<[1, 2, 64, 32], f16>, !tgraph.tensor<[1, 1, 1, 32], f16> -> !tgraph.tensor<[1, 2, 64, 32], f16>
  %sqk = tgraph.square %k : !tgraph.tensor<[1, 2, 64, 32], f16>
  %msk = tgraph.reduce mean %sqk dim 3 : !tgraph.tensor<[1, 2, 64, 32], f16> -> !tgraph.tensor<[1, 2, 64, 1], f16>
  %1 = tgraph.scalar add %msk, 1.000000e-06 : !tgraph.tensor<[1, 2, 64, 1], f16>
  %rsk = tgraph.rsqrt %1 : !tgraph.tensor<[1, 2, 64, 1], f16>
  %xnk = tgraph.mul %k, %rsk : !tgraph.tensor<[1, 2, 64, 32], f16>, !tgraph.tensor<[1, 2, 64, 1], f16> -> !tgraph.tensor<[1, 2, 64, 32], f16>
  %kn = tgraph.mul %xnk, %w_k : !tgraph.tensor<[1, 2, 64, 32], f16>, !tgraph.tensor<[1, 1, 1, 32], f16> -> !tgraph.tensor<[1, 2, 64, 32], f16>
  %s = tgraph.matmul %qn, %kn transpose_b : !tgraph.tensor<[1, 2, 64, 32], f16>, !tgraph.tensor<[1, 2, 64, 32], f16> -> !tgraph.tensor<[1, 2, 64, 64], f16>
  %t = tgraph.scale %s, 0.088388347648318433 : !tgraph.tensor<[1, 2, 64, 64], f16>
  tgraph.output %t : !tgraph.tensor<[1, 2, 64, 64], f16>
}
