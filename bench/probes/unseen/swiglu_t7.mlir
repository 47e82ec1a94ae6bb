// SwiGLU up-projection: silu(X Wg) * (X Wu), X [T, 4096], T=7 (dynamic), Wg and Wu [4096, 11008]. Not one of the examples: bench/probes/unseen.sh.
tgraph.graph @swiglu(%x: !tgraph.tensor<[7, 4096], f16> {dynamic = array<i64: 0>}, %wg: !tgraph.tensor<[4096, 11008], f16>, %wu: !tgraph.tensor<[4096, 11008], f16>) -> !tgraph.tensor<[7, 11008], f16> {
  %g = tgraph.matmul %x, %wg : !tgraph.tensor<[7, 4096], f16>, !tgraph.tensor<[4096, 11008], f16> -> !tgraph.tensor<[7, 11008], f16>
  %u = tgraph.matmul %x, %wu : !tgraph.tensor<[7, 4096], f16>, !tgraph.tensor<[4096, 11008], f16> -> !tgraph.tensor<[7, 11008], f16>
  %sg = tgraph.silu %g : !tgraph.tensor<[7, 11008], f16>
  %o = tgraph.mul %sg, %u : !tgraph.tensor<[7, 11008], f16>, !tgraph.tensor<[7, 11008], f16> -> !tgraph.tensor<[7, 11008], f16>
  tgraph.output %o : !tgraph.tensor<[7, 11008], f16>
}
