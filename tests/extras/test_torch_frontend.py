"""The torch.export importer against torch's eager mode.

Each case exports a small module (or a torchvision network with random weights), imports it
with ``from_exported_program`` and runs the module in the reference interpreter. Tolerance:
float32, rtol = 1e-4 and atol = 1e-4 x max|eager|. Outputs must be finite and depend on the
input (a second input gives a different output), so a converter that drops its input fails.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="the 'frontends' extra is not installed (pip install -e '.[frontends]')"
)
torchvision = pytest.importorskip("torchvision", reason="the 'frontends' extra is not installed")

from torch import nn  # noqa: E402

from xrelay.frontends.torch import (  # noqa: E402
    TorchImportError,
    from_exported_program,
    from_pytorch,
    import_exported_program,
)
from xrelay.runtime.interpreter import run  # noqa: E402

from .conftest import assert_one_line_error, relay_import  # noqa: E402


def _ops(module) -> list[str]:
    return [op.name for op in next(iter(module.ops)).body.block.ops]


def _check(m: nn.Module, *inputs: torch.Tensor, freeze_params: bool = False):
    """Export ``m`` on ``inputs``, import, run; compare every output with eager mode."""
    m = m.eval()
    with torch.no_grad():
        want = m(*inputs)
    ep = torch.export.export(m, tuple(inputs))
    result = import_exported_program(ep, freeze_params=freeze_params)
    feeds = dict(zip(result.input_names, (x.numpy() for x in inputs)))
    got = run(result.module, feeds, result.params)
    want = [w.numpy() for w in (want if isinstance(want, tuple | list) else [want])]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
        assert np.isfinite(g).all()
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4 * max(float(np.abs(w).max()), 1e-30))
    # the output depends on the input
    if inputs and inputs[0].dtype.is_floating_point:
        other = [x + 0.5 if i == 0 else x for i, x in enumerate(inputs)]
        other_feeds = dict(zip(result.input_names, (x.numpy() for x in other)))
        got2 = run(result.module, other_feeds, result.params)
        assert any(not np.array_equal(a, b) for a, b in zip(got, got2)), "output ignores the input"
    return result


def _randomize_bn(m: nn.Module, seed: int = 0) -> nn.Module:
    """Random batch-norm statistics and affine parameters (fresh ones are the identity, and
    fresh torchvision networks shrink activations to ~1e-9: nothing would be compared)."""
    g = torch.Generator().manual_seed(seed)
    for mod in m.modules():
        if isinstance(mod, nn.BatchNorm2d):
            c = mod.num_features
            with torch.no_grad():
                mod.weight.copy_(1 + 0.2 * torch.randn(c, generator=g))
                mod.bias.copy_(0.2 * torch.randn(c, generator=g))
                mod.running_mean.copy_(0.2 * torch.randn(c, generator=g))
                mod.running_var.copy_(0.5 + torch.rand(c, generator=g))
    return m.eval()


def _x(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


# ---- single ops ----------------------------------------------------------------------------


class _Lambda(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *xs):
        return self.fn(*xs)


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: torch.relu(x) + torch.sigmoid(x) * torch.tanh(x),
        lambda x: torch.nn.functional.gelu(x) + 2 * torch.nn.functional.gelu(x, approximate="tanh"),
        lambda x: torch.nn.functional.silu(x) * torch.nn.functional.hardswish(x),
        lambda x: torch.nn.functional.hardsigmoid(x) + torch.nn.functional.relu6(x * 4),
        lambda x: torch.clamp(x, -0.5, 0.25) + torch.nn.functional.leaky_relu(x, 0.1),
        lambda x: torch.exp(x).log() + torch.abs(x).sqrt() + torch.rsqrt(x.abs() + 1) - x.neg(),
        lambda x: torch.erf(x) + torch.floor(x * 3) + torch.ceil(x * 3) + torch.round(x * 3),
        lambda x: x.pow(2) + x.pow(3) + 2 ** x + 1 / (x.abs() + 1),
        lambda x: torch.where(x > 0, x, x * 0.1) + (x >= 0.5).float() - (x != x[0:1]).float(),
        lambda x: torch.maximum(x, x.flip(-1)) + torch.minimum(x, torch.zeros_like(x)),
        lambda x: torch.div(x * 7, 2, rounding_mode="floor") + torch.div(x * 7, 2, rounding_mode="trunc"),
    ],
)
def test_elementwise(fn):
    _check(_Lambda(fn), _x(2, 3, 4, 5))


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: x.mean(dim=(1, 2)) + x.sum(-2).amax(1) - x.amin(dim=1).sum(1),
        lambda x: x.var(dim=-1, unbiased=True) + x.var(dim=-1, unbiased=False),
        lambda x: torch.softmax(x, -1) + torch.log_softmax(x, 1),
        lambda x: x.max(dim=2).values + x.argmax(dim=2).float() + x.cumsum(1).sum(2),
        lambda x: x.view(2, -1).t() @ x.reshape(2, 60),
        lambda x: x.permute(0, 2, 1, 3).reshape(6, 4, 5)[:, 1:3, ::2],
        lambda x: x[:, 1] + x[..., -1:].expand(2, 3, 4, 5)[:, 2],
        lambda x: torch.cat([x, x * 2], dim=1).unsqueeze(0).squeeze(0),
        lambda x: torch.stack([x, -x], dim=-1).flatten(-2),
        lambda x: sum(torch.split(x, [1, 2], dim=1)[i].sum(1) for i in range(2)) + torch.chunk(x, 2, -1)[0].sum(-1, keepdim=True).sum(1),
        lambda x: torch.nn.functional.pad(x, (1, 2, 0, 1), value=0.5),
        lambda x: x + torch.arange(5, dtype=torch.float32) + torch.full((4, 5), 0.25),
        lambda x: x.to(torch.float16).to(torch.float32) + x.int().float(),
        lambda x: x[:, torch.tensor([2, 0, 1])],
        lambda x: torch.index_select(x, 3, torch.tensor([4, 0, 4])) + torch.as_strided(x, (2, 3, 4, 3), (60, 20, 5, 2)),
    ],
)
def test_shapes_and_reductions(fn):
    _check(_Lambda(fn), _x(2, 3, 4, 5))


# aten.index.Tensor with several index tensors (NumPy's advanced indexing, as torch defines
# it): adjacent indexed dims keep their place, separated ones go first; indices broadcast;
# negative indices count from the end
@pytest.mark.parametrize(
    "fn",
    [
        lambda x, i, j: x[i, j],
        lambda x, i, j: x[:, i, j],
        lambda x, i, j: x[:, :, i, j],
        lambda x, i, j: x[i, :, j],
        lambda x, i, j: x[:, i, :, j],
        lambda x, i, j: x[i[:, None], :, :, j[None, :]],
        lambda x, i, j: x[i, j, i, j],
        lambda x, i, j: x[-1 - i, :, j - 3],
    ],
)
def test_index_with_several_tensors(fn):
    i, j = torch.tensor([1, 0, 1, 1]), torch.tensor([2, 0, 1, 2])
    _check(_Lambda(fn), _x(2, 3, 4, 5), i, j)
    _check(_Lambda(fn), _x(2, 3, 4, 5), torch.tensor([0, 1, 0, 0]), torch.tensor([2, 2, 0, 1]))


@pytest.mark.parametrize(
    "dim, index",
    [
        (0, [[[1, 0, 1]], [[0, 0, 1]]]),
        (1, [[[2, 0, 1, 2, 1]], [[0, 1, 1, 0, 2]]]),
        (-1, [[[4, 0], [3, 3], [1, 2]], [[0, 1], [2, 2], [4, 4]]]),
        (2, [[[3, 0, 0]], [[3, 2, 1]]]),
    ],
)
def test_gather(dim, index):
    # torch.gather: out[i][j][k] = x[i][index[i][j][k]][k] for dim 1; the index may be smaller
    # than x in the other dims
    idx = torch.tensor(index)
    _check(_Lambda(lambda x, k: torch.gather(x, dim, k)), _x(2, 3, 5), idx)
    _check(_Lambda(lambda x: torch.gather(x, dim, idx) * 2), _x(2, 3, 5))


@pytest.mark.parametrize(
    "layer, shape",
    [
        (nn.Conv2d(3, 8, 3, stride=2, padding=1, bias=False), (1, 3, 9, 9)),
        (nn.Conv2d(8, 8, 3, padding=2, dilation=2, groups=8), (1, 8, 7, 7)),
        (nn.Conv2d(4, 6, (1, 3), groups=2), (2, 4, 5, 5)),
        (nn.Conv1d(3, 5, 3, padding=1), (2, 3, 10)),
        (nn.ConvTranspose2d(4, 3, 3, stride=2, padding=1, output_padding=1), (1, 4, 5, 5)),
        (nn.MaxPool2d(3, 2, 1), (1, 2, 8, 8)),
        (nn.MaxPool2d(3, 2, ceil_mode=True), (1, 2, 8, 8)),
        (nn.AvgPool2d(3, 2, 1, count_include_pad=False), (1, 2, 8, 8)),
        (nn.AvgPool2d(2, ceil_mode=True), (1, 2, 7, 7)),
        (nn.AdaptiveAvgPool2d(1), (2, 3, 5, 5)),
        (nn.AdaptiveAvgPool2d((2, 3)), (1, 3, 6, 6)),
        (nn.BatchNorm2d(3), (2, 3, 4, 4)),
        (nn.LayerNorm(6), (2, 4, 6)),
        (nn.LayerNorm((4, 6)), (2, 4, 6)),
        (nn.GroupNorm(2, 4), (2, 4, 3, 3)),
        (nn.Linear(6, 5), (2, 4, 6)),
        (nn.Linear(6, 5, bias=False), (3, 6)),
        (nn.Upsample(scale_factor=2, mode="nearest"), (1, 2, 3, 4)),
        (nn.Upsample(scale_factor=2, mode="bilinear"), (1, 2, 3, 4)),
        (nn.Upsample(size=(5, 7), mode="bilinear", align_corners=True), (1, 2, 3, 4)),
    ],
)
def test_layers(layer, shape):
    _check(_randomize_bn(layer), _x(*shape))


def test_attention_and_embedding():
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(50, 32)
            self.layer = nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True)

        def forward(self, ids, x):
            return self.layer(self.emb(ids) + x)

    ids = torch.randint(0, 50, (2, 7), generator=torch.Generator().manual_seed(1))
    x = _x(2, 7, 32)
    m = Block().eval()
    with torch.no_grad():
        want = m(ids, x).numpy()
    result = import_exported_program(torch.export.export(m, (ids, x)))
    got = run(result.module, dict(zip(result.input_names, (ids.numpy(), x.numpy()))), result.params)[0]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))
    ops = _ops(result.module)
    assert "relay.take" in ops and "relay.nn.softmax" in ops and ops.count("relay.nn.layer_norm") == 2


def test_causal_sdpa():
    class Attn(nn.Module):
        def forward(self, q, k, v):
            return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)

    _check(Attn(), _x(1, 2, 5, 8), _x(1, 2, 5, 8, seed=1), _x(1, 2, 5, 8, seed=2))


def _count(module, name: str) -> int:
    return sum(1 for op in module.walk() if op.name == name)


def test_safe_softmax_rows_all_minus_inf():
    """torch's attention softmax (``aten._safe_softmax``) imports as ``nn.softmax`` and a
    guard: a row that is all -inf gives zeros as in torch, alone and in MultiheadAttention
    with a mask given at run time, and ``drop-softmax-guard`` keeps that guard."""
    from xrelay.dialects import make_context
    from xrelay.transforms.drop_softmax_guard import DropSoftmaxGuardPass

    class Safe(nn.Module):
        def forward(self, x, mask):
            return torch.ops.aten._safe_softmax(x + mask, -1)

    class Masked(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = nn.LayerNorm(16)
            self.attn = nn.MultiheadAttention(16, 2, batch_first=True)

        def forward(self, x, mask):
            y = self.norm(x)
            return self.attn(y, y, y, attn_mask=mask, need_weights=False)[0]

    mask = torch.zeros(2, 3, 5)
    mask[0, 1] = -torch.inf
    mask[1, 2, :3] = -torch.inf
    want = torch.ops.aten._safe_softmax(_x(2, 3, 5) + mask, -1)
    assert not want[0, 1].any() and torch.isfinite(want).all()
    result = _check(Safe(), _x(2, 3, 5), mask)
    assert _count(result.module, "relay.nn.softmax") == _count(result.module, "relay.where") == 1
    # the guard as any(x != -inf): not torch's decomposition (two logical_not, an equal)
    assert _count(result.module, "relay.not_equal") == 1 and _count(result.module, "relay.logical_not") == 0
    square = torch.zeros(7, 7)
    square[3] = -torch.inf
    square[5, 1:] = -torch.inf
    x = _x(2, 7, 16)
    result = _check(Masked(), x, square)
    feeds = dict(zip(result.input_names, (x.numpy(), square.numpy())))
    before = run(result.module, feeds, result.params)[0]
    DropSoftmaxGuardPass().apply(make_context(), result.module)
    assert _count(result.module, "relay.where") == 1
    np.testing.assert_array_equal(run(result.module, feeds, result.params)[0], before)


def test_safe_softmax_guard_dropped_without_mask():
    """An unmasked attention after a layer norm (a pre-norm encoder layer, as ViT's): no row
    can be all -inf, so the build drops the guard (``drop-softmax-guard``); the values stay
    torch's. (A post-norm layer attends over its raw input, which may hold -inf: kept.)"""
    import xrelay
    from xrelay.dialects import make_context
    from xrelay.transforms.drop_softmax_guard import DropSoftmaxGuardPass
    from xrelay.transforms.infra import PassContext

    layer = nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True, norm_first=True).eval()
    x = _x(2, 7, 32)
    with torch.no_grad():
        want = layer(x).numpy()
    result = import_exported_program(torch.export.export(layer, (x,)), freeze_params=True)
    assert _count(result.module, "relay.where") == 1
    DropSoftmaxGuardPass().apply(make_context(), result.module)
    assert _count(result.module, "relay.where") == 0 and _count(result.module, "relay.max") == 0
    got = run(result.module, [x.numpy()], result.params)[0]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))
    # the build drops it before simplify-inference writes the layer norm as arithmetic: two
    # native steps fewer (the row reduction, the select)
    ep = torch.export.export(layer, (x,))
    with PassContext(opt_level=3, disabled_pass=["drop-softmax-guard"]):
        guarded = xrelay.build(*from_exported_program(ep), threads=1).executor.step_backends
    m = xrelay.build(*from_exported_program(ep), threads=1)
    steps = m.executor.step_backends
    assert len(steps) == len(guarded) - 2 and steps.count("native") == guarded.count("native") - 2
    m.set_input(0, x.numpy())
    m.run()
    built = m.get_output(0).numpy()
    assert np.isfinite(built).all() and np.ptp(built) > 0
    np.testing.assert_allclose(built, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))


