// cleave-canonicalize: reshapes that only add or drop size-1 dims move through elementwise ops to the
// graph's inputs and output where fewer stay inside; where none can leave, the graph is left as is.
// RUN: cleave-opt %s --split-input-file -p cleave-canonicalize | filecheck %s
// The rewritten graphs compute what the written ones do (the same inputs, the same sums):
// RUN: cleave-run %s | filecheck %s --check-prefix=SUMS
// RUN: cleave-opt %s -p cleave-canonicalize | cleave-run - | filecheck %s --check-prefix=SUMS
// SUMS: @decode_mlp output 0: shape [4, 1, 64] f32 sum -473.247786 abs-sum 9290.65523
// SUMS: @broadcast_bias output 0: shape [4, 32] f32 sum 1009.56109 abs-sum 9812.7574
// SUMS: @kept output 0: shape [4, 8] f32 sum -444.177367 abs-sum 1139.583
// SUMS: @bloom_softmax output 0: shape [4, 1, 16] f32 sum 0.455478158 abs-sum 40.1065032

// Decode SwiGLU + residual as torch.export's linears write it ([B, 1, N] elementwise ops between
// [B, N] matmuls): the gate/up product and the residual add run on rows; one reshape per boundary.
// CHECK-LABEL: tgraph.graph @decode_mlp
// CHECK-NEXT:    %0 = tgraph.reshape %g : !tgraph.tensor<[4, 1, 128], f32> -> !tgraph.tensor<[4, 128], f32>
// CHECK-NEXT:    %gs = tgraph.silu %0 : !tgraph.tensor<[4, 128], f32>
// CHECK-NEXT:    %u = tgraph.matmul %xr, %wu transpose_b
// CHECK-NEXT:    %m = tgraph.mul %gs, %u : !tgraph.tensor<[4, 128], f32>, !tgraph.tensor<[4, 128], f32> -> !tgraph.tensor<[4, 128], f32>
// CHECK-NEXT:    %d = tgraph.matmul %m, %wd transpose_b
// CHECK-NEXT:    %[[X:.*]] = tgraph.reshape %x : !tgraph.tensor<[4, 1, 64], f32> -> !tgraph.tensor<[4, 64], f32>
// CHECK-NEXT:    %o = tgraph.add %d, %[[X]] : !tgraph.tensor<[4, 64], f32>, !tgraph.tensor<[4, 64], f32> -> !tgraph.tensor<[4, 64], f32>
// CHECK-NEXT:    %[[O:.*]] = tgraph.reshape %o : !tgraph.tensor<[4, 64], f32> -> !tgraph.tensor<[4, 1, 64], f32>
// CHECK-NEXT:    tgraph.output %[[O]]
tgraph.graph @decode_mlp(%g: !tgraph.tensor<[4, 1, 128], f32>, %x: !tgraph.tensor<[4, 1, 64], f32>, %xr: !tgraph.tensor<[4, 64], f32>, %wu: !tgraph.tensor<[128, 64], f32>, %wd: !tgraph.tensor<[64, 128], f32>) -> !tgraph.tensor<[4, 1, 64], f32> {
  %gs = tgraph.silu %g : !tgraph.tensor<[4, 1, 128], f32>
  %u = tgraph.matmul %xr, %wu transpose_b : !tgraph.tensor<[4, 64], f32>, !tgraph.tensor<[128, 64], f32> -> !tgraph.tensor<[4, 128], f32>
  %u3 = tgraph.reshape %u : !tgraph.tensor<[4, 128], f32> -> !tgraph.tensor<[4, 1, 128], f32>
  %m3 = tgraph.mul %gs, %u3 : !tgraph.tensor<[4, 1, 128], f32>, !tgraph.tensor<[4, 1, 128], f32> -> !tgraph.tensor<[4, 1, 128], f32>
  %m = tgraph.reshape %m3 : !tgraph.tensor<[4, 1, 128], f32> -> !tgraph.tensor<[4, 128], f32>
  %d = tgraph.matmul %m, %wd transpose_b : !tgraph.tensor<[4, 128], f32>, !tgraph.tensor<[64, 128], f32> -> !tgraph.tensor<[4, 64], f32>
  %d3 = tgraph.reshape %d : !tgraph.tensor<[4, 64], f32> -> !tgraph.tensor<[4, 1, 64], f32>
  %o = tgraph.add %d3, %x : !tgraph.tensor<[4, 1, 64], f32>, !tgraph.tensor<[4, 1, 64], f32> -> !tgraph.tensor<[4, 1, 64], f32>
  tgraph.output %o : !tgraph.tensor<[4, 1, 64], f32>
}

