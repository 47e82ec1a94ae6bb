// tanh(x @ W) with W broadcast over a batch of 3: two rows a block, products on CUDA cores (fp16 products lost 1e3-scale inputs until session 49).
tgraph.graph @bb(%x: !tgraph.tensor<[3, 50, 72], f16>, %w: !tgraph.tensor<[1, 72, 40], f16>) -> !tgraph.tensor<[3, 50, 40], f16> {
  %y = tgraph.matmul %x, %w : !tgraph.tensor<[3, 50, 72], f16>, !tgraph.tensor<[1, 72, 40], f16> -> !tgraph.tensor<[3, 50, 40], f16>
  %t = tgraph.tanh %y : !tgraph.tensor<[3, 50, 40], f16>
  tgraph.output %t : !tgraph.tensor<[3, 50, 40], f16>
}
