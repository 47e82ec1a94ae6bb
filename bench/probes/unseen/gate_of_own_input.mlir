// A gate on the projection's own input: x * sigmoid(x W) (cleave-split-shared-inputs: the mul reads a copy of x).
tgraph.graph @gate(%x: !tgraph.tensor<[64, 1024], f16>, %w: !tgraph.tensor<[1024, 1024], f16>) -> !tgraph.tensor<[64, 1024], f16> {
  %y = tgraph.matmul %x, %w : !tgraph.tensor<[64, 1024], f16>, !tgraph.tensor<[1024, 1024], f16> -> !tgraph.tensor<[64, 1024], f16>
  %s = tgraph.sigmoid %y : !tgraph.tensor<[64, 1024], f16>
  %o = tgraph.mul %x, %s : !tgraph.tensor<[64, 1024], f16>, !tgraph.tensor<[64, 1024], f16> -> !tgraph.tensor<[64, 1024], f16>
  tgraph.output %o : !tgraph.tensor<[64, 1024], f16>
}