// -----

// A broadcast operand ([1, 1, 128] bias) follows the frame: it is broadcast along the same dims.
// CHECK-LABEL: tgraph.graph @broadcast_bias
// CHECK-NEXT:    %0 = tgraph.reshape %b : !tgraph.tensor<[1, 1, 128], f32> -> !tgraph.tensor<[1, 128], f32>
// CHECK-NEXT:    %y3 = tgraph.add %h, %0 : !tgraph.tensor<[4, 128], f32>, !tgraph.tensor<[1, 128], f32> -> !tgraph.tensor<[4, 128], f32>
// CHECK-NEXT:    %e3 = tgraph.exp %y3
// CHECK-NEXT:    %o = tgraph.matmul %e3, %w
tgraph.graph @broadcast_bias(%h: !tgraph.tensor<[4, 128], f32>, %b: !tgraph.tensor<[1, 1, 128], f32>, %w: !tgraph.tensor<[128, 32], f32>) -> !tgraph.tensor<[4, 32], f32> {
  %h3 = tgraph.reshape %h : !tgraph.tensor<[4, 128], f32> -> !tgraph.tensor<[4, 1, 128], f32>
  %y3 = tgraph.add %h3, %b : !tgraph.tensor<[4, 1, 128], f32>, !tgraph.tensor<[1, 1, 128], f32> -> !tgraph.tensor<[4, 1, 128], f32>
  %e3 = tgraph.exp %y3 : !tgraph.tensor<[4, 1, 128], f32>
  %e = tgraph.reshape %e3 : !tgraph.tensor<[4, 1, 128], f32> -> !tgraph.tensor<[4, 128], f32>
  %o = tgraph.matmul %e, %w : !tgraph.tensor<[4, 128], f32>, !tgraph.tensor<[128, 32], f32> -> !tgraph.tensor<[4, 32], f32>
  tgraph.output %o : !tgraph.tensor<[4, 32], f32>
}

// -----

// The product of two matmuls viewed for a third: moving the reshape would put one on each matmul.
// CHECK-LABEL: tgraph.graph @kept
// CHECK-NEXT:    %a = tgraph.matmul %x, %w1
// CHECK-NEXT:    %b = tgraph.matmul %x, %w2
// CHECK-NEXT:    %p = tgraph.mul %a, %b
// CHECK-NEXT:    %p2 = tgraph.reshape %p : !tgraph.tensor<[4, 1, 16], f32> -> !tgraph.tensor<[4, 16], f32>
tgraph.graph @kept(%x: !tgraph.tensor<[4, 1, 16], f32>, %w1: !tgraph.tensor<[1, 16, 16], f32>, %w2: !tgraph.tensor<[1, 16, 16], f32>, %w3: !tgraph.tensor<[16, 8], f32>) -> !tgraph.tensor<[4, 8], f32> {
  %a = tgraph.matmul %x, %w1 : !tgraph.tensor<[4, 1, 16], f32>, !tgraph.tensor<[1, 16, 16], f32> -> !tgraph.tensor<[4, 1, 16], f32>
  %b = tgraph.matmul %x, %w2 : !tgraph.tensor<[4, 1, 16], f32>, !tgraph.tensor<[1, 16, 16], f32> -> !tgraph.tensor<[4, 1, 16], f32>
  %p = tgraph.mul %a, %b : !tgraph.tensor<[4, 1, 16], f32>, !tgraph.tensor<[4, 1, 16], f32> -> !tgraph.tensor<[4, 1, 16], f32>
  %p2 = tgraph.reshape %p : !tgraph.tensor<[4, 1, 16], f32> -> !tgraph.tensor<[4, 16], f32>
  %o = tgraph.matmul %p2, %w3 : !tgraph.tensor<[4, 16], f32>, !tgraph.tensor<[16, 8], f32> -> !tgraph.tensor<[4, 8], f32>
  tgraph.output %o : !tgraph.tensor<[4, 8], f32>
}

