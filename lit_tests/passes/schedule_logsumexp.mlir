// cleave-schedule: a max read after the loop of its exp's sums (logsumexp's `log(sum exp(x - m)) + m`) is a
// running max of that loop, as a max the graph outputs is (flash-decoding's split kernel): the row streams
// through one kernel in 1024-wide steps, and the epilogue reads the running max and sum after the loop.
// Before, the max was "needed outside the reduction loop as well" and the graph was cut into two kernels.
// RUN: cleave-opt %s -p 'cleave-schedule{top-k=1},cleave-place-memory' -t tilelang 2>/dev/null | filecheck %s
// RUN: cleave-opt %s -p 'cleave-schedule{top-k=1},cleave-place-memory,cleave-lower-tilelang' 2>/dev/null | cleave-run - | filecheck %s --check-prefix=CMP

// CHECK:      def logsumexp_k0(
// With 8 blocks (fewer than SMs) the loop runs lane by lane (`_plan_lanes`): each element position keeps
// its own running max and sum, with no reduction (barriers) inside the loop; the rows reduce after it.
// CHECK:      T.fill(m_lanes, -T.infinity("float32"))
// CHECK:      for r0 in T.Pipelined(
// CHECK-NOT:      T.reduce_
// CHECK:              alpha_lanes[i0] = T.exp2(
// CHECK:              s_lanes[i0] = s_lanes[i0] * alpha_lanes[i0] + e[i0]
// CHECK-NEXT: T.reduce_max(m_lanes, m_w, dim=0, clear=True)
// CHECK:      T.reduce_sum(s_lanes, s_w, dim=0, clear=True)
// CHECK:          o[0] = T.log(s_w_s[0]) + m_w_s[0]
// CHECK-NOT:  def logsumexp_k1(

// CMP: @logsumexp_k0 vs @logsumexp: agree

tgraph.graph @logsumexp(%x: !tgraph.tensor<[8, 16384], f16>) -> !tgraph.tensor<[8, 1], f16> {
  %m = tgraph.reduce max %x dim 1 : !tgraph.tensor<[8, 16384], f16> -> !tgraph.tensor<[8, 1], f16>
  %z = tgraph.sub %x, %m : !tgraph.tensor<[8, 16384], f16>, !tgraph.tensor<[8, 1], f16> -> !tgraph.tensor<[8, 16384], f16>
  %e = tgraph.exp %z : !tgraph.tensor<[8, 16384], f16>
  %s = tgraph.reduce sum %e dim 1 : !tgraph.tensor<[8, 16384], f16> -> !tgraph.tensor<[8, 1], f16>
  %l = tgraph.log %s : !tgraph.tensor<[8, 1], f16>
  %o = tgraph.add %l, %m : !tgraph.tensor<[8, 1], f16>, !tgraph.tensor<[8, 1], f16> -> !tgraph.tensor<[8, 1], f16>
  tgraph.output %o : !tgraph.tensor<[8, 1], f16>
}
