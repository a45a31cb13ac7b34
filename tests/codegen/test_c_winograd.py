"""Winograd F(4x4, 3x3) in the C target: ``conv2d-winograd`` (run by ``build_c`` after
``alter-op-layout``) turns 3x3 stride-1 float convolutions into
``nn.contrib_conv2d_winograd_without_weight_transform`` with weights transformed at build
time, and the C calls ``xrelay_winograd.h`` (shipped with the program only then).

* the op's reference kernel is the convolution of the kernel its weights came from;
* the rewrite keeps the meaning: the interpreter before and after it agree;
* the C (steps through the host library, and the exported program compiled with
  ``-std=c99 -Wall -Wextra -Werror``, GNU vectors and ``XRELAY_PORTABLE``) matches the
  interpreter of the unrewritten program within Winograd's float32 rounding: 2e-5 of the
  largest output (measured about 1e-6); shapes cut tiles at the right and bottom edges, pad
  asymmetrically, cut the image into several bands of tiles with tiles left over the 6-tile
  register tiles, batch 2, and 16- and 24-channel output blocks;
* the scratch is the function's, so RAM is the plan.
"""

import re
import shutil
import subprocess

import numpy as np
import pytest

import xrelay
from xrelay import relay
from xrelay.backend.c.c_function import CHANNEL_BLOCK, winograd_band
from xrelay.dialects import make_context
from xrelay.kernels import KERNELS
from xrelay.kernels.winograd import winograd_weights_packed
from xrelay.transforms.conv2d_winograd import Conv2dWinogradPass
from xrelay.transforms.fold_constant import FoldConstantPass
from xrelay.transforms.infra import PassContext, build_alter_op_layout, module_op

STRICT = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-O2"]
CC = shutil.which("cc")
RNG = np.random.default_rng(30)
TOL = 2e-5
"""Winograd's rounding against the direct convolution, relative to the largest output."""


def conv_net(n, c, h, w, o, padding=(1, 1), layers=1):
    x = relay.var("x", shape=(n, c, h, w))
    y = x
    for i in range(layers):
        wt = relay.const(RNG.standard_normal((o, c if i == 0 else o, 3, 3)).astype("float32") / np.sqrt(9 * c))
        b = relay.const(RNG.standard_normal((o,)).astype("float32"))
        y = relay.nn.relu(relay.nn.bias_add(relay.nn.conv2d(y, wt, kernel_size=(3, 3), channels=o, padding=padding), b))
    return xrelay.IRModule.from_expr(relay.Function([x], y)), (n, c, h, w)


CASES = {
    "14x14-one-band": dict(n=1, c=16, h=14, w=14, o=16),
    "cut-tiles-24-channels": dict(n=1, c=16, h=17, w=15, o=24),
    "asymmetric-padding": dict(n=1, c=32, h=20, w=18, o=16, padding=(0, 1, 2, 0)),
    "batch-2-two-layers": dict(n=2, c=16, h=14, w=19, o=32, layers=2),
    "bands-with-leftover-tiles": dict(n=1, c=128, h=26, w=26, o=128),
}


def _close(got, want):
    assert np.isfinite(want).all() and np.ptp(want) > 0
    err = np.abs(np.asarray(got, np.float64) - want).max() / np.abs(want).max()
    assert err <= TOL, err


