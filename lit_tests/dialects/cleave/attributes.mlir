// RUN: cleave-opt %s | filecheck %s
// RUN: ROUNDTRIP
// The typed `cleave.*` metadata and `cleave.expr` expressions print as they parse (canonical text),
// in the custom and in the generic form.

// CHECK:      "test.op"() {
// CHECK-SAME: first = #cleave<stage first>, split = #cleave<stage split>, combine = #cleave<stage combine>, part = #cleave<stage part>
// CHECK-SAME: shared = #cleave<mem shared>, fragment = #cleave<mem fragment>
// CHECK-SAME: tiles = #cleave.tiles<out = [64, 64], reduce = 32>
// CHECK-SAME: untiled = #cleave.tiles<out = [1, 128], reduce = none, no_fusion>
// CHECK-SAME: rank0 = #cleave.tiles<out = [], reduce = 16>
// CHECK-SAME: e0 = #cleave.expr<64*bz + 16>, e1 = #cleave.expr<(bx floordiv 4) mod 8>, e2 = #cleave.expr<K/s>
// CHECK-SAME: e3 = #cleave.expr<L ceildiv 64>, e4 = #cleave.expr<64*j + K*p/s - 1>, e5 = #cleave.expr<2*n + 2>
// CHECK-SAME: join = #cleave.join<dim = 1, parts = [#cleave.view<input = 1>, #cleave.view<input = 3, perm = [0, 2, 1]>]>
"test.op"() {
  first = #cleave<stage first>, split = #cleave<stage split>, combine = #cleave<stage combine>, part = #cleave<stage part>,
  shared = #cleave<mem shared>, fragment = #cleave<mem fragment>,
  tiles = #cleave.tiles<out = [64, 64], reduce = 32>,
  untiled = #cleave.tiles<out=[1,128],reduce=none,no_fusion>,
  rank0 = #cleave.tiles<out = [], reduce = 16>,
  e0 = #cleave.expr<16 + bz*64>, e1 = #cleave.expr<(bx floordiv 4) mod 8>, e2 = #cleave.expr<K/s>,
  e3 = #cleave.expr<L ceildiv 64>, e4 = #cleave.expr<p*K/s + j*64 - 1>, e5 = #cleave.expr<2*(n+1)>,
  join = #cleave.join<dim = 1, parts = [#cleave.view<input = 1>, #cleave.view<input = 3, perm = [0, 2, 1]>]>
} : () -> ()
