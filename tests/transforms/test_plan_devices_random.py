"""plan-devices on random DAGs with random annotations: either a clear conflict error or a
plan that keeps the meaning, is idempotent, never fuses across devices, and builds and runs
(each device's steps in its own arenas) to the reference interpreter's results."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.rewriter import InsertPoint, Rewriter

import xrelay
from xrelay import relay
from xrelay.dialects import module_op
from xrelay.dialects.relay import RELAY_OPS, RelayOp
from xrelay.dialects.relay.device_analysis import device_copy_of, functions_by_name, value_devices
from xrelay.runtime.interpreter import random_inputs, run
from xrelay.testing.random_graphs import random_dag
from xrelay.testing.semantics import check_semantics
from xrelay.transforms.plan_devices import PlanDevicesError, plan_devices

DEVICES = [
    xrelay.VirtualDevice("cpu"),
    xrelay.VirtualDevice("cpu(1)"),
    xrelay.VirtualDevice("cpu", memory_scope="sram"),
]


def _annotated(seed: int):
    rng = np.random.default_rng(seed)
    module = random_dag(seed, 25)
    main = functions_by_name(module)["main"]
    for op in list(main.body.block.ops):
        if not isinstance(op, RelayOp) or len(op.results) != 1 or rng.random() < 0.5:
            continue
        vd = DEVICES[rng.integers(len(DEVICES))]
        ann = RELAY_OPS["on_device"].make([op.results[0]], virtual_device=vd, constrain_result=bool(rng.random() < 0.2))
        Rewriter.insert_op(ann, InsertPoint.after(op))
        op.results[0].replace_uses_with_if(ann.results[0], lambda u, ann=ann: u.operation is not ann)
    return xrelay.IRModule.from_module_op(module)


@pytest.mark.parametrize("seed", range(10))
def test_random_annotations(seed):
    mod = _annotated(seed)
    planned = mod.clone()
    try:
        plan_devices(module_op(planned))
    except PlanDevicesError as e:
        assert "#relay.virtual_device<" in str(e) and "@main" in str(e)
        return
    check_semantics(relay.transform.PlanDevices("cpu"), mod)
    text = str(planned)
    assert str(relay.transform.PlanDevices("cpu")(planned.clone())) == text
    fused = relay.transform.FuseOps()(planned.clone())
    funcs = functions_by_name(module_op(fused))
    devices = value_devices(funcs["main"], funcs)
    for op in funcs["main"].body.block.ops:
        if op.name == "func.call" and device_copy_of(funcs[op.callee.root_reference.data]) is None:
            assert {devices[v] for v in (*op.operands, *op.results)} == {devices[op.results[0]]}
    inputs = random_inputs(module_op(mod), seed)
    expected = run(mod, inputs)
    m = xrelay.build(mod, target={"cpu": "llvm", "cpu(1)": "llvm"})
    m.run(**inputs)
    for i, want in enumerate(expected):
        np.testing.assert_allclose(m.get_output(i).numpy(), want, rtol=1e-4, atol=1e-4)


def test_some_random_annotations_plan():
    ok = 0
    for seed in range(10):
        try:
            plan_devices(module_op(_annotated(seed)))
            ok += 1
        except PlanDevicesError:
            pass
    assert ok >= 5
