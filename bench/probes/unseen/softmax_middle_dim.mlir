// Softmax over a middle dim (the 64 slots of [4, 64, 32], as slot attention normalizes over slots), then weights @ values [4, 32, 48] per batch.
tgraph.graph @slot_softmax(%l: !tgraph.tensor<[4, 64, 32], f16>, %v: !tgraph.tensor<[4, 32, 48], f16>) -> !tgraph.tensor<[4, 64, 48], f16> {
  %m = tgraph.reduce max %l dim 1 : !tgraph.tensor<[4, 64, 32], f16> -> !tgraph.tensor<[4, 1, 32], f16>
  %d = tgraph.sub %l, %m : !tgraph.tensor<[4, 64, 32], f16>, !tgraph.tensor<[4, 1, 32], f16> -> !tgraph.tensor<[4, 64, 32], f16>
  %e = tgraph.exp %d : !tgraph.tensor<[4, 64, 32], f16>
  %z = tgraph.reduce sum %e dim 1 : !tgraph.tensor<[4, 64, 32], f16> -> !tgraph.tensor<[4, 1, 32], f16>
  %p = tgraph.div %e, %z : !tgraph.tensor<[4, 64, 32], f16>, !tgraph.tensor<[4, 1, 32], f16> -> !tgraph.tensor<[4, 64, 32], f16>
  %o = tgraph.matmul %p, %v : !tgraph.tensor<[4, 64, 32], f16>, !tgraph.tensor<[4, 32, 48], f16> -> !tgraph.tensor<[4, 64, 48], f16>
  tgraph.output %o : !tgraph.tensor<[4, 64, 48], f16>
}
