// CLIP quick-GELU MLP up-projection, CLIP ViT-L/14 (transformers models/clip/modeling_clip.py, CLIPMLP with
// quick_gelu): h = x W1 + b1, h * sigmoid(1.702 h).
// Test shape: T=64, hidden 48, inner 192. Real shape: T=4096 (16 images * 256 patches), hidden 1024, inner 4096.
// gpu-resize: 64=4096 48=1024 192=4096
tgraph.graph @clip_quick_gelu(%x: !tgraph.tensor<[64, 48], f16>, %w1: !tgraph.tensor<[48, 192], f16>, %b1: !tgraph.tensor<[1, 192], f16>) -> !tgraph.tensor<[64, 192], f16> {
  %xw = tgraph.matmul %x, %w1 : !tgraph.tensor<[64, 48], f16>, !tgraph.tensor<[48, 192], f16> -> !tgraph.tensor<[64, 192], f16>
  %h = tgraph.add %xw, %b1 : !tgraph.tensor<[64, 192], f16>, !tgraph.tensor<[1, 192], f16> -> !tgraph.tensor<[64, 192], f16>
  %hs = tgraph.scale %h, 1.702000e+00 : !tgraph.tensor<[64, 192], f16>
  %sg = tgraph.sigmoid %hs : !tgraph.tensor<[64, 192], f16>
  %y = tgraph.mul %h, %sg : !tgraph.tensor<[64, 192], f16>, !tgraph.tensor<[64, 192], f16> -> !tgraph.tensor<[64, 192], f16>
  tgraph.output %y : !tgraph.tensor<[64, 192], f16>
}
