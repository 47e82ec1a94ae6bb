// SwiGLU MLP up-projection, Llama-3-8B shapes: silu(X Wg) * (X Wu), X [T, 4096] with T=1 (dynamic), Wg and Wu [4096, 14336].
tgraph.graph @swiglu(%x: !tgraph.tensor<[1, 4096], f16> {dynamic = array<i64: 0>}, %wg: !tgraph.tensor<[4096, 14336], f16>, %wu: !tgraph.tensor<[4096, 14336], f16>) -> !tgraph.tensor<[1, 14336], f16> {
  %g = tgraph.matmul %x, %wg : !tgraph.tensor<[1, 4096], f16>, !tgraph.tensor<[4096, 14336], f16> -> !tgraph.tensor<[1, 14336], f16>
  %u = tgraph.matmul %x, %wu : !tgraph.tensor<[1, 4096], f16>, !tgraph.tensor<[4096, 14336], f16> -> !tgraph.tensor<[1, 14336], f16>
  %sg = tgraph.silu %g : !tgraph.tensor<[1, 14336], f16>
  %o = tgraph.mul %sg, %u : !tgraph.tensor<[1, 14336], f16>, !tgraph.tensor<[1, 14336], f16> -> !tgraph.tensor<[1, 14336], f16>
  tgraph.output %o : !tgraph.tensor<[1, 14336], f16>
}
