// A Gram matrix x x^T of 512 rows of 96: both operands read one input (cleave-split-shared-inputs).
tgraph.graph @gram(%x: !tgraph.tensor<[512, 96], f16>) -> !tgraph.tensor<[512, 512], f16> {
  %g = tgraph.matmul %x, %x transpose_b : !tgraph.tensor<[512, 96], f16>, !tgraph.tensor<[512, 96], f16> -> !tgraph.tensor<[512, 512], f16>
  tgraph.output %g : !tgraph.tensor<[512, 512], f16>
}
