"""Winograd F(2x2, 3x3) and F(4x4, 3x3) convolutions in the arena executor: accuracy, bits, switch, fallbacks."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.parser import Parser

from xrelay.backend.build import build_program
from xrelay.dialects import make_context
from xrelay.kernels.winograd import WINOGRAD_AT, WINOGRAD_BT
from xrelay.kernels.winograd import WINOGRAD_G as _WINO_G
from xrelay.runtime.executor import Executor, run_memory_compiled
from xrelay.runtime.interpreter import run
from xrelay.runtime.native.fast_kernels import (
    bind_kernel,
    wino_matrices,
    winograd_enabled,
)
from xrelay.runtime.native.workspace import winograd_scratch_bytes, winograd_slice_bytes
from xrelay.runtime.parallel import WorkerPool


def _module(c: int, o: int, h: int, w: int, pad: tuple[int, int, int, int], n: int = 1):
    """conv(x, w) + b + x2, relu: the epilogue a ResNet block fuses into its convolution."""
    oh, ow = h + pad[0] + pad[2] - 2, w + pad[1] + pad[3] - 2
    x_t, w_t = f"tensor<{n}x{c}x{h}x{w}xf32>", f"tensor<{o}x{c}x3x3xf32>"
    y_t, b_t = f"tensor<{n}x{o}x{oh}x{ow}xf32>", f"tensor<{o}x1x1xf32>"
    text = f"""
