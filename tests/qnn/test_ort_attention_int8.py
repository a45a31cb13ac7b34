"""A quantized attention block in the arena runtime: onnxruntime's bits from its int8 kernels.

``q @ k^T`` (QLinearMatMul of two uint8 activations), QLinearMul by the scale, QLinearAdd of
a mask broadcast over the heads, QLinearSoftmax, ``p @ v``: the block as ``quantize_static``
writes it (QDQ), imported with ``fake-quantization-to-integer{onnxruntime=true}``. Each test
requires onnxruntime's output bits and that the named C kernel of the int8 library ran (a
spy on the library), so a path that falls back to numpy fails.
"""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from xrelay.testing import onnx_models as om
from xrelay.testing import quantized_models as qm

F = np.float32


def _attention(heads=3, seq=24, depth=16):
    """The float attention block: softmax((q @ kT) * 0.25 + mask) @ v."""
    n = helper.make_node
    nodes = [
        n("MatMul", ["q", "kT"], ["s"]), n("Mul", ["s", "scale"], ["ss"]), n("Add", ["ss", "mask"], ["sm"]),
        n("Softmax", ["sm"], ["p"], axis=-1), n("MatMul", ["p", "v"], ["y"]),
    ]  # fmt: skip
    shapes = {"q": [1, heads, seq, depth], "kT": [1, heads, depth, seq], "v": [1, heads, seq, depth],
              "mask": [1, 1, seq, seq]}  # fmt: skip
    graph = helper.make_graph(
        nodes, "attention", [helper.make_tensor_value_info(k, TensorProto.FLOAT, s) for k, s in shapes.items()],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.asarray(F(0.25)), "scale")],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), shapes


def _feeds(shapes, count, seed):
    rng = np.random.default_rng(seed)
    return [{k: (rng.standard_normal(s) * (2.0 if k == "mask" else 1.0)).astype(F) for k, s in shapes.items()}
            for _ in range(count)]  # fmt: skip


@pytest.fixture(scope="module")
def quantized():
    f32, shapes = _attention()
    return qm.quantize(f32, _feeds(shapes, 4, 0)), shapes


def _same_bits(model, m, feeds):
    for feed in feeds:
        ref = om.run_onnxruntime(model, feed)[0]
        m.set_input(**feed)
        m.run()
        out = m.get_output(0).numpy()
        assert np.ptp(ref) > 0
        np.testing.assert_array_equal(out, ref)


def test_mask_add_after_the_scale_runs_from_bytes(counting, quantized):
    """The QLinearMul by the scale (a table of the scores' byte) hands its bytes to the mask's
    QLinearAdd, which runs as one C pass over the broadcast mask (``xr_qlinear_add_const``):
    one table through to the add's float64 side left the add nothing to read (five numpy
    passes over float64)."""
    model, shapes = quantized
    with counting("xr_qlinear_add_const") as calls:
        m = qm.build(model, integer=True)
        _same_bits(model, m, _feeds(shapes, 3, 1))
    assert calls


def test_scores_and_values_products_run_in_the_vnni_kernel(counting, quantized):
    """Both uint8 x uint8 products (the scores, ``b`` transposed, and the values) run in
    ``xr_bmm_u8x8`` and give onnxruntime's bits."""
    model, shapes = quantized
    with counting("xr_bmm_u8x8") as calls:
        m = qm.build(model, integer=True)
        _same_bits(model, m, _feeds(shapes, 3, 2))
    assert {c[5] for c in calls} == {16, 24}  # k: the scores' product (depth) and the values' (sequence)


