// Attention pooling over x (keys and values are x): its one load of x is kept (cleave-split-shared-inputs does not split it).
tgraph.graph @attnpool(%q: !tgraph.tensor<[1, 4, 64, 64], f16>, %x: !tgraph.tensor<[1, 4, 1024, 64], f16>) -> !tgraph.tensor<[1, 4, 64, 64], f16> {
  %s = tgraph.matmul %q, %x transpose_b : !tgraph.tensor<[1, 4, 64, 64], f16>, !tgraph.tensor<[1, 4, 1024, 64], f16> -> !tgraph.tensor<[1, 4, 64, 1024], f16>
  %t = tgraph.scale %s, 1.250000e-01 : !tgraph.tensor<[1, 4, 64, 1024], f16>
  %m = tgraph.reduce max %t dim 3 : !tgraph.tensor<[1, 4, 64, 1024], f16> -> !tgraph.tensor<[1, 4, 64, 1], f16>
  %z = tgraph.sub %t, %m : !tgraph.tensor<[1, 4, 64, 1024], f16>, !tgraph.tensor<[1, 4, 64, 1], f16> -> !tgraph.tensor<[1, 4, 64, 1024], f16>
  %e = tgraph.exp %z : !tgraph.tensor<[1, 4, 64, 1024], f16>
  %r = tgraph.reduce sum %e dim 3 : !tgraph.tensor<[1, 4, 64, 1024], f16> -> !tgraph.tensor<[1, 4, 64, 1], f16>
  %p = tgraph.div %e, %r : !tgraph.tensor<[1, 4, 64, 1024], f16>, !tgraph.tensor<[1, 4, 64, 1], f16> -> !tgraph.tensor<[1, 4, 64, 1024], f16>
  %o = tgraph.matmul %p, %x : !tgraph.tensor<[1, 4, 64, 1024], f16>, !tgraph.tensor<[1, 4, 1024, 64], f16> -> !tgraph.tensor<[1, 4, 64, 64], f16>
  tgraph.output %o : !tgraph.tensor<[1, 4, 64, 64], f16>
}