# ---- in-place and views --------------------------------------------------------------------


def test_inplace_ops_follow_torch():
    class InPlace(nn.Module):
        def forward(self, x):
            y = x.clone()
            y.add_(1.0)
            v = y[:, 1:]  # a view of y: the in-place update below shows through it
            v.mul_(2.0)
            y[:, 0].sub_(3.0)  # select_scatter
            y.relu_()  # v sees this too: it is summed after
            return y, v.sum(1)

    _check(InPlace(), _x(3, 4))


def test_buffer_mutation_is_named_not_returned():
    class Counter(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("calls", torch.zeros(1))

        def forward(self, x):
            self.calls.add_(1)
            return x * self.calls

    result = import_exported_program(torch.export.export(Counter(), (_x(2, 3),)))
    assert result.mutations == {"calls": "buffer_mutation"}
    got = run(result.module, {result.input_names[0]: _x(2, 3).numpy()}, result.params)
    assert len(got) == 1
    np.testing.assert_allclose(got[0], _x(2, 3).numpy() * 1.0, rtol=1e-6)


# ---- weights, names, the Relay API ---------------------------------------------------------


def test_weights_become_params_by_name():
    m = _randomize_bn(nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU()))
    mod, params = from_exported_program(torch.export.export(m.eval(), (_x(1, 3, 6, 6),)))
    # names are sanitised for MLIR as everywhere (a leading digit gets a '_')
    assert set(params) == {"_0.weight", "_0.bias", "_1.weight", "_1.bias", "_1.running_mean", "_1.running_var"}
    np.testing.assert_array_equal(params["_1.running_var"], m[1].running_var.numpy())
    ops = _ops(mod.module)
    assert ops == ["relay.nn.conv2d", "relay.nn.bias_add", "relay.nn.batch_norm", "relay.nn.relu", "func.return"]


