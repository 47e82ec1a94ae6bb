// cleave-fold-structural: transposes into matmuls, slices up to the inputs, concats down to the outputs,
// then out of the graph (`cleave.boundary`: its inputs as views of the inputs as written, its outputs as
// parts of the outputs as written). A graph without structural ops is left alone.
// RUN: cleave-opt %s -p cleave-fold-structural --split-input-file | filecheck %s

// `x @ w.T` written with a transpose: the matmul reads w with transpose_b; nothing is left at the boundary.
// CHECK-LABEL: tgraph.graph @linear(%x: !tgraph.tensor<[64, 512], f16>, %w: !tgraph.tensor<[256, 512], f16>) -> !tgraph.tensor<[64, 256], f16> {
// CHECK-NEXT:    %{{.*}} = tgraph.matmul %x, %w transpose_b : !tgraph.tensor<[64, 512], f16>, !tgraph.tensor<[256, 512], f16> -> !tgraph.tensor<[64, 256], f16>
// CHECK-NEXT:    tgraph.output
tgraph.graph @linear(%x: !tgraph.tensor<[64, 512], f16>, %w: !tgraph.tensor<[256, 512], f16>) -> !tgraph.tensor<[64, 256], f16> {
  %wt = tgraph.transpose %w perm [1, 0] : !tgraph.tensor<[256, 512], f16> -> !tgraph.tensor<[512, 256], f16>
  %y = tgraph.matmul %x, %wt : !tgraph.tensor<[64, 512], f16>, !tgraph.tensor<[512, 256], f16> -> !tgraph.tensor<[64, 256], f16>
  tgraph.output %y : !tgraph.tensor<[64, 256], f16>
}

// -----

// Rotary embedding, rotate-half form: each half of the output is computed from halves of q, cos and sin.
// CHECK-LABEL: tgraph.graph @rope(%q_v1: !tgraph.tensor<[4, 8, 32], f16>, %q_v2: !tgraph.tensor<[4, 8, 32], f16>, %cos_v1: !tgraph.tensor<[4, 1, 32], f16>, %cos_v2: !tgraph.tensor<[4, 1, 32], f16>, %sin_v1: !tgraph.tensor<[4, 1, 32], f16>, %sin_v2: !tgraph.tensor<[4, 1, 32], f16>) -> (!tgraph.tensor<[4, 8, 32], f16>, !tgraph.tensor<[4, 8, 32], f16>)
// CHECK-SAME:    cleave.boundary = #cleave.boundary<inputs = [#cleave.view<input = 0, slices = {{\[}}[2, 0, 32]]>, #cleave.view<input = 0, slices = {{\[}}[2, 32, 32]]>, #cleave.view<input = 1, slices = {{\[}}[2, 0, 32]]>, #cleave.view<input = 1, slices = {{\[}}[2, 32, 32]]>, #cleave.view<input = 2, slices = {{\[}}[2, 0, 32]]>, #cleave.view<input = 2, slices = {{\[}}[2, 32, 32]]>], outputs = [#cleave.part<output = 0, dim = 2>, #cleave.part<output = 0, dim = 2>]>
// CHECK-NOT:     tgraph.slice
// CHECK-NOT:     tgraph.concat
// CHECK:         tgraph.neg %q_v2
// CHECK:         tgraph.output %{{.*}}, %{{.*}} : !tgraph.tensor<[4, 8, 32], f16>, !tgraph.tensor<[4, 8, 32], f16>
tgraph.graph @rope(%q: !tgraph.tensor<[4, 8, 64], f16>, %cos: !tgraph.tensor<[4, 1, 64], f16>, %sin: !tgraph.tensor<[4, 1, 64], f16>) -> !tgraph.tensor<[4, 8, 64], f16> {
  %q1 = tgraph.slice %q dim 2 start 0 : !tgraph.tensor<[4, 8, 64], f16> -> !tgraph.tensor<[4, 8, 32], f16>
  %q2 = tgraph.slice %q dim 2 start 32 : !tgraph.tensor<[4, 8, 64], f16> -> !tgraph.tensor<[4, 8, 32], f16>
  %n2 = tgraph.neg %q2 : !tgraph.tensor<[4, 8, 32], f16>
  %rh = tgraph.concat %n2, %q1 dim 2 : !tgraph.tensor<[4, 8, 32], f16>, !tgraph.tensor<[4, 8, 32], f16> -> !tgraph.tensor<[4, 8, 64], f16>
  %a = tgraph.mul %q, %cos : !tgraph.tensor<[4, 8, 64], f16>, !tgraph.tensor<[4, 1, 64], f16> -> !tgraph.tensor<[4, 8, 64], f16>
  %b = tgraph.mul %rh, %sin : !tgraph.tensor<[4, 8, 64], f16>, !tgraph.tensor<[4, 1, 64], f16> -> !tgraph.tensor<[4, 8, 64], f16>
  %o = tgraph.add %a, %b : !tgraph.tensor<[4, 8, 64], f16>, !tgraph.tensor<[4, 8, 64], f16> -> !tgraph.tensor<[4, 8, 64], f16>
  tgraph.output %o : !tgraph.tensor<[4, 8, 64], f16>
}

