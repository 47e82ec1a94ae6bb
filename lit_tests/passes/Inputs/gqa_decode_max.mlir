// examples/gqa_decode.mlir with softmax written the usual way, the max taken of the unscaled logits:
// exp(scale * (s - max s)) / sum(exp(scale * (s - max s))).
tgraph.graph @gqa_decode(%q: !tgraph.tensor<[1, 8, 4, 128], f16>, %k: !tgraph.tensor<[1, 8, 4096, 128], f16> {dynamic = array<i64: 2>}, %v: !tgraph.tensor<[1, 8, 4096, 128], f16> {dynamic = array<i64: 2>}) -> !tgraph.tensor<[1, 8, 4, 128], f16> {
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[1, 8, 4, 128], f16>, !tgraph.tensor<[1, 8, 4096, 128], f16> -> !tgraph.tensor<[1, 8, 4, 4096], f16>
  %m = tgraph.reduce max %s dim 3 : !tgraph.tensor<[1, 8, 4, 4096], f16> -> !tgraph.tensor<[1, 8, 4, 1], f16>
  %d = tgraph.sub %s, %m : !tgraph.tensor<[1, 8, 4, 4096], f16>, !tgraph.tensor<[1, 8, 4, 1], f16> -> !tgraph.tensor<[1, 8, 4, 4096], f16>
  %t = tgraph.scale %d, 0.08838834764831845 : !tgraph.tensor<[1, 8, 4, 4096], f16>
  %e = tgraph.exp %t : !tgraph.tensor<[1, 8, 4, 4096], f16>
  %r = tgraph.reduce sum %e dim 3 : !tgraph.tensor<[1, 8, 4, 4096], f16> -> !tgraph.tensor<[1, 8, 4, 1], f16>
  %p = tgraph.div %e, %r : !tgraph.tensor<[1, 8, 4, 4096], f16>, !tgraph.tensor<[1, 8, 4, 1], f16> -> !tgraph.tensor<[1, 8, 4, 4096], f16>
  %o = tgraph.matmul %p, %v : !tgraph.tensor<[1, 8, 4, 4096], f16>, !tgraph.tensor<[1, 8, 4096, 128], f16> -> !tgraph.tensor<[1, 8, 4, 128], f16>
  tgraph.output %o : !tgraph.tensor<[1, 8, 4, 128], f16>
}
