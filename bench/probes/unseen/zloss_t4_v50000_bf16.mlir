// PaLM's z-loss at decode: 1e-4 * logsumexp(x)^2 over a 50000-word vocabulary (bf16 logits, 4 rows; 50000 is no multiple
// of 64: padded to 51200, then split by cleave-split-rows). Interpreted correct on the CPU; not timed.
tgraph.graph @zloss(%x: !tgraph.tensor<[4, 50000], bf16>) -> !tgraph.tensor<[4, 1], f32> {
  %m = tgraph.reduce max %x dim 1 : !tgraph.tensor<[4, 50000], bf16> -> !tgraph.tensor<[4, 1], bf16>
  %z = tgraph.sub %x, %m : !tgraph.tensor<[4, 50000], bf16>, !tgraph.tensor<[4, 1], bf16> -> !tgraph.tensor<[4, 50000], bf16>
  %e = tgraph.exp %z : !tgraph.tensor<[4, 50000], bf16>
  %s = tgraph.reduce sum %e dim 1 : !tgraph.tensor<[4, 50000], bf16> -> !tgraph.tensor<[4, 1], bf16>
  %l = tgraph.log %s : !tgraph.tensor<[4, 1], bf16>
  %lse = tgraph.add %l, %m : !tgraph.tensor<[4, 1], bf16>, !tgraph.tensor<[4, 1], bf16> -> !tgraph.tensor<[4, 1], bf16>
  %sq = tgraph.square %lse : !tgraph.tensor<[4, 1], bf16>
  %zl = tgraph.scale %sq, 1.000000e-04 : !tgraph.tensor<[4, 1], bf16>
  %o = tgraph.cast %zl : !tgraph.tensor<[4, 1], bf16> -> !tgraph.tensor<[4, 1], f32>
  tgraph.output %o : !tgraph.tensor<[4, 1], f32>
}
