"""canonicalize-ops: bias_add to add keeps the meaning."""

from __future__ import annotations

import numpy as np
import pytest
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


EINSUMS = [
    # (equation, shapes): attention (MaxViT), swapped operands, transposed output, no batch,
    # several free and summed letters, a vector
    ("bghid,bghjd->bghij", [(1, 2, 3, 5, 8), (1, 2, 3, 6, 8)]),
    ("bghij,bghjd->bghid", [(1, 2, 3, 5, 6), (1, 2, 3, 6, 8)]),
    ("bji,bjk->bik", [(2, 4, 3), (2, 4, 5)]),
    ("ij,kj->ki", [(3, 4), (5, 4)]),
    ("b i j, b k j -> k b i", [(2, 3, 4), (2, 5, 4)]),
    ("abcd,cde->bae", [(2, 3, 4, 5), (4, 5, 6)]),
    ("ij,j->i", [(3, 4), (4,)]),
    ("bn,bnd->bd", [(2, 7), (2, 7, 3)]),
]


@pytest.mark.parametrize("equation,shapes", EINSUMS)
def test_einsum_as_batch_matmul_keeps_the_meaning(equation, shapes):
    args = ", ".join(f"%a{i}: tensor<{'x'.join(map(str, s))}xf32>" for i, s in enumerate(shapes))
    out = np.einsum(equation.replace(" ", ""), *[np.zeros(s, np.float32) for s in shapes]).shape
    ty = f"tensor<{'x'.join(map(str, out))}xf32>"
    ins = ", ".join(f"tensor<{'x'.join(map(str, s))}xf32>" for s in shapes)
    text = f"""
func.func @main({args}) -> {ty} {{
  %y = relay.einsum %a0, %a1 {{equation = "{equation}"}} : ({ins}) -> {ty}
  func.return %y : {ty}
}}
"""
    module = Parser(make_context(), text).parse_module()
    check_semantics(CanonicalizeOpsPass(), module, trials=2)
    CanonicalizeOpsPass().apply(make_context(), module)
    names = [op.name for op in module.walk()]
    assert "relay.einsum" not in names and names.count("relay.nn.batch_matmul") == 1