def test_freeze_params():
    m = nn.Sequential(nn.Linear(4, 3), nn.ReLU())
    result = _check(m, _x(2, 4), freeze_params=True)
    assert result.params == {}
    assert _ops(result.module).count("relay.constant") == 2
    assert "relay.nn.dense" in _ops(result.module)


def test_from_pytorch_torchscript():
    m = _randomize_bn(torchvision.models.resnet18(weights=None, num_classes=10))
    scripted = torch.jit.script(m)
    mod, params = from_pytorch(scripted, [("input0", (1, 3, 32, 32))])
    x = _x(1, 3, 32, 32)
    got = run(mod, {"input0": x.numpy()}, params)[0]
    with torch.no_grad():
        want = m(x).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))
    assert "conv1.weight" in params and "fc.bias" in params


def test_from_pytorch_bad_input_infos():
    with pytest.raises(TorchImportError, match="input_infos entries"):
        from_pytorch(nn.ReLU(), ["x"])
    with pytest.raises(TorchImportError, match="negative dimension"):
        from_pytorch(nn.ReLU(), [("x", (1, -2))])


# ---- core ATen ops composed from relay ops ---------------------------------------------------

F = torch.nn.functional


def _unit(x):
    """Values in (-1, 1), some of them tiny (where log1p and expm1 differ from the naive forms)."""
    return torch.tanh(x) * torch.tensor([1.0, 1e-3, 1e-6, 0.5, 1e-7])


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: torch.log1p(_unit(x)) / _unit(x) + torch.expm1(_unit(x)) / _unit(x),  # both ~1 near 0
        lambda x: torch.expm1(x * 3) + torch.log1p(x.abs() * 100),
        lambda x: torch.log2(x.abs() + 0.1) + torch.log10(x.abs() + 0.1),
        lambda x: torch.asinh(x * 4) + torch.asinh(_unit(x)) / _unit(x) + torch.acosh(x.abs() + 1.0001),
        lambda x: torch.atanh(_unit(x) * 0.99) / _unit(x) + torch.asin(torch.tanh(x)) + torch.acos(torch.tanh(x)),
        lambda x: torch.sinh(x * 2) + torch.sinh(_unit(x)) / _unit(x) + torch.cosh(x * 2),
        lambda x: torch.atan(x * 3) + torch.tan(torch.tanh(x)),
        lambda x: torch.atan2(x, x.flip(-1)) + torch.atan2(x, torch.zeros_like(x)) + torch.atan2(x * 0, -x.abs() - 1),
        lambda x: torch.atan2(x * 0, x * 0) + torch.atan2(x * 0, -(x * 0)) + torch.atan2(x, -torch.zeros_like(x)) + x,
        lambda x: torch.where(torch.isnan(x.log()), 1.0, 0.0) + torch.isinf(1 / (x > 0.5).float()).float() + x,
        lambda x: F.elu(x) + F.selu(x) + F.celu(x, 0.5) + F.elu(x, alpha=2.0),
        lambda x: F.mish(x) + F.softplus(x) + F.softplus(x, beta=2.0, threshold=5.0),
    ],
)
def test_composed_elementwise(fn):
    _check(_Lambda(fn), _x(2, 3, 4, 5))


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: x.repeat(2, 1, 1, 3) + 0,
        lambda x: x.repeat(2, 1, 1, 1, 1).sum(0),
        lambda x: torch.diagonal(x, 0, 2, 3)[..., :3] + torch.diagonal(x, 1, -1, -2) + torch.diagonal(x, -1, 1, 2).sum(),
        lambda x: F.pad(x, (2, 1, 1, 2), mode="reflect") + 0,
        lambda x: F.pad(x, (2, 1, 1, 3), mode="replicate") + F.pad(x[0], (1, 2), mode="reflect").sum(),
        lambda x: F.avg_pool3d(x.unsqueeze(0), 2, 1) + F.max_pool3d(x.unsqueeze(0), 2, 1) + F.adaptive_avg_pool3d(x.unsqueeze(0), (1, 2, 2)).mean(),
        lambda x: torch.topk(x, 3, dim=-1).values + torch.topk(x, 2, dim=1, largest=False).indices.sum(1, keepdim=True)[..., :3],
        lambda x: torch.sort(x, dim=2).values + torch.sort(x, dim=-1, descending=True).indices.float()[:, :, :4],
        lambda x: x.var(dim=1) + x.prod() + x.gt(0).any().float(),
        lambda x: (torch.logical_xor(x > 0, x > 0.5) ^ (x < -1)).float() + x,
    ],
)
def test_more_shapes_and_reductions(fn):
    _check(_Lambda(fn), _x(2, 3, 4, 5))


