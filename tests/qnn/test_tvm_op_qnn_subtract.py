"""TVM v0.19.0 tests/python/relay/test_op_qnn_subtract.py, ported: the test bodies and golden values are TVM's.

Only the build and run calls change (``tvm_port``: ``xrelay.build`` and the arena executor instead
of ``relay.build`` + ``graph_executor``; outputs are numpy arrays, so ``.numpy()`` is dropped; ``relay.op.nn`` is spelled ``relay.nn``).
"""

# ruff: noqa
import platform

import numpy as np
import pytest

import xrelay as tvm
from xrelay import relay
from xrelay.relay import transform

from xrelay.dialects.qnn import SQNN_DTYPE_TO_CODE

from .tvm_port import TempOpAttr, VirtualMachine, build, evaluate, run_infer_type, vm_compile

def qnn_subtract_driver(x_datas, y_datas, golden_outputs, scale_and_zp, data_dtype="uint8"):
    # all x, y and golden outputs should be of the same length
    assert len(x_datas) == len(y_datas)
    assert len(y_datas) == len(golden_outputs)

    x = relay.var("x", shape=(1, 4), dtype=data_dtype)
    y = relay.var("y", shape=(1, 4), dtype=data_dtype)
    lhs_scale = relay.const(scale_and_zp["lhs_scale"], "float32")
    lhs_zp = relay.const(scale_and_zp["lhs_zp"], "int32")
    rhs_scale = relay.const(scale_and_zp["rhs_scale"], "float32")
    rhs_zp = relay.const(scale_and_zp["rhs_zp"], "int32")
    output_scale = relay.const(scale_and_zp["output_scale"], "float32")
    output_zp = relay.const(scale_and_zp["output_zp"], "int32")
    z = relay.qnn.subtract(
        lhs=x,
        rhs=y,
        lhs_scale=lhs_scale,
        lhs_zero_point=lhs_zp,
        rhs_scale=rhs_scale,
        rhs_zero_point=rhs_zp,
        output_scale=output_scale,
        output_zero_point=output_zp,
    )
    func = relay.Function([x, y], z)
    mod = tvm.IRModule.from_expr(func)
    mod = relay.transform.InferType()(mod)
    mod = relay.qnn.transform.CanonicalizeOps()(mod)
    func = mod["main"]
    for i in range(0, len(x_datas)):
        x_data = x_datas[i]
        y_data = y_datas[i]
        golden_output = golden_outputs[i]
        op_res = evaluate(func)(
            x_data, y_data
        )
        np.testing.assert_equal(op_res, golden_output)


def test_tflite_same_io_qnn_params():
    scale_and_zp = {
        "lhs_scale": 0.00784314,
        "lhs_zp": 127,
        "rhs_scale": 0.00784314,
        "rhs_zp": 127,
        "output_scale": 0.00784314,
        "output_zp": 127,
    }
    x_datas = [
        np.array((140, 153, 165, 178)).reshape((1, 4)),
        np.array((25, 153, 178, 216)).reshape((1, 4)),
        np.array((25, 153, 216, 165)).reshape((1, 4)),
    ]
    y_datas = [
        np.array((204, 178, 165, 140)).reshape((1, 4)),
        np.array((204, 178, 191, 25)).reshape((1, 4)),
        np.array((204, 178, 25, 191)).reshape((1, 4)),
    ]
    golden_outputs = [
        np.array((63, 102, 127, 165)).reshape((1, 4)),
        np.array((0, 102, 114, 255)).reshape((1, 4)),
        np.array((0, 102, 255, 101)).reshape((1, 4)),
    ]
    qnn_subtract_driver(x_datas, y_datas, golden_outputs, scale_and_zp)


def test_tflite_different_io_qnn_params():
    scale_and_zp = {
        "lhs_scale": 0.0156863,
        "lhs_zp": 127,
        "rhs_scale": 0.0117647,
        "rhs_zp": 85,
        "output_scale": 0.0235294,
        "output_zp": 128,
    }
    x_datas = [
        np.array((76, 140, 153, 172)).reshape((1, 4)),
        np.array((133, 140, 146, 153)).reshape((1, 4)),
        np.array((76, 140, 172, 146)).reshape((1, 4)),
    ]
    y_datas = [
        np.array((136, 119, 128, 17)).reshape((1, 4)),
        np.array((136, 119, 111, 94)).reshape((1, 4)),
        np.array((136, 119, 17, 128)).reshape((1, 4)),
    ]
    golden_outputs = [
        np.array((68, 120, 123, 192)).reshape((1, 4)),
        np.array((106, 120, 128, 140)).reshape((1, 4)),
        np.array((68, 120, 192, 119)).reshape((1, 4)),
    ]
    qnn_subtract_driver(x_datas, y_datas, golden_outputs, scale_and_zp)


def test_saturation():
    # Same params
    scale_and_zp = {
        "lhs_scale": 0.125,
        "lhs_zp": 0,
        "rhs_scale": 0.125,
        "rhs_zp": 0,
        "output_scale": 0.125,
        "output_zp": 0,
    }
    x_data = [np.array((255, 1, 1, 0)).reshape((1, 4))]
    y_data = [np.array((255, 255, 128, 0)).reshape((1, 4))]
    golden_output = [np.array((0, 0, 0, 0)).reshape((1, 4))]
    qnn_subtract_driver(x_data, y_data, golden_output, scale_and_zp)

    # Same params, different scale
    scale_and_zp = {
        "lhs_scale": 0.125,
        "lhs_zp": 0,
        "rhs_scale": 0.125,
        "rhs_zp": 0,
        "output_scale": 0.25,
        "output_zp": 0,
    }
    x_data = [np.array((255, 1, 200, 0)).reshape((1, 4))]
    y_data = [np.array((255, 255, 127, 0)).reshape((1, 4))]
    golden_output = [np.array((0, 0, 36, 0)).reshape((1, 4))]
    qnn_subtract_driver(x_data, y_data, golden_output, scale_and_zp)

    # All params different
    scale_and_zp = {
        "lhs_scale": 0.5,
        "lhs_zp": 0,
        "rhs_scale": 0.25,
        "rhs_zp": 0,
        "output_scale": 0.125,
        "output_zp": 0,
    }
    x_data = [np.array((255, 0, 1, 0)).reshape((1, 4))]
    y_data = [np.array((0, 128, 64, 0)).reshape((1, 4))]
    golden_output = [np.array((255, 0, 0, 0)).reshape((1, 4))]
    qnn_subtract_driver(x_data, y_data, golden_output, scale_and_zp)


