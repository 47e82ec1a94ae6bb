// ViT-style mean pooling over 197 tokens, then a [768, 1000] classification head, batch 8 (a mean over an awkward dim).
tgraph.graph @vit_pool_head(%x: !tgraph.tensor<[8, 197, 768], f16>, %w: !tgraph.tensor<[768, 1000], f16>) -> !tgraph.tensor<[8, 1000], f16> {
  %p = tgraph.reduce mean %x dim 1 : !tgraph.tensor<[8, 197, 768], f16> -> !tgraph.tensor<[8, 1, 768], f16>
  %q = tgraph.reshape %p : !tgraph.tensor<[8, 1, 768], f16> -> !tgraph.tensor<[8, 768], f16>
  %o = tgraph.matmul %q, %w : !tgraph.tensor<[8, 768], f16>, !tgraph.tensor<[768, 1000], f16> -> !tgraph.tensor<[8, 1000], f16>
  tgraph.output %o : !tgraph.tensor<[8, 1000], f16>
}
