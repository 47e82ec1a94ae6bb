// Encoder-decoder cross-attention, BART-large (transformers models/bart/modeling_bart.py, BartAttention
// with key_value_states): decoder queries attend to every encoder position, no mask:
// softmax(Q K^T / sqrt(64)) V with Q [B, H, Tdec, D], K and V [B, H, Tenc, D].
// Test shape: H=2, Tdec=32, Tenc=64, D=16. Real shape: H=16, Tdec=256, Tenc=1024, D=64.
// gpu-resize: 2=16 32=256 64=1024 16=64
tgraph.graph @bart_cross_attention(%q: !tgraph.tensor<[1, 2, 32, 16], f16>, %k: !tgraph.tensor<[1, 2, 64, 16], f16>, %v: !tgraph.tensor<[1, 2, 64, 16], f16>) -> !tgraph.tensor<[1, 2, 32, 16], f16> {
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[1, 2, 32, 16], f16>, !tgraph.tensor<[1, 2, 64, 16], f16> -> !tgraph.tensor<[1, 2, 32, 64], f16>
  %t = tgraph.scale %s, 1.250000e-01 : !tgraph.tensor<[1, 2, 32, 64], f16>
  %m = tgraph.reduce max %t dim 3 : !tgraph.tensor<[1, 2, 32, 64], f16> -> !tgraph.tensor<[1, 2, 32, 1], f16>
  %0 = tgraph.sub %t, %m : !tgraph.tensor<[1, 2, 32, 64], f16>, !tgraph.tensor<[1, 2, 32, 1], f16> -> !tgraph.tensor<[1, 2, 32, 64], f16>
  %e = tgraph.exp %0 : !tgraph.tensor<[1, 2, 32, 64], f16>
  %r = tgraph.reduce sum %e dim 3 : !tgraph.tensor<[1, 2, 32, 64], f16> -> !tgraph.tensor<[1, 2, 32, 1], f16>
  %p = tgraph.div %e, %r : !tgraph.tensor<[1, 2, 32, 64], f16>, !tgraph.tensor<[1, 2, 32, 1], f16> -> !tgraph.tensor<[1, 2, 32, 64], f16>
  %o = tgraph.matmul %p, %v : !tgraph.tensor<[1, 2, 32, 64], f16>, !tgraph.tensor<[1, 2, 64, 16], f16> -> !tgraph.tensor<[1, 2, 32, 16], f16>
  tgraph.output %o : !tgraph.tensor<[1, 2, 32, 16], f16>
}
