// RUN: cleave-opt %s | filecheck %s
// RUN: ROUNDTRIP
// The typed `cleave.*` metadata print as they parse, in the custom and in the generic form.

// CHECK:      "test.op"() {
// CHECK-SAME: first = #cleave<stage first>, split = #cleave<stage split>, combine = #cleave<stage combine>, part = #cleave<stage part>
// CHECK-SAME: shared = #cleave<mem shared>, fragment = #cleave<mem fragment>
// CHECK-SAME: tiles = #cleave.tiles<out = [64, 64], reduce = 32>
// CHECK-SAME: untiled = #cleave.tiles<out = [1, 128], reduce = none, no_fusion>
// CHECK-SAME: rank0 = #cleave.tiles<out = [], reduce = 16>
"test.op"() {
  first = #cleave<stage first>, split = #cleave<stage split>, combine = #cleave<stage combine>, part = #cleave<stage part>,
  shared = #cleave<mem shared>, fragment = #cleave<mem fragment>,
  tiles = #cleave.tiles<out = [64, 64], reduce = 32>,
  untiled = #cleave.tiles<out=[1,128],reduce=none,no_fusion>,
  rank0 = #cleave.tiles<out = [], reduce = 16>
} : () -> ()
