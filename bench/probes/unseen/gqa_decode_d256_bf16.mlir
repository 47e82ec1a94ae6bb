// GQA decode with Gemma's head dim 256 (bf16): 4 KV heads, 2 query heads a group, 1024 keys. The one-kernel form (V columns split over blocks, async gemms) fails TileLang's StorageRewrite ("Can't fetch the lanes of a scalable vector") and is dropped.
tgraph.graph @gqa_decode_d256(%q: !tgraph.tensor<[1, 4, 2, 256], bf16>, %k: !tgraph.tensor<[1, 4, 1024, 256], bf16>, %v: !tgraph.tensor<[1, 4, 1024, 256], bf16>) -> !tgraph.tensor<[1, 4, 2, 256], bf16> {
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[1, 4, 2, 256], bf16>, !tgraph.tensor<[1, 4, 1024, 256], bf16> -> !tgraph.tensor<[1, 4, 2, 1024], bf16>
  %t = tgraph.scale %s, 0.0625 : !tgraph.tensor<[1, 4, 2, 1024], bf16>
  %m = tgraph.reduce max %t dim 3 : !tgraph.tensor<[1, 4, 2, 1024], bf16> -> !tgraph.tensor<[1, 4, 2, 1], bf16>
  %z = tgraph.sub %t, %m : !tgraph.tensor<[1, 4, 2, 1024], bf16>, !tgraph.tensor<[1, 4, 2, 1], bf16> -> !tgraph.tensor<[1, 4, 2, 1024], bf16>
  %e = tgraph.exp %z : !tgraph.tensor<[1, 4, 2, 1024], bf16>
  %l = tgraph.reduce sum %e dim 3 : !tgraph.tensor<[1, 4, 2, 1024], bf16> -> !tgraph.tensor<[1, 4, 2, 1], bf16>
  %p = tgraph.div %e, %l : !tgraph.tensor<[1, 4, 2, 1024], bf16>, !tgraph.tensor<[1, 4, 2, 1], bf16> -> !tgraph.tensor<[1, 4, 2, 1024], bf16>
  %o = tgraph.matmul %p, %v : !tgraph.tensor<[1, 4, 2, 1024], bf16>, !tgraph.tensor<[1, 4, 1024, 256], bf16> -> !tgraph.tensor<[1, 4, 2, 256], bf16>
  tgraph.output %o : !tgraph.tensor<[1, 4, 2, 256], bf16>
}
