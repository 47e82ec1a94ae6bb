// cleave-schedule on outputs of different widths (q, k and v projections at grouped-query widths): they share one
// grid, each output's tiles as many as the first's, so one kernel reads x once for the three products. The first
// output's 32-column tiles give k and v 8-column tiles (1024 / 32 = 256 / 8 tiles).
// RUN: cleave-opt %s -p 'cleave-schedule{top-k=1}' 2>&1 | filecheck %s

// CHECK:      cleave-schedule @qkv: 1 kernels kept
// CHECK:      itgraph.kernel @qkv_k0(
// CHECK:        itgraph.parallel (p0, p1) in ([[ROWS:[0-9]+]], [[COLS:[0-9]+]]) {
// CHECK:          %x_1 = itgraph.load %x at #itgraph.tmap<[{{[0-9]+}}*p0, {{.*}}]
// CHECK-NOT:      itgraph.load %x
// CHECK-DAG:      itgraph.store %q, %out0 at #itgraph.tmap<[[[R:[0-9]+]]*p0, [[Q:[0-9]+]]*p1], [[[R]], [[Q]]]>
// CHECK-DAG:      itgraph.store %k, %out1 at #itgraph.tmap<[[[R]]*p0, [[KV:[0-9]+]]*p1], [[[R]], [[KV]]]>
// CHECK-DAG:      itgraph.store %v, %out2 at #itgraph.tmap<[[[R]]*p0, [[KV]]*p1], [[[R]], [[KV]]]>

tgraph.graph @qkv(%x: !tgraph.tensor<[64, 1024], f16>, %wq: !tgraph.tensor<[1024, 1024], f16>, %wk: !tgraph.tensor<[1024, 256], f16>, %wv: !tgraph.tensor<[1024, 256], f16>) -> (!tgraph.tensor<[64, 1024], f16>, !tgraph.tensor<[64, 256], f16>, !tgraph.tensor<[64, 256], f16>) {
  %q = tgraph.matmul %x, %wq : !tgraph.tensor<[64, 1024], f16>, !tgraph.tensor<[1024, 1024], f16> -> !tgraph.tensor<[64, 1024], f16>
  %k = tgraph.matmul %x, %wk : !tgraph.tensor<[64, 1024], f16>, !tgraph.tensor<[1024, 256], f16> -> !tgraph.tensor<[64, 256], f16>
  %v = tgraph.matmul %x, %wv : !tgraph.tensor<[64, 1024], f16>, !tgraph.tensor<[1024, 256], f16> -> !tgraph.tensor<[64, 256], f16>
  tgraph.output %q, %k, %v : !tgraph.tensor<[64, 1024], f16>, !tgraph.tensor<[64, 256], f16>, !tgraph.tensor<[64, 256], f16>
}
