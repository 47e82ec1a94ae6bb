// A mean over dim 1 of a 4-d tensor (37 of them), the others kept.
tgraph.graph @md(%x: !tgraph.tensor<[2, 37, 12, 64], f16>) -> !tgraph.tensor<[2, 1, 12, 64], f16> {
  %s = tgraph.reduce sum %x dim 1 : !tgraph.tensor<[2, 37, 12, 64], f16> -> !tgraph.tensor<[2, 1, 12, 64], f16>
  %m = tgraph.scale %s, 2.702703e-02 : !tgraph.tensor<[2, 1, 12, 64], f16>
  tgraph.output %m : !tgraph.tensor<[2, 1, 12, 64], f16>
}