def _export_and_run(lib, x, out, flags):
    out.mkdir()
    files = lib.export(out, main=True)
    assert {"xrelay_winograd.h", "winograd_core.h", "winograd4.h"} <= {p.name for p in files}
    exe = out / "model"
    res = subprocess.run([CC, *STRICT, *flags, "-I", str(out), str(out / "model.c"), str(out / "main.c"),
                          "-o", str(exe), "-lm"], capture_output=True, text=True)  # fmt: skip
    assert res.returncode == 0, res.stderr
    (out / "x.bin").write_bytes(x.tobytes())
    res = subprocess.run([str(exe), str(out / "x.bin"), str(out / "y.bin")], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    return np.frombuffer((out / "y.bin").read_bytes(), dtype="float32")


def test_the_reference_kernel_is_the_convolution_of_the_untransformed_kernel():
    for c, o, h, w, pad in [(8, 16, 14, 14, (1, 1, 1, 1)), (16, 8, 7, 9, (0, 1, 2, 0)), (8, 8, 5, 4, (2, 2, 2, 2))]:
        x = RNG.standard_normal((2, c, h, w)).astype("float32")
        k = RNG.standard_normal((o, c, 3, 3)).astype("float32")
        for tile in (2, 4):
            got = KERNELS["nn.contrib_conv2d_winograd_without_weight_transform"](
                x, winograd_weights_packed(k, tile, 8), tile_size=tile, padding=pad, channels=o, kernel_size=(3, 3))
            want = KERNELS["nn.conv2d"](x.astype("float64"), k.astype("float64"), padding=pad)
            assert got.shape == want.shape and got.dtype == np.float32
            _close(got, want)


def test_the_type_relation_refuses_what_the_op_cannot_mean():
    text = """func.func @main(%x: tensor<1x16x14x14xf32>, %u: tensor<6x6x2x16x8xf32>) -> tensor<1x16x14x14xf32> {
  %y = relay.nn.contrib_conv2d_winograd_without_weight_transform %x, %u {ATTRS} : (tensor<1x16x14x14xf32>, tensor<6x6x2x16x8xf32>) -> tensor<1x16x14x14xf32>
  func.return %y : tensor<1x16x14x14xf32>
}"""
    good = 'padding = [1, 1, 1, 1], channels = 16, kernel_size = [3, 3]'
    xrelay.IRModule.from_text(text.replace("ATTRS", good))
    for attrs, message in [
        ('padding = [1, 1, 1, 1], channels = 16', "needs channels and kernel_size"),
        (good + ", strides = [2, 2]", "strides must be [1, 1]"),
        (good.replace("channels = 16", "channels = 24"), "channels = 24 but weight"),
        (good + ", tile_size = 2", "not 4x4 transformed matrices"),
    ]:
        with pytest.raises(Exception, match=message.replace("[", r"\[").replace("]", r"\]")):
            xrelay.IRModule.from_text(text.replace("ATTRS", attrs))


def test_the_rewrite_keeps_the_meaning():
    """The interpreter on the C build's layouts (``alter-op-layout`` at 8 lanes, then
    ``fold-constant``), before and after ``conv2d-winograd``."""
    mod, shape = conv_net(n=1, c=16, h=15, w=14, o=24, layers=2)
    x = RNG.standard_normal(shape).astype("float32")
    blocked = module_op(mod).clone()
    with PassContext(opt_level=3):
        build_alter_op_layout(CHANNEL_BLOCK).apply(make_context(), blocked)
        FoldConstantPass().apply(make_context(), blocked)
    rewritten = blocked.clone()
    Conv2dWinogradPass().apply(make_context(), rewritten)
    assert str(rewritten).count("winograd_without_weight_transform") == 2
    assert "relay.nn.conv2d " not in str(rewritten)
    before = np.asarray(xrelay.run(blocked, {"x": x}), np.float64)
    _close(xrelay.run(rewritten, {"x": x}), before)


@pytest.mark.parametrize("case", CASES)
def test_winograd_convolutions_match_the_interpreter(case, tmp_path):
    mod, shape = conv_net(**CASES[case])
    lib = xrelay.build(mod, target="c")
    src = lib.get_source()
    assert src.count("xr_conv2d_winograd4_nchwc(") == CASES[case].get("layers", 1), src[:3000]
    assert '#include "xrelay_winograd.h"' in src
    x = RNG.standard_normal(shape).astype("float32")
    want = np.asarray(xrelay.run(mod, {"x": x}), np.float64)
    lib.run(x=x)
    _close(lib.get_output(0), want)
    if CC is None:
        return
    portable = _export_and_run(lib, x, tmp_path / "portable", ["-DXRELAY_PORTABLE"])
    _close(portable.reshape(want.shape), want)
    vectors = _export_and_run(lib, x, tmp_path / "vectors", [])
    np.testing.assert_array_equal(vectors, portable)  # the same arithmetic lane by lane


def test_bands_cut_the_image_when_it_does_not_fit():
    """ResNet-18's 56x56x64 layers run in 3 bands of 66 tiles; its 14x14x256 ones whole."""
    assert winograd_band(196, 64, 64) == 66
    assert winograd_band(16, 256, 256) == 16
    case = CASES["bands-with-leftover-tiles"]
    tiles = -(-case["h"] // 4) * -(-case["w"] // 4)
    band = winograd_band(tiles, case["c"], case["o"])
    assert band < tiles and tiles % band % 6, (tiles, band)  # several bands, a partial register tile


def test_plain_nchw_data_into_a_blocked_result():
    """NCHW data (blocks of one channel) into an NCHW16c result: the rewrite on the user's
    layouts, built with ``alter-op-layout`` off so they reach the C as they are."""
    x = relay.var("x", shape=(1, 16, 15, 14))
    k = relay.const(RNG.standard_normal((16, 16, 3, 3)).astype("float32") / 12)
    y = relay.nn.conv2d(x, k, kernel_size=(3, 3), channels=16, padding=(1, 1), out_layout="NCHW16c")
    mod = xrelay.IRModule.from_expr(relay.Function([x], y))
    rewritten = module_op(mod).clone()
    Conv2dWinogradPass().apply(make_context(), rewritten)
    with PassContext(opt_level=3, disabled_pass=["AlterOpLayout"]):
        lib = xrelay.build(rewritten, target="c")
    # batch 1, 16 channels of 15x14, blocks of 1 channel
    assert "xr_conv2d_winograd4_nchwc(in0, " in lib.get_source() and ", 1, 16, 15, 14, 1, 16," in lib.get_source()
    xv = RNG.standard_normal((1, 16, 15, 14)).astype("float32")
    lib.run(x=xv)
    _close(lib.get_output(0), np.asarray(xrelay.run(mod, {"x": xv}), np.float64))


def test_disabling_the_pass_keeps_the_direct_tiles():
    mod, _ = conv_net(n=1, c=16, h=14, w=14, o=16)
    with PassContext(opt_level=3, disabled_pass=["Conv2dWinograd"]):
        lib = xrelay.build(mod, target="c")
    src = lib.get_source()
    assert "xr_conv2d_winograd4_nchwc" not in src and "xrelay_winograd.h" not in src
    assert re.search(r"XR_F(8|16)_MAC\(a", src)
