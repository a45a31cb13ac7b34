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
                    pack.ctypes.data)  # fmt: skip
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
