"""Small networks of families the zoo's exported libraries do not cover, written here in torch
(built with random weights like the others; ``testing.zoo`` lists them in ``EXTRA_MODELS``):
an encoder-decoder with transposed convolutions, a diffusion decoder's GroupNorm blocks, a
sub-pixel super-resolution net, a spatial transformer, a WaveNet-style dilated gated stack, a
style-transfer network with instance norms and reflection padding, a GAN generator, a
Conformer speech encoder, a Conv-TasNet source separator, a YOLO-style detector, PointNet, a
3-D U-Net, an encoder-decoder transformer, EfficientDet's BiFPN and N-BEATS. Each is the textbook form of its family at a
small size; torch is imported when one is built."""

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

    class ConformerBlock(nn.Module):
        """Conformer's block (d 144, 4 heads): half-step feed-forwards with SiLU, self-attention,
        the convolution module (pointwise, GLU, depthwise 31, BatchNorm, SiLU, pointwise)."""

        def __init__(self, d: int = 144, heads: int = 4, k: int = 31) -> None:
            super().__init__()

            def ffn() -> nn.Module:
                return nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.SiLU(), nn.Linear(4 * d, d))

            self.ff1, self.ff2 = ffn(), ffn()
            self.ln_att, self.att = nn.LayerNorm(d), nn.MultiheadAttention(d, heads, batch_first=True)
            self.ln_conv, self.pw1 = nn.LayerNorm(d), nn.Conv1d(d, 2 * d, 1)
            self.dw, self.bn = nn.Conv1d(d, d, k, padding=k // 2, groups=d), nn.BatchNorm1d(d)
            self.pw2, self.ln = nn.Conv1d(d, d, 1), nn.LayerNorm(d)

        def forward(self, x: Any) -> Any:
            x = x + 0.5 * self.ff1(x)
            a = self.ln_att(x)
            x = x + self.att(a, a, a, need_weights=False)[0]
            c = F.glu(self.pw1(self.ln_conv(x).transpose(1, 2)), dim=1)
            x = x + self.pw2(F.silu(self.bn(self.dw(c)))).transpose(1, 2)
            return self.ln(x + 0.5 * self.ff2(x))

    class Conformer(nn.Module):
        """A Conformer encoder: 4x subsampling by two strided convolutions, four blocks."""

        def __init__(self) -> None:
            super().__init__()
            self.sub = nn.Sequential(nn.Conv2d(1, 144, 3, 2), nn.ReLU(), nn.Conv2d(144, 144, 3, 2), nn.ReLU())
            self.proj = nn.Linear(144 * 19, 144)
            self.blocks = nn.Sequential(*[ConformerBlock() for _ in range(4)])

        def forward(self, x: Any) -> Any:
            y = self.sub(x.unsqueeze(1))
            b, c, t, f = y.shape
            return self.blocks(self.proj(y.permute(0, 2, 1, 3).reshape(b, t, c * f)))

    class TasBlock(nn.Module):
        def __init__(self, c: int, h: int, dilation: int) -> None:
            super().__init__()
            self.inp, self.p1, self.n1 = nn.Conv1d(c, h, 1), nn.PReLU(), nn.GroupNorm(1, h)
            self.dw = nn.Conv1d(h, h, 3, padding=dilation, dilation=dilation, groups=h)
            self.p2, self.n2 = nn.PReLU(), nn.GroupNorm(1, h)
            self.res, self.skip = nn.Conv1d(h, c, 1), nn.Conv1d(h, c, 1)

        def forward(self, x: Any) -> Any:
            y = self.n2(self.p2(self.dw(self.n1(self.p1(self.inp(x))))))
            return x + self.res(y), self.skip(y)

    class ConvTasNet(nn.Module):
        """Conv-TasNet's separator at 8,000 samples: a strided Conv1d encoder, eight
        dilated depthwise blocks with PReLU and global layer norm (GroupNorm(1)), sigmoid
        masks for two sources, a ConvTranspose1d decoder."""

        def __init__(self, n: int = 256) -> None:
            super().__init__()
            self.enc, self.ln = nn.Conv1d(1, n, 16, 8, bias=False), nn.GroupNorm(1, n)
            self.bottleneck = nn.Conv1d(n, 256, 1)
            self.blocks = nn.ModuleList(TasBlock(256, 512, 2**i) for i in range(8))
            self.mask = nn.Sequential(nn.PReLU(), nn.Conv1d(256, 2 * n, 1))
            self.dec = nn.ConvTranspose1d(n, 1, 16, 8, bias=False)

        def forward(self, x: Any) -> Any:
            w = F.relu(self.enc(x))
            y, skip = self.bottleneck(self.ln(w)), 0
            for block in self.blocks:
                y, s = block(y)
                skip = skip + s
            m = torch.sigmoid(self.mask(skip)).view(x.shape[0], 2, -1, w.shape[-1])
            return self.dec((w.unsqueeze(1) * m).view(-1, w.shape[1], w.shape[-1]))

    def cbs(i: int, o: int, k: int = 1, stride: int = 1) -> nn.Module:
        return nn.Sequential(nn.Conv2d(i, o, k, stride, k // 2, bias=False), nn.BatchNorm2d(o), nn.SiLU())

    class C3(nn.Module):
        def __init__(self, i: int, o: int, n: int = 1) -> None:
            super().__init__()
            h = o // 2
            self.a, self.b, self.c = cbs(i, h), cbs(i, h), cbs(2 * h, o)
            self.m = nn.Sequential(*[nn.Sequential(cbs(h, h), cbs(h, h, 3)) for _ in range(n)])

        def forward(self, x: Any) -> Any:
            a = self.a(x)
            return self.c(torch.cat([self.m(a) + a, self.b(x)], 1))

    class SPPF(nn.Module):
        def __init__(self, c: int) -> None:
            super().__init__()
            self.a, self.b = cbs(c, c // 2), cbs(c * 2, c)

        def forward(self, x: Any) -> Any:
            x = self.a(x)
            y1 = F.max_pool2d(x, 5, 1, 2)
            y2 = F.max_pool2d(y1, 5, 1, 2)
            return self.b(torch.cat([x, y1, y2, F.max_pool2d(y2, 5, 1, 2)], 1))

    class YoloSmall(nn.Module):
        """A YOLOv5-style detector at 320 px: CSP (C3) stages with SiLU, SPPF, a feature
        pyramid with nearest upsampling and concatenations, two 1x1 heads of 255 channels."""

        def __init__(self) -> None:
            super().__init__()
            self.stem = nn.Sequential(cbs(3, 16, 3, 2), cbs(16, 32, 3, 2), C3(32, 32), cbs(32, 64, 3, 2), C3(64, 64, 2))
            self.p4 = nn.Sequential(cbs(64, 128, 3, 2), C3(128, 128, 3))
            self.p5 = nn.Sequential(cbs(128, 256, 3, 2), C3(256, 256), SPPF(256))
            self.l5, self.c4, self.l4, self.c3 = cbs(256, 128), C3(256, 128), cbs(128, 64), C3(128, 64)
            self.h3, self.h4 = nn.Conv2d(64, 255, 1), nn.Conv2d(128, 255, 1)

        def forward(self, x: Any) -> Any:
            p3 = self.stem(x)
            p4 = self.p4(p3)
            p5 = self.p5(p4)
            u = self.c4(torch.cat([F.interpolate(self.l5(p5), scale_factor=2.0, mode="nearest"), p4], 1))
            v = self.c3(torch.cat([F.interpolate(self.l4(u), scale_factor=2.0, mode="nearest"), p3], 1))
            return torch.cat([self.h3(v).flatten(2), self.h4(u).flatten(2)], 2)

    class PointNet(nn.Module):
        """PointNet's classifier over 1,024 points: a learned 3x3 input transform (bmm),
        shared per-point MLPs as 1x1 Conv1d with BatchNorm, a max over the points."""

        def __init__(self) -> None:
            super().__init__()

            def mlp(*sizes: int) -> list[nn.Module]:
                layers: list[nn.Module] = []
                for i, o in zip(sizes, sizes[1:]):
                    layers += [nn.Conv1d(i, o, 1), nn.BatchNorm1d(o), nn.ReLU()]
                return layers

            self.tnet, self.tfc = nn.Sequential(*mlp(3, 64, 128)), nn.Linear(128, 9)
            self.feat = nn.Sequential(*mlp(3, 64, 128), nn.Conv1d(128, 1024, 1), nn.BatchNorm1d(1024))
            self.head = nn.Sequential(nn.Linear(1024, 256), nn.ReLU(), nn.Linear(256, 40))
            self.register_buffer("eye", torch.eye(3))

        def forward(self, x: Any) -> Any:
            m = self.tfc(self.tnet(x).max(2)[0]).view(-1, 3, 3) + self.eye
            return self.head(self.feat(torch.bmm(m, x)).max(2)[0])

    class UNet3D(nn.Module):
        """A 3-D U-Net level pair over a 32^3 volume: Conv3d + BatchNorm3d + ReLU, max-pool
        3-D, ConvTranspose3d up, the skip concatenation."""

        def __init__(self, c: int = 8) -> None:
            super().__init__()

            def block(i: int, o: int) -> nn.Module:
                return nn.Sequential(nn.Conv3d(i, o, 3, padding=1), nn.BatchNorm3d(o), nn.ReLU())

            self.d1, self.d2, self.up = block(1, c), block(c, 2 * c), nn.ConvTranspose3d(2 * c, c, 2, 2)
            self.c1, self.out = block(2 * c, c), nn.Conv3d(c, 2, 1)

        def forward(self, x: Any) -> Any:
            a = self.d1(x)
            b = self.d2(F.max_pool3d(a, 2))
            return self.out(self.c1(torch.cat([self.up(b), a], 1)))

    class Seq2Seq(nn.Module):
        """``nn.Transformer`` (d 256, 4 heads, 2 + 2 layers) decoding 32 learned queries
        against a 64-step source: cross-attention, as DETR's decoder."""

        def __init__(self, d: int = 256) -> None:
            super().__init__()
            self.t = nn.Transformer(d, 4, 2, 2, 1024, batch_first=True)
            self.queries = nn.Parameter(torch.randn(1, 32, d))

        def forward(self, x: Any) -> Any:
            return self.t(x, self.queries.expand(x.shape[0], -1, -1))

    class BiFPN(nn.Module):
        """EfficientDet's BiFPN at 64 channels over a 256 px image: a strided SiLU stem to three
        levels, fast normalised fusion (ReLU weights over their sum) of a nearest-upsampled
        coarse level and a max-pooled fine one, depthwise-separable convolutions."""

        def __init__(self, c: int = 64) -> None:
            super().__init__()

            def separable() -> nn.Module:
                return nn.Sequential(nn.Conv2d(c, c, 3, 1, 1, groups=c, bias=False), nn.Conv2d(c, c, 1),
                                     nn.BatchNorm2d(c))  # fmt: skip

            self.stem = nn.Sequential(nn.Conv2d(3, c, 3, 2, 1), nn.SiLU())
            self.down1 = nn.Sequential(nn.Conv2d(c, c, 3, 2, 1), nn.SiLU())
            self.down2 = nn.Sequential(nn.Conv2d(c, c, 3, 2, 1), nn.SiLU())
            self.w_td, self.w_out = nn.Parameter(torch.ones(2)), nn.Parameter(torch.ones(3))
            self.td, self.out = separable(), separable()

        def forward(self, x: Any) -> Any:
            p3 = self.stem(x)
            p4 = self.down1(p3)
            p5 = self.down2(p4)
            w = F.relu(self.w_td)
            w = w / (w.sum() + 1e-4)
            td = self.td(F.silu(w[0] * p4 + w[1] * F.interpolate(p5, scale_factor=2.0, mode="nearest")))
            v = F.relu(self.w_out)
            v = v / (v.sum() + 1e-4)
            return self.out(F.silu(v[0] * p4 + v[1] * td + v[2] * F.max_pool2d(p3, 3, 2, 1)))

    class NBeats(nn.Module):
        """N-BEATS (generic) forecasting 24 steps from 96: six blocks of four fully connected
        layers, each block's backcast subtracted from its input, the forecasts summed."""

        def __init__(self, lookback: int = 96, horizon: int = 24, width: int = 256) -> None:
            super().__init__()
            self.lookback = lookback
            self.blocks = nn.ModuleList(
                nn.Sequential(nn.Linear(lookback, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(),
                              nn.Linear(width, width), nn.ReLU(), nn.Linear(width, lookback + horizon))
                for _ in range(6)
            )  # fmt: skip

        def forward(self, x: Any) -> Any:
            forecast = 0
            for block in self.blocks:
                out = block(x)
                x = x - out[:, : self.lookback]
                forecast = forecast + out[:, self.lookback :]
            return forecast

    return {
        "unet_small": UNet, "diffusion_decoder": DiffusionDecoder, "espcn": ESPCN,
        "spatial_transformer": SpatialTransformer, "wavenet_stack": WaveNetStack,
        "style_transfer": StyleTransfer, "dcgan_generator": DCGANGenerator, "conformer": Conformer,
        "convtasnet": ConvTasNet, "yolo_small": YoloSmall, "pointnet": PointNet, "unet3d": UNet3D,
        "transformer_seq2seq": Seq2Seq, "bifpn": BiFPN, "nbeats": NBeats,
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
    "conformer": ("signal", 0, (1, 160, 80), "Conformer encoder, 4 blocks of 144 (GLU, depthwise Conv1d 31, "
                  "MultiheadAttention), 160 frames of 80 mel bins"),
    "convtasnet": ("signal", 0, (1, 1, 8000), "Conv-TasNet separator: PReLU, GroupNorm(1), dilated depthwise "
                   "Conv1d, sigmoid masks, ConvTranspose1d, 8,000 samples"),
    "yolo_small": ("cnn", 320, (), "YOLOv5-style CSP + SPPF + feature pyramid with SiLU, 320 px"),
    "pointnet": ("signal", 0, (1, 3, 1024), "PointNet classifier: 3x3 input transform (bmm), 1x1 Conv1d MLPs, "
                 "max over 1,024 points"),
    "unet3d": ("signal", 0, (1, 1, 32, 32, 32), "3-D U-Net levels: Conv3d, max_pool3d, ConvTranspose3d, 32^3"),
    "transformer_seq2seq": ("signal", 0, (1, 64, 256), "nn.Transformer 2+2 layers of 256, 32 learned queries "
                            "(cross-attention)"),
    "bifpn": ("cnn", 256, (), "EfficientDet's BiFPN fusion at 64 channels (normalised weights, nearest "
              "upsampling, max-pool, depthwise-separable convolutions), 256 px"),
    "nbeats": ("signal", 0, (8, 96), "N-BEATS generic: six blocks of four Linear layers, backcasts subtracted, "
               "forecasts summed, 96 -> 24 steps, batch 8"),
}  # fmt: skip
"""Each network's zoo kind, image size (``"cnn"``), input shape (``"signal"``) and description."""


def net(name: str) -> Callable[[], Any]:
    """A builder of network ``name`` (its module with the init's random weights)."""
    return lambda: _modules()[name]()
