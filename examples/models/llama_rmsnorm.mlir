// RMSNorm as Llama computes it (transformers models/llama/modeling_llama.py, LlamaRMSNorm): in f32,
// x * rsqrt(mean(x^2) + 1e-5), cast back to f16, times the weight.
// Test shape: T=64, hidden 96. Real shape (Llama-3-8B): T=4096, hidden 4096.
// gpu-resize: 64=4096 96=4096
tgraph.graph @llama_rmsnorm(%x: !tgraph.tensor<[64, 96], f16>, %w: !tgraph.tensor<[1, 96], f16>) -> !tgraph.tensor<[64, 96], f16> {
  %xf = tgraph.cast %x : !tgraph.tensor<[64, 96], f16> -> !tgraph.tensor<[64, 96], f32>
  %sq = tgraph.square %xf : !tgraph.tensor<[64, 96], f32>
  %ms = tgraph.reduce mean %sq dim 1 : !tgraph.tensor<[64, 96], f32> -> !tgraph.tensor<[64, 1], f32>
  %0 = tgraph.scalar add %ms, 1.000000e-05 : !tgraph.tensor<[64, 1], f32>
  %rs = tgraph.rsqrt %0 : !tgraph.tensor<[64, 1], f32>
  %xn = tgraph.mul %xf, %rs : !tgraph.tensor<[64, 96], f32>, !tgraph.tensor<[64, 1], f32> -> !tgraph.tensor<[64, 96], f32>
  %y = tgraph.cast %xn : !tgraph.tensor<[64, 96], f32> -> !tgraph.tensor<[64, 96], f16>
  %o = tgraph.mul %w, %y : !tgraph.tensor<[1, 96], f16>, !tgraph.tensor<[64, 96], f16> -> !tgraph.tensor<[64, 96], f16>
  tgraph.output %o : !tgraph.tensor<[64, 96], f16>
}
