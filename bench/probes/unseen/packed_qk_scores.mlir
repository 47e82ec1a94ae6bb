// Fused QKV projection, then q and k sliced out of it and multiplied (scores of a packed projection).
tgraph.graph @qkv(%x: !tgraph.tensor<[64, 512], f16>, %w: !tgraph.tensor<[1536, 512], f16>) -> !tgraph.tensor<[64, 64], f16> {
  %y = tgraph.matmul %x, %w transpose_b : !tgraph.tensor<[64, 512], f16>, !tgraph.tensor<[1536, 512], f16> -> !tgraph.tensor<[64, 1536], f16>
  %q = tgraph.slice %y dim 1 start 0 : !tgraph.tensor<[64, 1536], f16> -> !tgraph.tensor<[64, 512], f16>
  %k = tgraph.slice %y dim 1 start 512 : !tgraph.tensor<[64, 1536], f16> -> !tgraph.tensor<[64, 512], f16>
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[64, 512], f16>, !tgraph.tensor<[64, 512], f16> -> !tgraph.tensor<[64, 64], f16>
  tgraph.output %s : !tgraph.tensor<[64, 64], f16>
}
