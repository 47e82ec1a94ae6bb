// bf16 attention at head dim 192 over 300 tokens (B2 H4; session 44)
tgraph.graph @d192(%q: !tgraph.tensor<[2, 4, 300, 192], bf16>, %k: !tgraph.tensor<[2, 4, 300, 192], bf16>, %v: !tgraph.tensor<[2, 4, 300, 192], bf16>) -> !tgraph.tensor<[2, 4, 300, 192], bf16> {
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[2, 4, 300, 192], bf16>, !tgraph.tensor<[2, 4, 300, 192], bf16> -> !tgraph.tensor<[2, 4, 300, 300], bf16>
  %t = tgraph.scale %s, 0.07216878364870323 : !tgraph.tensor<[2, 4, 300, 300], bf16>
  %e = tgraph.exp %t : !tgraph.tensor<[2, 4, 300, 300], bf16>
  %d = tgraph.reduce sum %e dim 3 : !tgraph.tensor<[2, 4, 300, 300], bf16> -> !tgraph.tensor<[2, 4, 300, 1], bf16>
  %p = tgraph.div %e, %d : !tgraph.tensor<[2, 4, 300, 300], bf16>, !tgraph.tensor<[2, 4, 300, 1], bf16> -> !tgraph.tensor<[2, 4, 300, 300], bf16>
  %o = tgraph.matmul %p, %v : !tgraph.tensor<[2, 4, 300, 300], bf16>, !tgraph.tensor<[2, 4, 300, 192], bf16> -> !tgraph.tensor<[2, 4, 300, 192], bf16>
  tgraph.output %o : !tgraph.tensor<[2, 4, 300, 192], bf16>
}
