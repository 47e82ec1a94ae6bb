// RUN: cleave-opt %s -p cleave-symbolize | filecheck %s
// Every non-1 dim becomes a symbol d0, d1, ... (in order of first appearance); dims the ops force
// equal share a symbol; the original sizes go to `bindings`, split divisibility to `constraints`.

// CHECK-LABEL: tgraph.graph @chain(
// CHECK-SAME:    %a: !tgraph.tensor<[d0, d1], f16>, %b: !tgraph.tensor<[d1, d2], f16>, %c: !tgraph.tensor<[d2, d3], f16>)
// CHECK-SAME:    -> !tgraph.tensor<[d0, d3], f16>
// CHECK-SAME:    attributes {bindings = {d0 = 4096 : i64, d1 = 128 : i64, d2 = 4096 : i64, d3 = 128 : i64}} {
// CHECK-NEXT:    %ab = tgraph.matmul %a, %b : !tgraph.tensor<[d0, d1], f16>, !tgraph.tensor<[d1, d2], f16> -> !tgraph.tensor<[d0, d2], f16>
// CHECK-NEXT:    %o = tgraph.matmul %ab, %c : !tgraph.tensor<[d0, d2], f16>, !tgraph.tensor<[d2, d3], f16> -> !tgraph.tensor<[d0, d3], f16>
// CHECK-NEXT:    tgraph.output %o : !tgraph.tensor<[d0, d3], f16>
tgraph.graph @chain(%a: !tgraph.tensor<[4096, 128], f16>, %b: !tgraph.tensor<[128, 4096], f16>, %c: !tgraph.tensor<[4096, 128], f16>) -> !tgraph.tensor<[4096, 128], f16> {
  %ab = tgraph.matmul %a, %b : !tgraph.tensor<[4096, 128], f16>, !tgraph.tensor<[128, 4096], f16> -> !tgraph.tensor<[4096, 4096], f16>
  %o = tgraph.matmul %ab, %c : !tgraph.tensor<[4096, 4096], f16>, !tgraph.tensor<[4096, 128], f16> -> !tgraph.tensor<[4096, 128], f16>
  tgraph.output %o : !tgraph.tensor<[4096, 128], f16>
}

// Attention: size-1 dims stay 1; Q's and K's head dims unify through transpose_b (d2), the key
// length through the second matmul (d3); the query length d1 stays apart from d3.
// CHECK-LABEL: tgraph.graph @attention(
// CHECK-SAME:    %q: !tgraph.tensor<[1, d0, d1, d2], f16>, %k: !tgraph.tensor<[1, d0, d3, d2], f16>, %v: !tgraph.tensor<[1, d0, d3, d4], f16>)
// CHECK-SAME:    -> !tgraph.tensor<[1, d0, d1, d4], f16>
// CHECK-SAME:    attributes {bindings = {d0 = 32 : i64, d1 = 256 : i64, d2 = 128 : i64, d3 = 256 : i64, d4 = 128 : i64}} {
// CHECK-NEXT:    %s = tgraph.matmul %q, %k transpose_b : {{.*}} -> !tgraph.tensor<[1, d0, d1, d3], f16>
// CHECK-NEXT:    %t = tgraph.scale %s, {{.*}} : !tgraph.tensor<[1, d0, d1, d3], f16>
// CHECK-NEXT:    %e = tgraph.exp %t : !tgraph.tensor<[1, d0, d1, d3], f16>
// CHECK-NEXT:    %r = tgraph.reduce sum %e dim 3 : !tgraph.tensor<[1, d0, d1, d3], f16> -> !tgraph.tensor<[1, d0, d1, 1], f16>
// CHECK-NEXT:    %p = tgraph.div %e, %r : !tgraph.tensor<[1, d0, d1, d3], f16>, !tgraph.tensor<[1, d0, d1, 1], f16> -> !tgraph.tensor<[1, d0, d1, d3], f16>
// CHECK-NEXT:    %o = tgraph.matmul %p, %v : !tgraph.tensor<[1, d0, d1, d3], f16>, !tgraph.tensor<[1, d0, d3, d4], f16> -> !tgraph.tensor<[1, d0, d1, d4], f16>
// CHECK-NEXT:    tgraph.output %o : !tgraph.tensor<[1, d0, d1, d4], f16>
tgraph.graph @attention(%q: !tgraph.tensor<[1, 32, 256, 128], f16>, %k: !tgraph.tensor<[1, 32, 256, 128], f16>, %v: !tgraph.tensor<[1, 32, 256, 128], f16>) -> !tgraph.tensor<[1, 32, 256, 128], f16> {
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[1, 32, 256, 128], f16>, !tgraph.tensor<[1, 32, 256, 128], f16> -> !tgraph.tensor<[1, 32, 256, 256], f16>
  %t = tgraph.scale %s, 0.08838834764831845 : !tgraph.tensor<[1, 32, 256, 256], f16>
  %e = tgraph.exp %t : !tgraph.tensor<[1, 32, 256, 256], f16>
  %r = tgraph.reduce sum %e dim 3 : !tgraph.tensor<[1, 32, 256, 256], f16> -> !tgraph.tensor<[1, 32, 256, 1], f16>
  %p = tgraph.div %e, %r : !tgraph.tensor<[1, 32, 256, 256], f16>, !tgraph.tensor<[1, 32, 256, 1], f16> -> !tgraph.tensor<[1, 32, 256, 256], f16>
  %o = tgraph.matmul %p, %v : !tgraph.tensor<[1, 32, 256, 256], f16>, !tgraph.tensor<[1, 32, 256, 128], f16> -> !tgraph.tensor<[1, 32, 256, 128], f16>
  tgraph.output %o : !tgraph.tensor<[1, 32, 256, 128], f16>
}

