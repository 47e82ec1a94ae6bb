// cleave-place-memory: loads in shared memory, computed tiles in registers (fragments), the Q tile
// hoisted out of the KV loop (its tmap does not depend on r0), threads and pipelining stages chosen
// (2 stages: a loop of two back-to-back matmuls, as TileLang's FlashAttention examples). The query
// blocks (p1) launch fastest: every block of one batch entry reads the same K and V tiles.
// RUN: cleave-opt %S/schedule.mlir -p 'cleave-schedule{top-k=1},cleave-place-memory' 2>/dev/null | filecheck %s

// CHECK:      itgraph.kernel @fa_k0(
// CHECK-SAME: cleave.smem_bytes = {{[0-9]+}} : i64
// CHECK-SAME: cleave.threads = {{128|256}} : i64, cleave.stages = 2 : i64, cleave.raster = "p1"
// CHECK-NEXT:   itgraph.parallel
// CHECK-NEXT:     %[[Q:.*]] = itgraph.load %q at {{.*}} {cleave.mem = #cleave<mem shared>}
// CHECK-NEXT:     itgraph.sequential r0
// CHECK-NEXT:       itgraph.load %k at {{.*}} {cleave.mem = #cleave<mem shared>}
// CHECK-NEXT:       tgraph.matmul %[[Q]], {{.*}} transpose_b {cleave.mem = #cleave<mem fragment>}
// CHECK:            tgraph.exp {{.*}} {cleave.mem = #cleave<mem fragment>}
// CHECK:          tgraph.div {{.*}} {cleave.mem = #cleave<mem fragment>}
