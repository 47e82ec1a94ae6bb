// A hand-written kernel whose tile marked #cleave<mem global> feeds an element-wise op, not a direct GEMV.
itgraph.kernel @k(%x: !tgraph.tensor<[4, 64], f16>, %y: !tgraph.tensor<[4, 64], f16>) attributes {num_outputs = 1 : i64, cleave.threads = 128 : i64, cleave.stages = 1 : i64} {
  itgraph.parallel (p0) in (4) {
    %t = itgraph.load %x at #itgraph.tmap<[p0, 0], [1, 64]> {cleave.mem = #cleave<mem global>} : !tgraph.tensor<[4, 64], f16> -> !tgraph.tensor<[1, 64], f16>
    %e = tgraph.exp %t {cleave.mem = #cleave<mem fragment>} : !tgraph.tensor<[1, 64], f16>
    itgraph.store %e, %y at #itgraph.tmap<[p0, 0], [1, 64]> : !tgraph.tensor<[1, 64], f16>, !tgraph.tensor<[4, 64], f16>
  }
}
