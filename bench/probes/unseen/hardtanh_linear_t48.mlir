// clamp(x @ W, -1, 1) (hardtanh after a linear); the search reorders the two clamps.
tgraph.graph @ht(%x: !tgraph.tensor<[48, 320], f16>, %w: !tgraph.tensor<[320, 200], f16>) -> !tgraph.tensor<[48, 200], f16> {
  %y = tgraph.matmul %x, %w : !tgraph.tensor<[48, 320], f16>, !tgraph.tensor<[320, 200], f16> -> !tgraph.tensor<[48, 200], f16>
  %a = tgraph.scalar max %y, -1.000000e+00 : !tgraph.tensor<[48, 200], f16>
  %b = tgraph.scalar min %a, 1.000000e+00 : !tgraph.tensor<[48, 200], f16>
  tgraph.output %b : !tgraph.tensor<[48, 200], f16>
}
