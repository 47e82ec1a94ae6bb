// Three chained projections without nonlinearity (a low-rank adapter stack): ((x @ A) @ B) @ C, 128 tokens.
tgraph.graph @three_mm(%x: !tgraph.tensor<[128, 1024], f16>, %a: !tgraph.tensor<[1024, 64], f16>, %b: !tgraph.tensor<[64, 64], f16>, %c: !tgraph.tensor<[64, 1024], f16>) -> !tgraph.tensor<[128, 1024], f16> {
  %xa = tgraph.matmul %x, %a : !tgraph.tensor<[128, 1024], f16>, !tgraph.tensor<[1024, 64], f16> -> !tgraph.tensor<[128, 64], f16>
  %xb = tgraph.matmul %xa, %b : !tgraph.tensor<[128, 64], f16>, !tgraph.tensor<[64, 64], f16> -> !tgraph.tensor<[128, 64], f16>
  %xc = tgraph.matmul %xb, %c : !tgraph.tensor<[128, 64], f16>, !tgraph.tensor<[64, 1024], f16> -> !tgraph.tensor<[128, 1024], f16>
  tgraph.output %xc : !tgraph.tensor<[128, 1024], f16>
}
