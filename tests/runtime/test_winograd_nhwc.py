"""Winograd F(2x2, 3x3) / F(4x4, 3x3) on channels-last (NHWC/HWIO) convolutions: accuracy,
bits for any thread count, the channels-last transforms giving the channels-first ones' bits,
no channels-first copies."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.parser import Parser

from xrelay.backend.build import build_program
from xrelay.dialects import make_context
from xrelay.kernels.winograd import WINOGRAD_BT
from xrelay.runtime.executor import Executor, run_memory_compiled
from xrelay.runtime.interpreter import run
from xrelay.runtime.native.fast_kernels import bind_kernel, wino_matrices
from xrelay.runtime.native.workspace import winograd_scratch_bytes, winograd_slice_bytes
from xrelay.runtime.parallel import WorkerPool


def _case(c, o, h, w, pad, seed=0, n=1):
    """conv(x, w) + b + r, relu in NHWC: the epilogue a ResNet block fuses into its conv."""
    oh, ow = h + pad[0] + pad[2] - 2, w + pad[1] + pad[3] - 2
    x_t, w_t = f"tensor<{n}x{h}x{w}x{c}xf32>", f"tensor<3x3x{c}x{o}xf32>"
    y_t, b_t = f"tensor<{n}x{oh}x{ow}x{o}xf32>", f"tensor<{o}xf32>"
    text = f"""
