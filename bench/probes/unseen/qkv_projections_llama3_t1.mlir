// Llama-3-8B's q, k and v projections of one decode token (hidden 4096, 32 query heads, 8 KV heads of 128), three outputs.
tgraph.graph @qkv_t1(%x: !tgraph.tensor<[1, 4096], f16>, %wq: !tgraph.tensor<[4096, 4096], f16>, %wk: !tgraph.tensor<[4096, 1024], f16>, %wv: !tgraph.tensor<[4096, 1024], f16>) -> (!tgraph.tensor<[1, 4096], f16>, !tgraph.tensor<[1, 1024], f16>, !tgraph.tensor<[1, 1024], f16>) {
  %q = tgraph.matmul %x, %wq : !tgraph.tensor<[1, 4096], f16>, !tgraph.tensor<[4096, 4096], f16> -> !tgraph.tensor<[1, 4096], f16>
  %k = tgraph.matmul %x, %wk : !tgraph.tensor<[1, 4096], f16>, !tgraph.tensor<[4096, 1024], f16> -> !tgraph.tensor<[1, 1024], f16>
  %v = tgraph.matmul %x, %wv : !tgraph.tensor<[1, 4096], f16>, !tgraph.tensor<[4096, 1024], f16> -> !tgraph.tensor<[1, 1024], f16>
  tgraph.output %q, %k, %v : !tgraph.tensor<[1, 4096], f16>, !tgraph.tensor<[1, 1024], f16>, !tgraph.tensor<[1, 1024], f16>
}