// Split: the part count becomes `s`, the split dim d1/s, and `s | d1` is recorded.
// CHECK-LABEL: tgraph.graph @split_sum(
// CHECK-SAME:    %a: !tgraph.tensor<[d0, d1], f16>) -> !tgraph.tensor<[1, d0, 1], f16>
// CHECK-SAME:    attributes {bindings = {d0 = 64 : i64, d1 = 256 : i64, s = 4 : i64}, constraints = ["s | d1"]} {
// CHECK-NEXT:    %as = tgraph.split %a dim 1 : !tgraph.tensor<[d0, d1], f16> -> !tgraph.tensor<[s, d0, d1/s], f16>
// CHECK-NEXT:    %e = tgraph.exp %as : !tgraph.tensor<[s, d0, d1/s], f16>
// CHECK-NEXT:    %r = tgraph.reduce sum %e dim 2 : !tgraph.tensor<[s, d0, d1/s], f16> -> !tgraph.tensor<[s, d0, 1], f16>
// CHECK-NEXT:    %t = tgraph.reduce sum %r dim 0 : !tgraph.tensor<[s, d0, 1], f16> -> !tgraph.tensor<[1, d0, 1], f16>
// CHECK-NEXT:    tgraph.output %t : !tgraph.tensor<[1, d0, 1], f16>
tgraph.graph @split_sum(%a: !tgraph.tensor<[64, 256], f16>) -> !tgraph.tensor<[1, 64, 1], f16> {
  %as = tgraph.split %a dim 1 : !tgraph.tensor<[64, 256], f16> -> !tgraph.tensor<[4, 64, 64], f16>
  %e = tgraph.exp %as : !tgraph.tensor<[4, 64, 64], f16>
  %r = tgraph.reduce sum %e dim 2 : !tgraph.tensor<[4, 64, 64], f16> -> !tgraph.tensor<[4, 64, 1], f16>
  %t = tgraph.reduce sum %r dim 0 : !tgraph.tensor<[4, 64, 1], f16> -> !tgraph.tensor<[1, 64, 1], f16>
  tgraph.output %t : !tgraph.tensor<[1, 64, 1], f16>
}

