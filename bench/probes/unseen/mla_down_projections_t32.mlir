// DeepSeek-V3-style down projections of one hidden state: q_a [32, 1536] and kv_a [32, 576] (512 latent + 64 rope), widths 8:3.
tgraph.graph @mla_down(%x: !tgraph.tensor<[32, 7168], bf16>, %wqa: !tgraph.tensor<[7168, 1536], bf16>, %wkva: !tgraph.tensor<[7168, 576], bf16>) -> (!tgraph.tensor<[32, 1536], bf16>, !tgraph.tensor<[32, 576], bf16>) {
  %qa = tgraph.matmul %x, %wqa : !tgraph.tensor<[32, 7168], bf16>, !tgraph.tensor<[7168, 1536], bf16> -> !tgraph.tensor<[32, 1536], bf16>
  %kva = tgraph.matmul %x, %wkva : !tgraph.tensor<[32, 7168], bf16>, !tgraph.tensor<[7168, 576], bf16> -> !tgraph.tensor<[32, 576], bf16>
  tgraph.output %qa, %kva : !tgraph.tensor<[32, 1536], bf16>, !tgraph.tensor<[32, 576], bf16>
}
