tgraph.graph @empty(%x: !tgraph.tensor<[4, 8], f32>) {
  tgraph.output : 
}