// -----

// A packed QKV weight sliced after the projection: the slices move through the matmul onto the weight's rows.
// CHECK-LABEL: tgraph.graph @packed_qk(%x: !tgraph.tensor<[64, 128], f16>, %w_v1: !tgraph.tensor<[128, 128], f16>, %w_v2: !tgraph.tensor<[128, 128], f16>) -> !tgraph.tensor<[64, 64], f16>
// CHECK-SAME:    cleave.boundary = #cleave.boundary<inputs = [#cleave.view<input = 0>, #cleave.view<input = 1, slices = {{\[}}[0, 0, 128]]>, #cleave.view<input = 1, slices = {{\[}}[0, 128, 128]]>], outputs = [#cleave.part<output = 0>]>
// CHECK-NEXT:    %q = tgraph.matmul %x, %w_v1 transpose_b
// CHECK-NEXT:    %k = tgraph.matmul %x, %w_v2 transpose_b
// CHECK-NEXT:    %s = tgraph.matmul %q, %k transpose_b
tgraph.graph @packed_qk(%x: !tgraph.tensor<[64, 128], f16>, %w: !tgraph.tensor<[384, 128], f16>) -> !tgraph.tensor<[64, 64], f16> {
  %y = tgraph.matmul %x, %w transpose_b : !tgraph.tensor<[64, 128], f16>, !tgraph.tensor<[384, 128], f16> -> !tgraph.tensor<[64, 384], f16>
  %q = tgraph.slice %y dim 1 start 0 : !tgraph.tensor<[64, 384], f16> -> !tgraph.tensor<[64, 128], f16>
  %k = tgraph.slice %y dim 1 start 128 : !tgraph.tensor<[64, 384], f16> -> !tgraph.tensor<[64, 128], f16>
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[64, 128], f16>, !tgraph.tensor<[64, 128], f16> -> !tgraph.tensor<[64, 64], f16>
  tgraph.output %s : !tgraph.tensor<[64, 64], f16>
}

// -----

// A transposed input read by a reduction: the input is a permuted view.
// CHECK-LABEL: tgraph.graph @column_sums(%x_v1: !tgraph.tensor<[256, 32], f16>) -> !tgraph.tensor<[256, 1], f16>
// CHECK-SAME:    cleave.boundary = #cleave.boundary<inputs = [#cleave.view<input = 0, perm = [1, 0]>], outputs = [#cleave.part<output = 0>]>
// CHECK-NEXT:    tgraph.reduce sum %x_v1 dim 1
tgraph.graph @column_sums(%x: !tgraph.tensor<[32, 256], f16>) -> !tgraph.tensor<[256, 1], f16> {
  %t = tgraph.transpose %x perm [1, 0] : !tgraph.tensor<[32, 256], f16> -> !tgraph.tensor<[256, 32], f16>
  %s = tgraph.reduce sum %t dim 1 : !tgraph.tensor<[256, 32], f16> -> !tgraph.tensor<[256, 1], f16>
  tgraph.output %s : !tgraph.tensor<[256, 1], f16>
}

// -----

