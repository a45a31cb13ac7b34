"""simplify-expr and the combine-parallel passes keep the meaning of MobileNetV2 and ResNet-18
as imported from ONNX (small images; weights as parameters, bound by check_semantics)."""

from __future__ import annotations

import pytest

from xrelay.frontends import import_onnx
from xrelay.testing import onnx_models
from xrelay.testing.semantics import check_semantics
from xrelay.transforms.combine_parallel_batch_matmul import CombineParallelBatchMatmulPass
from xrelay.transforms.combine_parallel_conv2d import CombineParallelConv2DPass
from xrelay.transforms.combine_parallel_dense import CombineParallelDensePass
from xrelay.transforms.simplify_expr import SimplifyExprPass

PASSES = [
    SimplifyExprPass(),
    CombineParallelConv2DPass(2),
    CombineParallelDensePass(2),
    CombineParallelDensePass(2, False),
    CombineParallelBatchMatmulPass(2),
]


@pytest.fixture(scope="module", params=["mobilenet_v2", "resnet18"])
def imported(request):
    model = getattr(onnx_models, request.param)(image=32, num_classes=10)
    return import_onnx(model)


@pytest.mark.parametrize("p", PASSES, ids=lambda p: p.name + ("-flat" if getattr(p, "to_batch", True) is False else ""))
def test_onnx_models(imported, p):
    check_semantics(p, imported.module, params=imported.params, rtol=1e-4, atol=1e-4)
