// Multi-head latent attention without weight absorption (prefill), DeepSeek-V2-Lite (transformers
// models/deepseek_v2/modeling_deepseek_v2.py, DeepseekV2Attention): keys and values are decompressed
// from the latent c_kv: k_nope = c_kv W_uk, v = c_kv W_uv; s = (q_nope k_nope^T + q_rope k_rope^T) / sqrt(192)
// (the rope part of the key is shared across heads), causal mask, softmax, P v.
// Test shape: H=2, S=64, latent 48, nope 32, rope 16, v 32. Real shape: H=16, S=2048, kv_lora_rank 512,
// qk_nope 128, qk_rope 64, v_head 128.
// gpu-resize: 2=16 64=2048 48=512 32=128 16=64
tgraph.graph @deepseek_mla_prefill(%q_nope: !tgraph.tensor<[1, 2, 64, 32], f16>, %q_rope: !tgraph.tensor<[1, 2, 64, 16], f16>, %c_kv: !tgraph.tensor<[1, 1, 64, 48], f16>, %k_rope: !tgraph.tensor<[1, 1, 64, 16], f16>, %w_uk: !tgraph.tensor<[1, 2, 48, 32], f16>, %w_uv: !tgraph.tensor<[1, 2, 48, 32], f16>, %mask: !tgraph.tensor<[1, 1, 64, 64], f16>) -> !tgraph.tensor<[1, 2, 64, 32], f16> {
  %k_nope = tgraph.matmul %c_kv, %w_uk : !tgraph.tensor<[1, 1, 64, 48], f16>, !tgraph.tensor<[1, 2, 48, 32], f16> -> !tgraph.tensor<[1, 2, 64, 32], f16>
  %v = tgraph.matmul %c_kv, %w_uv : !tgraph.tensor<[1, 1, 64, 48], f16>, !tgraph.tensor<[1, 2, 48, 32], f16> -> !tgraph.tensor<[1, 2, 64, 32], f16>
  %s_nope = tgraph.matmul %q_nope, %k_nope transpose_b : !tgraph.tensor<[1, 2, 64, 32], f16>, !tgraph.tensor<[1, 2, 64, 32], f16> -> !tgraph.tensor<[1, 2, 64, 64], f16>
  %s_rope = tgraph.matmul %q_rope, %k_rope transpose_b : !tgraph.tensor<[1, 2, 64, 16], f16>, !tgraph.tensor<[1, 1, 64, 16], f16> -> !tgraph.tensor<[1, 2, 64, 64], f16>
  %s = tgraph.add %s_nope, %s_rope : !tgraph.tensor<[1, 2, 64, 64], f16>, !tgraph.tensor<[1, 2, 64, 64], f16> -> !tgraph.tensor<[1, 2, 64, 64], f16>
  %t = tgraph.scale %s, 0.07216878364870323 : !tgraph.tensor<[1, 2, 64, 64], f16>
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
