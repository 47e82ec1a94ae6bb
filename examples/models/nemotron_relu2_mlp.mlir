// Squared-ReLU MLP, Nemotron-4 15B (transformers models/nemotron/modeling_nemotron.py, NemotronMLP with
// relu2; Primer, So et al. 2021): relu(x W_up)^2 W_down (no gate).
// Test shape: T=64, hidden 48, intermediate 192. Real shape: T=1024, hidden 6144, intermediate 24576.
// gpu-resize: 64=1024 48=6144 192=24576
tgraph.graph @nemotron_relu2_mlp(%x: !tgraph.tensor<[64, 48], f16>, %w_up: !tgraph.tensor<[48, 192], f16>, %w_down: !tgraph.tensor<[192, 48], f16>) -> !tgraph.tensor<[64, 48], f16> {
  %xu = tgraph.matmul %x, %w_up : !tgraph.tensor<[64, 48], f16>, !tgraph.tensor<[48, 192], f16> -> !tgraph.tensor<[64, 192], f16>
  %r = tgraph.scalar max %xu, 0.000000e+00 : !tgraph.tensor<[64, 192], f16>
  %r2 = tgraph.square %r : !tgraph.tensor<[64, 192], f16>
  %y = tgraph.matmul %r2, %w_down : !tgraph.tensor<[64, 192], f16>, !tgraph.tensor<[192, 48], f16> -> !tgraph.tensor<[64, 48], f16>
  tgraph.output %y : !tgraph.tensor<[64, 48], f16>
}
