// Softmax of rows with masked columns filled with -3e4 (a mask broadcast over the rows).
tgraph.graph @mf(%x: !tgraph.tensor<[6, 130], f16>, %mask: !tgraph.tensor<[1, 130], f16>) -> !tgraph.tensor<[6, 130], f16> {
  %fill = tgraph.scalar mul %mask, 0.000000e+00 : !tgraph.tensor<[1, 130], f16>
  %neg = tgraph.scalar sub %fill, 3.000000e+04 : !tgraph.tensor<[1, 130], f16>
  %t = tgraph.select %mask, %x, %neg : !tgraph.tensor<[1, 130], f16>, !tgraph.tensor<[6, 130], f16>, !tgraph.tensor<[1, 130], f16> -> !tgraph.tensor<[6, 130], f16>
  %m = tgraph.reduce max %t dim 1 : !tgraph.tensor<[6, 130], f16> -> !tgraph.tensor<[6, 1], f16>
  %d = tgraph.sub %t, %m : !tgraph.tensor<[6, 130], f16>, !tgraph.tensor<[6, 1], f16> -> !tgraph.tensor<[6, 130], f16>
  %e = tgraph.exp %d : !tgraph.tensor<[6, 130], f16>
  %s = tgraph.reduce sum %e dim 1 : !tgraph.tensor<[6, 130], f16> -> !tgraph.tensor<[6, 1], f16>
  %p = tgraph.div %e, %s : !tgraph.tensor<[6, 130], f16>, !tgraph.tensor<[6, 1], f16> -> !tgraph.tensor<[6, 130], f16>
  tgraph.output %p : !tgraph.tensor<[6, 130], f16>
}
