// LayerNorm then the fused QKV projection, ViT-B/16 (transformers models/vit/modeling_vit.py, ViTLayer:
// layernorm_before, then ViTSelfAttention's query/key/value as one matmul): mean and variance through
// reduce mean, (x - mu) * rsqrt(var + 1e-12) * g + b, then @ W_qkv.
// Test shape: T=64, hidden 48, out 144. Real shape: T=3328 (16 images * 197 tokens padded to 208), hidden 768,
// out 2304.
// gpu-resize: 64=3328 48=768 144=2304
tgraph.graph @vit_layernorm_qkv(%x: !tgraph.tensor<[64, 48], f16>, %gamma: !tgraph.tensor<[1, 48], f16>, %beta: !tgraph.tensor<[1, 48], f16>, %w_qkv: !tgraph.tensor<[48, 144], f16>) -> !tgraph.tensor<[64, 144], f16> {
  %mu = tgraph.reduce mean %x dim 1 : !tgraph.tensor<[64, 48], f16> -> !tgraph.tensor<[64, 1], f16>
  %xc = tgraph.sub %x, %mu : !tgraph.tensor<[64, 48], f16>, !tgraph.tensor<[64, 1], f16> -> !tgraph.tensor<[64, 48], f16>
  %sq = tgraph.square %xc : !tgraph.tensor<[64, 48], f16>
  %var = tgraph.reduce mean %sq dim 1 : !tgraph.tensor<[64, 48], f16> -> !tgraph.tensor<[64, 1], f16>
  %0 = tgraph.scalar add %var, 1.000000e-12 : !tgraph.tensor<[64, 1], f16>
  %rs = tgraph.rsqrt %0 : !tgraph.tensor<[64, 1], f16>
  %xn = tgraph.mul %xc, %rs : !tgraph.tensor<[64, 48], f16>, !tgraph.tensor<[64, 1], f16> -> !tgraph.tensor<[64, 48], f16>
  %xg = tgraph.mul %xn, %gamma : !tgraph.tensor<[64, 48], f16>, !tgraph.tensor<[1, 48], f16> -> !tgraph.tensor<[64, 48], f16>
  %y = tgraph.add %xg, %beta : !tgraph.tensor<[64, 48], f16>, !tgraph.tensor<[1, 48], f16> -> !tgraph.tensor<[64, 48], f16>
  %qkv = tgraph.matmul %y, %w_qkv : !tgraph.tensor<[64, 48], f16>, !tgraph.tensor<[48, 144], f16> -> !tgraph.tensor<[64, 144], f16>
  tgraph.output %qkv : !tgraph.tensor<[64, 144], f16>
}