// A sum over a concat's own dim: one sum a part, in f32 (as a kernel accumulates), added and cast back.
// CHECK-LABEL: tgraph.graph @summed_concat(
// CHECK-NOT:     cleave.boundary
// CHECK-NOT:     tgraph.concat
// CHECK:         %[[EA:.*]] = tgraph.exp %a
// CHECK:         %[[EB:.*]] = tgraph.exp %b
// CHECK:         %[[CA:.*]] = tgraph.cast %[[EA]] : !tgraph.tensor<[8, 64], f16> -> !tgraph.tensor<[8, 64], f32>
// CHECK-NEXT:    %[[SA:.*]] = tgraph.reduce sum %[[CA]] dim 1
// CHECK:         %[[SB:.*]] = tgraph.reduce sum
// CHECK-NEXT:    %[[T:.*]] = tgraph.add %[[SA]], %[[SB]] : !tgraph.tensor<[8, 1], f32>
// CHECK-NEXT:    %{{.*}} = tgraph.cast %[[T]] : !tgraph.tensor<[8, 1], f32> -> !tgraph.tensor<[8, 1], f16>
tgraph.graph @summed_concat(%a: !tgraph.tensor<[8, 64], f16>, %b: !tgraph.tensor<[8, 64], f16>) -> !tgraph.tensor<[8, 1], f16> {
  %c = tgraph.concat %a, %b dim 1 : !tgraph.tensor<[8, 64], f16>, !tgraph.tensor<[8, 64], f16> -> !tgraph.tensor<[8, 128], f16>
  %e = tgraph.exp %c : !tgraph.tensor<[8, 128], f16>
  %s = tgraph.reduce sum %e dim 1 : !tgraph.tensor<[8, 128], f16> -> !tgraph.tensor<[8, 1], f16>
  tgraph.output %s : !tgraph.tensor<[8, 1], f16>
}

// -----

// A mean over a concat's own dim: its parts' sums in f32, added, scaled.
// CHECK-LABEL: tgraph.graph @averaged_concat(
// CHECK-NOT:     tgraph.concat
// CHECK:         tgraph.add %{{.*}}, %{{.*}} : !tgraph.tensor<[8, 1], f32>, !tgraph.tensor<[8, 1], f32>
// CHECK-NEXT:    tgraph.scale %{{.*}}, 7.812500e-03 : !tgraph.tensor<[8, 1], f32>
tgraph.graph @averaged_concat(%a: !tgraph.tensor<[8, 64], f16>, %b: !tgraph.tensor<[8, 64], f16>) -> !tgraph.tensor<[8, 1], f16> {
  %c = tgraph.concat %a, %b dim 1 : !tgraph.tensor<[8, 64], f16>, !tgraph.tensor<[8, 64], f16> -> !tgraph.tensor<[8, 128], f16>
  %s = tgraph.reduce mean %c dim 1 : !tgraph.tensor<[8, 128], f16> -> !tgraph.tensor<[8, 1], f16>
  tgraph.output %s : !tgraph.tensor<[8, 1], f16>
}

// -----

// Concats along two dims (a grid of blocks): no one dim to cut the output along; left as written.
// CHECK-LABEL: tgraph.graph @grid(
// CHECK-NOT:     cleave.boundary
// CHECK:         tgraph.concat %a, %b dim 1
tgraph.graph @grid(%a: !tgraph.tensor<[4, 8], f16>, %b: !tgraph.tensor<[4, 8], f16>, %c: !tgraph.tensor<[4, 8], f16>, %d: !tgraph.tensor<[4, 8], f16>) -> !tgraph.tensor<[8, 16], f16> {
  %ab = tgraph.concat %a, %b dim 1 : !tgraph.tensor<[4, 8], f16>, !tgraph.tensor<[4, 8], f16> -> !tgraph.tensor<[4, 16], f16>
  %cd = tgraph.concat %c, %d dim 1 : !tgraph.tensor<[4, 8], f16>, !tgraph.tensor<[4, 8], f16> -> !tgraph.tensor<[4, 16], f16>
  %x = tgraph.concat %ab, %cd dim 0 : !tgraph.tensor<[4, 16], f16>, !tgraph.tensor<[4, 16], f16> -> !tgraph.tensor<[8, 16], f16>
  %y = tgraph.exp %x : !tgraph.tensor<[8, 16], f16>
  tgraph.output %y : !tgraph.tensor<[8, 16], f16>
}

// -----

