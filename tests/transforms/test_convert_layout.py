"""convert-layout: seed 001's op counts on ResNet-18, meaning kept on real and random graphs."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from xdsl.parser import Parser

from xrelay.dialects import make_context
from xrelay.relay import transform
from xrelay.relay.build_module import bind_params_by_name
from xrelay.testing import mobilenet, resnet
from xrelay.testing.random_graphs import random_dags
from xrelay.testing.semantics import check_semantics, filecheck_cases
from xrelay.transforms.canonicalize_ops import CanonicalizeOpsPass
from xrelay.transforms.convert_layout import ConvertLayoutPass

NHWC = {"nn.conv2d": ["NHWC", "default"]}


def _counts(mod) -> Counter[str]:
    return Counter(op.name.removeprefix("relay.") for op in mod.module.walk() if op.name.startswith("relay."))


def test_seed_001_op_count_diffs_on_resnet18():
    from xrelay.instrument import pass_instrument

    @pass_instrument
    class Differ:
        def __init__(self):
            self.diffs, self.stack = [], []

        def run_before_pass(self, mod, info):
            self.stack.append(_counts(mod))

        def run_after_pass(self, mod, info):
            before, after = self.stack.pop(), _counts(mod)
            diff = {k: after[k] - before[k] for k in before | after if after[k] != before[k]}
            diff.pop("constant", None)
            if diff:
                self.diffs.append((len(self.stack), info.name, diff))

    mod, params = resnet.get_workload(num_layers=18, batch_size=1, image_shape=(3, 224, 224))
    mod["main"] = bind_params_by_name(mod["main"], params)
    differ = Differ()
    seq = transform.Sequential(
        [
            transform.FoldConstant(),
            transform.ConvertLayout({"nn.conv2d": ["NHWC", "HWIO"]}),
            transform.FoldConstant(),
        ]
    )
    with transform.PassContext(opt_level=3, instruments=[differ]):
        seq(mod)
    assert differ.diffs == [
        (1, "CanonicalizeOps", {"add": 1, "nn.bias_add": -1}),
        (1, "ConvertLayout", {"expand_dims": 1, "layout_transform": 23}),
        (1, "FoldConstant", {"expand_dims": -1, "layout_transform": -21}),
        (0, "sequential", {"add": 1, "layout_transform": 2, "nn.bias_add": -1}),
    ]


@pytest.mark.parametrize("desired", [NHWC, {"nn.conv2d": ["NHWC", "HWIO"], "nn.max_pool2d": ["NHWC"]}])
def test_resnet18_meaning(desired):
    mod, params = resnet.get_workload(num_layers=18, image_shape=(3, 32, 32), num_classes=10)
    CanonicalizeOpsPass().apply(None, mod.module)
    check_semantics(ConvertLayoutPass(desired), mod, params=params)


def test_mobilenet_meaning_depthwise_gets_hwoi():
    mod, params = mobilenet.get_workload(image_shape=(3, 32, 32), num_classes=10)
    CanonicalizeOpsPass().apply(None, mod.module)
    check_semantics(ConvertLayoutPass(NHWC), mod, params=params)
    ConvertLayoutPass(NHWC).apply(None, mod.module)
    kernels = Counter(
        op.attrs["kernel_layout"] for op in mod.module.walk() if op.name == "relay.nn.conv2d"
    )
    assert set(kernels) == {"HWIO", "HWOI"} and kernels["HWOI"] > 0


@pytest.mark.parametrize("index", range(6))
def test_random_dags_meaning(index):
    mod = random_dags(6, num_ops=30)[index]
    check_semantics(ConvertLayoutPass(NHWC), mod)


def test_dict_and_text_forms_agree_and_errors_are_clear():
    assert ConvertLayoutPass(NHWC) == ConvertLayoutPass("nn.conv2d=NHWC,default")
    with pytest.raises(ValueError, match="data layout cannot be 'default'"):
        ConvertLayoutPass({"nn.conv2d": ["default", "HWIO"]})
    with pytest.raises(ValueError, match="unknown op 'nn.conv9d'"):
        ConvertLayoutPass({"nn.conv9d": ["NHWC"]})
    with pytest.raises(ValueError, match="needs a list of layouts"):
        ConvertLayoutPass({"nn.max_pool2d": "NHWC"})


_QNN_RESIZE = """
func.func @main(%x: tensor<1x8x6x6xi8>, %w: tensor<4x8x3x3xi8>, %s: tensor<4xf32>) -> (tensor<1x4x12x12xf32>, tensor<1x4x6x6xi8>) {
  %zp = relay.constant dense<1> : tensor<i32>
  %sc = relay.constant dense<0.5> : tensor<f32>
  %y = qnn.conv2d %x, %w, %zp, %zp, %sc, %s {padding = [1, 1, 1, 1], channels = 4, kernel_size = [3, 3]} : (tensor<1x8x6x6xi8>, tensor<4x8x3x3xi8>, tensor<i32>, tensor<i32>, tensor<f32>, tensor<4xf32>) -> tensor<1x4x6x6xi32>
  %r = qnn.requantize %y, %s, %zp, %sc, %zp {axis = 1} : (tensor<1x4x6x6xi32>, tensor<4xf32>, tensor<i32>, tensor<f32>, tensor<i32>) -> tensor<1x4x6x6xi8>
  %f = relay.cast %r {dtype = "float32"} : (tensor<1x4x6x6xi8>) -> tensor<1x4x6x6xf32>
  %u = relay.image.resize2d %f {size = [12, 12]} : (tensor<1x4x6x6xf32>) -> tensor<1x4x12x12xf32>
  %n = relay.nn.l2_normalize %u {eps = 0.001, axis = [1]} : (tensor<1x4x12x12xf32>) -> tensor<1x4x12x12xf32>
  %i = relay.nn.instance_norm %n, %s, %s : (tensor<1x4x12x12xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x12x12xf32>
  func.return %i, %r : tensor<1x4x12x12xf32>, tensor<1x4x6x6xi8>
}
"""


def test_qnn_resize_norms_meaning():
    """qnn.conv2d converted, requantize's per-channel axis moved, resize2d / l2_normalize /
    instance_norm following NHWC: the same values (int8 exactly)."""
    mod = Parser(make_context(), _QNN_RESIZE).parse_module()
    desired = {"qnn.conv2d": ["NHWC", "default"], "image.resize2d": ["NHWC"]}
    after = mod.clone()
    ConvertLayoutPass(desired).apply(None, after)
    names = Counter(op.name for op in after.walk())
    assert names["relay.layout_transform"] == 4  # x, w in; both results back out
    check_semantics(ConvertLayoutPass(desired), mod)


_REGIONS = """
func.func @main(%x: tensor<2x8x6x6xf32>, %w: tensor<4x8x3x3xf32>) -> tensor<3x4x2x2xf32> {
  %r = relay.constant dense<[[0.0, 0.0, 0.0, 5.0, 5.0], [1.0, 1.0, 2.0, 4.0, 5.0], [1.0, -1.0, 0.5, 7.0, 3.0]]> : tensor<3x5xf32>
  %y = relay.nn.conv2d %x, %w {padding = [1, 1, 1, 1]} : (tensor<2x8x6x6xf32>, tensor<4x8x3x3xf32>) -> tensor<2x4x6x6xf32>
  %a = relay.vision.roi_align %y, %r {pooled_size = [2, 2], spatial_scale = 1.0} : (tensor<2x4x6x6xf32>, tensor<3x5xf32>) -> tensor<3x4x2x2xf32>
  %p = relay.vision.roi_pool %y, %r {pooled_size = [2, 2], spatial_scale = 1.0} : (tensor<2x4x6x6xf32>, tensor<3x5xf32>) -> tensor<3x4x2x2xf32>
  %s = relay.add %a, %p : (tensor<3x4x2x2xf32>, tensor<3x4x2x2xf32>) -> tensor<3x4x2x2xf32>
  func.return %s : tensor<3x4x2x2xf32>
}
"""


@pytest.mark.parametrize("which", ["vision.roi_align", "vision.roi_pool"])
def test_region_pools_meaning(which):
    """roi_align / roi_pool converted to NHWC (the other following through transforms)."""
    mod = Parser(make_context(), _REGIONS).parse_module()
    desired = {"nn.conv2d": ["NHWC", "default"], which: ["NHWC", "default"]}
    after = mod.clone()
    ConvertLayoutPass(desired).apply(None, after)
    layouts = {op.name: op.attrs["layout"] for op in after.walk() if op.name.startswith("relay.vision")}
    assert layouts == {"relay.vision.roi_align": "NCHW", "relay.vision.roi_pool": "NCHW", "relay." + which: "NHWC"}
    check_semantics(ConvertLayoutPass(desired), mod)


_SLICE_LIKE = """
func.func @main(%x: tensor<1x8x7x9xf32>, %w: tensor<4x8x3x3xf32>, %v: tensor<4x4x3x3xf32>) -> tensor<1x4x5x7xf32> {
  %y = relay.nn.conv2d %x, %w {padding = [1, 1, 1, 1]} : (tensor<1x8x7x9xf32>, tensor<4x8x3x3xf32>) -> tensor<1x4x7x9xf32>
  %z = relay.nn.conv2d %y, %v : (tensor<1x4x7x9xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x5x7xf32>
  %s = relay.slice_like %y, %z {axes = [2, 3]} : (tensor<1x4x7x9xf32>, tensor<1x4x5x7xf32>) -> tensor<1x4x5x7xf32>
  func.return %s : tensor<1x4x5x7xf32>
}
"""


def test_slice_like_meaning():
    """slice_like of two NHWC tensors moves its axes to H and W (no transform before it)."""
    mod = Parser(make_context(), _SLICE_LIKE).parse_module()
    after = mod.clone()
    ConvertLayoutPass(NHWC).apply(None, after)
    (s,) = [op for op in after.walk() if op.name == "relay.slice_like"]
    assert list(s.attrs["axes"]) == [1, 2]
    assert all(o.owner.name == "relay.nn.conv2d" for o in s.operands)
    check_semantics(ConvertLayoutPass(NHWC), mod)


def test_python_layout_rule_decides():
    """A rule registered from Python (Relay's register_infer_correct_layout) replaces the
    op's rule: relu kept in its old NCHW gets the conv's result transformed back first."""
    from xrelay import relay
    from xrelay.dialects.relay.layout import INFER_LAYOUT
    from xrelay.relay import transform
    from xrelay.relay.op import op as reg
    from xrelay.relay.transform.infer_layout_utils import InferCorrectLayoutOutput

    seen = []

    def keep_old(attrs, new_in_layouts, old_in_layouts, old_in_types):
        seen.append(([lay.name for lay in new_in_layouts], [lay.name for lay in old_in_layouts]))
        return InferCorrectLayoutOutput(list(old_in_layouts), [old_in_layouts[0]], attrs)

    x = relay.var("x", shape=(1, 8, 6, 6))
    w = relay.var("w", shape=(4, 8, 3, 3))
    f = relay.Function([x, w], relay.nn.relu(relay.nn.conv2d(x, w, padding=(1, 1))))
    saved = dict(INFER_LAYOUT)
    try:
        reg.register_infer_correct_layout("nn.relu", keep_old, level=11)
        mod = transform.ConvertLayout({"nn.conv2d": ["NHWC", "default"]})(relay.IRModule.from_expr(f))
    finally:
        INFER_LAYOUT.clear()
        INFER_LAYOUT.update(saved)
    assert (["NHWC"], ["NCHW"]) in seen
    body = mod["main"].body
    assert body.op.name == "nn.relu"
    back = body.args[0]
    assert back.op.name == "layout_transform" and back.attrs.dst_layout == "NCHW"
    assert back.args[0].op.name == "nn.conv2d"


_RESIZE1D = """
func.func @main(%x: tensor<2x4x8xf32>) -> tensor<2x4x3xf32> {
  %y = relay.image.resize1d %x {size = [13], method = "cubic"} : (tensor<2x4x8xf32>) -> tensor<2x4x13xf32>
  %r = relay.nn.relu %y : (tensor<2x4x13xf32>) -> tensor<2x4x13xf32>
  %z = relay.image.resize1d %r {size = [3], method = "nearest_neighbor"} : (tensor<2x4x13xf32>) -> tensor<2x4x3xf32>
  func.return %z : tensor<2x4x3xf32>
}
"""


def test_resize1d_meaning():
    """resize1d to NWC: relu follows, both resizes convert; one transform in, one out."""
    mod = Parser(make_context(), _RESIZE1D).parse_module()
    desired = {"image.resize1d": ["NWC"]}
    after = mod.clone()
    ConvertLayoutPass(desired).apply(None, after)
    names = Counter(op.name for op in after.walk())
    assert names["relay.layout_transform"] == 2
    assert [op.attrs["layout"] for op in after.walk() if op.name == "relay.image.resize1d"] == ["NWC", "NWC"]
    check_semantics(ConvertLayoutPass(desired), mod)


_DEFORMABLE = """
func.func @main(%x: tensor<1x4x7x6xf32>, %o: tensor<1x18x5x4xf32>, %w: tensor<3x4x3x3xf32>) -> tensor<1x3x5x4xf32> {
  %y = relay.nn.deformable_conv2d %x, %o, %w {kernel_size = [3, 3], channels = 3} : (tensor<1x4x7x6xf32>, tensor<1x18x5x4xf32>, tensor<3x4x3x3xf32>) -> tensor<1x3x5x4xf32>
  %r = relay.nn.relu %y : (tensor<1x3x5x4xf32>) -> tensor<1x3x5x4xf32>
  func.return %r : tensor<1x3x5x4xf32>
}
"""


def test_deformable_conv2d_meaning():
    """deformable_conv2d to NHWC/HWIO: data, offset and weight transformed in, the result out."""
    mod = Parser(make_context(), _DEFORMABLE).parse_module()
    desired = {"nn.deformable_conv2d": ["NHWC", "default"]}
    after = mod.clone()
    ConvertLayoutPass(desired).apply(None, after)
    (d,) = [op for op in after.walk() if op.name == "relay.nn.deformable_conv2d"]
    assert (d.attrs["data_layout"], d.attrs["kernel_layout"]) == ("NHWC", "HWIO")
    assert Counter(op.name for op in after.walk())["relay.layout_transform"] == 4
    check_semantics(ConvertLayoutPass(desired), mod)


@pytest.mark.parametrize("case", filecheck_cases(Path(__file__).parents[1] / "filecheck" / "transforms" / "convert-layout-conv3d.mlir"),
                         ids=lambda c: c.split("@")[1].split("(")[0])  # fmt: skip
def test_conv3d_cases_meaning(case):
    """The 3-D FileCheck cases (a convolution, its bias and residual; the 3-D pools following
    its channels-last layout) compute the same before and after."""
    module = Parser(make_context(), case).parse_module()
    entry = next(op.sym_name.data for op in module.ops)
    check_semantics(ConvertLayoutPass({"nn.conv3d": ["NDHWC", "default"]}), module, entry=entry)
