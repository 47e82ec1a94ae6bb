// SwiGLU MLP up-projection at T=3, width 5632: silu(x W_gate) * (x W_up), x [3, 4096]. Not one of the examples: bench/probes/unseen.sh.
tgraph.graph @swiglu(%x: !tgraph.tensor<[3, 4096], f16> {dynamic = array<i64: 0>}, %wg: !tgraph.tensor<[4096, 5632], f16>, %wu: !tgraph.tensor<[4096, 5632], f16>) -> !tgraph.tensor<[3, 5632], f16> {
  %g = tgraph.matmul %x, %wg : !tgraph.tensor<[3, 4096], f16>, !tgraph.tensor<[4096, 5632], f16> -> !tgraph.tensor<[3, 5632], f16>
  %u = tgraph.matmul %x, %wu : !tgraph.tensor<[3, 4096], f16>, !tgraph.tensor<[4096, 5632], f16> -> !tgraph.tensor<[3, 5632], f16>
  %sg = tgraph.silu %g : !tgraph.tensor<[3, 5632], f16>
  %o = tgraph.mul %sg, %u : !tgraph.tensor<[3, 5632], f16>, !tgraph.tensor<[3, 5632], f16> -> !tgraph.tensor<[3, 5632], f16>
  tgraph.output %o : !tgraph.tensor<[3, 5632], f16>
}
