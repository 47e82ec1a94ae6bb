// Final-logit soft-capping on the LM head, Gemma-2-2B (transformers models/gemma2/modeling_gemma2.py,
// Gemma2ForCausalLM: final_logit_softcapping=30): tanh((x W_lm) / 30) * 30.
// Test shape: T=64, hidden 48, vocab 512. Real shape: T=1024, hidden 2304, vocab 65536 (256000 cut to a
// power of two).
// gpu-resize: 64=1024 48=2304 512=65536
tgraph.graph @gemma2_lm_head_softcap(%x: !tgraph.tensor<[64, 48], f16>, %w_lm: !tgraph.tensor<[48, 512], f16>) -> !tgraph.tensor<[64, 512], f16> {
  %logits = tgraph.matmul %x, %w_lm : !tgraph.tensor<[64, 48], f16>, !tgraph.tensor<[48, 512], f16> -> !tgraph.tensor<[64, 512], f16>
  %0 = tgraph.scale %logits, 0.033333333333333333 : !tgraph.tensor<[64, 512], f16>
  %c = tgraph.tanh %0 : !tgraph.tensor<[64, 512], f16>
  %capped = tgraph.scale %c, 3.000000e+01 : !tgraph.tensor<[64, 512], f16>
  tgraph.output %capped : !tgraph.tensor<[64, 512], f16>
}
