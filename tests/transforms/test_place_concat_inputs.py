"""``place-concat-inputs``: the steps producing a concatenation's inputs write its slices.

Meaning: programs with inception-style blocks (branches joined along channels, batch 1, NCHW
and the C target's NCHW8c) run the same with and without the pass, on the arena executor
(bitwise), on the memory interpreter in its hostile mode (poisoned arenas and killed
storage) and on the C target, and all agree with the reference interpreter on the relay
program. Structure: the concatenation steps are gone, every storage's slices written by
different steps are disjoint, and the plan stays exact (nothing outside the arena).
"""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import func

import xrelay
from xrelay import relay
from xrelay.dialects import make_context
from xrelay.dialects.memory import AllocStorageOp, AllocTensorOp, CopyOp, InvokeOp
from xrelay.dialects.relay import byte_size
from xrelay.runtime.liveness import entry_block
from xrelay.runtime.memory_interpreter import run_memory
from xrelay.transforms.bind_params import bind_params_by_name
from xrelay.transforms.fuse_ops import FuseOpsPass
from xrelay.transforms.lower_to_memory import LowerToMemoryPass
from xrelay.transforms.place_concat_inputs import concat_of, place_concat_inputs
from xrelay.transforms.plan_memory import PlanMemoryPass
from xrelay.transforms.verify_memory_plan import verify_memory_plan

CTX = make_context()
OFF = ["PlaceConcatInputs"]


