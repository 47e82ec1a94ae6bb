// An MLP that also returns its hidden pre-activation (kept for a backward pass): y = silu(x W1) W2 and h = x W1, 64 tokens, hidden 1024 -> 4096 -> 1024.
tgraph.graph @mlp_h(%x: !tgraph.tensor<[64, 1024], f16>, %w1: !tgraph.tensor<[1024, 4096], f16>, %w2: !tgraph.tensor<[4096, 1024], f16>) -> (!tgraph.tensor<[64, 1024], f16>, !tgraph.tensor<[64, 4096], f16>) {
  %h = tgraph.matmul %x, %w1 : !tgraph.tensor<[64, 1024], f16>, !tgraph.tensor<[1024, 4096], f16> -> !tgraph.tensor<[64, 4096], f16>
  %a = tgraph.silu %h : !tgraph.tensor<[64, 4096], f16>
  %y = tgraph.matmul %a, %w2 : !tgraph.tensor<[64, 4096], f16>, !tgraph.tensor<[4096, 1024], f16> -> !tgraph.tensor<[64, 1024], f16>
  tgraph.output %y, %h : !tgraph.tensor<[64, 1024], f16>, !tgraph.tensor<[64, 4096], f16>
}
