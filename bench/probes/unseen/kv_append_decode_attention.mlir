// Decode attention the way eager Hugging Face code once wrote it: the new token's key and value appended to a
// 4095-token cache with torch.cat, then softmax(q k^T / sqrt(d)) v; 32 heads, head dim 128, one query token.
tgraph.graph @kv_append_decode(%q: !tgraph.tensor<[32, 1, 128], f16>, %kc: !tgraph.tensor<[32, 4095, 128], f16>, %vc: !tgraph.tensor<[32, 4095, 128], f16>, %kn: !tgraph.tensor<[32, 1, 128], f16>, %vn: !tgraph.tensor<[32, 1, 128], f16>) -> !tgraph.tensor<[32, 1, 128], f16> {
  %k = tgraph.concat %kc, %kn dim 1 : !tgraph.tensor<[32, 4095, 128], f16>, !tgraph.tensor<[32, 1, 128], f16> -> !tgraph.tensor<[32, 4096, 128], f16>
  %v = tgraph.concat %vc, %vn dim 1 : !tgraph.tensor<[32, 4095, 128], f16>, !tgraph.tensor<[32, 1, 128], f16> -> !tgraph.tensor<[32, 4096, 128], f16>
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[32, 1, 128], f16>, !tgraph.tensor<[32, 4096, 128], f16> -> !tgraph.tensor<[32, 1, 4096], f16>
  %t = tgraph.scale %s, 8.838834764831845e-02 : !tgraph.tensor<[32, 1, 4096], f16>
  %m = tgraph.reduce max %t dim 2 : !tgraph.tensor<[32, 1, 4096], f16> -> !tgraph.tensor<[32, 1, 1], f16>
  %z = tgraph.sub %t, %m : !tgraph.tensor<[32, 1, 4096], f16>, !tgraph.tensor<[32, 1, 1], f16> -> !tgraph.tensor<[32, 1, 4096], f16>
  %e = tgraph.exp %z : !tgraph.tensor<[32, 1, 4096], f16>
  %r = tgraph.reduce sum %e dim 2 : !tgraph.tensor<[32, 1, 4096], f16> -> !tgraph.tensor<[32, 1, 1], f16>
  %p = tgraph.div %e, %r : !tgraph.tensor<[32, 1, 4096], f16>, !tgraph.tensor<[32, 1, 1], f16> -> !tgraph.tensor<[32, 1, 4096], f16>
  %o = tgraph.matmul %p, %v : !tgraph.tensor<[32, 1, 4096], f16>, !tgraph.tensor<[32, 4096, 128], f16> -> !tgraph.tensor<[32, 1, 128], f16>
  tgraph.output %o : !tgraph.tensor<[32, 1, 128], f16>
}
