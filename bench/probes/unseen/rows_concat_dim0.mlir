// Two projections of two inputs stacked along rows (a concat along dim 0).
tgraph.graph @rc(%a: !tgraph.tensor<[24, 64], f16>, %b: !tgraph.tensor<[40, 64], f16>, %w: !tgraph.tensor<[64, 32], f16>) -> !tgraph.tensor<[64, 32], f16> {
  %ya = tgraph.matmul %a, %w : !tgraph.tensor<[24, 64], f16>, !tgraph.tensor<[64, 32], f16> -> !tgraph.tensor<[24, 32], f16>
  %yb = tgraph.matmul %b, %w : !tgraph.tensor<[40, 64], f16>, !tgraph.tensor<[64, 32], f16> -> !tgraph.tensor<[40, 32], f16>
  %o = tgraph.concat %ya, %yb dim 0 : !tgraph.tensor<[24, 32], f16>, !tgraph.tensor<[40, 32], f16> -> !tgraph.tensor<[64, 32], f16>
  tgraph.output %o : !tgraph.tensor<[64, 32], f16>
}