func.func @main(%x: {x_t}, %r: {y_t}, %w: {w_t}, %b: {b_t}) -> {y_t} {{
  %y = relay.nn.conv2d %x, %w {{padding = [{", ".join(map(str, pad))}]}} : ({x_t}, {w_t}) -> {y_t}
  %z = relay.add %y, %b : ({y_t}, {b_t}) -> {y_t}
  %s = relay.add %z, %r : ({y_t}, {y_t}) -> {y_t}
  %a = relay.nn.relu %s : ({y_t}) -> {y_t}
  func.return %a : {y_t}
}}
"""
    return Parser(make_context(), text).parse_module(), (oh, ow)


def _case(c, o, h, w, pad, seed=0, n=1):
    mod, (oh, ow) = _module(c, o, h, w, pad, n)
    rng = np.random.default_rng(seed)
    params = {
        "w": (rng.standard_normal((o, c, 3, 3)) / np.sqrt(9 * c)).astype("float32"),
        "b": rng.standard_normal((o, 1, 1)).astype("float32"),
    }
    inputs = {
        "x": rng.standard_normal((n, c, h, w)).astype("float32"),
        "r": rng.standard_normal((n, o, oh, ow)).astype("float32"),
    }
    return mod, params, inputs


def _outputs(ex: Executor, inputs) -> np.ndarray:
    for name, buf in zip(ex.input_names, ex.input_buffers):
        np.copyto(buf, inputs[name])
    ex.run()
    return ex.outputs[0].copy()


def _winograd_convs(ex: Executor) -> int:
    return sum(len(c.winograd) for _, _, c in ex.steps)


SHAPES = [
    (16, 24, 9, 7, (1, 1, 1, 1)),  # odd sizes: the last 2x2 blocks are cut
    (16, 40, 12, 12, (0, 0, 0, 0)),  # no padding, more outputs than inputs
    (24, 17, 11, 14, (2, 1, 0, 2)),  # asymmetric padding, wider than 1
    (64, 64, 40, 40, (1, 1, 1, 1)),  # F(4x4, 3x3)
    (16, 32, 30, 29, (1, 1, 1, 1)),  # F(4x4, 3x3), the last 4x4 blocks cut
    (32, 32, 36, 36, (1, 1, 1, 1)),  # F(2x2, 3x3) forced below: cut by tile rows
    (16, 16, 64, 64, (1, 1, 1, 1)),  # F(4x4, 3x3) cut by tile rows
    (96, 64, 14, 14, (1, 1, 1, 1)),  # cut by output channels
]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_winograd_matches_the_reference_and_is_bitwise_stable(shape, monkeypatch):
    mod, params, inputs = _case(*shape)
    program, _ = build_program(mod, params)
    if shape[2] == 36:
        monkeypatch.setenv("XRELAY_WINOGRAD_TILE", "2")
    one = Executor(program, threads=1)
    assert winograd_enabled() and _winograd_convs(one) == 1
    (u,) = [u for _, _, c in one.steps for u in c.winograd]
    # F(4x4, 3x3) (36 products) from 28x28 outputs on, else F(2x2, 3x3) (16 products).
    assert u.shape == ((36 if min(shape[2:4]) >= 28 and shape[2] != 36 else 16),) + shape[1::-1]
    got = _outputs(one, inputs)
    (ref,) = run(mod, inputs, params)
    # float32 rounding of the transforms only: well inside the documented tolerance.
    scale = float(np.abs(ref).max())
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5 * scale)
    # Same bits: again, on two and three threads, and in the memory interpreter.
    assert np.array_equal(_outputs(one, inputs), got)
    for threads in (2, 3):
        ex = Executor(program, threads=WorkerPool(threads, adaptive=False))
        assert np.array_equal(_outputs(ex, inputs), got)
    assert np.array_equal(run_memory_compiled(program, inputs, threads=2)[0], got)


@pytest.mark.parametrize("shape", [SHAPES[0], SHAPES[3]], ids=str)
def test_winograd_batch_of_images(shape):
    """Every image of a batch goes through the same scratch, one after the other."""
    mod, params, inputs = _case(*shape, seed=3, n=3)
    program, _ = build_program(mod, params)
    ex = Executor(program, threads=WorkerPool(2, adaptive=False))
    assert _winograd_convs(ex) == 1
    got = _outputs(ex, inputs)
    (ref,) = run(mod, inputs, params)
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5 * float(np.abs(ref).max()))
    assert np.array_equal(run_memory_compiled(program, inputs, threads=1)[0], got)


def test_winograd_switch(monkeypatch):
    mod, params, inputs = _case(*SHAPES[0])
    program, _ = build_program(mod, params)
    on = _outputs(Executor(program, threads=1), inputs)
    monkeypatch.setenv("XRELAY_WINOGRAD", "0")
    assert not winograd_enabled()
    ex = Executor(program, threads=1)
    assert _winograd_convs(ex) == 0
    off = _outputs(ex, inputs)
    # Direct convolution (im2col) gives the reference kernels' bits; Winograd rounds apart.
    (ref,) = run(mod, inputs, params)
    np.testing.assert_allclose(off, ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(on, off, rtol=1e-4, atol=1e-4)
    # The reference-kernel path (use_c_kernels=False) never uses Winograd.
    monkeypatch.setenv("XRELAY_WINOGRAD", "1")
    assert _winograd_convs(Executor(program, threads=1, use_c_kernels=False)) == 0


def test_runtime_weights_are_not_pretransformed():
    """Weights that are an input (not a constant) are read at run time: im2col path."""
    mod, params, inputs = _case(*SHAPES[0])
    program, _ = build_program(mod, {"b": params["b"]})
    ex = Executor(program, threads=1)
    assert _winograd_convs(ex) == 0
    got = _outputs(ex, {**inputs, "w": params["w"]})
    (ref,) = run(mod, inputs, params)
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)


def test_small_convolutions_keep_im2col():
    # 3x3 blocks (< 16), 8 input channels (< 16): im2col
    for shape in [(16, 16, 6, 6, (1, 1, 1, 1)), (8, 32, 16, 16, (1, 1, 1, 1))]:
        mod, params, _ = _case(*shape)
        assert _winograd_convs(Executor(build_program(mod, params)[0], threads=1)) == 0


_BT, _AT = WINOGRAD_BT, WINOGRAD_AT


def _input_by_definition(x, tile, th, tw, pt, pl):
    """``v[k, c, t] = (B^T d B)[k]`` of every tile's patch ``d`` (zero outside), in float64."""
    c, h, wd = x.shape
    a = tile + 2
    bt = np.array(_BT[tile], np.float64)
    padded = np.zeros((c, pt + tile * th + a, pl + tile * tw + a))
    padded[:, pt : pt + h, pl : pl + wd] = x
    v = np.empty((a * a, c, th * tw))
    for ty in range(th):
        for tx in range(tw):
            d = padded[:, tile * ty : tile * ty + a, tile * tx : tile * tx + a]
            v[:, :, ty * tw + tx] = np.einsum("ik,ckl,jl->ijc", bt, d, bt).reshape(a * a, c)
    return v