// A transposed output: the kernel writes the matmul's result, and the output is its permuted view.
// CHECK-LABEL: tgraph.graph @transposed_output(%x: !tgraph.tensor<[64, 32], f16>, %w: !tgraph.tensor<[48, 32], f16>) -> !tgraph.tensor<[64, 48], f16>
// CHECK-SAME:    cleave.boundary = #cleave.boundary<inputs = [#cleave.view<input = 0>, #cleave.view<input = 1>], outputs = [#cleave.part<output = 0, perm = [1, 0]>]>
// CHECK-NEXT:    %y = tgraph.matmul %x, %w transpose_b
// CHECK-NEXT:    tgraph.output %y
tgraph.graph @transposed_output(%x: !tgraph.tensor<[64, 32], f16>, %w: !tgraph.tensor<[48, 32], f16>) -> !tgraph.tensor<[48, 64], f16> {
  %y = tgraph.matmul %x, %w transpose_b : !tgraph.tensor<[64, 32], f16>, !tgraph.tensor<[48, 32], f16> -> !tgraph.tensor<[64, 48], f16>
  %t = tgraph.transpose %y perm [1, 0] : !tgraph.tensor<[64, 48], f16> -> !tgraph.tensor<[48, 64], f16>
  tgraph.output %t : !tgraph.tensor<[48, 64], f16>
}

// -----

// Rows of dynamic length, halves of a static dim: the slices and the concat still move (the dim they
// cut is tied to no dynamic dim), and each half keeps the row's dynamic annotation.
// CHECK-LABEL: tgraph.graph @dynamic_rows(%x_v1: !tgraph.tensor<[8, 32], f16> {dynamic = array<i64: 0>}, %x_v2: !tgraph.tensor<[8, 32], f16> {dynamic = array<i64: 0>})
// CHECK-SAME:    cleave.boundary = #cleave.boundary<inputs = [#cleave.view<input = 0, slices = {{\[}}[1, 0, 32]]>, #cleave.view<input = 0, slices = {{\[}}[1, 32, 32]]>], outputs = [#cleave.part<output = 0, dim = 1>, #cleave.part<output = 0, dim = 1>]>
// CHECK-NOT:     tgraph.concat
tgraph.graph @dynamic_rows(%x: !tgraph.tensor<[8, 64], f16> {dynamic = array<i64: 0>}) -> !tgraph.tensor<[8, 64], f16> {
  %a = tgraph.slice %x dim 1 start 0 : !tgraph.tensor<[8, 64], f16> -> !tgraph.tensor<[8, 32], f16>
  %b = tgraph.slice %x dim 1 start 32 : !tgraph.tensor<[8, 64], f16> -> !tgraph.tensor<[8, 32], f16>
  %n = tgraph.neg %b : !tgraph.tensor<[8, 32], f16>
  %r = tgraph.concat %n, %a dim 1 : !tgraph.tensor<[8, 32], f16>, !tgraph.tensor<[8, 32], f16> -> !tgraph.tensor<[8, 64], f16>
  %y = tgraph.mul %r, %x : !tgraph.tensor<[8, 64], f16>, !tgraph.tensor<[8, 64], f16> -> !tgraph.tensor<[8, 64], f16>
  tgraph.output %y : !tgraph.tensor<[8, 64], f16>
}

// -----

// A cache appended along its dynamic length: moving the concat would fix the cut at the declared
// length, so it is left as written.
// CHECK-LABEL: tgraph.graph @append_dynamic(
// CHECK-NOT:     cleave.boundary
// CHECK:         tgraph.concat %c, %n dim 0
tgraph.graph @append_dynamic(%c: !tgraph.tensor<[63, 32], f16> {dynamic = array<i64: 0>}, %n: !tgraph.tensor<[1, 32], f16>) -> !tgraph.tensor<[1, 32], f16> {
  %k = tgraph.concat %c, %n dim 0 : !tgraph.tensor<[63, 32], f16>, !tgraph.tensor<[1, 32], f16> -> !tgraph.tensor<[64, 32], f16>
  %s = tgraph.reduce sum %k dim 0 : !tgraph.tensor<[64, 32], f16> -> !tgraph.tensor<[1, 32], f16>
  tgraph.output %s : !tgraph.tensor<[1, 32], f16>
}

// -----

