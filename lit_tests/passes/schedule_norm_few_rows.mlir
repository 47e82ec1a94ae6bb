// A kernel without a matmul whose tiles must span whole rows of 768 (a LayerNorm over 128 rows): tiles of
// 1-8 such rows compete with those of 16 or more (8 blocks on 132 SMs), and one row a block ranks first.
// RUN: cleave-opt %s -p 'cleave-decompose,cleave-schedule{top-k=1}' 2>&1 | filecheck %s

// CHECK: cleave-schedule @ln: 1 kernels kept, {{[0-9]+}} configurations dropped; best out=[1, 768] reduce=none
// CHECK: itgraph.kernel @ln_k0({{.*}}cleave.tiles = #cleave.tiles<out = [1, 768], reduce = none>
tgraph.graph @ln(%h: !tgraph.tensor<[128, 768], f16>, %g: !tgraph.tensor<[1, 768], f16>) -> !tgraph.tensor<[128, 768], f16> {
  %mu = tgraph.reduce mean %h dim 1 : !tgraph.tensor<[128, 768], f16> -> !tgraph.tensor<[128, 1], f16>
  %hc = tgraph.sub %h, %mu : !tgraph.tensor<[128, 768], f16>, !tgraph.tensor<[128, 1], f16> -> !tgraph.tensor<[128, 768], f16>
  %sq = tgraph.square %hc : !tgraph.tensor<[128, 768], f16>
  %var = tgraph.reduce mean %sq dim 1 : !tgraph.tensor<[128, 768], f16> -> !tgraph.tensor<[128, 1], f16>
  %rs = tgraph.rsqrt %var : !tgraph.tensor<[128, 1], f16>
  %n = tgraph.mul %hc, %rs : !tgraph.tensor<[128, 768], f16>, !tgraph.tensor<[128, 1], f16> -> !tgraph.tensor<[128, 768], f16>
  %o = tgraph.mul %n, %g : !tgraph.tensor<[128, 768], f16>, !tgraph.tensor<[1, 768], f16> -> !tgraph.tensor<[128, 768], f16>
  tgraph.output %o : !tgraph.tensor<[128, 768], f16>
}
