"""Small networks of families the zoo's exported libraries do not cover, written here in torch
(built with random weights like the others; ``testing.zoo`` lists them in ``EXTRA_MODELS``):
an encoder-decoder with transposed convolutions, a diffusion decoder's GroupNorm blocks, a
sub-pixel super-resolution net, a spatial transformer, a WaveNet-style dilated gated stack, a
style-transfer network with instance norms and reflection padding, and a GAN generator. Each
is the textbook form of its family at a small size; torch is imported when one is built."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

__all__ = ["NETS", "net"]


@functools.cache
def _modules() -> dict[str, Callable[[], Any]]:
    import torch
    from torch import nn
    from torch.nn import functional as F

    def cbr(i: int, o: int) -> nn.Module:
        return nn.Sequential(nn.Conv2d(i, o, 3, 1, 1), nn.BatchNorm2d(o), nn.ReLU())

    class UNet(nn.Module):
        """Three levels of two 3x3 convolutions, max-pool down, ConvTranspose2d up, skip
        concatenations (U-Net at 16 channels)."""

        def __init__(self, c: int = 16) -> None:
            super().__init__()
            self.d1 = nn.Sequential(cbr(3, c), cbr(c, c))
            self.d2 = nn.Sequential(cbr(c, 2 * c), cbr(2 * c, 2 * c))
            self.d3 = nn.Sequential(cbr(2 * c, 4 * c), cbr(4 * c, 4 * c))
            self.u2, self.c2 = nn.ConvTranspose2d(4 * c, 2 * c, 2, 2), nn.Sequential(cbr(4 * c, 2 * c), cbr(2 * c, 2 * c))
            self.u1, self.c1 = nn.ConvTranspose2d(2 * c, c, 2, 2), nn.Sequential(cbr(2 * c, c), cbr(c, c))
            self.out = nn.Conv2d(c, 2, 1)

        def forward(self, x: Any) -> Any:
            a = self.d1(x)
            b = self.d2(F.max_pool2d(a, 2))
            m = self.d3(F.max_pool2d(b, 2))
            b = self.c2(torch.cat([self.u2(m), b], 1))
            return self.out(self.c1(torch.cat([self.u1(b), a], 1)))

    class GroupNormBlock(nn.Module):
        def __init__(self, c: int) -> None:
            super().__init__()
            self.n1, self.c1 = nn.GroupNorm(32, c), nn.Conv2d(c, c, 3, 1, 1)
            self.n2, self.c2 = nn.GroupNorm(32, c), nn.Conv2d(c, c, 3, 1, 1)

        def forward(self, x: Any) -> Any:
            return x + self.c2(F.silu(self.n2(self.c1(F.silu(self.n1(x))))))

    class DiffusionDecoder(nn.Module):
        """A latent diffusion VAE decoder's shape at 128 channels: GroupNorm(32)-SiLU-conv
        residual blocks around a nearest 2x upsampling."""

        def __init__(self, c: int = 128) -> None:
            super().__init__()
            self.inp = nn.Conv2d(4, c, 3, 1, 1)
            self.r1, self.r2, self.r3 = GroupNormBlock(c), GroupNormBlock(c), GroupNormBlock(c)
            self.out = nn.Sequential(nn.GroupNorm(32, c), nn.SiLU(), nn.Conv2d(c, 3, 3, 1, 1))

        def forward(self, x: Any) -> Any:
            x = F.interpolate(self.r1(self.inp(x)), scale_factor=2.0, mode="nearest")
            return self.out(self.r3(self.r2(x)))

    class ESPCN(nn.Module):
        """Sub-pixel super-resolution by 3 (ESPCN): tanh convolutions, PixelShuffle."""

        def __init__(self, r: int = 3) -> None:
            super().__init__()
            self.body = nn.Sequential(nn.Conv2d(1, 64, 5, 1, 2), nn.Tanh(), nn.Conv2d(64, 32, 3, 1, 1), nn.Tanh(),
                                      nn.Conv2d(32, r * r, 3, 1, 1))  # fmt: skip
            self.shuffle = nn.PixelShuffle(r)

        def forward(self, x: Any) -> Any:
            return torch.sigmoid(self.shuffle(self.body(x)))

    class SpatialTransformer(nn.Module):
        """A localisation network's affine transform (affine_grid), the image resampled by it
        (grid_sample, bilinear), then a small classifier."""

        def __init__(self) -> None:
            super().__init__()
            self.loc = nn.Sequential(nn.Conv2d(3, 8, 7), nn.MaxPool2d(2), nn.ReLU(), nn.Conv2d(8, 10, 5), nn.MaxPool2d(2),
                                     nn.ReLU(), nn.AdaptiveAvgPool2d(4), nn.Flatten(), nn.Linear(160, 32), nn.ReLU(),
                                     nn.Linear(32, 6))  # fmt: skip
            self.head = nn.Sequential(cbr(3, 16), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 10))
            self.register_buffer("identity", torch.tensor([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]))

        def forward(self, x: Any) -> Any:
            theta = self.loc(x).view(-1, 2, 3) * 0.1 + self.identity
            grid = F.affine_grid(theta, list(x.shape), align_corners=False)
            return self.head(F.grid_sample(x, grid, align_corners=False))

    class WaveNetStack(nn.Module):
        """Six dilated (1, 2, ... 32) causal-width convolutions over 1000 steps, each gated as
        WaveNet's tanh(a) * sigmoid(b) of its two halves, with residual adds."""

        def __init__(self, c: int = 64, layers: int = 6) -> None:
            super().__init__()
            self.inp = nn.Conv1d(16, c, 1)
            self.layers = nn.ModuleList(nn.Conv1d(c, 2 * c, 3, dilation=2**k, padding=2**k) for k in range(layers))
            self.out = nn.Conv1d(c, 8, 1)

        def forward(self, x: Any) -> Any:
            x = self.inp(x)
            for conv in self.layers:
                a, b = conv(x).chunk(2, 1)
                x = x + torch.tanh(a) * torch.sigmoid(b)
            return self.out(x)

    def cin(i: int, o: int, k: int, stride: int = 1) -> nn.Module:
        return nn.Sequential(nn.ReflectionPad2d(k // 2), nn.Conv2d(i, o, k, stride), nn.InstanceNorm2d(o, affine=True),
                             nn.ReLU())  # fmt: skip

    class StyleTransfer(nn.Module):
        """Johnson et al.'s fast style transfer at 128 pixels: reflection-padded convolutions
        with instance norms, three residual blocks, nearest upsampling."""

        def __init__(self) -> None:
            super().__init__()
            self.enc = nn.Sequential(cin(3, 32, 9), cin(32, 64, 3, 2), cin(64, 128, 3, 2))
            self.res = nn.ModuleList(nn.Sequential(cin(128, 128, 3), nn.ReflectionPad2d(1), nn.Conv2d(128, 128, 3),
                                                   nn.InstanceNorm2d(128, affine=True)) for _ in range(3))  # fmt: skip
            self.dec = nn.Sequential(nn.Upsample(scale_factor=2), cin(128, 64, 3), nn.Upsample(scale_factor=2),
                                     cin(64, 32, 3), nn.ReflectionPad2d(4), nn.Conv2d(32, 3, 9))  # fmt: skip

        def forward(self, x: Any) -> Any:
            y = self.enc(x)
            for block in self.res:
                y = y + block(y)
            return self.dec(y)

    class DCGANGenerator(nn.Module):
        """DCGAN's generator: a 100-d code through strided ConvTranspose2d + BatchNorm + ReLU
        to a 64 x 64 tanh image."""

        def __init__(self, z: int = 100, g: int = 64) -> None:
            super().__init__()
            layers: list[nn.Module] = []
            for i, o, s, p in ((z, 8 * g, 1, 0), (8 * g, 4 * g, 2, 1), (4 * g, 2 * g, 2, 1), (2 * g, g, 2, 1)):
                layers += [nn.ConvTranspose2d(i, o, 4, s, p, bias=False), nn.BatchNorm2d(o), nn.ReLU()]
            self.net = nn.Sequential(*layers, nn.ConvTranspose2d(g, 3, 4, 2, 1, bias=False), nn.Tanh())

        def forward(self, x: Any) -> Any:
            return self.net(x)

    return {
        "unet_small": UNet, "diffusion_decoder": DiffusionDecoder, "espcn": ESPCN,
        "spatial_transformer": SpatialTransformer, "wavenet_stack": WaveNetStack,
        "style_transfer": StyleTransfer, "dcgan_generator": DCGANGenerator,
    }  # fmt: skip


NETS: dict[str, tuple[str, int, tuple[int, ...], str]] = {
    "unet_small": ("cnn", 128, (), "U-Net of 16 channels, ConvTranspose2d up, skip concatenations, 128 px"),
    "diffusion_decoder": ("signal", 0, (1, 4, 32, 32), "a VAE decoder's GroupNorm(32)-SiLU residual blocks, "
                          "nearest 2x upsampling, 128 channels, 4 x 32 x 32 latents"),
    "espcn": ("signal", 0, (1, 1, 128, 128), "ESPCN super-resolution by 3 (PixelShuffle), 128 px"),
    "spatial_transformer": ("cnn", 64, (), "affine_grid + bilinear grid_sample, a small classifier, 64 px"),
    "wavenet_stack": ("signal", 0, (1, 16, 1000), "six dilated Conv1d gated tanh * sigmoid of two halves, "
                      "residual adds, 1000 steps"),
    "style_transfer": ("cnn", 128, (), "fast style transfer: reflection pads, InstanceNorm2d, residual "
                       "blocks, nearest upsampling, 128 px"),
    "dcgan_generator": ("signal", 0, (1, 100, 1, 1), "DCGAN generator: ConvTranspose2d + BatchNorm, 64 px"),
}  # fmt: skip
"""Each network's zoo kind, image size (``"cnn"``), input shape (``"signal"``) and description."""


def net(name: str) -> Callable[[], Any]:
    """A builder of network ``name`` (its module with the init's random weights)."""
    return lambda: _modules()[name]()
