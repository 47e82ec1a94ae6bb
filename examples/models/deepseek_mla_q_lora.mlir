// Multi-head latent attention query path, DeepSeek-V3 (transformers models/deepseek_v3/modeling_deepseek_v3.py,
// DeepseekV3Attention: q_b_proj(q_a_layernorm(q_a_proj(x)))): q = RMSNorm(x W_dq) * w W_uq, the norm in between
// the down- and the up-projection (eps 1e-6).
// Test shape: T=64, hidden 128, q_lora_rank 96, up 160. Real shape: T=2048, hidden 7168, q_lora_rank 1536,
// up 128 heads * 192 = 24576.
// gpu-resize: 64=2048 128=7168 96=1536 160=24576
tgraph.graph @deepseek_mla_q_lora(%x: !tgraph.tensor<[64, 128], f16>, %w_dq: !tgraph.tensor<[128, 96], f16>, %w: !tgraph.tensor<[1, 96], f16>, %w_uq: !tgraph.tensor<[96, 160], f16>) -> !tgraph.tensor<[64, 160], f16> {
  %c = tgraph.matmul %x, %w_dq : !tgraph.tensor<[64, 128], f16>, !tgraph.tensor<[128, 96], f16> -> !tgraph.tensor<[64, 96], f16>
  %sq = tgraph.square %c : !tgraph.tensor<[64, 96], f16>
  %ms = tgraph.reduce mean %sq dim 1 : !tgraph.tensor<[64, 96], f16> -> !tgraph.tensor<[64, 1], f16>
  %0 = tgraph.scalar add %ms, 1.000000e-06 : !tgraph.tensor<[64, 1], f16>
  %rs = tgraph.rsqrt %0 : !tgraph.tensor<[64, 1], f16>
  %xn = tgraph.mul %c, %rs : !tgraph.tensor<[64, 96], f16>, !tgraph.tensor<[64, 1], f16> -> !tgraph.tensor<[64, 96], f16>
  %cn = tgraph.mul %xn, %w : !tgraph.tensor<[64, 96], f16>, !tgraph.tensor<[1, 96], f16> -> !tgraph.tensor<[64, 96], f16>
  %q = tgraph.matmul %cn, %w_uq : !tgraph.tensor<[64, 96], f16>, !tgraph.tensor<[96, 160], f16> -> !tgraph.tensor<[64, 160], f16>
  tgraph.output %q : !tgraph.tensor<[64, 160], f16>
}
