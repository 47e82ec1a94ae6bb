// One query row of bf16 attention at head dim 72 over 300 keys, 4 heads.
tgraph.graph @d72(%q: !tgraph.tensor<[1, 4, 1, 72], bf16>, %k: !tgraph.tensor<[1, 4, 300, 72], bf16>, %v: !tgraph.tensor<[1, 4, 300, 72], bf16>) -> !tgraph.tensor<[1, 4, 1, 72], bf16> {
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[1, 4, 1, 72], bf16>, !tgraph.tensor<[1, 4, 300, 72], bf16> -> !tgraph.tensor<[1, 4, 1, 300], bf16>
  %t = tgraph.scale %s, 1.178511e-01 : !tgraph.tensor<[1, 4, 1, 300], bf16>
  %m = tgraph.reduce max %t dim 3 : !tgraph.tensor<[1, 4, 1, 300], bf16> -> !tgraph.tensor<[1, 4, 1, 1], bf16>
  %d = tgraph.sub %t, %m : !tgraph.tensor<[1, 4, 1, 300], bf16>, !tgraph.tensor<[1, 4, 1, 1], bf16> -> !tgraph.tensor<[1, 4, 1, 300], bf16>
  %e = tgraph.exp %d : !tgraph.tensor<[1, 4, 1, 300], bf16>
  %r = tgraph.reduce sum %e dim 3 : !tgraph.tensor<[1, 4, 1, 300], bf16> -> !tgraph.tensor<[1, 4, 1, 1], bf16>
  %p = tgraph.div %e, %r : !tgraph.tensor<[1, 4, 1, 300], bf16>, !tgraph.tensor<[1, 4, 1, 1], bf16> -> !tgraph.tensor<[1, 4, 1, 300], bf16>
  %o = tgraph.matmul %p, %v : !tgraph.tensor<[1, 4, 1, 300], bf16>, !tgraph.tensor<[1, 4, 300, 72], bf16> -> !tgraph.tensor<[1, 4, 1, 72], bf16>
  tgraph.output %o : !tgraph.tensor<[1, 4, 1, 72], bf16>
}
