// Projections of one x to outputs of different widths, cut into a kernel per matmul: each kernel writes the
// output it computes; the last returns only its own (`cleave.output_names`) and `cleave.results` names the
// graph's outputs in order, which the chain's runners gather (it copied q and k through, its tiles spanning q).
// RUN: cleave-opt %s -p 'cleave-schedule{per-matmul-cut=true top-k=1}' 2>&1 | filecheck %s

// CHECK:      tgraph.graph @qkv_mm({{.*}}) -> !tgraph.tensor<[32, 128], f16> attributes {{{.*}}cleave.output_names = ["q_c"]
// CHECK:      itgraph.kernel @qkv_mm_k0
// CHECK:      tgraph.graph @qkv_mm_p1({{.*}}) -> !tgraph.tensor<[32, 32], f16> attributes {{{.*}}cleave.output_names = ["k_c"]
// CHECK:      tgraph.graph @qkv_mm_p2({{.*}}) -> !tgraph.tensor<[32, 32], f16> attributes {{{.*}}cleave.output_names = ["v_c"], cleave.results = ["q_c", "k_c", "v_c"]
// CHECK:      itgraph.kernel @qkv_mm_p2_k0(%k_c: {{.*}}, %out0: !tgraph.tensor<[32, 32], f16>) attributes {{{.*}}cleave.results = ["q_c", "k_c", "v_c"]
tgraph.graph @qkv(%x: !tgraph.tensor<[32, 64], f16>, %wq: !tgraph.tensor<[64, 128], f16>, %wk: !tgraph.tensor<[64, 32], f16>, %wv: !tgraph.tensor<[64, 32], f16>) -> (!tgraph.tensor<[32, 128], f16>, !tgraph.tensor<[32, 32], f16>, !tgraph.tensor<[32, 32], f16>) {
  %q = tgraph.matmul %x, %wq : !tgraph.tensor<[32, 64], f16>, !tgraph.tensor<[64, 128], f16> -> !tgraph.tensor<[32, 128], f16>
  %k = tgraph.matmul %x, %wk : !tgraph.tensor<[32, 64], f16>, !tgraph.tensor<[64, 32], f16> -> !tgraph.tensor<[32, 32], f16>
  %v = tgraph.matmul %x, %wv : !tgraph.tensor<[32, 64], f16>, !tgraph.tensor<[64, 32], f16> -> !tgraph.tensor<[32, 32], f16>
  tgraph.output %q, %k, %v : !tgraph.tensor<[32, 128], f16>, !tgraph.tensor<[32, 32], f16>, !tgraph.tensor<[32, 32], f16>
}
