"""Two memory scopes of one device, SRAM and DRAM, on MobileNetV2 (224x224, from ONNX).

A registered device ``testmcu`` has an unbounded DRAM (its default scope) and a 256 KiB SRAM.
Every op whose activations (operands and result) are at most 96 KiB is annotated onto the
SRAM, every other one onto the DRAM, as an embedded engineer would pin the tail of the network
into fast memory; plan-devices inserts the copies between scopes, and each scope is planned
into its own pool.
"""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.rewriter import InsertPoint, Rewriter

import xrelay
from xrelay.dialects import module_op
from xrelay.dialects.memory import AllocStorageOp, PoolOp
from xrelay.dialects.relay import RELAY_OPS, ConstantOp, RelayOp, byte_size
from xrelay.dialects.relay.device_analysis import functions_by_name
from xrelay.dialects.relay.devices import MemoryScope, register_device
from xrelay.frontends.onnx import from_onnx
from xrelay.testing import onnx_models
from xrelay.transforms.planners import PlanError

SRAM_BYTES = 256 * 1024
register_device("testmcu", memory_scopes={"dram": MemoryScope(None, 64), "sram": MemoryScope(SRAM_BYTES, 16)})
register_device("tinymcu", memory_scopes={"dram": MemoryScope(None, 64), "sram": MemoryScope(8 * 1024, 16)})


def _annotated(mod, device: str, limit: int = 96 * 1024):
    sram = xrelay.VirtualDevice(device, memory_scope="sram")
    dram = xrelay.VirtualDevice(device, memory_scope="dram")
    mod = mod.clone()
    main = functions_by_name(module_op(mod))["main"]
    n_sram = 0
    for op in list(main.body.block.ops):
        if not isinstance(op, RelayOp) or len(op.results) != 1:
            continue
        acts = [v for v in (*op.operands, *op.results) if not isinstance(v.owner, ConstantOp)]
        small = max(byte_size(v.type) for v in acts) <= limit
        n_sram += small
        ann = RELAY_OPS["on_device"].make([op.results[0]], virtual_device=sram if small else dram)
        Rewriter.insert_op(ann, InsertPoint.after(op))
        op.results[0].replace_uses_with_if(ann.results[0], lambda u, ann=ann: u.operation is not ann)
    assert n_sram > 0
    return mod


@pytest.fixture(scope="module")
def mobilenet():
    return from_onnx(onnx_models.mobilenet_v2(image=224))


def test_sram_and_dram_pools_with_the_sram_bounded(mobilenet):
    mod, params = mobilenet
    m = xrelay.build(
        _annotated(mod, "testmcu"), params, target={"testmcu": "llvm"},
        pool_algorithms={"testmcu0.sram": "optimal"},
    )
    pools = {op.pool_name: op for op in m.program.ops if isinstance(op, PoolOp)}
    assert set(pools) == {"testmcu0.sram", "testmcu0.dram"}
    sram = pools["testmcu0.sram"]
    assert sram.capacity.value.data == SRAM_BYTES
    assert 0 < sram.size.value.data <= SRAM_BYTES
    # every storage is in the pool of its scope, and the SRAM holds only small tensors
    storages = [op for op in m.program.walk() if isinstance(op, AllocStorageOp)]
    in_sram = [s for s in storages if s.placement[0] == "testmcu0.sram"]
    assert in_sram and all(s.nbytes <= 96 * 1024 for s in in_sram)
    assert all(s.placement[0] == s.pools.data[0].data for s in storages)
    buffers, _, plan = m._plan_info
    assert plan.stats["spaces"] == {"testmcu0.dram": "greedy-by-size", "testmcu0.sram": "optimal"}
    report = m.memory_report()
    assert "testmcu0.sram" in report and "262144" in report and "testmcu0.dram" in report

    single = xrelay.build(mod, params)
    x = np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype("float32")
    m.run(data=x)
    single.run(data=x)
    np.testing.assert_allclose(m.get_output(0).numpy(), single.get_output(0).numpy(), rtol=1e-4, atol=1e-4)


def test_an_sram_too_small_is_an_error_naming_the_buffer_and_pool(mobilenet):
    mod, params = mobilenet
    with pytest.raises(PlanError, match=r"fits in no pool: pool 'tinymcu0\.sram' \(8192 bytes"):
        xrelay.build(_annotated(mod, "tinymcu"), params, target={"tinymcu": "llvm"})