// A transpose of a computed value sinks through elementwise ops and a reduction (each computed in the
// value's own frame); the row sums' transpose only moves a size-1 dim, so it is a reshape.
// CHECK-LABEL: tgraph.graph @sink_transpose(%x: !tgraph.tensor<[8, 16], f16>, %c_v1: !tgraph.tensor<[8, 16], f16>)
// CHECK-SAME:    cleave.boundary = #cleave.boundary<inputs = [#cleave.view<input = 0>, #cleave.view<input = 1, perm = [1, 0]>], outputs = [#cleave.part<output = 0>]>
// CHECK-NOT:     tgraph.transpose
// CHECK:         tgraph.reduce sum %{{.*}} dim 1 : !tgraph.tensor<[8, 16], f16> -> !tgraph.tensor<[8, 1], f16>
// CHECK:         tgraph.reshape %{{.*}} : !tgraph.tensor<[8, 1], f16> -> !tgraph.tensor<[1, 8], f16>
tgraph.graph @sink_transpose(%x: !tgraph.tensor<[8, 16], f16>, %c: !tgraph.tensor<[16, 8], f16>) -> !tgraph.tensor<[1, 8], f16> {
  %e = tgraph.exp %x : !tgraph.tensor<[8, 16], f16>
  %t = tgraph.transpose %e perm [1, 0] : !tgraph.tensor<[8, 16], f16> -> !tgraph.tensor<[16, 8], f16>
  %m = tgraph.mul %t, %c : !tgraph.tensor<[16, 8], f16>, !tgraph.tensor<[16, 8], f16> -> !tgraph.tensor<[16, 8], f16>
  %s = tgraph.reduce sum %m dim 0 : !tgraph.tensor<[16, 8], f16> -> !tgraph.tensor<[1, 8], f16>
  tgraph.output %s : !tgraph.tensor<[1, 8], f16>
}

// -----

// A slice through a reshape that only adds a size-1 dim: the input's view is sliced in its own frame.
// CHECK-LABEL: tgraph.graph @slice_through_unit_reshape(%x_v1: !tgraph.tensor<[4, 32], f16>)
// CHECK-SAME:    cleave.boundary = #cleave.boundary<inputs = [#cleave.view<input = 0, slices = {{\[}}[1, 32, 32]]>], outputs = [#cleave.part<output = 0>]>
// CHECK:         tgraph.exp %x_v1
tgraph.graph @slice_through_unit_reshape(%x: !tgraph.tensor<[4, 64], f16>) -> !tgraph.tensor<[4, 1, 32], f16> {
  %e = tgraph.exp %x : !tgraph.tensor<[4, 64], f16>
  %r = tgraph.reshape %e : !tgraph.tensor<[4, 64], f16> -> !tgraph.tensor<[4, 1, 64], f16>
  %s = tgraph.slice %r dim 2 start 32 : !tgraph.tensor<[4, 1, 64], f16> -> !tgraph.tensor<[4, 1, 32], f16>
  tgraph.output %s : !tgraph.tensor<[4, 1, 32], f16>
}

// -----

// Linear attention, phi(q) @ (phi(k)^T @ v): the transposed computed phi(k) is the first operand, so the
// product is taken transposed (v^T phi(k), v read as a permuted view) and its transpose folds into the
// next matmul's transpose_b.
// CHECK-LABEL: tgraph.graph @linear_attention(%q: !tgraph.tensor<[64, 32], f16>, %k: !tgraph.tensor<[64, 32], f16>, %v_v1: !tgraph.tensor<[32, 64], f16>)
// CHECK-SAME:    #cleave.view<input = 2, perm = [1, 0]>
// CHECK-NOT:     tgraph.transpose
// CHECK:         %[[KV:.*]] = tgraph.matmul %v_v1, %{{.*}} : !tgraph.tensor<[32, 64], f16>, !tgraph.tensor<[64, 32], f16> -> !tgraph.tensor<[32, 32], f16>
// CHECK:         tgraph.matmul %{{.*}}, %[[KV]] transpose_b
tgraph.graph @linear_attention(%q: !tgraph.tensor<[64, 32], f16>, %k: !tgraph.tensor<[64, 32], f16>, %v: !tgraph.tensor<[64, 32], f16>) -> !tgraph.tensor<[64, 32], f16> {
  %fq = tgraph.sigmoid %q : !tgraph.tensor<[64, 32], f16>
  %fk = tgraph.sigmoid %k : !tgraph.tensor<[64, 32], f16>
  %kt = tgraph.transpose %fk perm [1, 0] : !tgraph.tensor<[64, 32], f16> -> !tgraph.tensor<[32, 64], f16>
  %kv = tgraph.matmul %kt, %v : !tgraph.tensor<[32, 64], f16>, !tgraph.tensor<[64, 32], f16> -> !tgraph.tensor<[32, 32], f16>
  %o = tgraph.matmul %fq, %kv : !tgraph.tensor<[64, 32], f16>, !tgraph.tensor<[32, 32], f16> -> !tgraph.tensor<[64, 32], f16>
  tgraph.output %o : !tgraph.tensor<[64, 32], f16>
}