def _output_by_definition(m, tile, tw, oh, ow):
    """``out[o]``'s ``tile x tile`` blocks ``A^T M A`` (``M[i, j] = m[i * a + j]``), cut at the
    image's edge, in float64."""
    a = tile + 2
    at = np.array(_AT[tile], np.float64)
    count, o, nt = m.shape
    blocks = np.einsum("ik,klot,jl->otij", at, m.astype(np.float64).reshape(a, a, o, nt), at)
    th = nt // tw
    full = blocks.reshape(o, th, tw, tile, tile).transpose(0, 1, 3, 2, 4).reshape(o, th * tile, tw * tile)
    return full[:, :oh, :ow]


@pytest.mark.parametrize("tile", [2, 4])
def test_transforms_are_winograds_by_definition(tile):
    """The C transforms (the only implementation) against B^T d B and A^T M A computed in
    float64 for every tile and channel, with a channel range and a tile-row range."""
    rng = np.random.default_rng(5)
    c, h, wd, o = 6, 9, 11, 5
    th, tw = 5, 6
    nt, count = th * tw, (tile + 2) ** 2
    k_in, k_out = ("wino_input", "wino_output") if tile == 2 else ("wino4_input", "wino4_output")
    x = rng.standard_normal((c, h, wd)).astype("float32")
    ws = np.zeros(winograd_scratch_bytes(c, o, tile * th, tile * tw, 4, tile), np.uint8)
    v = wino_matrices(ws, 0, count, c, nt, np.dtype("float32"))
    start = count * winograd_slice_bytes(c, nt, 4)
    m = wino_matrices(ws, start, count, o, nt, np.dtype("float32"))
    v[...] = np.nan
    bind_kernel(k_in, x, v, 0, c, 0, th, tw, 1, 2)()
    np.testing.assert_allclose(v, _input_by_definition(x, tile, th, tw, 1, 2), rtol=1e-5, atol=1e-5)
    # Channels [1, 4) and tile rows [2, 4) only: the rest is not written.
    v[...] = np.nan
    bind_kernel(k_in, x, v, 1, 4, 2, 4, tw, 1, 2)()
    assert np.isnan(v[:, [0, 4, 5]]).all() and np.isnan(v[:, :, : 2 * tw]).all()
    assert not np.isnan(v[:, 1:4, 2 * tw : 4 * tw]).any()
    m[...] = rng.standard_normal(m.shape).astype("float32")
    oh, ow = tile * th - 1, tile * tw - 1
    out = np.full((o, oh, ow), np.nan, np.float32)
    bind_kernel(k_out, m, tw, out, 0, o, 0, th)()
    expect = _output_by_definition(m, tile, tw, oh, ow)
    np.testing.assert_allclose(out, expect, rtol=1e-5, atol=1e-5 * float(np.abs(expect).max()))