func.func @main(%x: {x_t}, %r: {y_t}, %w: {w_t}, %b: {b_t}) -> {y_t} {{
  %y = relay.nn.conv2d %x, %w {{padding = [{", ".join(map(str, pad))}], data_layout = "NHWC", kernel_layout = "HWIO"}} : ({x_t}, {w_t}) -> {y_t}
  %z = relay.add %y, %b : ({y_t}, {b_t}) -> {y_t}
  %s = relay.add %z, %r : ({y_t}, {y_t}) -> {y_t}
  %a = relay.nn.relu %s : ({y_t}) -> {y_t}
  func.return %a : {y_t}
}}
"""
    mod = Parser(make_context(), text).parse_module()
    rng = np.random.default_rng(seed)
    params = {
        "w": (rng.standard_normal((3, 3, c, o)) / np.sqrt(9 * c)).astype("float32"),
        "b": rng.standard_normal(o).astype("float32"),
    }
    inputs = {
        "x": rng.standard_normal((n, h, w, c)).astype("float32"),
        "r": rng.standard_normal((n, oh, ow, o)).astype("float32"),
    }
    return mod, params, inputs


def _outputs(ex: Executor, inputs) -> np.ndarray:
    for name, buf in zip(ex.input_names, ex.input_buffers):
        np.copyto(buf, inputs[name])
    ex.run()
    return ex.outputs[0].copy()


SHAPES = [
    (16, 24, 9, 7, (1, 1, 1, 1)),  # F(2x2): odd sizes, the last blocks cut
    (24, 17, 11, 14, (2, 1, 0, 2)),  # asymmetric padding
    (80, 72, 14, 14, (1, 1, 1, 1)),  # more than one 64-channel step, in three phases
    (16, 32, 30, 29, (1, 1, 1, 1)),  # F(4x4): the last 4x4 blocks cut
    (16, 16, 64, 64, (1, 1, 1, 1)),  # F(4x4) cut by tile rows
]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_nhwc_winograd_matches_the_reference_and_is_bitwise_stable(shape):
    c, o = shape[:2]
    mod, params, inputs = _case(*shape)
    program, _ = build_program(mod, params)
    one = Executor(program, threads=1)
    (u,) = [u for _, _, comp in one.steps for u in comp.winograd]
    assert u.shape == ((36 if min(shape[2:4]) >= 28 else 16), c, o)
    assert one.scratch_bytes == 0  # no channels-first copies
    got = _outputs(one, inputs)
    (ref,) = run(mod, inputs, params)
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5 * float(np.abs(ref).max()))
    for threads in (2, 3):
        ex = Executor(program, threads=WorkerPool(threads, adaptive=False))
        assert np.array_equal(_outputs(ex, inputs), got)
    assert np.array_equal(run_memory_compiled(program, inputs, threads=2)[0], got)


def test_nhwc_winograd_batch_of_images():
    mod, params, inputs = _case(*SHAPES[0], seed=3, n=3)
    program, _ = build_program(mod, params)
    got = _outputs(Executor(program, threads=WorkerPool(2, adaptive=False)), inputs)
    (ref,) = run(mod, inputs, params)
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5 * float(np.abs(ref).max()))


@pytest.mark.parametrize("tile", [2, 4])
def test_nhwc_transforms_equal_the_channels_first_ones(tile):
    rng = np.random.default_rng(5)
    c, h, wd, o = 70, 9, 11, 67  # channel counts past one 64-wide step
    th, tw = 5, 6
    nt, count, a = th * tw, (tile + 2) ** 2, tile + 2
    k_in, k_out = ("wino_input_nhwc", "wino_output_nhwc") if tile == 2 else ("wino4_input_nhwc", "wino4_output_nhwc")
    x = rng.standard_normal((h, wd, c)).astype("float32")
    ws = np.zeros(winograd_scratch_bytes(c, o, tile * th, tile * tw, 4, tile), np.uint8)
    dt = np.dtype("float32")
    v = wino_matrices(ws, 0, count, nt, c, dt)
    m = wino_matrices(ws, count * winograd_slice_bytes(c, nt, 4), count, nt, o, dt)
    v[...] = np.nan
    bind_kernel(k_in, x, v, 0, c, 0, th, tw, 1, 2)()
    v_c = v.copy()
    assert not np.isnan(v_c).any()
    # the channels-first transform of the same image (checked against the definition in
    # test_winograd) gives the same bits
    vf = np.zeros((count, c, nt), np.float32)
    k_first = {2: "wino_input", 4: "wino4_input"}[tile]
    bind_kernel(k_first, np.ascontiguousarray(x.transpose(2, 0, 1)), vf, 0, c, 0, th, tw, 1, 2)()
    assert np.array_equal(vf.transpose(0, 2, 1), v_c)
    # one patch by definition: B^T d B, d zero outside the image (tile (0, 0), pads 1, 2)
    d = np.zeros((a, a))
    d[1:, 2:] = x[: a - 1, : a - 2, 3]
    bt = WINOGRAD_BT[tile]
    np.testing.assert_allclose(v_c[:, 0, 3], (bt @ d @ bt.T).reshape(count), rtol=1e-5, atol=1e-5)
    m[...] = rng.standard_normal(m.shape).astype("float32")
    out_c = np.full((tile * th - 1, tile * tw - 1, o), np.nan, np.float32)
    bind_kernel(k_out, m, tw, out_c, 0, o, 0, th)()
    assert not np.isnan(out_c).any()
    out_f = np.zeros((o, tile * th - 1, tile * tw - 1), np.float32)
    mf = np.ascontiguousarray(m.transpose(0, 2, 1))
    bind_kernel({2: "wino_output", 4: "wino4_output"}[tile], mf, tw, out_f, 0, o, 0, th)()
    assert np.array_equal(out_f.transpose(1, 2, 0), out_c)


def test_the_shared_core_is_portable_c99(tmp_path):
    """winograd_core.h (the one implementation both layouts and the oneDNN shim run) compiles
    alone as strict C99 for float and double, so another C program (the C target) can include
    it: no GNU extension, nothing allocated, only <stdint.h>."""
    import os
    import subprocess

    from xrelay.runtime.native import library

    cc = os.environ.get("CC", "cc")  # the compiler the loop kernels these tests run were built with
    src = tmp_path / "core.c"
    src.write_text(
        "#define REAL float\n#define SFX(n) n##_f\n#include \"winograd_core.h\"\n#undef REAL\n#undef SFX\n"
        "#define REAL double\n#define SFX(n) n##_d\n#include \"winograd_core.h\"\n"
        "void use(const float *const *d, float *v, float *e, float *s, float *y) {\n"
        "    wino_in_lanes_f(4, d, v, 8, 4, e, 4); wino_out_lanes_f(2, v, 8, 4, s, 4, y, 8, 4, 2);\n}\n"
    )
    done = subprocess.run(
        [cc, "-std=c99", "-pedantic-errors", "-Wall", "-Werror", "-Wno-unknown-pragmas",
         "-fsyntax-only", "-I", library.HERE, str(src)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
