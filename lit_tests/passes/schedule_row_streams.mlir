// cleave-schedule on the row statistics of a log-softmax over GPT-2's vocabulary ([512, 32768] logits):
// tiles of 16 rows would be 32 blocks on 132 SMs, so the kernel streams 4 rows a block (128 blocks)
// through a loop of 2048-column steps, the running max rescaling the sum (`schedule.row_streams`).
// RUN: cleave-opt %s -p 'cleave-schedule{top-k=1}' 2>&1 | filecheck %s

// CHECK:      cleave-schedule @row_lse: 1 kernels kept, {{[0-9]+}} configurations dropped; best out=[4, 1] reduce=2048
// CHECK:      itgraph.parallel (p0) in (128) {
// CHECK-NEXT:   %{{.*}}, %{{.*}} = itgraph.sequential r0 in 16 accumulate (rescaled_sum, max)
// CHECK-NEXT:     itgraph.load %l at #itgraph.tmap<[4*p0, 2048*r0], [4, 2048]>

tgraph.graph @row_lse(%l: !tgraph.tensor<[512, 32768], f16>) -> (!tgraph.tensor<[512, 1], f16>, !tgraph.tensor<[512, 1], f16>) {
  %m = tgraph.reduce max %l dim 1 : !tgraph.tensor<[512, 32768], f16> -> !tgraph.tensor<[512, 1], f16>
  %z = tgraph.sub %l, %m : !tgraph.tensor<[512, 32768], f16>, !tgraph.tensor<[512, 1], f16> -> !tgraph.tensor<[512, 32768], f16>
  %e = tgraph.exp %z : !tgraph.tensor<[512, 32768], f16>
  %r = tgraph.reduce sum %e dim 1 : !tgraph.tensor<[512, 32768], f16> -> !tgraph.tensor<[512, 1], f16>
  %lse = tgraph.log %r : !tgraph.tensor<[512, 1], f16>
  tgraph.output %m, %lse : !tgraph.tensor<[512, 1], f16>, !tgraph.tensor<[512, 1], f16>
}
