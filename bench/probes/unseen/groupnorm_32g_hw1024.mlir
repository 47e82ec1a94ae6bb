// GroupNorm (Stable Diffusion's UNet) over 32 groups of 10 channels x 32 x 32 pixels, N=2, as [N, G, C/G*HW]: mean and variance per group.
tgraph.graph @groupnorm(%x: !tgraph.tensor<[2, 32, 10240], f16>) -> !tgraph.tensor<[2, 32, 10240], f16> {
  %s = tgraph.reduce mean %x dim 2 : !tgraph.tensor<[2, 32, 10240], f16> -> !tgraph.tensor<[2, 32, 1], f16>
  %c = tgraph.sub %x, %s : !tgraph.tensor<[2, 32, 10240], f16>, !tgraph.tensor<[2, 32, 1], f16> -> !tgraph.tensor<[2, 32, 10240], f16>
  %c2 = tgraph.mul %c, %c : !tgraph.tensor<[2, 32, 10240], f16>, !tgraph.tensor<[2, 32, 10240], f16> -> !tgraph.tensor<[2, 32, 10240], f16>
  %v = tgraph.reduce mean %c2 dim 2 : !tgraph.tensor<[2, 32, 10240], f16> -> !tgraph.tensor<[2, 32, 1], f16>
  %ve = tgraph.scalar add %v, 1.000000e-05 : !tgraph.tensor<[2, 32, 1], f16>
  %r = tgraph.rsqrt %ve : !tgraph.tensor<[2, 32, 1], f16>
  %y = tgraph.mul %c, %r : !tgraph.tensor<[2, 32, 10240], f16>, !tgraph.tensor<[2, 32, 1], f16> -> !tgraph.tensor<[2, 32, 10240], f16>
  tgraph.output %y : !tgraph.tensor<[2, 32, 10240], f16>
}
