// No matmul at all: SwiGLU's activation on precomputed gate and up projections.
tgraph.graph @silu_mul(%g: !tgraph.tensor<[64, 11008], f16>, %u: !tgraph.tensor<[64, 11008], f16>) -> !tgraph.tensor<[64, 11008], f16> {
  %s = tgraph.silu %g : !tgraph.tensor<[64, 11008], f16>
  %o = tgraph.mul %s, %u : !tgraph.tensor<[64, 11008], f16>, !tgraph.tensor<[64, 11008], f16> -> !tgraph.tensor<[64, 11008], f16>
  tgraph.output %o : !tgraph.tensor<[64, 11008], f16>
}
