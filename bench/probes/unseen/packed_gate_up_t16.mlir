// SwiGLU with a packed gate_up weight (Phi-3 style): gu = x @ W^T, silu(gu[:, :I]) * gu[:, I:], T=16, H=3072, I=8192.
tgraph.graph @packed_gate_up(%x: !tgraph.tensor<[16, 3072], f16>, %w: !tgraph.tensor<[16384, 3072], f16>) -> !tgraph.tensor<[16, 8192], f16> {
  %gu = tgraph.matmul %x, %w transpose_b : !tgraph.tensor<[16, 3072], f16>, !tgraph.tensor<[16384, 3072], f16> -> !tgraph.tensor<[16, 16384], f16>
  %g = tgraph.slice %gu dim 1 start 0 : !tgraph.tensor<[16, 16384], f16> -> !tgraph.tensor<[16, 8192], f16>
  %u = tgraph.slice %gu dim 1 start 8192 : !tgraph.tensor<[16, 16384], f16> -> !tgraph.tensor<[16, 8192], f16>
  %s = tgraph.silu %g : !tgraph.tensor<[16, 8192], f16>
  %y = tgraph.mul %s, %u : !tgraph.tensor<[16, 8192], f16>, !tgraph.tensor<[16, 8192], f16> -> !tgraph.tensor<[16, 8192], f16>
  tgraph.output %y : !tgraph.tensor<[16, 8192], f16>
}