// -----

// A sum over a concat's dim after a transpose: the parts' sums, each transposed over size-1 dims only. Such
// a transpose is a reshape (`FoldTranspose`), never sunk further: sinking it made a new one at every op it
// passed, and this graph never finished (found by the random modules of tests/test_torch_frontend_structural.py).
// CHECK-LABEL: tgraph.graph @sum_over_a_transposed_concat(%x: !tgraph.tensor<[4, 8, 16], f32>)
// CHECK-NOT:     tgraph.transpose
// CHECK:         %[[S:.*]] = tgraph.reduce sum %{{.*}} dim 1 : !tgraph.tensor<[4, 8, 16], f32> -> !tgraph.tensor<[4, 1, 16], f32>
// CHECK-NEXT:    %[[R:.*]] = tgraph.reshape %[[S]] : !tgraph.tensor<[4, 1, 16], f32> -> !tgraph.tensor<[4, 16, 1], f32>
// CHECK-NEXT:    tgraph.add %[[R]], %[[R]]
tgraph.graph @sum_over_a_transposed_concat(%x: !tgraph.tensor<[4, 8, 16], f32>) -> !tgraph.tensor<[4, 16, 1], f32> {
  %c = tgraph.concat %x, %x dim 1 : !tgraph.tensor<[4, 8, 16], f32>, !tgraph.tensor<[4, 8, 16], f32> -> !tgraph.tensor<[4, 16, 16], f32>
  %a = tgraph.add %c, %c : !tgraph.tensor<[4, 16, 16], f32>, !tgraph.tensor<[4, 16, 16], f32> -> !tgraph.tensor<[4, 16, 16], f32>
  %t = tgraph.transpose %a perm [0, 2, 1] : !tgraph.tensor<[4, 16, 16], f32> -> !tgraph.tensor<[4, 16, 16], f32>
  %s = tgraph.reduce sum %t dim 2 : !tgraph.tensor<[4, 16, 16], f32> -> !tgraph.tensor<[4, 16, 1], f32>
  tgraph.output %s : !tgraph.tensor<[4, 16, 1], f32>
}

// -----

// A KV cache appended to, then attended over: P @ V contracts the joined length, so moving the concats
// would split both matmuls and the softmax's reductions. Each stays a join of the inputs (`#cleave.join`),
// a copy the emitted `run` makes before the kernels, as PyTorch's concat would.
// CHECK-LABEL: tgraph.graph @kv_append(%q: !tgraph.tensor<[4, 1, 32], f16>, %kc_kn_cat: !tgraph.tensor<[4, 64, 32], f16>, %vc_vn_cat: !tgraph.tensor<[4, 64, 32], f16>)
// CHECK-SAME:    cleave.boundary = #cleave.boundary<inputs = [#cleave.view<input = 0>, #cleave.join<dim = 1, parts = [#cleave.view<input = 1>, #cleave.view<input = 3>]>, #cleave.join<dim = 1, parts = [#cleave.view<input = 2>, #cleave.view<input = 4>]>], outputs = [#cleave.part<output = 0>]>
// CHECK-NOT:     tgraph.concat
// CHECK:         tgraph.matmul %q, %kc_kn_cat transpose_b
// CHECK:         tgraph.matmul %{{.*}}, %vc_vn_cat :
// CHECK-NOT:     tgraph.matmul
tgraph.graph @kv_append(%q: !tgraph.tensor<[4, 1, 32], f16>, %kc: !tgraph.tensor<[4, 63, 32], f16>, %vc: !tgraph.tensor<[4, 63, 32], f16>, %kn: !tgraph.tensor<[4, 1, 32], f16>, %vn: !tgraph.tensor<[4, 1, 32], f16>) -> !tgraph.tensor<[4, 1, 32], f16> {
  %k = tgraph.concat %kc, %kn dim 1 : !tgraph.tensor<[4, 63, 32], f16>, !tgraph.tensor<[4, 1, 32], f16> -> !tgraph.tensor<[4, 64, 32], f16>
  %v = tgraph.concat %vc, %vn dim 1 : !tgraph.tensor<[4, 63, 32], f16>, !tgraph.tensor<[4, 1, 32], f16> -> !tgraph.tensor<[4, 64, 32], f16>
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[4, 1, 32], f16>, !tgraph.tensor<[4, 64, 32], f16> -> !tgraph.tensor<[4, 1, 64], f16>
  %m = tgraph.reduce max %s dim 2 : !tgraph.tensor<[4, 1, 64], f16> -> !tgraph.tensor<[4, 1, 1], f16>
  %z = tgraph.sub %s, %m : !tgraph.tensor<[4, 1, 64], f16>, !tgraph.tensor<[4, 1, 1], f16> -> !tgraph.tensor<[4, 1, 64], f16>
  %e = tgraph.exp %z : !tgraph.tensor<[4, 1, 64], f16>
  %r = tgraph.reduce sum %e dim 2 : !tgraph.tensor<[4, 1, 64], f16> -> !tgraph.tensor<[4, 1, 1], f16>
  %p = tgraph.div %e, %r : !tgraph.tensor<[4, 1, 64], f16>, !tgraph.tensor<[4, 1, 1], f16> -> !tgraph.tensor<[4, 1, 64], f16>
  %o = tgraph.matmul %p, %v : !tgraph.tensor<[4, 1, 64], f16>, !tgraph.tensor<[4, 64, 32], f16> -> !tgraph.tensor<[4, 1, 32], f16>
  tgraph.output %o : !tgraph.tensor<[4, 1, 32], f16>
}

