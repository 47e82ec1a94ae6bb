// cleave-superoptimize sets aside a cone of an input whose values leave float64's exp range whatever its
// size: an additive 0/1 mask written (mask - 1) * 1e4 (two ops) is -1e4..1e4 on the search's normal draws,
// so every exp of the masked logits overflowed, no trial was finite, and the search confirmed no candidate
// (278 s into its work budget at [1, 4, 1, 64] x 18 keys). The cone is searched as its root, and checked
// there (equivalence.Checker): FlashAttention's form comes first, the mask's two ops back in front.
// RUN: cleave-opt %s -p cleave-superoptimize 2>&1 >/dev/null | filecheck %s --check-prefix=STATS
// RUN: cleave-opt %s -p cleave-superoptimize 2>/dev/null | filecheck %s

// STATS: cleave-superoptimize @masked_decode: explored {{[0-9]+}}, {{.*}} candidates 5, rejected 0 (tests){{.*}}; a cone of 2 element-wise ops of one input set aside

// CHECK:      tgraph.graph @masked_decode_c1({{.*}}cleave.note = "div moved after matmul"
// CHECK-NEXT:   %m0 = tgraph.scalar add %mask, -1.000000e+00
// CHECK-NEXT:   %m1 = tgraph.scale %m0, 1.000000e+04
// CHECK:        %[[E:.*]] = tgraph.exp
// CHECK-NEXT:   %[[PV:.*]] = tgraph.matmul %[[E]], %v
// CHECK-NEXT:   %[[R:.*]] = tgraph.reduce sum %[[E]] dim 3
// CHECK-NEXT:   tgraph.div %[[PV]], %[[R]]

tgraph.graph @masked_decode(%q: !tgraph.tensor<[1, 2, 1, 16], f16>, %k: !tgraph.tensor<[1, 2, 18, 16], f16>, %v: !tgraph.tensor<[1, 2, 18, 16], f16>, %mask: !tgraph.tensor<[1, 1, 1, 18], f16>) -> !tgraph.tensor<[1, 2, 1, 16], f16> {
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[1, 2, 1, 16], f16>, !tgraph.tensor<[1, 2, 18, 16], f16> -> !tgraph.tensor<[1, 2, 1, 18], f16>
  %t = tgraph.scale %s, 2.500000e-01 : !tgraph.tensor<[1, 2, 1, 18], f16>
  %m0 = tgraph.scalar add %mask, -1.000000e+00 : !tgraph.tensor<[1, 1, 1, 18], f16>
  %m1 = tgraph.scale %m0, 1.000000e+04 : !tgraph.tensor<[1, 1, 1, 18], f16>
  %u = tgraph.add %t, %m1 : !tgraph.tensor<[1, 2, 1, 18], f16>, !tgraph.tensor<[1, 1, 1, 18], f16> -> !tgraph.tensor<[1, 2, 1, 18], f16>
  %e = tgraph.exp %u : !tgraph.tensor<[1, 2, 1, 18], f16>
  %r = tgraph.reduce sum %e dim 3 : !tgraph.tensor<[1, 2, 1, 18], f16> -> !tgraph.tensor<[1, 2, 1, 1], f16>
  %p = tgraph.div %e, %r : !tgraph.tensor<[1, 2, 1, 18], f16>, !tgraph.tensor<[1, 2, 1, 1], f16> -> !tgraph.tensor<[1, 2, 1, 18], f16>
  %o = tgraph.matmul %p, %v : !tgraph.tensor<[1, 2, 1, 18], f16>, !tgraph.tensor<[1, 2, 18, 16], f16> -> !tgraph.tensor<[1, 2, 1, 16], f16>
  tgraph.output %o : !tgraph.tensor<[1, 2, 1, 16], f16>
}
