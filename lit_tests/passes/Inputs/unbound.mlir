// Input for bind_own_bindings.mlir: K has no value in `bindings`.
tgraph.graph @unbound(%x: !tgraph.tensor<[T, K], f16>) -> !tgraph.tensor<[T, K], f16> attributes {bindings = {T = 16 : i64}} {
  tgraph.output %x : !tgraph.tensor<[T, K], f16>
}