// -----

// Bloom's decode attention: logits [H, 1, n] raised to [1, H, 1, n] for the mask, the softmax there
// (its sum over dim 3) and P viewed back for P @ V. The reshape sinks through the sum, which then
// reduces dim 2 of the logits' own frame, and meets the view back: only the mask is reshaped.
// CHECK-LABEL: tgraph.graph @bloom_softmax
// CHECK-NEXT:    %s = tgraph.matmul %q, %k transpose_b
// CHECK-NEXT:    %[[M:.*]] = tgraph.reshape %mask : !tgraph.tensor<[1, 1, 1, 32], f32> -> !tgraph.tensor<[1, 1, 32], f32>
// CHECK-NEXT:    %sm = tgraph.add %s, %[[M]] : !tgraph.tensor<[4, 1, 32], f32>, !tgraph.tensor<[1, 1, 32], f32> -> !tgraph.tensor<[4, 1, 32], f32>
// CHECK-NEXT:    %e = tgraph.exp %sm : !tgraph.tensor<[4, 1, 32], f32>
// CHECK-NEXT:    %r = tgraph.reduce sum %e dim 2 : !tgraph.tensor<[4, 1, 32], f32> -> !tgraph.tensor<[4, 1, 1], f32>
// CHECK-NEXT:    %p4 = tgraph.div %e, %r : !tgraph.tensor<[4, 1, 32], f32>, !tgraph.tensor<[4, 1, 1], f32> -> !tgraph.tensor<[4, 1, 32], f32>
// CHECK-NEXT:    %o = tgraph.matmul %p4, %v : !tgraph.tensor<[4, 1, 32], f32>, !tgraph.tensor<[4, 32, 16], f32> -> !tgraph.tensor<[4, 1, 16], f32>
// CHECK-NEXT:    tgraph.output %o
tgraph.graph @bloom_softmax(%q: !tgraph.tensor<[4, 1, 16], f32>, %k: !tgraph.tensor<[4, 32, 16], f32>, %mask: !tgraph.tensor<[1, 1, 1, 32], f32>, %v: !tgraph.tensor<[4, 32, 16], f32>) -> !tgraph.tensor<[4, 1, 16], f32> {
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[4, 1, 16], f32>, !tgraph.tensor<[4, 32, 16], f32> -> !tgraph.tensor<[4, 1, 32], f32>
  %s4 = tgraph.reshape %s : !tgraph.tensor<[4, 1, 32], f32> -> !tgraph.tensor<[1, 4, 1, 32], f32>
  %sm = tgraph.add %s4, %mask : !tgraph.tensor<[1, 4, 1, 32], f32>, !tgraph.tensor<[1, 1, 1, 32], f32> -> !tgraph.tensor<[1, 4, 1, 32], f32>
  %e = tgraph.exp %sm : !tgraph.tensor<[1, 4, 1, 32], f32>
  %r = tgraph.reduce sum %e dim 3 : !tgraph.tensor<[1, 4, 1, 32], f32> -> !tgraph.tensor<[1, 4, 1, 1], f32>
  %p4 = tgraph.div %e, %r : !tgraph.tensor<[1, 4, 1, 32], f32>, !tgraph.tensor<[1, 4, 1, 1], f32> -> !tgraph.tensor<[1, 4, 1, 32], f32>
  %p = tgraph.reshape %p4 : !tgraph.tensor<[1, 4, 1, 32], f32> -> !tgraph.tensor<[4, 1, 32], f32>
  %o = tgraph.matmul %p, %v : !tgraph.tensor<[4, 1, 32], f32>, !tgraph.tensor<[4, 32, 16], f32> -> !tgraph.tensor<[4, 1, 16], f32>
  tgraph.output %o : !tgraph.tensor<[4, 1, 16], f32>
}
