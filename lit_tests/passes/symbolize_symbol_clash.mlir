// A fresh split symbol never reuses a name the user already has anywhere in the graph (here `s`).
// RUN: cleave-opt %s -p cleave-symbolize | filecheck %s

// CHECK:      attributes {bindings = {d0 = 64 : i64, d1 = 256 : i64, s1 = 4 : i64}, constraints = ["s | K", "s1 | d1"]}
// CHECK-NEXT:   tgraph.split %a dim 1 : !tgraph.tensor<[M, K], f16> -> !tgraph.tensor<[s, M, K/s], f16>
// CHECK-NEXT:   tgraph.split %b dim 1 : !tgraph.tensor<[d0, d1], f16> -> !tgraph.tensor<[s1, d0, d1/s1], f16>
tgraph.graph @two_splits(%a: !tgraph.tensor<[M, K], f16>, %b: !tgraph.tensor<[64, 256], f16>) -> (!tgraph.tensor<[s, M, K/s], f16>, !tgraph.tensor<[4, 64, 64], f16>) {
  %as = tgraph.split %a dim 1 : !tgraph.tensor<[M, K], f16> -> !tgraph.tensor<[s, M, K/s], f16>
  %bs = tgraph.split %b dim 1 : !tgraph.tensor<[64, 256], f16> -> !tgraph.tensor<[4, 64, 64], f16>
  tgraph.output %as, %bs : !tgraph.tensor<[s, M, K/s], f16>, !tgraph.tensor<[4, 64, 64], f16>
}