def _conv(x, c_in, c_out, k, rng, relu=True):
    w = relay.const((rng.standard_normal((c_out, c_in, k, k)) * 0.3).astype("float32"))
    y = relay.nn.conv2d(x, w, padding=(k // 2, k // 2), channels=c_out, kernel_size=(k, k))
    return relay.nn.relu(y) if relu else y


def inception(seed: int = 0, size: int = 12):
    """Two inception blocks (1x1, 1x1 -> 3x3, 3x3 max pool -> 1x1 branches joined along the
    channels), a concatenation of a concatenation, and a head reading the joined tensor."""
    rng = np.random.default_rng(seed)
    x = relay.var("x", shape=(1, 16, size, size))

    def block(v, c_in):
        a = _conv(v, c_in, 16, 1, rng)
        b = _conv(_conv(v, c_in, 8, 1, rng), 8, 32, 3, rng)
        p = _conv(relay.nn.max_pool2d(v, (3, 3), padding=(1, 1)), c_in, 16, 1, rng)
        return relay.concatenate([a, b, p], axis=1), 64

    y, c = block(x, 16)
    y, c = block(y, c)
    inner = relay.concatenate([_conv(y, c, 16, 1, rng), _conv(y, c, 16, 3, rng)], axis=1)
    y = relay.concatenate([inner, _conv(y, c, 32, 1, rng)], axis=1)
    y = relay.nn.global_avg_pool2d(_conv(y, 64, 8, 1, rng, relu=False))
    return xrelay.IRModule.from_expr(relay.Function([x], y)), (1, 16, size, size)


def _data(shape, seed=1):
    return np.random.default_rng(seed).standard_normal(shape).astype("float32")


def _main(program):
    return [f for f in program.ops if isinstance(f, func.FuncOp) and f.sym_name.data == "main"][0]


def _concat_steps(program) -> int:
    funcs = {f.sym_name.data: f for f in program.ops if isinstance(f, func.FuncOp)}
    return sum(1 for op in _main(program).body.block.ops
               if isinstance(op, InvokeOp) and concat_of(funcs.get(op.callee_name)) is not None)  # fmt: skip


def _assert_slices_disjoint(program) -> int:
    """Within every storage, the tensors that steps or copies write do not overlap; returns
    how many storages hold more than one written tensor."""
    block = entry_block(program)
    written = {v for op in block.ops if isinstance(op, InvokeOp) for v in op.outs}
    written |= {op.dest for op in block.ops if isinstance(op, CopyOp)}
    by_storage: dict = {}
    for op in block.ops:
        if isinstance(op, AllocTensorOp) and op.result in written:
            off = op.offset.value.data
            by_storage.setdefault(op.storage, []).append((off, off + byte_size(op.result.type)))
    shared = 0
    for ranges in by_storage.values():
        ranges.sort()
        for (_, end), (start, _) in zip(ranges, ranges[1:]):
            assert end <= start, f"slices overlap: {ranges}"
        shared += len(ranges) > 1
    return shared


def test_executor_same_outputs_without_concat_steps():
    mod, shape = inception()
    x = _data(shape)
    ref = np.asarray(xrelay.run(mod, {"x": x}))
    outs, steps, copies = {}, {}, {}
    for disabled in ([], OFF):
        with xrelay.transform.PassContext(disabled_pass=disabled):
            m = xrelay.build(mod, {}, opt_level=3, backends=("native",))
        copies[str(disabled)] = sum(isinstance(op, CopyOp) for op in _main(m.executor.module).body.block.ops)
        m.set_input(x=x)
        m.run()
        out = m.get_output(0).numpy()
        assert np.isfinite(out).all() and np.abs(out).max() > 0
        outs[str(disabled)] = out
        steps[str(disabled)] = _concat_steps(m.executor.module)
        outside = m.executor.outside_arena()
        assert outside.held_bytes == 0 and outside.run_bytes == 0
        verify_memory_plan(m.executor.module)
    on, off = outs["[]"], outs[str(OFF)]
    np.testing.assert_array_equal(on, off)
    np.testing.assert_allclose(on, ref.reshape(on.shape), rtol=1e-4, atol=1e-4)
    assert steps[str(OFF)] == 3 and steps["[]"] == 0  # (the nested pair is one fused step)
    assert copies["[]"] > copies[str(OFF)]  # the second block's: its placement is partial


def _lowered(mod, **options):
    m = mod.module.clone()
    bind_params_by_name(m, {})
    FuseOpsPass().apply(CTX, m)
    LowerToMemoryPass(**options).apply(CTX, m)
    return m


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("outputs_in_arena", [True, False])
def test_memory_interpreter_poisoned(seed, outputs_in_arena):
    """The planned program, run with every killed storage and every workspace poisoned, gives
    the reference's values: a slice written early is not overwritten by a buffer the planner
    put in the same bytes (the storage's lifetime starts at its first producer)."""
    mod, shape = inception(seed, size=8 + 2 * seed)
    x = _data(shape, seed)
    ref = np.asarray(xrelay.run(mod, {"x": x}))
    m = _lowered(mod, outputs_in_arena=outputs_in_arena)
    before = _concat_steps(m)
    assert place_concat_inputs(m) == before == 3
    m.verify()
    assert _concat_steps(m) == 0
    assert _assert_slices_disjoint(m) >= 3
    PlanMemoryPass(algorithm="greedy-by-size").apply(CTX, m)
    verify_memory_plan(m)
    (out,) = run_memory(m, {"x": x}, poison=True)
    np.testing.assert_allclose(out, ref.reshape(out.shape), rtol=1e-5, atol=1e-5)


def test_storage_lives_from_its_first_producer():
    mod, _ = inception()
    m = _lowered(mod)
    place_concat_inputs(m)
    block = entry_block(m)
    invokes = [op for op in block.ops if isinstance(op, InvokeOp)]
    for op in block.ops:
        if not isinstance(op, AllocStorageOp) or op.storage_kind not in ("intermediate", "output"):
            continue
        tensors = [u.operation.result for u in op.result.uses if isinstance(u.operation, AllocTensorOp)]
        writers = [k for k, inv in enumerate(invokes) if any(v in inv.outs for v in tensors)]
        if writers:
            assert op.lifetime_range[0] == min(writers)


def test_export_graph_json_and_load(tmp_path):
    """The graph JSON names a concatenation written in place as a ``__nop`` node of its parts
    sharing their storage id, and the export loads and runs (its JSON checked on load)."""
    from xrelay.runtime.executor_factory import load

    mod, shape = inception()
    x = _data(shape)
    m = xrelay.build(mod, {}, opt_level=3, backends=("native",))
    graph = m.graph_json()
    nops = [n for n in graph["nodes"] if n["name"].startswith("concatenate_nop")]
    assert len(nops) == 3
    row, sids = graph["node_row_ptr"], graph["attrs"]["storage_id"][1]
    names = [n["name"] for n in graph["nodes"]]
    for node in nops:
        sid = sids[row[names.index(node["name"])]]
        parts = [sids[row[i] + k] for i, k, _ in node["inputs"]]
        assert sid in parts and len(parts) >= 2
    paths = [str(tmp_path / f) for f in ("graph.json", "lib.mlir", "params.npz")]
    m.export(*paths)
    loaded = load(*paths)
    m.set_input(x=x)
    m.run()
    loaded.set_input(x=x)
    loaded.run()
    np.testing.assert_array_equal(loaded.get_output(0).numpy(), m.get_output(0).numpy())


def test_plan_not_larger_and_runs_twice():
    """The arena is at most what it was (the pass refuses a placement that raises the most
    bytes live at once), and a second run of the pass finds nothing more."""
    mod, _ = inception()
    sizes, steps = {}, {}
    for disabled in ([], OFF):
        with xrelay.transform.PassContext(disabled_pass=disabled):
            m = xrelay.build(mod, {}, opt_level=3, backends=("native",))
        sizes[str(disabled)] = sum(m.executor.pool_sizes.values())
        steps[str(disabled)] = sum(isinstance(op, InvokeOp) for op in _main(m.executor.module).body.block.ops)
    assert sizes["[]"] <= sizes[str(OFF)]
    assert steps["[]"] == steps[str(OFF)] - 3
    again = _lowered(mod)
    assert place_concat_inputs(again) == 3
    assert place_concat_inputs(again) == 0


def test_planned_module_is_refused():
    mod, _ = inception()
    m = _lowered(mod)
    PlanMemoryPass().apply(CTX, m)
    with pytest.raises(Exception, match="before plan-memory"):
        place_concat_inputs(m)


def test_c_target_same_outputs():
    """The C target consumes the same plan: its blocked (NCHW8c) concatenations along the
    outer channel axis are contiguous too, so its producers write the slices."""
    from xrelay.backend.build import build_c

    mod, shape = inception(size=10)
    x = _data(shape)
    ref = np.asarray(xrelay.run(mod, {"x": x}))
    outs, steps = {}, {}
    for disabled in ([], OFF):
        with xrelay.transform.PassContext(disabled_pass=disabled):
            lib = build_c(mod, {})
        lib.set_input(x=x)
        lib.run()
        outs[str(disabled)] = lib.get_output(0).numpy()
        steps[str(disabled)] = _concat_steps(lib.planned)
    np.testing.assert_array_equal(outs["[]"], outs[str(OFF)])
    np.testing.assert_allclose(outs["[]"], ref.reshape(outs["[]"].shape), rtol=1e-4, atol=1e-4)
    assert steps["[]"] < steps[str(OFF)]


TRAILING_COPIES = """
func.func private @neg(%p: tensor<1x256xf32>) -> tensor<1x256xf32> attributes {relay.primitive = 1 : i64} {
  %r = relay.negative %p : (tensor<1x256xf32>) -> tensor<1x256xf32>
  func.return %r : tensor<1x256xf32>
}
func.func private @big(%p: tensor<1x256xf32>) -> tensor<1x256xf32> attributes {relay.primitive = 1 : i64, relay.kernel_scratch_bytes = 4096 : i64} {
  %r = relay.exp %p : (tensor<1x256xf32>) -> tensor<1x256xf32>
  func.return %r : tensor<1x256xf32>
}
func.func private @cat(%a: tensor<1x256xf32>, %b: tensor<1x256xf32>, %e: tensor<1x256xf32>) -> tensor<1x768xf32> attributes {relay.primitive = 1 : i64} {
  %r = relay.concatenate %a, %b, %e {axis = 1} : (tensor<1x256xf32>, tensor<1x256xf32>, tensor<1x256xf32>) -> tensor<1x768xf32>
  func.return %r : tensor<1x768xf32>
}
func.func @main(%x: tensor<1x256xf32>) -> tensor<1x768xf32> {
  %a = func.call @neg(%x) : (tensor<1x256xf32>) -> tensor<1x256xf32>
  %b = func.call @big(%x) : (tensor<1x256xf32>) -> tensor<1x256xf32>
  %e = func.call @neg(%x) : (tensor<1x256xf32>) -> tensor<1x256xf32>
  %c = func.call @cat(%a, %b, %e) : (tensor<1x256xf32>, tensor<1x256xf32>, tensor<1x256xf32>) -> tensor<1x768xf32>
  func.return %c : tensor<1x768xf32>
}
"""


def test_partial_placement_copies_after_the_last_step():
    """Placing only %e (the others would raise the peak): %a and %b are copied into their
    slices after the last step, and die only after those copies (poisoned on kill)."""
    from xdsl.parser import Parser

    module = Parser(CTX, TRAILING_COPIES).parse_module()
    x = _data((1, 256))
    ref = np.asarray(xrelay.run(module.clone(), {"x": x}))
    m = module.clone()
    LowerToMemoryPass().apply(CTX, m)
    assert place_concat_inputs(m) == 1
    copies = [op for op in entry_block(m).ops if isinstance(op, CopyOp)]
    assert len(copies) == 3  # the input's, %a's and %b's
    PlanMemoryPass().apply(CTX, m)
    verify_memory_plan(m)
    (out,) = run_memory(m, {"x": x}, poison=True)
    np.testing.assert_array_equal(out, ref.reshape(out.shape))
    np.testing.assert_allclose(out, np.concatenate([-x, np.exp(x), -x], axis=1), rtol=1e-6)


def test_channels_last_concatenation_keeps_its_step():
    """NHWC along channels: each input is a strided slice of the result, so nothing is
    placed (placing it as one byte range would interleave the wrong elements)."""
    rng = np.random.default_rng(3)
    x = relay.var("x", shape=(1, 3, 5, 4))
    a = relay.nn.max_pool2d(x, (1, 1), layout="NHWC")
    b = relay.nn.avg_pool2d(x, (1, 1), layout="NHWC")
    y = relay.nn.max_pool2d(relay.concatenate([a, b], axis=3), (1, 1), layout="NHWC")
    mod = xrelay.IRModule.from_expr(relay.Function([x], y))
    data = rng.standard_normal((1, 3, 5, 4)).astype("float32")
    m = _lowered(mod)
    assert _concat_steps(m) == 1
    assert place_concat_inputs(m) == 0
    PlanMemoryPass().apply(CTX, m)
    (out,) = run_memory(m, {"x": data}, poison=True)
    np.testing.assert_allclose(out, np.concatenate([data, data], axis=3), rtol=1e-6)
