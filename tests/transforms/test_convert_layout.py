"""convert-layout: seed 001's op counts on ResNet-18, meaning kept on real and random graphs."""

from __future__ import annotations

from collections import Counter

import pytest
from xdsl.parser import Parser

from xrelay.dialects import make_context
from xrelay.relay import transform
from xrelay.relay.build_module import bind_params_by_name
from xrelay.testing import mobilenet, resnet
from xrelay.testing.random_graphs import random_dags
from xrelay.testing.semantics import check_semantics
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
