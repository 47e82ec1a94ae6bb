// cleave-dynamic-shapes: decode attention with a dynamic sequence length L (dim 2 of %k and %v).
// The kernel keeps L as a symbol (named k_d1: %v's dim is tied to it), the KV loop runs over L/128
// tiles (a quantum of 128: other sizes are rounded up and the padding is masked before the row sum
// and the P.V matmul).
// RUN: cleave-opt %s -p 'cleave-schedule{top-k=1},cleave-place-memory,cleave-dynamic-shapes' 2>/dev/null | filecheck %s
// RUN: cleave-opt %s -p 'cleave-schedule{top-k=1},cleave-place-memory,cleave-dynamic-shapes' 2>/dev/null | cleave-opt | filecheck %s

tgraph.graph @decode(%q: !tgraph.tensor<[1, 4, 128], f16>, %k: !tgraph.tensor<[1, 1024, 128], f16> {dynamic = array<i64: 1>}, %v: !tgraph.tensor<[1, 1024, 128], f16> {dynamic = array<i64: 1>}) -> !tgraph.tensor<[1, 4, 128], f16> {
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[1, 4, 128], f16>, !tgraph.tensor<[1, 1024, 128], f16> -> !tgraph.tensor<[1, 4, 1024], f16>
  %e = tgraph.exp %s : !tgraph.tensor<[1, 4, 1024], f16>
  %o = tgraph.matmul %e, %v : !tgraph.tensor<[1, 4, 1024], f16>, !tgraph.tensor<[1, 1024, 128], f16> -> !tgraph.tensor<[1, 4, 128], f16>
  %l = tgraph.reduce sum %e dim 2 : !tgraph.tensor<[1, 4, 1024], f16> -> !tgraph.tensor<[1, 4, 1], f16>
  %r = tgraph.div %o, %l : !tgraph.tensor<[1, 4, 128], f16>, !tgraph.tensor<[1, 4, 1], f16> -> !tgraph.tensor<[1, 4, 128], f16>
  tgraph.output %r : !tgraph.tensor<[1, 4, 128], f16>
}

// CHECK:      itgraph.kernel @decode_k0(%q: !tgraph.tensor<[1, 4, 128], f16>, %k: !tgraph.tensor<[1, k_d1, 128], f16>, %v: !tgraph.tensor<[1, k_d1, 128], f16>, %out0: !tgraph.tensor<[1, 4, 128], f16>)
// CHECK-SAME: cleave.dynamic = {k_d1 = [[Q:[0-9]+]] : i64}
// CHECK:        itgraph.sequential r0 in k_d1/[[Q]] accumulate
// CHECK:          itgraph.load %k at #itgraph.tmap<[0, {{[0-9]+}}*r0, 0],
// CHECK:          itgraph.mask {{.*}} bound k_d1 fill neg_inf
// CHECK:          itgraph.mask {{.*}} bound k_d1 fill zero

// The kernel computes what the graph computes (at the representative size; tests/test_dynamic.py
// runs other sizes):
// RUN: cleave-opt %s -p 'cleave-schedule{top-k=1},cleave-place-memory,cleave-dynamic-shapes' 2>/dev/null | cleave-run - | filecheck %s --check-prefix=AGREE
// AGREE: @decode_k0 vs @decode: agree
