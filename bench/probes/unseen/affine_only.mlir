// x * 2 + 1 and nothing else (no matmul, no reduction), over an odd [33, 77].
tgraph.graph @aff(%x: !tgraph.tensor<[33, 77], f16>) -> !tgraph.tensor<[33, 77], f16> {
  %a = tgraph.scale %x, 2.000000e+00 : !tgraph.tensor<[33, 77], f16>
  %b = tgraph.scalar add %a, 1.000000e+00 : !tgraph.tensor<[33, 77], f16>
  tgraph.output %b : !tgraph.tensor<[33, 77], f16>
}
