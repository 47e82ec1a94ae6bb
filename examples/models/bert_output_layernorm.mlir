// BERT's output block, post-norm (transformers models/bert/modeling_bert.py, BertOutput): the FFN's down
// projection with its bias, the residual, then LayerNorm with its affine (eps 1e-12):
// LayerNorm(x W + b + residual) over the hidden dim. The norm reads whole rows of the projection's output.
// Test shape: T=16, I=256, H=64. Real shape: T=128, I=3072, H=768.
// gpu-resize: 16=128 256=3072 64=768
tgraph.graph @bert_output_layernorm(%x: !tgraph.tensor<[16, 256], f16>, %w: !tgraph.tensor<[256, 64], f16>, %b: !tgraph.tensor<[1, 64], f16>, %res: !tgraph.tensor<[16, 64], f16>, %gamma: !tgraph.tensor<[1, 64], f16>, %beta: !tgraph.tensor<[1, 64], f16>) -> !tgraph.tensor<[16, 64], f16> {
  %p = tgraph.matmul %x, %w : !tgraph.tensor<[16, 256], f16>, !tgraph.tensor<[256, 64], f16> -> !tgraph.tensor<[16, 64], f16>
  %pb = tgraph.add %p, %b : !tgraph.tensor<[16, 64], f16>, !tgraph.tensor<[1, 64], f16> -> !tgraph.tensor<[16, 64], f16>
  %h = tgraph.add %pb, %res : !tgraph.tensor<[16, 64], f16>, !tgraph.tensor<[16, 64], f16> -> !tgraph.tensor<[16, 64], f16>
  %mu = tgraph.reduce mean %h dim 1 : !tgraph.tensor<[16, 64], f16> -> !tgraph.tensor<[16, 1], f16>
  %hc = tgraph.sub %h, %mu : !tgraph.tensor<[16, 64], f16>, !tgraph.tensor<[16, 1], f16> -> !tgraph.tensor<[16, 64], f16>
  %sq = tgraph.square %hc : !tgraph.tensor<[16, 64], f16>
  %var = tgraph.reduce mean %sq dim 1 : !tgraph.tensor<[16, 64], f16> -> !tgraph.tensor<[16, 1], f16>
  %e = tgraph.scalar add %var, 1.000000e-12 : !tgraph.tensor<[16, 1], f16>
  %rs = tgraph.rsqrt %e : !tgraph.tensor<[16, 1], f16>
  %n = tgraph.mul %hc, %rs : !tgraph.tensor<[16, 64], f16>, !tgraph.tensor<[16, 1], f16> -> !tgraph.tensor<[16, 64], f16>
  %ng = tgraph.mul %n, %gamma : !tgraph.tensor<[16, 64], f16>, !tgraph.tensor<[1, 64], f16> -> !tgraph.tensor<[16, 64], f16>
  %o = tgraph.add %ng, %beta : !tgraph.tensor<[16, 64], f16>, !tgraph.tensor<[1, 64], f16> -> !tgraph.tensor<[16, 64], f16>
  tgraph.output %o : !tgraph.tensor<[16, 64], f16>
}