// -----

// An input read whole (an RMSNorm's sum of squares) and in halves (the rotary embedding) is read in halves only:
// the sum of squares is the sum of the halves' sums, so a kernel loads each element once.
// CHECK-LABEL: tgraph.graph @norm_rope(%q_v1: !tgraph.tensor<[4, 8, 32], f16>, %q_v2: !tgraph.tensor<[4, 8, 32], f16>,
// CHECK-NOT:     %q:
// CHECK:         tgraph.reduce sum %{{.*}} dim 2 : !tgraph.tensor<[4, 8, 32], f32>
// CHECK:         tgraph.reduce sum %{{.*}} dim 2 : !tgraph.tensor<[4, 8, 32], f32>
// CHECK:         tgraph.add
tgraph.graph @norm_rope(%q: !tgraph.tensor<[4, 8, 64], f16>, %cos: !tgraph.tensor<[4, 1, 64], f16>, %sin: !tgraph.tensor<[4, 1, 64], f16>) -> !tgraph.tensor<[4, 8, 64], f16> {
  %sq = tgraph.square %q : !tgraph.tensor<[4, 8, 64], f16>
  %ss = tgraph.reduce sum %sq dim 2 : !tgraph.tensor<[4, 8, 64], f16> -> !tgraph.tensor<[4, 8, 1], f16>
  %r = tgraph.rsqrt %ss : !tgraph.tensor<[4, 8, 1], f16>
  %n = tgraph.mul %q, %r : !tgraph.tensor<[4, 8, 64], f16>, !tgraph.tensor<[4, 8, 1], f16> -> !tgraph.tensor<[4, 8, 64], f16>
  %q1 = tgraph.slice %n dim 2 start 0 : !tgraph.tensor<[4, 8, 64], f16> -> !tgraph.tensor<[4, 8, 32], f16>
  %q2 = tgraph.slice %n dim 2 start 32 : !tgraph.tensor<[4, 8, 64], f16> -> !tgraph.tensor<[4, 8, 32], f16>
  %n2 = tgraph.neg %q2 : !tgraph.tensor<[4, 8, 32], f16>
  %rh = tgraph.concat %n2, %q1 dim 2 : !tgraph.tensor<[4, 8, 32], f16>, !tgraph.tensor<[4, 8, 32], f16> -> !tgraph.tensor<[4, 8, 64], f16>
  %a = tgraph.mul %n, %cos : !tgraph.tensor<[4, 8, 64], f16>, !tgraph.tensor<[4, 1, 64], f16> -> !tgraph.tensor<[4, 8, 64], f16>
  %b = tgraph.mul %rh, %sin : !tgraph.tensor<[4, 8, 64], f16>, !tgraph.tensor<[4, 1, 64], f16> -> !tgraph.tensor<[4, 8, 64], f16>
  %o = tgraph.add %a, %b : !tgraph.tensor<[4, 8, 64], f16>, !tgraph.tensor<[4, 8, 64], f16> -> !tgraph.tensor<[4, 8, 64], f16>
  tgraph.output %o : !tgraph.tensor<[4, 8, 64], f16>
}
