// GeGLU up-projection (T5 v1.1, Gemma) at T=16: gelu(x Wg) * (x Wu), x [16, 2048], Wg and Wu [2048, 5632].
tgraph.graph @geglu(%x: !tgraph.tensor<[16, 2048], f16>, %wg: !tgraph.tensor<[2048, 5632], f16>, %wu: !tgraph.tensor<[2048, 5632], f16>) -> !tgraph.tensor<[16, 5632], f16> {
  %g = tgraph.matmul %x, %wg : !tgraph.tensor<[16, 2048], f16>, !tgraph.tensor<[2048, 5632], f16> -> !tgraph.tensor<[16, 5632], f16>
  %u = tgraph.matmul %x, %wu : !tgraph.tensor<[16, 2048], f16>, !tgraph.tensor<[2048, 5632], f16> -> !tgraph.tensor<[16, 5632], f16>
  %a = tgraph.gelu tanh %g : !tgraph.tensor<[16, 5632], f16>
  %o = tgraph.mul %a, %u : !tgraph.tensor<[16, 5632], f16>, !tgraph.tensor<[16, 5632], f16> -> !tgraph.tensor<[16, 5632], f16>
  tgraph.output %o : !tgraph.tensor<[16, 5632], f16>
}
