// LoRA linear: x @ W^T + scale * (x @ A^T) @ B^T, rank 16, T=16 tokens, 4096 -> 4096 (nn.Linear [N, K] weights).
tgraph.graph @lora_linear(%x: !tgraph.tensor<[16, 4096], f16>, %w: !tgraph.tensor<[4096, 4096], f16>, %a: !tgraph.tensor<[16, 4096], f16>, %b: !tgraph.tensor<[4096, 16], f16>) -> !tgraph.tensor<[16, 4096], f16> {
  %y = tgraph.matmul %x, %w transpose_b : !tgraph.tensor<[16, 4096], f16>, !tgraph.tensor<[4096, 4096], f16> -> !tgraph.tensor<[16, 4096], f16>
  %xa = tgraph.matmul %x, %a transpose_b : !tgraph.tensor<[16, 4096], f16>, !tgraph.tensor<[16, 4096], f16> -> !tgraph.tensor<[16, 16], f16>
  %xab = tgraph.matmul %xa, %b transpose_b : !tgraph.tensor<[16, 16], f16>, !tgraph.tensor<[4096, 16], f16> -> !tgraph.tensor<[16, 4096], f16>
  %s = tgraph.scale %xab, 2.000000e+00 : !tgraph.tensor<[16, 4096], f16>
  %o = tgraph.add %y, %s : !tgraph.tensor<[16, 4096], f16>, !tgraph.tensor<[16, 4096], f16> -> !tgraph.tensor<[16, 4096], f16>
  tgraph.output %o : !tgraph.tensor<[16, 4096], f16>
}