// User symbols and their bindings are kept; argument attributes survive.
// CHECK-LABEL: tgraph.graph @user_symbols(
// CHECK-SAME:    %x: !tgraph.tensor<[T, d0], f16> {dynamic = array<i64: 0>}, %w: !tgraph.tensor<[d0, d1], f16>)
// CHECK-SAME:    -> !tgraph.tensor<[T, d1], f16>
// CHECK-SAME:    attributes {bindings = {T = 16 : i64, d0 = 64 : i64, d1 = 32 : i64}} {
tgraph.graph @user_symbols(%x: !tgraph.tensor<[T, 64], f16> {dynamic = array<i64: 0>}, %w: !tgraph.tensor<[64, 32], f16>) -> !tgraph.tensor<[T, 32], f16> attributes {bindings = {T = 16 : i64}} {
  %y = tgraph.matmul %x, %w : !tgraph.tensor<[T, 64], f16>, !tgraph.tensor<[64, 32], f16> -> !tgraph.tensor<[T, 32], f16>
  tgraph.output %y : !tgraph.tensor<[T, 32], f16>
}

// Transposes permute the symbols; a slice's window is fixed, so the dim it cuts and the slice keep
// their sizes (a concat of them sums to 128, which w's rows then are); the other dims stay symbols.
// CHECK-LABEL: tgraph.graph @rotate_half(
// CHECK-SAME:    %x: !tgraph.tensor<[T, 128], f16> {dynamic = array<i64: 0>}, %w: !tgraph.tensor<[128, d0], f16>)
// CHECK-SAME:    -> !tgraph.tensor<[d0, T], f16>
// CHECK-SAME:    attributes {bindings = {T = 16 : i64, d0 = 32 : i64}} {
// CHECK-NEXT:    %a = tgraph.slice %x dim 1 start 0 : !tgraph.tensor<[T, 128], f16> -> !tgraph.tensor<[T, 64], f16>
// CHECK-NEXT:    %b = tgraph.slice %x dim 1 start 64 : !tgraph.tensor<[T, 128], f16> -> !tgraph.tensor<[T, 64], f16>
// CHECK-NEXT:    %n = tgraph.neg %b : !tgraph.tensor<[T, 64], f16>
// CHECK-NEXT:    %c = tgraph.concat %n, %a dim 1 : {{.*}} -> !tgraph.tensor<[T, 128], f16>
// CHECK-NEXT:    %y = tgraph.matmul %c, %w : !tgraph.tensor<[T, 128], f16>, !tgraph.tensor<[128, d0], f16> -> !tgraph.tensor<[T, d0], f16>
// CHECK-NEXT:    %t = tgraph.transpose %y perm [1, 0] : !tgraph.tensor<[T, d0], f16> -> !tgraph.tensor<[d0, T], f16>
tgraph.graph @rotate_half(%x: !tgraph.tensor<[T, 128], f16> {dynamic = array<i64: 0>}, %w: !tgraph.tensor<[128, 32], f16>) -> !tgraph.tensor<[32, T], f16> attributes {bindings = {T = 16 : i64}} {
  %a = tgraph.slice %x dim 1 start 0 : !tgraph.tensor<[T, 128], f16> -> !tgraph.tensor<[T, 64], f16>
  %b = tgraph.slice %x dim 1 start 64 : !tgraph.tensor<[T, 128], f16> -> !tgraph.tensor<[T, 64], f16>
  %n = tgraph.neg %b : !tgraph.tensor<[T, 64], f16>
  %c = tgraph.concat %n, %a dim 1 : !tgraph.tensor<[T, 64], f16>, !tgraph.tensor<[T, 64], f16> -> !tgraph.tensor<[T, 128], f16>
  %y = tgraph.matmul %c, %w : !tgraph.tensor<[T, 128], f16>, !tgraph.tensor<[128, 32], f16> -> !tgraph.tensor<[T, 32], f16>
  %t = tgraph.transpose %y perm [1, 0] : !tgraph.tensor<[T, 32], f16> -> !tgraph.tensor<[32, T], f16>
  tgraph.output %t : !tgraph.tensor<[32, T], f16>
}
