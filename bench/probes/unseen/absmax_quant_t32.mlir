// Per-token absmax scaling (int8-style quantization without rounding): x / (max|x| / 127) and the scale, 32 x 5120.
tgraph.graph @absmax_quant(%x: !tgraph.tensor<[32, 5120], f16>) -> (!tgraph.tensor<[32, 5120], f16>, !tgraph.tensor<[32, 1], f16>) {
  %a = tgraph.abs %x : !tgraph.tensor<[32, 5120], f16>
  %m = tgraph.reduce max %a dim 1 : !tgraph.tensor<[32, 5120], f16> -> !tgraph.tensor<[32, 1], f16>
  %s = tgraph.scale %m, 7.874015748031496e-03 : !tgraph.tensor<[32, 1], f16>
  %q = tgraph.div %x, %s : !tgraph.tensor<[32, 5120], f16>, !tgraph.tensor<[32, 1], f16> -> !tgraph.tensor<[32, 5120], f16>
  tgraph.output %q, %s : !tgraph.tensor<[32, 5120], f16>, !tgraph.tensor<[32, 1], f16>
}
