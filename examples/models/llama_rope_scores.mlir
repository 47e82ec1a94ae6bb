// Rotary position embedding on the query and key, then the attention logits, Llama-3-8B (transformers
// models/llama/modeling_llama.py, apply_rotary_pos_emb): q' = q cos + rotate_half(q) sin, likewise k,
// s = q' k'^T / sqrt(D). rotate_half (a slice and a concat of the two halves) is an explicitly
// precomputed input (qr, kr): the scheduler refuses tgraph.slice/concat today.
// Test shape: H=2, S=64, D=32. Real shape: H=32, S=2048, D=128.
// gpu-resize: 2=32 64=2048 32=128
tgraph.graph @llama_rope_scores(%q: !tgraph.tensor<[1, 2, 64, 32], f16>, %qr: !tgraph.tensor<[1, 2, 64, 32], f16>, %k: !tgraph.tensor<[1, 2, 64, 32], f16>, %kr: !tgraph.tensor<[1, 2, 64, 32], f16>, %cos: !tgraph.tensor<[1, 1, 64, 32], f16>, %sin: !tgraph.tensor<[1, 1, 64, 32], f16>) -> !tgraph.tensor<[1, 2, 64, 64], f16> {
  %qc = tgraph.mul %q, %cos : !tgraph.tensor<[1, 2, 64, 32], f16>, !tgraph.tensor<[1, 1, 64, 32], f16> -> !tgraph.tensor<[1, 2, 64, 32], f16>
  %qs = tgraph.mul %qr, %sin : !tgraph.tensor<[1, 2, 64, 32], f16>, !tgraph.tensor<[1, 1, 64, 32], f16> -> !tgraph.tensor<[1, 2, 64, 32], f16>
  %qe = tgraph.add %qc, %qs : !tgraph.tensor<[1, 2, 64, 32], f16>, !tgraph.tensor<[1, 2, 64, 32], f16> -> !tgraph.tensor<[1, 2, 64, 32], f16>
  %kc = tgraph.mul %k, %cos : !tgraph.tensor<[1, 2, 64, 32], f16>, !tgraph.tensor<[1, 1, 64, 32], f16> -> !tgraph.tensor<[1, 2, 64, 32], f16>
  %ks = tgraph.mul %kr, %sin : !tgraph.tensor<[1, 2, 64, 32], f16>, !tgraph.tensor<[1, 1, 64, 32], f16> -> !tgraph.tensor<[1, 2, 64, 32], f16>
  %ke = tgraph.add %kc, %ks : !tgraph.tensor<[1, 2, 64, 32], f16>, !tgraph.tensor<[1, 2, 64, 32], f16> -> !tgraph.tensor<[1, 2, 64, 32], f16>
  %s = tgraph.matmul %qe, %ke transpose_b : !tgraph.tensor<[1, 2, 64, 32], f16>, !tgraph.tensor<[1, 2, 64, 32], f16> -> !tgraph.tensor<[1, 2, 64, 64], f16>
  %t = tgraph.scale %s, 0.088388347648318433 : !tgraph.tensor<[1, 2, 64, 64], f16>
  tgraph.output %t : !tgraph.tensor<[1, 2, 64, 64], f16>
}
