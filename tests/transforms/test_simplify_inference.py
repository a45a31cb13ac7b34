"""simplify-inference: meaning kept on ResNet-18, MobileNet, layer_norm and dropout graphs."""

from __future__ import annotations

import pytest
from xdsl.parser import Parser

from xrelay.dialects import make_context
from xrelay.testing import mobilenet, resnet
from xrelay.testing.random_graphs import random_dag
from xrelay.testing.semantics import check_semantics
from xrelay.transforms.simplify_inference import SimplifyInferencePass

LN = """
func.func @main(%x: tensor<2x4x3xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>, %h: tensor<3xf32>) -> (tensor<2x4x3xf32>, tensor<2x4x3xf32>, tensor<2x4x3xf32>) {
  %0 = relay.nn.layer_norm %x, %g, %b {axis = 1, epsilon = 0.001} : (tensor<2x4x3xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x3xf32>
  %1 = relay.nn.layer_norm %x, %h, %h {center = false} : (tensor<2x4x3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x4x3xf32>
  %2 = relay.nn.layer_norm %x, %h, %h {scale = false, axis = -1} : (tensor<2x4x3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x4x3xf32>
  %3, %4 = relay.nn.dropout %2 {rate = 0.3} : (tensor<2x4x3xf32>) -> (tensor<2x4x3xf32>, tensor<2x4x3xf32>)
  func.return %0, %1, %3 : tensor<2x4x3xf32>, tensor<2x4x3xf32>, tensor<2x4x3xf32>
}
"""

BN = """
func.func @main(%x: tensor<2x5x3xf32>, %g: tensor<5xf32>, %b: tensor<5xf32>, %m: tensor<5xf32>, %v: tensor<5xf32>) -> (tensor<2x5x3xf32>, tensor<2x5x3xf32>) {
  %va = relay.abs %v : (tensor<5xf32>) -> tensor<5xf32>
  %0, %1, %2 = relay.nn.batch_norm %x, %g, %b, %m, %va {axis = 1, scale = false} : (tensor<2x5x3xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>) -> (tensor<2x5x3xf32>, tensor<5xf32>, tensor<5xf32>)
  %3, %4, %5 = relay.nn.batch_norm %x, %g, %b, %m, %va {axis = -2, center = false, epsilon = 0.1} : (tensor<2x5x3xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>) -> (tensor<2x5x3xf32>, tensor<5xf32>, tensor<5xf32>)
  func.return %0, %3 : tensor<2x5x3xf32>, tensor<2x5x3xf32>
}
"""


def _parse(text):
    return Parser(make_context(), text).parse_module()


def _names(module):
    return [op.name for op in module.walk()]


def test_resnet18():
    mod, params = resnet.get_workload(num_layers=18, image_shape=(3, 64, 64), num_classes=10)
    _, after = check_semantics(SimplifyInferencePass(), mod, params=params)
    assert after[0].shape == (1, 10)
    module = mod.module.clone()
    SimplifyInferencePass().apply(make_context(), module)
    names = _names(module)
    assert "relay.nn.batch_norm" not in names
    # bn_data has scale=false: 19 batch norms give 18 gamma multiplies plus 2 x 19 for x*scale, -mean*scale
    assert names.count("relay.sqrt") == 19
    assert names.count("relay.multiply") == 18 + 2 * 19


def test_mobilenet():
    mod, params = mobilenet.get_workload(image_shape=(3, 32, 32), num_classes=10)
    check_semantics(SimplifyInferencePass(), mod, params=params)


def test_layer_norm_and_dropout():
    module = _parse(LN)
    check_semantics(SimplifyInferencePass(), module)
    after = module.clone()
    SimplifyInferencePass().apply(make_context(), after)
    names = _names(after)
    assert "relay.nn.layer_norm" not in names and "relay.nn.dropout" not in names
    assert names.count("relay.mean") == 6


def test_batch_norm_axes_and_flags():
    module = _parse(BN)
    check_semantics(SimplifyInferencePass(), module)


@pytest.mark.parametrize("seed", range(4))
def test_random_graphs_unchanged_in_meaning(seed):
    check_semantics(SimplifyInferencePass(), random_dag(seed, num_ops=25))
