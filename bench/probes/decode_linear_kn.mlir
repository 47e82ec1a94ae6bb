// A decode projection against a [K, N] weight (x @ W, as GPT-2's Conv1D and the suite's rmsnorm_matmul store it): the column direct GEMV (place_memory.direct_gemv_columns_operand).
tgraph.graph @decode_linear_kn(%x: !tgraph.tensor<[1, 4096], f16>, %w: !tgraph.tensor<[4096, 6144], f16>) -> !tgraph.tensor<[1, 6144], f16> {
  %y = tgraph.matmul %x, %w : !tgraph.tensor<[1, 4096], f16>, !tgraph.tensor<[4096, 6144], f16> -> !tgraph.tensor<[1, 6144], f16>
  tgraph.output %y : !tgraph.tensor<[1, 6144], f16>
}
