// A linear layer and its LoRA down projection of the same input, both returned: x @ W [16, 2048] beside x @ A [16, 16] (rank 16).
tgraph.graph @lora_side(%x: !tgraph.tensor<[16, 2048], f16>, %w: !tgraph.tensor<[2048, 2048], f16>, %a: !tgraph.tensor<[2048, 16], f16>) -> (!tgraph.tensor<[16, 2048], f16>, !tgraph.tensor<[16, 16], f16>) {
  %y = tgraph.matmul %x, %w : !tgraph.tensor<[16, 2048], f16>, !tgraph.tensor<[2048, 2048], f16> -> !tgraph.tensor<[16, 2048], f16>
  %d = tgraph.matmul %x, %a : !tgraph.tensor<[16, 2048], f16>, !tgraph.tensor<[2048, 16], f16> -> !tgraph.tensor<[16, 16], f16>
  tgraph.output %y, %d : !tgraph.tensor<[16, 2048], f16>, !tgraph.tensor<[16, 16], f16>
}
