"""alter-op-layout: TVM's x86 blocked layouts, folded weights, transforms only at run edges."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from xrelay import relay
from xrelay.ir import IRModule
from xrelay.kernels import KERNELS, layout_transform_array
from xrelay.relay import transform
from xrelay.relay.build_module import bind_params_by_name
from xrelay.testing import mobilenet, resnet
from xrelay.testing.random_graphs import random_dags
from xrelay.testing.semantics import check_semantics
from xrelay.transforms.alter_op_layout import AlterOpLayoutPass
from xrelay.transforms.canonicalize_ops import CanonicalizeOpsPass
from xrelay.transforms.fold_constant import FoldConstantPass
from xrelay.transforms.simplify_inference import SimplifyInferencePass


def _ops(mod):
    return [op for op in mod.module.walk() if op.name.startswith("relay.")]


def _prepared(workload, **kw):
    mod, params = workload.get_workload(image_shape=(3, 32, 32), num_classes=10, **kw)
    mod["main"] = bind_params_by_name(mod["main"], params)
    for p in (SimplifyInferencePass(), CanonicalizeOpsPass(), FoldConstantPass()):
        p.apply(None, mod.module)
    return mod


def test_resnet18_blocks_per_layer_and_weights_fold():
    mod = _prepared(resnet, num_layers=18)
    check_semantics([AlterOpLayoutPass(), FoldConstantPass()], mod)
    AlterOpLayoutPass().apply(None, mod.module)
    FoldConstantPass().apply(None, mod.module)
    convs = [op for op in _ops(mod) if op.name == "relay.nn.conv2d"]
    layouts = Counter((c.attrs["data_layout"], c.attrs["kernel_layout"], c.attrs["out_layout"]) for c in convs)
    # the stem has 3 input channels; every later layer has 64..512 (blocks of 16)
    assert layouts == {("NCHW3c", "OIHW3i16o", "NCHW16c"): 1, ("NCHW16c", "OIHW16i16o", "NCHW16c"): 20}
    transforms = [op for op in _ops(mod) if op.name == "relay.layout_transform"]
    # weights were transformed at compile time; what is left is the edges of the blocked run:
    # the input into NCHW3c, NCHW16c into the stem's blocks... and out before batch_flatten
    assert all(op.operands[0].owner.name != "relay.constant" for op in transforms)
    assert sorted((t.attrs["src_layout"], t.attrs["dst_layout"]) for t in transforms) == [
        ("NCHW", "NCHW3c"),
        ("NCHW16c", "NCHW"),
    ]


def test_mobilenet_depthwise_and_meaning():
    mod = _prepared(mobilenet)
    check_semantics([AlterOpLayoutPass(simd_width=8), FoldConstantPass()], mod)
    AlterOpLayoutPass(simd_width=8).apply(None, mod.module)
    kernels = {op.attrs["kernel_layout"] for op in _ops(mod) if op.name == "relay.nn.conv2d"}
    assert "OIHW1i8o" in kernels and "OIHW8i8o" in kernels


@pytest.mark.parametrize("index", range(4))
def test_random_dags_meaning(index):
    check_semantics(AlterOpLayoutPass(simd_width=4), random_dags(4, num_ops=30, first_seed=40)[index])


def test_blocked_kernels_match_plain():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 12, 7, 7)).astype("float32")
    w = rng.standard_normal((8, 12, 3, 3)).astype("float32")
    plain = KERNELS["nn.conv2d"](x, w, padding=(1, 1, 1, 1), strides=(2, 2))
    blocked = KERNELS["nn.conv2d"](
        layout_transform_array(x, "NCHW", "NCHW4c"),
        layout_transform_array(w, "OIHW", "OIHW4i8o"),
        padding=(1, 1, 1, 1),
        strides=(2, 2),
        data_layout="NCHW4c",
        kernel_layout="OIHW4i8o",
        out_layout="NCHW8c",
    )
    np.testing.assert_allclose(layout_transform_array(blocked, "NCHW8c", "NCHW"), plain, rtol=1e-5, atol=1e-5)
    pooled = KERNELS["nn.avg_pool2d"](layout_transform_array(x, "NCHW", "NCHW3c"), pool_size=(2, 2), layout="NCHW3c")
    np.testing.assert_allclose(
        layout_transform_array(pooled, "NCHW3c", "NCHW"), KERNELS["nn.avg_pool2d"](x, pool_size=(2, 2)), rtol=1e-6
    )

    up = KERNELS["nn.upsampling"](layout_transform_array(x, "NCHW", "NCHW4c"), scale_h=2.0, scale_w=1.5, layout="NCHW4c")
    np.testing.assert_array_equal(
        layout_transform_array(up, "NCHW4c", "NCHW"), KERNELS["nn.upsampling"](x, scale_h=2.0, scale_w=1.5)
    )


def test_factory_and_errors():
    p = transform.AlterOpLayout()
    assert p.info.name == "AlterOpLayout" and p.info.opt_level == 3
    with pytest.raises(ValueError, match="simd-width must be positive"):
        AlterOpLayoutPass(simd_width=0).apply(None, _prepared(resnet, num_layers=18).module)


def test_fold_scale_axis_folds_blocked_batch_norms():
    """After alter-op-layout the batch norms' scales are NCHW16c constants; fold-scale-axis
    (backward and forward on blocked layouts) still folds them into the blocked kernels."""
    mod, params = resnet.get_workload(num_layers=18, image_shape=(3, 32, 32), num_classes=10)
    mod["main"] = bind_params_by_name(mod["main"], params)
    SimplifyInferencePass().apply(None, mod.module)
    CanonicalizeOpsPass().apply(None, mod.module)
    AlterOpLayoutPass().apply(None, mod.module)
    FoldConstantPass().apply(None, mod.module)
    before = Counter(op.name for op in _ops(mod))
    fold = [transform.BackwardFoldScaleAxis(), transform.ForwardFoldScaleAxis(), transform.FoldConstant()]
    check_semantics(fold, mod)
    with transform.PassContext(opt_level=3):
        mod = transform.Sequential(fold)(mod)
    after = Counter(op.name for op in _ops(mod))
    # 18 scales: 16 fold; bn_data's (before the input's layout_transform) and the last one
    # (no convolution after it) stay, as in Relay
    assert (before["relay.multiply"], after["relay.multiply"]) == (18, 2)


def test_registered_python_rule_and_its_errors():
    from xrelay import relay
    from xrelay.relay.op_attr import TempOpAttr, register_alter_op_layout
    from xrelay.transforms.alter_op_layout import ALTER_OP_LAYOUT

    x = relay.var("x", shape=(1, 4, 6, 6))
    w = relay.var("w", shape=(8, 4, 3, 3))
    fn = relay.Function([x, w], relay.nn.relu(relay.nn.conv2d(x, w, padding=(1, 1))))

    def doubled(attrs, inputs, tinfos, out_type):
        assert tinfos[1].shape == (8, 4, 3, 3) and out_type.dtype == "float32"
        return relay.nn.conv2d(inputs[0], relay.multiply(inputs[1], relay.const(2.0)), **attrs)

    x86 = ALTER_OP_LAYOUT["nn.conv2d"]
    try:
        register_alter_op_layout("nn.conv2d", doubled, level=101)
        mod = transform.AlterOpLayout()(xrelay_module(fn))
        assert [op.name for op in mod.module.walk() if op.name.startswith("relay.")][:3] == [
            "relay.constant",
            "relay.multiply",
            "relay.nn.conv2d",
        ]
        with TempOpAttr("nn.conv2d", "FTVMAlterOpLayout", lambda *args: relay.Tuple([args[1][0]])):
            with pytest.raises(ValueError, match="must return a call of an op"):
                transform.AlterOpLayout()(xrelay_module(fn))
        assert ALTER_OP_LAYOUT["nn.conv2d"] is not x86
    finally:
        ALTER_OP_LAYOUT["nn.conv2d"] = x86


def xrelay_module(fn):
    import xrelay

    return xrelay.IRModule.from_expr(fn)


def test_int8_convolutions_get_an_ohwi_kernel_and_keep_their_meaning():
    """An 8-bit convolution (uint8 data, int8 kernel, int32 result) keeps NCHW and gets an OHWI
    kernel; a grouped one is left alone; the result is the same integers."""
    rng = np.random.default_rng(5)
    x = relay.var("x", shape=(1, 8, 7, 9), dtype="uint8")
    w = relay.const(rng.integers(-128, 128, (12, 8, 3, 3)).astype("int8"))
    g = relay.const(rng.integers(-128, 128, (8, 1, 3, 3)).astype("int8"))
    y = relay.nn.conv2d(x, w, kernel_size=(3, 3), channels=12, padding=(1, 1), out_dtype="int32")
    z = relay.nn.conv2d(x, g, kernel_size=(3, 3), channels=8, padding=(1, 1), groups=8, out_dtype="int32")
    mod = IRModule.from_expr(relay.Function([x], relay.Tuple([y, z])))
    check_semantics([AlterOpLayoutPass(), FoldConstantPass()], mod)
    AlterOpLayoutPass().apply(None, mod.module)
    convs = [op for op in _ops(mod) if op.name == "relay.nn.conv2d"]
    assert [(c.attrs["data_layout"], c.attrs["kernel_layout"]) for c in convs] == [("NCHW", "OHWI"), ("NCHW", "OIHW")]
