// An LM head at decode as captured from PyTorch (LayerNorm(1024) then Linear(1024, 4096, bias=False), one row, through cleave_ir.torch.explain): the search visits ~1M constructions and finds no candidate (the graph as written is one kernel).
tgraph.graph @ln_lm_head_t1(%in0: !tgraph.tensor<[1, 1, 1024], f16>, %in1: !tgraph.tensor<[1, 1, 1024], f16>, %in2: !tgraph.tensor<[1, 1, 1024], f16>, %in3: !tgraph.tensor<[4096, 1024], f16>) -> !tgraph.tensor<[1, 4096], f16> {
  %0 = tgraph.reduce sum %in0 dim 2 : !tgraph.tensor<[1, 1, 1024], f16> -> !tgraph.tensor<[1, 1, 1], f16>
  %1 = tgraph.scale %0, 0.0009765625 : !tgraph.tensor<[1, 1, 1], f16>
  %2 = tgraph.sub %in0, %1 : !tgraph.tensor<[1, 1, 1024], f16>, !tgraph.tensor<[1, 1, 1], f16> -> !tgraph.tensor<[1, 1, 1024], f16>
  %3 = tgraph.square %2 : !tgraph.tensor<[1, 1, 1024], f16>
  %4 = tgraph.reduce sum %3 dim 2 : !tgraph.tensor<[1, 1, 1024], f16> -> !tgraph.tensor<[1, 1, 1], f16>
  %5 = tgraph.scale %4, 0.0009765625 : !tgraph.tensor<[1, 1, 1], f16>
  %6 = tgraph.scalar add %5, 1.000000e-05 : !tgraph.tensor<[1, 1, 1], f16>
  %7 = tgraph.rsqrt %6 : !tgraph.tensor<[1, 1, 1], f16>
  %8 = tgraph.mul %2, %7 : !tgraph.tensor<[1, 1, 1024], f16>, !tgraph.tensor<[1, 1, 1], f16> -> !tgraph.tensor<[1, 1, 1024], f16>
  %9 = tgraph.mul %8, %in1 : !tgraph.tensor<[1, 1, 1024], f16>, !tgraph.tensor<[1, 1, 1024], f16> -> !tgraph.tensor<[1, 1, 1024], f16>
  %10 = tgraph.add %9, %in2 : !tgraph.tensor<[1, 1, 1024], f16>, !tgraph.tensor<[1, 1, 1024], f16> -> !tgraph.tensor<[1, 1, 1024], f16>
  %11 = tgraph.reshape %10 : !tgraph.tensor<[1, 1, 1024], f16> -> !tgraph.tensor<[1, 1024], f16>
  %12 = tgraph.matmul %11, %in3 transpose_b : !tgraph.tensor<[1, 1024], f16>, !tgraph.tensor<[4096, 1024], f16> -> !tgraph.tensor<[1, 4096], f16>
  tgraph.output %12 : !tgraph.tensor<[1, 4096], f16>
}
