// Rotary embedding fused into causal attention, Pythia-6.9B (GPT-NeoX architecture; transformers
// models/gpt_neox/modeling_gpt_neox.py, apply_rotary_pos_emb with rotary_pct=0.25 folded into cos=1,
// sin=0 on the non-rotary part): k' = k cos + rotate_half(k) sin (rotate_half precomputed as kr), then
// softmax(Q k'^T / sqrt(D) masked causally) V; the query arrives already rotated.
// Test shape: H=2, S=64, D=32. Real shape: H=32, S=2048, D=128.
// gpu-resize: 2=32 64=2048 32=128
tgraph.graph @neox_rope_causal_attention(%q: !tgraph.tensor<[1, 2, 64, 32], f16>, %k: !tgraph.tensor<[1, 2, 64, 32], f16>, %kr: !tgraph.tensor<[1, 2, 64, 32], f16>, %v: !tgraph.tensor<[1, 2, 64, 32], f16>, %cos: !tgraph.tensor<[1, 1, 64, 32], f16>, %sin: !tgraph.tensor<[1, 1, 64, 32], f16>, %mask: !tgraph.tensor<[1, 1, 64, 64], f16>) -> !tgraph.tensor<[1, 2, 64, 32], f16> {
  %kc = tgraph.mul %k, %cos : !tgraph.tensor<[1, 2, 64, 32], f16>, !tgraph.tensor<[1, 1, 64, 32], f16> -> !tgraph.tensor<[1, 2, 64, 32], f16>
  %ks = tgraph.mul %kr, %sin : !tgraph.tensor<[1, 2, 64, 32], f16>, !tgraph.tensor<[1, 1, 64, 32], f16> -> !tgraph.tensor<[1, 2, 64, 32], f16>
  %ke = tgraph.add %kc, %ks : !tgraph.tensor<[1, 2, 64, 32], f16>, !tgraph.tensor<[1, 2, 64, 32], f16> -> !tgraph.tensor<[1, 2, 64, 32], f16>
  %s = tgraph.matmul %q, %ke transpose_b : !tgraph.tensor<[1, 2, 64, 32], f16>, !tgraph.tensor<[1, 2, 64, 32], f16> -> !tgraph.tensor<[1, 2, 64, 64], f16>
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
