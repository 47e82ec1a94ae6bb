// cleave-schedule: a matmul chain whose first matmul reads an operand computed element-wise from the
// inputs alone (Llama's rotary embedding of Q, `q * cos + rotate_half(q) * sin`) also gets the candidate
// `<candidate>_pro`: that prologue in a kernel of its own, then the attention reading its result. In the
// one-kernel form the prologue is recomputed in every iteration of the KV loop, and its tiles take the
// registers that 128-row query tiles need. The mask's ops, which reach the scores and not an operand,
// stay in the attention kernel, whose causal input keeps its promise. Each candidate, interpreted,
// equals the graph.
// (the pipeline runs once, with a small search budget that still finds the FlashAttention form: its
// output is checked, then lowered and interpreted)
// RUN: cleave-opt %s -p "cleave-pipeline{search-budget=100000}" -o %t.mlir 2>/dev/null
// RUN: filecheck %s < %t.mlir
// RUN: cleave-opt %t.mlir -p cleave-lower-tilelang 2>/dev/null | cleave-run - | filecheck %s --check-prefix=AGREE

// CHECK:      tgraph.graph @rope_attention_c{{[0-9]+}}_pro(%q: {{.*}}, %cos: {{.*}}, %q_rot: {{.*}}, %sin: {{.*}}) -> !tgraph.tensor<[1, 2, 256, 32], f16>
// CHECK-SAME:   cleave.note = "the element-wise prologue of a matmul operand in a kernel of its own (2 kernels)"
// CHECK-NEXT:   tgraph.mul %q, %cos
// CHECK-NEXT:   tgraph.mul %q_rot, %sin
// CHECK-NEXT:   tgraph.add
// CHECK-NEXT:   tgraph.output
// CHECK:      itgraph.kernel @rope_attention_c{{[0-9]+}}_pro_k0
// CHECK:      tgraph.graph @rope_attention_c{{[0-9]+}}_pro_p1(%qr_c: {{.*}}, %k: {{.*}}, %keep: !tgraph.tensor<[1, 1, 256, 256], f16> {cleave.causal = #cleave.causal<offset = 0>}, %v: {{.*}})
// CHECK-NOT:    tgraph.mul
// CHECK:        tgraph.matmul %qr_c, %k transpose_b
// CHECK:        tgraph.scalar add %keep
// CHECK:      itgraph.kernel @rope_attention_c{{[0-9]+}}_pro_p1_k0

// AGREE: @rope_attention_c{{[0-9]+}}_pro_k0 + @rope_attention_c{{[0-9]+}}_pro_p1_k0 vs @rope_attention: agree

tgraph.graph @rope_attention(%q: !tgraph.tensor<[1, 2, 256, 32], f16>, %cos: !tgraph.tensor<[1, 1, 256, 32], f16>, %q_rot: !tgraph.tensor<[1, 2, 256, 32], f16>, %sin: !tgraph.tensor<[1, 1, 256, 32], f16>, %k: !tgraph.tensor<[1, 2, 256, 32], f16>, %v: !tgraph.tensor<[1, 2, 256, 32], f16>, %keep: !tgraph.tensor<[1, 1, 256, 256], f16> {cleave.causal = #cleave.causal<offset = 0>}) -> !tgraph.tensor<[1, 2, 256, 32], f16> {
  %qc = tgraph.mul %q, %cos : !tgraph.tensor<[1, 2, 256, 32], f16>, !tgraph.tensor<[1, 1, 256, 32], f16> -> !tgraph.tensor<[1, 2, 256, 32], f16>
  %qs = tgraph.mul %q_rot, %sin : !tgraph.tensor<[1, 2, 256, 32], f16>, !tgraph.tensor<[1, 1, 256, 32], f16> -> !tgraph.tensor<[1, 2, 256, 32], f16>
  %qr = tgraph.add %qc, %qs : !tgraph.tensor<[1, 2, 256, 32], f16>, !tgraph.tensor<[1, 2, 256, 32], f16> -> !tgraph.tensor<[1, 2, 256, 32], f16>
  %s = tgraph.matmul %qr, %k transpose_b : !tgraph.tensor<[1, 2, 256, 32], f16>, !tgraph.tensor<[1, 2, 256, 32], f16> -> !tgraph.tensor<[1, 2, 256, 256], f16>
  %t = tgraph.scale %s, 0.17677669529663687 : !tgraph.tensor<[1, 2, 256, 256], f16>
  %m1 = tgraph.scalar add %keep, -1.0 : !tgraph.tensor<[1, 1, 256, 256], f16>
  %m2 = tgraph.scale %m1, 30000.0 : !tgraph.tensor<[1, 1, 256, 256], f16>
  %l = tgraph.add %t, %m2 : !tgraph.tensor<[1, 2, 256, 256], f16>, !tgraph.tensor<[1, 1, 256, 256], f16> -> !tgraph.tensor<[1, 2, 256, 256], f16>
  %e = tgraph.exp %l : !tgraph.tensor<[1, 2, 256, 256], f16>
  %r = tgraph.reduce sum %e dim 3 : !tgraph.tensor<[1, 2, 256, 256], f16> -> !tgraph.tensor<[1, 2, 256, 1], f16>
  %w = tgraph.div %e, %r : !tgraph.tensor<[1, 2, 256, 256], f16>, !tgraph.tensor<[1, 2, 256, 1], f16> -> !tgraph.tensor<[1, 2, 256, 256], f16>
  %o = tgraph.matmul %w, %v : !tgraph.tensor<[1, 2, 256, 256], f16>, !tgraph.tensor<[1, 2, 256, 32], f16> -> !tgraph.tensor<[1, 2, 256, 32], f16>
  tgraph.output %o : !tgraph.tensor<[1, 2, 256, 32], f16>
}
