// MoE router scores, DeepSeek-V3 (transformers models/deepseek_v3/modeling_deepseek_v3.py, DeepseekV3TopkRouter):
// sigmoid(x W_router) plus the selection bias e_score_correction_bias (the group-limited top-k left out).
// Test shape: T=64, hidden 48, experts 32. Real shape: T=4096, hidden 7168, experts 256.
// gpu-resize: 64=4096 48=7168 32=256
tgraph.graph @deepseek_v3_router(%x: !tgraph.tensor<[64, 48], f16>, %w_router: !tgraph.tensor<[48, 32], f16>, %bias: !tgraph.tensor<[1, 32], f16>) -> !tgraph.tensor<[64, 32], f16> {
  %logits = tgraph.matmul %x, %w_router : !tgraph.tensor<[64, 48], f16>, !tgraph.tensor<[48, 32], f16> -> !tgraph.tensor<[64, 32], f16>
  %scores = tgraph.sigmoid %logits : !tgraph.tensor<[64, 32], f16>
  %for_choice = tgraph.add %scores, %bias : !tgraph.tensor<[64, 32], f16>, !tgraph.tensor<[1, 32], f16> -> !tgraph.tensor<[64, 32], f16>
  tgraph.output %for_choice : !tgraph.tensor<[64, 32], f16>
}
