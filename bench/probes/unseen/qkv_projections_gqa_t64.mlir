// Separate q, k and v projections of one x at grouped-query widths (1024, 256, 256), three outputs: no grid tiles them alike.
tgraph.graph @qkv(%x: !tgraph.tensor<[64, 1024], f16>, %wq: !tgraph.tensor<[1024, 1024], f16>, %wk: !tgraph.tensor<[1024, 256], f16>, %wv: !tgraph.tensor<[1024, 256], f16>) -> (!tgraph.tensor<[64, 1024], f16>, !tgraph.tensor<[64, 256], f16>, !tgraph.tensor<[64, 256], f16>) {
  %q = tgraph.matmul %x, %wq : !tgraph.tensor<[64, 1024], f16>, !tgraph.tensor<[1024, 1024], f16> -> !tgraph.tensor<[64, 1024], f16>
  %k = tgraph.matmul %x, %wk : !tgraph.tensor<[64, 1024], f16>, !tgraph.tensor<[1024, 256], f16> -> !tgraph.tensor<[64, 256], f16>
  %v = tgraph.matmul %x, %wv : !tgraph.tensor<[64, 1024], f16>, !tgraph.tensor<[1024, 256], f16> -> !tgraph.tensor<[64, 256], f16>
  tgraph.output %q, %k, %v : !tgraph.tensor<[64, 1024], f16>, !tgraph.tensor<[64, 256], f16>, !tgraph.tensor<[64, 256], f16>
}
