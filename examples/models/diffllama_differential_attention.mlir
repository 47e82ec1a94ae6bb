// Differential attention, DiffLlama (transformers models/diffllama/modeling_diffllama.py, DiffLlamaAttention):
// two softmax maps from the two halves of each head pair's queries and keys, subtracted with weight lambda, times
// values of twice the head dim: (softmax(Q1 K1^T / sqrt(D)) - lambda softmax(Q2 K2^T / sqrt(D))) V. lambda is
// computed from parameters once per forward (a constant at inference: 0.8 here); the causal mask is left out
// (llama3_causal_attention covers it) and the per-head RMSNorm after it is a separate region.
// Test shape: H=2, S=64, D=16, Dv=32. Real shape: H=16, S=1024, D=64, Dv=128.
// gpu-resize: 2=16 64=1024 16=64 32=128
tgraph.graph @diffllama_differential_attention(%q1: !tgraph.tensor<[1, 2, 64, 16], f16>, %k1: !tgraph.tensor<[1, 2, 64, 16], f16>, %q2: !tgraph.tensor<[1, 2, 64, 16], f16>, %k2: !tgraph.tensor<[1, 2, 64, 16], f16>, %v: !tgraph.tensor<[1, 2, 64, 32], f16>) -> !tgraph.tensor<[1, 2, 64, 32], f16> {
  %s1 = tgraph.matmul %q1, %k1 transpose_b : !tgraph.tensor<[1, 2, 64, 16], f16>, !tgraph.tensor<[1, 2, 64, 16], f16> -> !tgraph.tensor<[1, 2, 64, 64], f16>
  %t1 = tgraph.scale %s1, 2.500000e-01 : !tgraph.tensor<[1, 2, 64, 64], f16>
  %m1 = tgraph.reduce max %t1 dim 3 : !tgraph.tensor<[1, 2, 64, 64], f16> -> !tgraph.tensor<[1, 2, 64, 1], f16>
  %z1 = tgraph.sub %t1, %m1 : !tgraph.tensor<[1, 2, 64, 64], f16>, !tgraph.tensor<[1, 2, 64, 1], f16> -> !tgraph.tensor<[1, 2, 64, 64], f16>
  %e1 = tgraph.exp %z1 : !tgraph.tensor<[1, 2, 64, 64], f16>
  %r1 = tgraph.reduce sum %e1 dim 3 : !tgraph.tensor<[1, 2, 64, 64], f16> -> !tgraph.tensor<[1, 2, 64, 1], f16>
  %p1 = tgraph.div %e1, %r1 : !tgraph.tensor<[1, 2, 64, 64], f16>, !tgraph.tensor<[1, 2, 64, 1], f16> -> !tgraph.tensor<[1, 2, 64, 64], f16>
  %s2 = tgraph.matmul %q2, %k2 transpose_b : !tgraph.tensor<[1, 2, 64, 16], f16>, !tgraph.tensor<[1, 2, 64, 16], f16> -> !tgraph.tensor<[1, 2, 64, 64], f16>
  %t2 = tgraph.scale %s2, 2.500000e-01 : !tgraph.tensor<[1, 2, 64, 64], f16>
  %m2 = tgraph.reduce max %t2 dim 3 : !tgraph.tensor<[1, 2, 64, 64], f16> -> !tgraph.tensor<[1, 2, 64, 1], f16>
  %z2 = tgraph.sub %t2, %m2 : !tgraph.tensor<[1, 2, 64, 64], f16>, !tgraph.tensor<[1, 2, 64, 1], f16> -> !tgraph.tensor<[1, 2, 64, 64], f16>
  %e2 = tgraph.exp %z2 : !tgraph.tensor<[1, 2, 64, 64], f16>
  %r2 = tgraph.reduce sum %e2 dim 3 : !tgraph.tensor<[1, 2, 64, 64], f16> -> !tgraph.tensor<[1, 2, 64, 1], f16>
  %p2 = tgraph.div %e2, %r2 : !tgraph.tensor<[1, 2, 64, 64], f16>, !tgraph.tensor<[1, 2, 64, 1], f16> -> !tgraph.tensor<[1, 2, 64, 64], f16>
  %l = tgraph.scale %p2, 8.000000e-01 : !tgraph.tensor<[1, 2, 64, 64], f16>
  %d = tgraph.sub %p1, %l : !tgraph.tensor<[1, 2, 64, 64], f16>, !tgraph.tensor<[1, 2, 64, 64], f16> -> !tgraph.tensor<[1, 2, 64, 64], f16>
  %o = tgraph.matmul %d, %v : !tgraph.tensor<[1, 2, 64, 64], f16>, !tgraph.tensor<[1, 2, 64, 32], f16> -> !tgraph.tensor<[1, 2, 64, 32], f16>
  tgraph.output %o : !tgraph.tensor<[1, 2, 64, 32], f16>
}
