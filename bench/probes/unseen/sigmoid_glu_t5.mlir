// A sigmoid-gated MLP at T=5 (GLU with sigmoid instead of SiLU): (sigmoid(x Wg) * (x Wu)) Wd, hidden 1024, inner 2816.
tgraph.graph @sigmoid_glu(%x: !tgraph.tensor<[5, 1024], f16>, %wg: !tgraph.tensor<[1024, 2816], f16>, %wu: !tgraph.tensor<[1024, 2816], f16>, %wd: !tgraph.tensor<[2816, 1024], f16>) -> !tgraph.tensor<[5, 1024], f16> {
  %g = tgraph.matmul %x, %wg : !tgraph.tensor<[5, 1024], f16>, !tgraph.tensor<[1024, 2816], f16> -> !tgraph.tensor<[5, 2816], f16>
  %u = tgraph.matmul %x, %wu : !tgraph.tensor<[5, 1024], f16>, !tgraph.tensor<[1024, 2816], f16> -> !tgraph.tensor<[5, 2816], f16>
  %sg = tgraph.sigmoid %g : !tgraph.tensor<[5, 2816], f16>
  %h = tgraph.mul %sg, %u : !tgraph.tensor<[5, 2816], f16>, !tgraph.tensor<[5, 2816], f16> -> !tgraph.tensor<[5, 2816], f16>
  %o = tgraph.matmul %h, %wd : !tgraph.tensor<[5, 2816], f16>, !tgraph.tensor<[2816, 1024], f16> -> !tgraph.tensor<[5, 1024], f16>
  tgraph.output %o : !tgraph.tensor<[5, 1024], f16>
}