def test_scatters_and_index_put():
    idx = torch.tensor([[0, 2, 1, 0, 2], [1, 1, 0, 2, 0]])

    def fn(x, y):
        a = torch.zeros(3, 5).scatter(0, idx, x)
        b = x.scatter(0, idx, 2.5) + x.scatter_add(0, idx, y)
        c = x.scatter_reduce(0, idx, y, "amax") + x.scatter_reduce(0, idx, y, "sum")
        d = x.clone()
        d[torch.tensor([0, 1]), torch.tensor([4, 0])] = y[0, :2]
        e = x.index_put((torch.tensor([1, 1]),), y[:1].expand(2, 5), accumulate=True)
        return a.sum(0) + b.sum(0) + c.sum(0) + d.sum(0) + e.sum(0)

    _check(_Lambda(fn), _x(3, 5), _x(3, 5, seed=1))


@pytest.mark.parametrize(
    "mode, padding, corners", [("bilinear", "zeros", False), ("nearest", "border", True), ("bilinear", "reflection", True)]
)
def test_grid_sample(mode, padding, corners):
    grid = torch.tanh(_x(1, 4, 6, 2, seed=2)) * 1.1
    fn = _Lambda(lambda x: F.grid_sample(x, grid, mode=mode, padding_mode=padding, align_corners=corners))
    _check(fn, _x(1, 2, 5, 7))


