// Gemma RMSNorm then the query projection, Gemma-2B (transformers models/gemma/modeling_gemma.py, GemmaRMSNorm:
// the weight is stored as an offset, applied as (1 + w); eps 1e-6): (x * rsqrt(mean(x^2) + eps) * (1 + w)) W_q.
// Test shape: T=64, hidden 96, out 48. Real shape: T=2048, hidden 2048, out 2048 (8 heads * 256).
// gpu-resize: 64=2048 96=2048 48=2048
tgraph.graph @gemma_rmsnorm_matmul(%x: !tgraph.tensor<[64, 96], f16>, %w: !tgraph.tensor<[1, 96], f16>, %w_q: !tgraph.tensor<[96, 48], f16>) -> !tgraph.tensor<[64, 48], f16> {
  %w1 = tgraph.scalar add %w, 1.000000e+00 : !tgraph.tensor<[1, 96], f16>
  %sq = tgraph.square %x : !tgraph.tensor<[64, 96], f16>
  %ms = tgraph.reduce mean %sq dim 1 : !tgraph.tensor<[64, 96], f16> -> !tgraph.tensor<[64, 1], f16>
  %0 = tgraph.scalar add %ms, 1.000000e-06 : !tgraph.tensor<[64, 1], f16>
  %rs = tgraph.rsqrt %0 : !tgraph.tensor<[64, 1], f16>
  %xn = tgraph.mul %x, %rs : !tgraph.tensor<[64, 96], f16>, !tgraph.tensor<[64, 1], f16> -> !tgraph.tensor<[64, 96], f16>
  %xnw = tgraph.mul %xn, %w1 : !tgraph.tensor<[64, 96], f16>, !tgraph.tensor<[1, 96], f16> -> !tgraph.tensor<[64, 96], f16>
  %q = tgraph.matmul %xnw, %w_q : !tgraph.tensor<[64, 96], f16>, !tgraph.tensor<[96, 48], f16> -> !tgraph.tensor<[64, 48], f16>
  tgraph.output %q : !tgraph.tensor<[64, 48], f16>
}
