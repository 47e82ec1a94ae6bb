// cleave-place-memory{hoist-elementwise=true} moves what does not depend on the KV loop before
// it: the Q tile's loads and the element-wise ops of them (a rotary embedding of Q, q * cos + rotate_half(q) * sin, as a
// captured Llama layer fuses it into attention), computed once per block, not once per KV tile; the
// lowering converts the rotated Q tile to the gemm's fp16 operand once, before the loop too (and
// turns warp specialization off: off by default, see place_memory.hoist_invariant_ops).
// RUN: cleave-opt %s -p 'cleave-schedule{top-k=1},cleave-place-memory{hoist-elementwise=true}' 2>/dev/null | filecheck %s
// RUN: cleave-opt %s -p 'cleave-schedule{top-k=1},cleave-place-memory{hoist-elementwise=true}' -t tilelang 2>/dev/null | filecheck %s --check-prefix=PY

// CHECK:      itgraph.kernel @rope_fa_k0(
// CHECK:        itgraph.load %q
// CHECK:        itgraph.load %cos
// CHECK:        tgraph.mul
// CHECK:        itgraph.load %qr
// CHECK:        itgraph.load %sin
// CHECK:        tgraph.mul
// CHECK:        %[[QROT:.*]] = tgraph.add
// CHECK-NEXT:   itgraph.sequential r0
// CHECK-NOT:      tgraph.mul
// CHECK:          tgraph.matmul %[[QROT]], {{.*}} transpose_b

// PY:      def rope_fa_k0(
// PY:          T.copy([[SUM:[a-z_0-9]+]], [[SUM_H:[a-z_0-9]+_h]])
// PY-NEXT:     T.clear(
// PY:          for r0 in T.Pipelined(
// PY-NOT:          T.copy([[SUM]], [[SUM_H]])
// PY:              T.gemm([[SUM_H]], k_1, {{.*}}, transpose_B=True

tgraph.graph @rope_fa(%q: !tgraph.tensor<[8, 1024, 64], f16>, %qr: !tgraph.tensor<[8, 1024, 64], f16>, %cos: !tgraph.tensor<[1, 1024, 64], f16>, %sin: !tgraph.tensor<[1, 1024, 64], f16>, %k: !tgraph.tensor<[8, 1024, 64], f16>, %v: !tgraph.tensor<[8, 1024, 64], f16>) -> !tgraph.tensor<[8, 1024, 64], f16> {
  %a = tgraph.mul %q, %cos : !tgraph.tensor<[8, 1024, 64], f16>, !tgraph.tensor<[1, 1024, 64], f16> -> !tgraph.tensor<[8, 1024, 64], f16>
  %b = tgraph.mul %qr, %sin : !tgraph.tensor<[8, 1024, 64], f16>, !tgraph.tensor<[1, 1024, 64], f16> -> !tgraph.tensor<[8, 1024, 64], f16>
  %qq = tgraph.add %a, %b : !tgraph.tensor<[8, 1024, 64], f16>, !tgraph.tensor<[8, 1024, 64], f16> -> !tgraph.tensor<[8, 1024, 64], f16>
  %s = tgraph.matmul %qq, %k transpose_b : !tgraph.tensor<[8, 1024, 64], f16>, !tgraph.tensor<[8, 1024, 64], f16> -> !tgraph.tensor<[8, 1024, 1024], f16>
  %e = tgraph.exp %s : !tgraph.tensor<[8, 1024, 1024], f16>
  %o = tgraph.matmul %e, %v : !tgraph.tensor<[8, 1024, 1024], f16>, !tgraph.tensor<[8, 1024, 64], f16> -> !tgraph.tensor<[8, 1024, 64], f16>
  %l = tgraph.reduce sum %e dim 2 : !tgraph.tensor<[8, 1024, 1024], f16> -> !tgraph.tensor<[8, 1024, 1], f16>
  %r = tgraph.div %o, %l : !tgraph.tensor<[8, 1024, 64], f16>, !tgraph.tensor<[8, 1024, 1], f16> -> !tgraph.tensor<[8, 1024, 64], f16>
  tgraph.output %r : !tgraph.tensor<[8, 1024, 64], f16>
}
