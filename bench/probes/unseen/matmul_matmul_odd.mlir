// A matmul chain at odd sizes: (A [333, 64] B [64, 777]) C [777, 48]. Not one of the examples: bench/probes/unseen.sh.
tgraph.graph @ch(%a: !tgraph.tensor<[333, 64], f16>, %b: !tgraph.tensor<[64, 777], f16>, %c: !tgraph.tensor<[777, 48], f16>) -> !tgraph.tensor<[333, 48], f16> {
  %ab = tgraph.matmul %a, %b : !tgraph.tensor<[333, 64], f16>, !tgraph.tensor<[64, 777], f16> -> !tgraph.tensor<[333, 777], f16>
  %o = tgraph.matmul %ab, %c : !tgraph.tensor<[333, 777], f16>, !tgraph.tensor<[777, 48], f16> -> !tgraph.tensor<[333, 48], f16>
  tgraph.output %o : !tgraph.tensor<[333, 48], f16>
}
