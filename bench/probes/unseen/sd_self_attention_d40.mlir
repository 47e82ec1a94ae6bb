// Stable Diffusion's UNet self-attention at the 64x64 latent: 8 heads, 4096 tokens, head dim 40.
tgraph.graph @sd_self_attention(%q: !tgraph.tensor<[1, 8, 4096, 40], f16>, %k: !tgraph.tensor<[1, 8, 4096, 40], f16>, %v: !tgraph.tensor<[1, 8, 4096, 40], f16>) -> !tgraph.tensor<[1, 8, 4096, 40], f16> {
  %s = tgraph.matmul %q, %k transpose_b : !tgraph.tensor<[1, 8, 4096, 40], f16>, !tgraph.tensor<[1, 8, 4096, 40], f16> -> !tgraph.tensor<[1, 8, 4096, 4096], f16>
  %t = tgraph.scale %s, 0.15811388300841897 : !tgraph.tensor<[1, 8, 4096, 4096], f16>
  %m = tgraph.reduce max %t dim 3 : !tgraph.tensor<[1, 8, 4096, 4096], f16> -> !tgraph.tensor<[1, 8, 4096, 1], f16>
  %z = tgraph.sub %t, %m : !tgraph.tensor<[1, 8, 4096, 4096], f16>, !tgraph.tensor<[1, 8, 4096, 1], f16> -> !tgraph.tensor<[1, 8, 4096, 4096], f16>
  %e = tgraph.exp %z : !tgraph.tensor<[1, 8, 4096, 4096], f16>
  %l = tgraph.reduce sum %e dim 3 : !tgraph.tensor<[1, 8, 4096, 4096], f16> -> !tgraph.tensor<[1, 8, 4096, 1], f16>
  %p = tgraph.div %e, %l : !tgraph.tensor<[1, 8, 4096, 4096], f16>, !tgraph.tensor<[1, 8, 4096, 1], f16> -> !tgraph.tensor<[1, 8, 4096, 4096], f16>
  %o = tgraph.matmul %p, %v : !tgraph.tensor<[1, 8, 4096, 4096], f16>, !tgraph.tensor<[1, 8, 4096, 40], f16> -> !tgraph.tensor<[1, 8, 4096, 40], f16>
  tgraph.output %o : !tgraph.tensor<[1, 8, 4096, 40], f16>
}