def test_log1p_keeps_the_small_values():
    """log1p(1e-7) is 1e-7 (log(1 + 1e-7) is 1.19e-7 in float32) and expm1 likewise."""
    x = torch.tensor([1e-7, -3e-8, 2e-10, 0.0])
    both = _Lambda(lambda x: torch.stack([torch.log1p(x), torch.expm1(x)]))
    result = import_exported_program(torch.export.export(both, (x,)))
    (got,) = run(result.module, {result.input_names[0]: x.numpy()}, result.params)
    np.testing.assert_allclose(got, torch.stack([torch.log1p(x), torch.expm1(x)]).numpy(), rtol=1e-6, atol=0)


# ---- refusals ------------------------------------------------------------------------------


def test_unsupported_op_named_with_source_location():
    class Sorts(nn.Module):
        def forward(self, x):
            y = torch.cdist(x, x)  # the line the error must point at
            return torch.cumprod(y, 1)

    ep = torch.export.export(Sorts(), (_x(2, 5),))
    with pytest.raises(TorchImportError) as e:
        from_exported_program(ep)
    msg = str(e.value)
    assert "2 node(s) use unsupported ATen operators" in msg
    assert "aten._cdist_forward.default" in msg and "aten.cumprod.default" in msg
    assert "test_torch_frontend.py:" in msg and "torch.cdist(x, x)" in msg


