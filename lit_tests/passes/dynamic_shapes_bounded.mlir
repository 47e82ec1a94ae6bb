// cleave-dynamic-shapes on a padded graph (`cleave compile` pads awkward sizes: a LayerNorm and GELU
// over 37 rows of 3000 columns, scheduled at 64 x 3072, run at its real sizes only). Its whole-row
// tile of 3072 cannot follow another width, so the width is held at 3072 (`cleave.bounded`): the
// kernel serves every width up to it, the padding masked before both sums; the rows stay fitted
// (one block a row, x_d0 blocks).
// RUN: cleave-opt %s -p 'cleave-schedule{top-k=1},cleave-place-memory,cleave-dynamic-shapes' 2>/dev/null | filecheck %s
// The same graph without `cleave.padded` (its dims declared dynamic by the user: any width) keeps
// its kernel static, with the reason:
// RUN: sed 's/ attributes {cleave.padded = {x_d0 = 37 : i64, x_d1 = 3000 : i64}}//' %s | cleave-opt -p 'cleave-schedule{top-k=1},cleave-place-memory,cleave-dynamic-shapes' 2>&1 >/dev/null | filecheck %s --check-prefix=USER

// CHECK:      itgraph.kernel @bf16_ln_gelu_k0(%x: !tgraph.tensor<[x_d0, x_d1], bf16>, %out0: !tgraph.tensor<[x_d0, x_d1], bf16>)
// CHECK-SAME: cleave.dynamic = {x_d0 = 1 : i64, x_d1 = 3072 : i64}
// CHECK-SAME: cleave.bounded = ["x_d1"]
// CHECK-NEXT:   itgraph.parallel (p0) in (x_d0) {
// CHECK-NEXT:     itgraph.load %x at #itgraph.tmap<[p0, 0], [1, 3072]>
// CHECK-NEXT:     itgraph.mask %x_1 dim 1 offset 0 bound x_d1 fill zero
// CHECK-NEXT:     %mu = tgraph.reduce sum
// CHECK:          itgraph.mask %sq dim 1 offset 0 bound x_d1 fill zero
// CHECK-NEXT:     %var = tgraph.reduce sum

// USER: warning: cleave-dynamic-shapes: @bf16_ln_gelu_k0 stays static: at x_d0=128, x_d1=6144 the schedule fails

tgraph.graph @bf16_ln_gelu(%x: !tgraph.tensor<[64, 3072], bf16> {dynamic = array<i64: 0, 1>}) -> !tgraph.tensor<[64, 3072], bf16> attributes {cleave.padded = {x_d0 = 37 : i64, x_d1 = 3000 : i64}} {
  %mu = tgraph.reduce sum %x dim 1 : !tgraph.tensor<[64, 3072], bf16> -> !tgraph.tensor<[64, 1], bf16>
  %mu_1 = tgraph.scale %mu, 0.00033333333333333332 : !tgraph.tensor<[64, 1], bf16>
  %xc = tgraph.sub %x, %mu_1 : !tgraph.tensor<[64, 3072], bf16>, !tgraph.tensor<[64, 1], bf16> -> !tgraph.tensor<[64, 3072], bf16>
  %sq = tgraph.square %xc : !tgraph.tensor<[64, 3072], bf16>
  %var = tgraph.reduce sum %sq dim 1 : !tgraph.tensor<[64, 3072], bf16> -> !tgraph.tensor<[64, 1], bf16>
  %var_1 = tgraph.scale %var, 0.00033333333333333332 : !tgraph.tensor<[64, 1], bf16>
  %e = tgraph.scalar add %var_1, 1.000000e-05 : !tgraph.tensor<[64, 1], bf16>
  %r = tgraph.rsqrt %e : !tgraph.tensor<[64, 1], bf16>
  %n = tgraph.mul %xc, %r : !tgraph.tensor<[64, 3072], bf16>, !tgraph.tensor<[64, 1], bf16> -> !tgraph.tensor<[64, 3072], bf16>
  %y = tgraph.gelu erf %n : !tgraph.tensor<[64, 3072], bf16>
  tgraph.output %y : !tgraph.tensor<[64, 3072], bf16>
}
