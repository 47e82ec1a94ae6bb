// A residual of the projection's own input: silu(x W) + x (cleave-split-shared-inputs: the add reads a copy of x).
tgraph.graph @resid(%x: !tgraph.tensor<[256, 512], f16>, %w: !tgraph.tensor<[512, 512], f16>) -> !tgraph.tensor<[256, 512], f16> {
  %y = tgraph.matmul %x, %w : !tgraph.tensor<[256, 512], f16>, !tgraph.tensor<[512, 512], f16> -> !tgraph.tensor<[256, 512], f16>
  %g = tgraph.silu %y : !tgraph.tensor<[256, 512], f16>
  %o = tgraph.add %g, %x : !tgraph.tensor<[256, 512], f16>, !tgraph.tensor<[256, 512], f16> -> !tgraph.tensor<[256, 512], f16>
  tgraph.output %o : !tgraph.tensor<[256, 512], f16>
}