def test_scratch_matrices_avoid_power_of_two_strides():
    # 64 x 784 floats is 49 pages: the matrices are spaced by an odd number of cache lines.
    step = winograd_slice_bytes(64, 784, 4)
    assert step % 64 == 0 and (step // 64) % 2 == 1 and step >= 64 * 784 * 4
    assert winograd_scratch_bytes(64, 64, 56, 56, 4) == 32 * step
    # F(4x4, 3x3): 36 matrices of 14 x 14 blocks.
    step = winograd_slice_bytes(64, 196, 4)
    assert winograd_scratch_bytes(64, 64, 56, 56, 4, 4) == 72 * step


def test_the_executor_runs_the_tile_the_compiler_stated():
    """The block size is read from the built module (``relay.winograd_tile``, stated by
    ``xrelay.backend.native.scratch``), not decided again at run time: F(4x4) as stated,
    F(2x2) where the op says 2, im2col where the op states none, and no Winograd on a
    convolution the transforms cannot compute (stride 2) whatever it states."""
    from xdsl.dialects.builtin import IntegerAttr, i64

    from xrelay.runtime.native.workspace import WINOGRAD_TILE_ATTR, stated_winograd_tile

    mod, params, inputs = _case(32, 32, 36, 36, (1, 1, 1, 1))
    program, _ = build_program(mod, params)
    (conv,) = [op for op in program.walk() if getattr(op, "RELAY_NAME", "") == "nn.conv2d"]
    assert stated_winograd_tile(conv) == 4
    expect = run(mod, {**inputs, **params})[0]

    def blocks() -> list[int]:
        ex = Executor(program, threads=1)
        np.testing.assert_allclose(_outputs(ex, inputs), expect, rtol=1e-4, atol=1e-4)
        return [u.shape[0] for _, _, c in ex.steps for u in c.winograd]

    assert blocks() == [36]
    conv.attributes[WINOGRAD_TILE_ATTR] = IntegerAttr(2, i64)
    assert blocks() == [16]
    del conv.attributes[WINOGRAD_TILE_ATTR]
    assert blocks() == []

    # A tile stated on a convolution Winograd cannot compute (stride 2; its planned im2col
    # room would hold the F(4x4) matrices) is not run as one.
    x_t, w_t, y_t = "tensor<1x32x36x36xf32>", "tensor<32x32x3x3xf32>", "tensor<1x32x18x18xf32>"
    text = f"""
func.func @main(%x: {x_t}, %w: {w_t}) -> {y_t} {{
  %y = relay.nn.conv2d %x, %w {{strides = [2, 2], padding = [1, 1, 1, 1]}} : ({x_t}, {w_t}) -> {y_t}
  func.return %y : {y_t}
}}
"""
    mod = Parser(make_context(), text).parse_module()
    program, _ = build_program(mod, {"w": params["w"]})
    (conv,) = [op for op in program.walk() if getattr(op, "RELAY_NAME", "") == "nn.conv2d"]
    assert stated_winograd_tile(conv) == 0
    conv.attributes[WINOGRAD_TILE_ATTR] = IntegerAttr(4, i64)
    inputs = {"x": inputs["x"]}
    expect = run(mod, {**inputs, "w": params["w"]})[0]
    assert blocks() == []


@pytest.mark.parametrize("tile", [2, 4])
def test_transform_matrices_compute_the_correlation(tile):
    """``A^T [(G g) * (B^T d)]`` is the 3-tap correlation of ``d`` by ``g`` exactly (float64,
    in one dimension; the 2-D transforms are its tensor product): the C kernels' ``B^T``
    and ``A^T`` and the weights' ``G`` are one algorithm."""
    rng = np.random.default_rng(2)
    gm, bt, at = _WINO_G[tile], WINOGRAD_BT[tile], WINOGRAD_AT[tile]
    for _ in range(5):
        g, d = rng.standard_normal(3), rng.standard_normal(tile + 2)
        got = at @ ((gm @ g) * (bt @ d))
        np.testing.assert_allclose(got, np.correlate(d, g, "valid"), rtol=0, atol=1e-12)


def test_f4_rounding_stays_near_a_direct_convolutions():
    """F(4x4, 3x3)'s points (0, 1, -1, 2, -1/2, infinity) keep its float32 error on a
    64-channel layer of non-negative (post-ReLU) inputs (largest difference 4.0x a direct
    convolution's, an im2col matmul in float32, both against float64) within 6x; Lavin's
    points (0, +-1, +-2) give 9.3x on this layer (docs/guide/runtime.md)."""
    c = o = 64
    mod, params, _ = _case(c, o, 40, 40, (1, 1, 1, 1), seed=3)
    rng = np.random.default_rng(3)
    x = np.maximum(rng.standard_normal((1, c, 40, 40)) + 0.5, 0).astype(np.float32)
    zeros = np.zeros((1, o, 40, 40), np.float32)
    params["b"][...] = 0
    ex = Executor(build_program(mod, params)[0], threads=1)
    assert _winograd_convs(ex) == 1 and ex.steps  # F(4x4): 40x40 outputs
    got = _outputs(ex, {"x": x, "r": zeros})
    w = params["w"].astype(np.float64)
    padded = np.pad(x[0].astype(np.float64), ((0, 0), (1, 1), (1, 1)))
    cols = np.lib.stride_tricks.sliding_window_view(padded, (3, 3), axis=(1, 2))
    ref = np.einsum("chwij,ocij->ohw", cols, w)
    a = np.reshape(cols.transpose(1, 2, 0, 3, 4), (-1, 9 * c)).astype(np.float32)
    direct = (a @ params["w"].reshape(o, -1).T).T.reshape(o, 40, 40).astype(np.float64)
    pre = np.maximum(ref, 0)
    err_w = np.abs(got[0] - pre).max() / np.abs(pre).max()
    err_d = np.abs(np.maximum(direct, 0) - pre).max() / np.abs(pre).max()
    assert np.isfinite(got).all() and np.abs(got).max() > 0
    assert err_w < 6 * err_d
