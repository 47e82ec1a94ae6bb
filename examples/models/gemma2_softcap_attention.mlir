// Attention-logit soft-capping, Gemma-2-9B (transformers models/gemma2/modeling_gemma2.py,
// eager_attention_forward with softcap): s = tanh(Q K^T * 256^-0.5 / 50) * 50 (attn_logit_softcapping=50,
// query_pre_attn_scalar=256), causal 0/1 mask, softmax, then P V.
// Test shape: H=2, S=64, D=48. Real shape: H=16, S=4096, D=256.
// gpu-resize: 2=16 64=4096 48=256
tgraph.graph @gemma2_softcap_attention(%q: !tgraph.tensor<[1, 2, 64, 48], f16>, %k: !tgraph.tensor<[1, 2, 64, 48], f16>, %v: !tgraph.tensor<[1, 2, 64, 48], f16>, %mask: !tgraph.tensor<[1, 1, 64, 64], f16>) -> !tgraph.tensor<[1, 2, 64, 48], f16> {
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[1, 2, 64, 48], f16>, !tgraph.tensor<[1, 2, 64, 48], f16> -> !tgraph.tensor<[1, 2, 64, 64], f16>
  %0 = tgraph.scale %s, 1.250000e-03 : !tgraph.tensor<[1, 2, 64, 64], f16>
  %c = tgraph.tanh %0 : !tgraph.tensor<[1, 2, 64, 64], f16>
  %t = tgraph.scale %c, 5.000000e+01 : !tgraph.tensor<[1, 2, 64, 64], f16>
  %fill = tgraph.scalar sub %mask, 1.000000e+04 : !tgraph.tensor<[1, 1, 64, 64], f16>
  %tm = tgraph.select %mask, %t, %fill : !tgraph.tensor<[1, 1, 64, 64], f16>, !tgraph.tensor<[1, 2, 64, 64], f16>, !tgraph.tensor<[1, 1, 64, 64], f16> -> !tgraph.tensor<[1, 2, 64, 64], f16>
  %m = tgraph.reduce max %tm dim 3 : !tgraph.tensor<[1, 2, 64, 64], f16> -> !tgraph.tensor<[1, 2, 64, 1], f16>
  %1 = tgraph.sub %tm, %m : !tgraph.tensor<[1, 2, 64, 64], f16>, !tgraph.tensor<[1, 2, 64, 1], f16> -> !tgraph.tensor<[1, 2, 64, 64], f16>
  %e = tgraph.exp %1 : !tgraph.tensor<[1, 2, 64, 64], f16>
  %r = tgraph.reduce sum %e dim 3 : !tgraph.tensor<[1, 2, 64, 64], f16> -> !tgraph.tensor<[1, 2, 64, 1], f16>
  %p = tgraph.div %e, %r : !tgraph.tensor<[1, 2, 64, 64], f16>, !tgraph.tensor<[1, 2, 64, 1], f16> -> !tgraph.tensor<[1, 2, 64, 64], f16>
  %o = tgraph.matmul %p, %v : !tgraph.tensor<[1, 2, 64, 64], f16>, !tgraph.tensor<[1, 2, 64, 48], f16> -> !tgraph.tensor<[1, 2, 64, 48], f16>
  tgraph.output %o : !tgraph.tensor<[1, 2, 64, 48], f16>
}
