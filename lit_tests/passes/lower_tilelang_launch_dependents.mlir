// cleave-lower-tilelang: a kernel that carries `cleave.launch_dependents` (set by `cleave compile --gpu`'s tuning,
// `tune.early_launch_choice`) lets the next kernel on the stream launch once its main loop is done:
// `tilelang.launch_dependents` (`T.pdl_trigger()`) right after its last top-level pipelined or serial loop, before
// the stores of its epilogue. The next kernel's `tilelang.wait_prior_grids` still waits for those stores, so the
// results are the same; only the launch moves. A kernel without the attribute, or without a loop, has none;
// `overlap-launches=false` (no waits) leaves it out too.
// RUN: cleave-opt %s -p 'cleave-lower-tilelang' 2>/dev/null | filecheck %s
// RUN: cleave-opt %s -p 'cleave-lower-tilelang{overlap-launches=false}' 2>/dev/null | filecheck %s --check-prefix=OFF
// RUN: cleave-opt %s -t tilelang 2>/dev/null | filecheck %s --check-prefix=PY
// RUN: cleave-opt %s -p 'cleave-lower-tilelang' 2>/dev/null | cleave-run - | filecheck %s --check-prefix=CMP

// CHECK:      tilelang.kernel @mm_k0
// CHECK:        tilelang.wait_prior_grids
// CHECK:        tilelang.pipelined
// CHECK:        }
// CHECK-NEXT:   tilelang.launch_dependents
// CHECK-NEXT:   tilelang.
// CHECK-NOT:    tilelang.launch_dependents
// CHECK:      tilelang.kernel @mm_plain_k0
// CHECK-NOT:    tilelang.launch_dependents

// OFF-NOT:    tilelang.launch_dependents

// CMP: @mm_k0 vs @mm: agree

// PY:         def mm_k0(
// PY:           for r0 in T.Pipelined(
// PY:           T.pdl_trigger()
// PY:         def mm_plain_k0(
// PY-NOT:       T.pdl_trigger()
// PY:         KERNELS = {

tgraph.graph @mm(%a: !tgraph.tensor<[256, 4096], f16>, %b: !tgraph.tensor<[4096, 256], f16>) -> !tgraph.tensor<[256, 256], f16> {
  %ab = tgraph.matmul %a, %b : !tgraph.tensor<[256, 4096], f16>, !tgraph.tensor<[4096, 256], f16> -> !tgraph.tensor<[256, 256], f16>
  tgraph.output %ab : !tgraph.tensor<[256, 256], f16>
}
itgraph.kernel @mm_k0(%a: !tgraph.tensor<[256, 4096], f16>, %b: !tgraph.tensor<[4096, 256], f16>, %out0: !tgraph.tensor<[256, 256], f16>) attributes {num_outputs = 1 : i64, cleave.schedule_of = @mm, cleave.tiles = #cleave.tiles<out = [16, 32], reduce = 128>, cleave.estimated_us = 1.830400e+01 : f64, cleave.smem_bytes = 61440 : i64, cleave.threads = 128 : i64, cleave.stages = 5 : i64, cleave.launch_dependents} {
  itgraph.parallel (p0, p1) in (16, 8) {
    %ab = itgraph.sequential r0 in 32 accumulate (sum) : !tgraph.tensor<[16, 32], f16> {
      %a_1 = itgraph.load %a at #itgraph.tmap<[16*p0, 128*r0], [16, 128]> {cleave.mem = #cleave<mem shared>} : !tgraph.tensor<[256, 4096], f16> -> !tgraph.tensor<[16, 128], f16>
      %b_1 = itgraph.load %b at #itgraph.tmap<[128*r0, 32*p1], [128, 32]> {cleave.mem = #cleave<mem shared>} : !tgraph.tensor<[4096, 256], f16> -> !tgraph.tensor<[128, 32], f16>
      %ab_1 = tgraph.matmul %a_1, %b_1 {cleave.mem = #cleave<mem fragment>} : !tgraph.tensor<[16, 128], f16>, !tgraph.tensor<[128, 32], f16> -> !tgraph.tensor<[16, 32], f16>
      itgraph.yield %ab_1 : !tgraph.tensor<[16, 32], f16>
    }
    itgraph.store %ab, %out0 at #itgraph.tmap<[16*p0, 32*p1], [16, 32]> : !tgraph.tensor<[16, 32], f16>, !tgraph.tensor<[256, 256], f16>
  }
}
tgraph.graph @mm_plain(%a: !tgraph.tensor<[256, 4096], f16>, %b: !tgraph.tensor<[4096, 256], f16>) -> !tgraph.tensor<[256, 256], f16> {
  %ab = tgraph.matmul %a, %b : !tgraph.tensor<[256, 4096], f16>, !tgraph.tensor<[4096, 256], f16> -> !tgraph.tensor<[256, 256], f16>
  tgraph.output %ab : !tgraph.tensor<[256, 256], f16>
}
itgraph.kernel @mm_plain_k0(%a: !tgraph.tensor<[256, 4096], f16>, %b: !tgraph.tensor<[4096, 256], f16>, %out0: !tgraph.tensor<[256, 256], f16>) attributes {num_outputs = 1 : i64, cleave.schedule_of = @mm_plain, cleave.tiles = #cleave.tiles<out = [16, 32], reduce = 128>, cleave.estimated_us = 1.830400e+01 : f64, cleave.smem_bytes = 61440 : i64, cleave.threads = 128 : i64, cleave.stages = 5 : i64} {
  itgraph.parallel (p0, p1) in (16, 8) {
    %ab = itgraph.sequential r0 in 32 accumulate (sum) : !tgraph.tensor<[16, 32], f16> {
      %a_1 = itgraph.load %a at #itgraph.tmap<[16*p0, 128*r0], [16, 128]> {cleave.mem = #cleave<mem shared>} : !tgraph.tensor<[256, 4096], f16> -> !tgraph.tensor<[16, 128], f16>
      %b_1 = itgraph.load %b at #itgraph.tmap<[128*r0, 32*p1], [128, 32]> {cleave.mem = #cleave<mem shared>} : !tgraph.tensor<[4096, 256], f16> -> !tgraph.tensor<[128, 32], f16>
      %ab_1 = tgraph.matmul %a_1, %b_1 {cleave.mem = #cleave<mem fragment>} : !tgraph.tensor<[16, 128], f16>, !tgraph.tensor<[128, 32], f16> -> !tgraph.tensor<[16, 32], f16>
      itgraph.yield %ab_1 : !tgraph.tensor<[16, 32], f16>
    }
    itgraph.store %ab, %out0 at #itgraph.tmap<[16*p0, 32*p1], [16, 32]> : !tgraph.tensor<[16, 32], f16>, !tgraph.tensor<[256, 256], f16>
  }
}
