// Bad input to cleave-lower-tilelang and -t tilelang: one line, exit 1.
// RUN: not cleave-opt %s -p cleave-lower-tilelang 2>&1 | filecheck %s --check-prefix=SYM
// RUN: not cleave-opt %S/../dialects/tgraph/graph.mlir -t tilelang 2>&1 | filecheck %s --check-prefix=NONE

// SYM: error: cleave-lower-tilelang: tile of symbolic shape [1, N]: tiles must be static
// NONE: error: -t tilelang: the module holds no itgraph.kernel or tilelang.kernel (run cleave-schedule first)
// RUN: not cleave-opt %S/Inputs/global_not_gemv.mlir -p cleave-lower-tilelang 2>&1 | filecheck %s --check-prefix=GLOBAL
// GLOBAL: error: cleave-lower-tilelang: itgraph.load: #cleave<mem global> is only for the weight of a one-row matmul's direct GEMV (place_memory.direct_gemv_operand)

itgraph.kernel @k(%x: !tgraph.tensor<[4, N], f32>, %y: !tgraph.tensor<[4, N], f32>) attributes {num_outputs = 1 : i64} {
  itgraph.parallel (p0) in (4) {
    %t = itgraph.load %x at #itgraph.tmap<[p0, 0], [1, N]> : !tgraph.tensor<[4, N], f32> -> !tgraph.tensor<[1, N], f32>
    %e = tgraph.exp %t : !tgraph.tensor<[1, N], f32>
    itgraph.store %e, %y at #itgraph.tmap<[p0, 0], [1, N]> : !tgraph.tensor<[1, N], f32>, !tgraph.tensor<[4, N], f32>
  }
}