@pytest.mark.parametrize("b_dtype", ["uint8", "int8"])
@pytest.mark.parametrize("trans_b", [True, False])
@pytest.mark.parametrize("m, k, n", [(24, 16, 24), (9, 44, 37), (1, 4, 70)])
def test_batch_matmul_kernel_is_exact(int8_library, b_dtype, trans_b, m, k, n):
    """The kernel against int64 products: uint8 times uint8 (the shift by 128 given back from
    the row sums) and times int8, either layout of ``b``, channel blocks of 16 with a partial
    one, row groups of eight with a partial one; extreme values included."""
    from xrelay.runtime.native.fast_int8 import vnni_library

    lib = vnni_library()
    rng = np.random.default_rng(m * k + n)
    info = np.iinfo(b_dtype)
    a = rng.integers(0, 256, (3, m, k)).astype(np.uint8)
    b = rng.integers(info.min, info.max + 1, (3, n, k) if trans_b else (3, k, n)).astype(b_dtype)
    a[0, 0], b[0, ..., 0] = 255, info.max
    want = np.einsum("bmk,bnk->bmn" if trans_b else "bmk,bkn->bmn", a.astype(np.int64), b.astype(np.int64))
    out = np.empty((3, m, n), np.int32)
    pack = np.empty(-(-n // 16) * 16 * k, np.int8)
    lib.xr_bmm_u8x8(a.ctypes.data, b.ctypes.data, int(b_dtype == "uint8"), out.ctypes.data, m, k, n, int(trans_b), 0, 3,
                    pack.ctypes.data, None, None, None)  # fmt: skip
    np.testing.assert_array_equal(out, want)


def test_zero_point_row_sums_read_the_bytes(counting, quantized):
    """The zero-point terms' row sums of both products (``sum(cast(q, int32))``) run from the
    bytes in ``xr_rowsum_8bit``, and no step keeps the int32 copy they were summed from."""
    model, shapes = quantized
    with counting("xr_rowsum_8bit") as calls:
        m = qm.build(model, integer=True)
        _same_bits(model, m, _feeds(shapes, 2, 3))
    assert calls
    for name, _, compiled in m.executor.steps:
        labels = [lab for lab, _, _ in compiled.thunks]
        if "sum" in labels:
            assert "cast" not in labels, name


def test_zero_point_terms_run_in_the_products_kernel(counting, quantized):
    """The zero-point terms after both products (``- zb * rowsum(a)``, ``k za zb - za *
    colsum(b)``) are added in ``xr_bmm_u8x8`` (its terms argument set), so the products' steps
    run no numpy pass, with onnxruntime's bits."""
    model, shapes = quantized
    with counting("xr_bmm_u8x8") as calls:
        m = qm.build(model, integer=True)
        _same_bits(model, m, _feeds(shapes, 3, 4))
    # both products requantize their sums in the kernel too (sink-reshape moved the reshape
    # between each product and its requantize to the bytes)
    assert calls and all(c[11] is not None and c[12] is not None for c in calls)
    products = [c for name, _, c in m.executor.steps if "batch_matmul" in name]
    assert len(products) == 2
    for compiled in products:
        assert [lab for lab, _, _ in compiled.thunks] == ["nn.batch_matmul"]


def _terms(arr, rstride, rcoef, cols, cstride, ccoef, c0):
    from xrelay.runtime.native.fast_int8 import BmmTerms

    t = BmmTerms()
    t.rows = None if arr is None else arr.ctypes.data
    t.cols = None if cols is None else cols.ctypes.data
    t.rstride, t.rcoef, t.cstride, t.ccoef, t.c0 = rstride, rcoef, cstride, ccoef, c0
    return t


@pytest.mark.parametrize("b_dtype", ["uint8", "int8"])
@pytest.mark.parametrize("m, k, n", [(24, 16, 24), (9, 44, 37)])
@pytest.mark.parametrize("batched", [True, False])
def test_batch_matmul_kernel_adds_its_terms_wrapping_like_numpy(int8_library, b_dtype, m, k, n, batched):
    """``xr_bmm_u8x8``'s terms: a row array, a column array (per batch or one for all
    batches), their coefficients and a constant added to each sum in wrapping int32, as numpy's
    int32 arithmetic gives them (coefficients near 2^31 make every sum wrap)."""
    import ctypes

    lib = int8_library
    rng = np.random.default_rng(m + n + k)
    info = np.iinfo(b_dtype)
    a = rng.integers(0, 256, (3, m, k)).astype(np.uint8)
    b = rng.integers(info.min, info.max + 1, (3, n, k)).astype(b_dtype)
    rows = rng.integers(-(2**31), 2**31, (3 if batched else 1, m, 1)).astype(np.int32)
    cols = rng.integers(-(2**31), 2**31, (3 if batched else 1, 1, n)).astype(np.int32)
    rc, cc, c0 = -(2**31) + 5, 2**31 - 7, 974848
    with np.errstate(over="ignore"):
        want = np.einsum("bmk,bnk->bmn", a.astype(np.int64), b.astype(np.int64)).astype(np.int32)
        want = want + np.int32(rc) * rows + np.int32(cc) * cols + np.int32(c0)
    out = np.empty((3, m, n), np.int32)
    pack = np.empty(-(-n // 16) * 16 * k, np.int8)
    t = _terms(rows, m if batched else 0, rc, cols, n if batched else 0, cc, c0)
    lib.xr_bmm_u8x8(a.ctypes.data, b.ctypes.data, int(b_dtype == "uint8"), out.ctypes.data, m, k, n, 1, 0, 3,
                    pack.ctypes.data, ctypes.addressof(t), None, None)  # fmt: skip
    np.testing.assert_array_equal(out, want)


def test_a_3d_product_requantizes_in_the_kernel_with_onnxruntimes_bits(counting):
    """A QDQ MatMul of two 3-D activations (no reshape between the product and its
    requantize, so they share a function): the zero-point terms and onnxruntime's requantize
    run in ``xr_bmm_u8x8`` (its terms and epilogue arguments set), giving onnxruntime's bits."""
    node = helper.make_node("MatMul", ["x", "y"], ["z"])
    graph = helper.make_graph(
        [node], "bmm", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 10, 16]),
                        helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 16, 21])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, None)],
    )  # fmt: skip
    f32 = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    rng = np.random.default_rng(5)
    feeds = [{"x": rng.standard_normal((3, 10, 16)).astype(np.float32),
              "y": rng.standard_normal((3, 16, 21)).astype(np.float32)} for _ in range(4)]  # fmt: skip
    model = qm.quantize(f32, feeds[:2])
    with counting("xr_bmm_u8x8") as calls:
        m = qm.build(model, integer=True)
        _same_bits(model, m, feeds[2:])
    assert calls and all(c[11] is not None and c[12] is not None for c in calls)
