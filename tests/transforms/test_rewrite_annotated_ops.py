"""rewrite-annotated-ops: seed 002's RunDeviceAnnotationPass example, ported by changing imports.

The seed's script annotates ``sqrt`` and ``exp`` with ``on_device(..., "cuda")`` and runs
``RewriteAnnotatedOps(1)``; its printed result is rebuilt here with the Python API and compared
structurally, and the rewrite keeps the module's meaning (every device is host memory here).
"""

from __future__ import annotations

import xrelay as tvm  # the seed says tvm.IRModule
from xrelay import relay
from xrelay.testing.semantics import check_semantics
from xrelay.testing.structural import assert_structural_equal

CPU = tvm.VirtualDevice("cpu")
CUDA = tvm.VirtualDevice("cuda")


def _seed_module():
    x = relay.var("x", shape=(1, 10))
    y = relay.var("y", shape=(1, 10))
    add = relay.add(x, y)
    sqrt = relay.sqrt(add)
    _sqrt = relay.annotation.on_device(sqrt, "cuda")
    log = relay.log(add)
    subtract = relay.subtract(_sqrt, log)
    exp = relay.exp(subtract)
    _exp = relay.annotation.on_device(exp, "cuda")
    func = relay.Function([x, y], _exp)
    return tvm.IRModule.from_expr(func)


def _seed_expected():
    """The seed's printed ``fn``: copies into and out of cuda around sqrt and exp."""
    x = relay.var("x", shape=(1, 10))
    y = relay.var("y", shape=(1, 10))
    a = relay.add(x, y)
    b = relay.device_copy(a, CPU, CUDA)
    c = relay.sqrt(b)
    d = relay.device_copy(c, CUDA, CPU)
    e = relay.log(a)
    f = relay.subtract(d, e)
    g = relay.device_copy(f, CPU, CUDA)
    return relay.Function([x, y], relay.exp(g))


def test_seed_002_rewrite_annotated_ops():
    mod = _seed_module()
    assert mod.mlir_text().count("relay.on_device") == 2
    mod = relay.transform.RewriteAnnotatedOps(1)(mod)
    text = mod.mlir_text()
    assert "relay.on_device" not in text
    assert text.count("relay.device_copy") == 3
    assert_structural_equal(mod, tvm.IRModule.from_expr(_seed_expected()))


def test_meaning_kept_and_plan_devices_accepts_the_result():
    # sqrt and log of x + y: positive inputs keep the reference finite
    check_semantics(relay.transform.RewriteAnnotatedOps(1), _seed_module(), positive=["x", "y"])
    mod = relay.transform.PlanDevices("cpu")(relay.transform.RewriteAnnotatedOps(1)(_seed_module()))
    text = mod.mlir_text()
    # the result is computed on cuda, so main's result lives there; the copies stay
    assert "relay.result_virtual_device = #relay.virtual_device<cuda(0)>" in text
    assert text.count("relay.device_copy") == 3
