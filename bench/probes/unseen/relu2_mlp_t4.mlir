// A squared-ReLU MLP at decode (Primer, modded-nanoGPT): (relu(x Wu))^2 Wd, x [4, 768], Wu [768, 3072], Wd [3072, 768].
tgraph.graph @relu2_mlp(%x: !tgraph.tensor<[4, 768], f16>, %wu: !tgraph.tensor<[768, 3072], f16>, %wd: !tgraph.tensor<[3072, 768], f16>) -> !tgraph.tensor<[4, 768], f16> {
  %u = tgraph.matmul %x, %wu : !tgraph.tensor<[4, 768], f16>, !tgraph.tensor<[768, 3072], f16> -> !tgraph.tensor<[4, 3072], f16>
  %r = tgraph.scalar max %u, 0.000000e+00 : !tgraph.tensor<[4, 3072], f16>
  %q = tgraph.square %r : !tgraph.tensor<[4, 3072], f16>
  %o = tgraph.matmul %q, %wd : !tgraph.tensor<[4, 3072], f16>, !tgraph.tensor<[3072, 768], f16> -> !tgraph.tensor<[4, 768], f16>
  tgraph.output %o : !tgraph.tensor<[4, 768], f16>
}
