"""canonicalize-ops: bias_add to add keeps the meaning."""

from __future__ import annotations

from xdsl.parser import Parser

from xrelay.dialects import make_context
from xrelay.testing import mobilenet, resnet
from xrelay.testing.semantics import check_semantics
from xrelay.transforms.canonicalize_ops import CanonicalizeOpsPass

AXES = """
func.func @main(%x: tensor<2x3x4x5xf32>, %a: tensor<2xf32>, %b: tensor<3xf32>, %c: tensor<4xf32>, %d: tensor<5xf32>) -> tensor<2x3x4x5xf32> {
  %0 = relay.nn.bias_add %x, %a {axis = 0} : (tensor<2x3x4x5xf32>, tensor<2xf32>) -> tensor<2x3x4x5xf32>
  %1 = relay.nn.bias_add %0, %b : (tensor<2x3x4x5xf32>, tensor<3xf32>) -> tensor<2x3x4x5xf32>
  %2 = relay.nn.bias_add %1, %c {axis = -2} : (tensor<2x3x4x5xf32>, tensor<4xf32>) -> tensor<2x3x4x5xf32>
  %3 = relay.nn.bias_add %2, %d {axis = 3} : (tensor<2x3x4x5xf32>, tensor<5xf32>) -> tensor<2x3x4x5xf32>
  func.return %3 : tensor<2x3x4x5xf32>
}
"""


def test_every_axis():
    module = Parser(make_context(), AXES).parse_module()
    check_semantics(CanonicalizeOpsPass(), module)
    CanonicalizeOpsPass().apply(make_context(), module)
    names = [op.name for op in module.walk()]
    assert "relay.nn.bias_add" not in names
    assert names.count("relay.expand_dims") == 3 and names.count("relay.add") == 4


def test_resnet_and_mobilenet():
    for workload in (resnet, mobilenet):
        mod, params = workload.get_workload(image_shape=(3, 32, 32), num_classes=10)
        check_semantics(CanonicalizeOpsPass(), mod, params=params)