def test_dynamic_shapes_refused():
    batch = torch.export.Dim("batch")
    ep = torch.export.export(nn.ReLU(), (_x(2, 3),), dynamic_shapes=({0: batch},))
    with pytest.raises(TorchImportError, match="dynamic dimension"):
        from_exported_program(ep)


def test_not_a_program():
    with pytest.raises(TorchImportError, match="expected a torch.export.ExportedProgram"):
        from_exported_program(nn.ReLU())


# ---- networks ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["resnet18", "mobilenet_v2", "mobilenet_v3_small", "squeezenet1_1", "efficientnet_b0"])
def test_torchvision_networks(name):
    torch.manual_seed(0)
    m = _randomize_bn(getattr(torchvision.models, name)(weights=None, num_classes=16))
    _check(m, _x(1, 3, 64, 64))


# ---- relay-import model.pt2 ----------------------------------------------------------------


def test_relay_import_pt2(tmp_path):
    m = _randomize_bn(nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(), nn.Linear(64, 2)))
    path = tmp_path / "model.pt2"
    torch.export.save(torch.export.export(m.eval(), (_x(1, 3, 6, 6),)), path)
    out, npz = tmp_path / "m.mlir", tmp_path / "p.npz"
    r = relay_import(str(path), "-o", str(out), "--params", str(npz))
    assert r.returncode == 0, r.stderr
    text = out.read_text()
    assert "relay.nn.conv2d" in text and "relay.nn.dense" in text and "%input" in text
    params = dict(np.load(npz))
    assert set(params) >= {"_0.weight", "_4.weight"}
    from xrelay.relay import IRModule

    got = run(IRModule.from_text(text).module, {"input": _x(1, 3, 6, 6).numpy()}, params)[0]
    with torch.no_grad():
        want = m(_x(1, 3, 6, 6)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("content", [b"", b"PK\x03\x04 not really a zip", b"\x00" * 64])
def test_relay_import_bad_pt2(tmp_path, content):
    path = tmp_path / "bad.pt2"
    path.write_bytes(content)
    assert_one_line_error(relay_import(str(path)), "relay-import: error: cannot read")


def test_data_dependent_and_random_ops_refused_with_the_reason():
    class Picks(nn.Module):
        def forward(self, x):
            return torch.nonzero(x > 0).sum() + torch.rand(3).sum() + x.sum()

    ep = torch.export.export(Picks(), (_x(2, 5),))
    with pytest.raises(TorchImportError) as e:
        from_exported_program(ep)
    msg = str(e.value)
    assert "aten.nonzero.default [its result's shape or value depends on the data" in msg
    assert "aten.rand.default [random values" in msg
