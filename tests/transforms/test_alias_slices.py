"""``alias-slices``: a step that only selects a contiguous byte range of its input is a view.

Meaning: an attention block whose fused Q/K/V projection (through an activation) is split by ``take`` of constant
indices (``canonicalize-views`` makes them outer-axis slices) and a split along the outer
axis run the same with and without the pass on the arena executor (bitwise, nothing
outside the arena), on the memory interpreter with killed storage poisoned, from an export
(graph JSON and planned program) and on the C target; all agree with the reference
interpreter. Structure: the slice steps are gone and their readers read the source's bytes.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.parser import Parser

import xrelay
from xrelay import relay
from xrelay.dialects import make_context
from xrelay.dialects.memory import AllocTensorOp, InvokeOp
from xrelay.runtime.memory_interpreter import run_memory
from xrelay.testing.semantics import filecheck_cases
from xrelay.transforms.alias_slices import alias_slices, slice_offsets
from xrelay.transforms.canonicalize_views import CanonicalizeViewsPass
from xrelay.transforms.fuse_ops import FuseOpsPass
from xrelay.transforms.lower_to_memory import LowerToMemoryPass
from xrelay.transforms.plan_memory import PlanMemoryPass
from xrelay.transforms.verify_memory_plan import verify_memory_plan

CTX = make_context()
OFF = ["AliasSlices"]
CASES = filecheck_cases(Path(__file__).parents[1] / "filecheck" / "transforms" / "alias-slices.mlir")


def attention(tokens: int = 8, heads: int = 2, dim: int = 16, seed: int = 0):
    """qkv = dense(x) seen as (tokens, 3, heads, dim/heads), permuted to (3, heads, tokens,
    dim/heads) and through an activation; q, k, v = take(qkv, 0/1/2); softmax(q k^T) v; a
    split of the result along heads feeds two heads' sums. (Without the activation,
    canonicalize-views would slice before the permutation: no outer-axis slice is left.)"""
    rng = np.random.default_rng(seed)
    d = dim // heads
    x = relay.var("x", shape=(tokens, dim))
    w = relay.const(rng.standard_normal((3 * dim, dim)).astype("float32") * 0.3)
    qkv = relay.nn.dense(x, w)
    qkv = relay.tanh(relay.transpose(relay.reshape(qkv, (tokens, 3, heads, d)), (1, 2, 0, 3)))
    q, k, v = (relay.take(qkv, relay.const(i, "int64"), axis=0) for i in range(3))
    s = relay.nn.softmax(relay.nn.batch_matmul(q, k))
    o = relay.nn.batch_matmul(s, v, transpose_b=False)
    parts = relay.split(o, 2, axis=0)
    y = relay.add(relay.nn.softmax(parts[0]), relay.nn.softmax(parts[1]))
    return xrelay.IRModule.from_expr(relay.Function([x], y)), (tokens, dim)


def _main(program):
    return [f for f in program.ops if isinstance(f, func.FuncOp) and f.sym_name.data == "main"][0]


def _slice_steps(program) -> int:
    funcs = {f.sym_name.data: f for f in program.ops if isinstance(f, func.FuncOp)}
    return sum(1 for op in _main(program).body.block.ops
               if isinstance(op, InvokeOp) and slice_offsets(funcs.get(op.callee_name)) is not None)  # fmt: skip


def _data(shape, seed=1):
    return np.random.default_rng(seed).standard_normal(shape).astype("float32")


def test_executor_same_outputs_without_slice_steps():
    mod, shape = attention()
    x = _data(shape)
    ref = np.asarray(xrelay.run(mod, {"x": x}))
    outs, steps = {}, {}
    for disabled in ([], OFF):
        with xrelay.transform.PassContext(disabled_pass=disabled):
            m = xrelay.build(mod, {}, opt_level=3, backends=("native",))
        m.set_input(x=x)
        m.run()
        out = m.get_output(0).numpy()
        assert np.isfinite(out).all() and np.ptp(out) > 0
        outs[str(disabled)] = out
        steps[str(disabled)] = _slice_steps(m.executor.module)
        if not disabled:  # (without the pass the native split kernel makes numpy's few index bytes)
            outside = m.executor.outside_arena()
            assert outside.held_bytes == 0 and outside.run_bytes == 0
        verify_memory_plan(m.executor.module)
    np.testing.assert_array_equal(outs["[]"], outs[str(OFF)])
    np.testing.assert_allclose(outs["[]"], ref.reshape(outs["[]"].shape), rtol=1e-5, atol=1e-5)
    assert steps[str(OFF)] >= 3 and steps["[]"] == 0


@pytest.mark.parametrize("seed", [0, 1])
def test_memory_interpreter_poisoned(seed):
    """Planned, with every killed storage poisoned: the source outlives its slices' readers."""
    mod, shape = attention(seed=seed)
    x = _data(shape, seed)
    ref = np.asarray(xrelay.run(mod, {"x": x}))
    m = mod.module.clone()
    CanonicalizeViewsPass().apply(CTX, m)  # the takes of constant indices: outer-axis slices
    FuseOpsPass().apply(CTX, m)
    LowerToMemoryPass().apply(CTX, m)
    before = _slice_steps(m)
    assert before >= 3 and alias_slices(m) == before
    m.verify()
    assert alias_slices(m) == 0
    PlanMemoryPass(algorithm="greedy-by-size").apply(CTX, m)
    verify_memory_plan(m)
    views = [op for op in _main(m).body.block.ops if isinstance(op, AllocTensorOp) and op.offset.value.data]
    assert len(views) >= 3
    (out,) = run_memory(m, {"x": x}, poison=True)
    np.testing.assert_allclose(out, ref.reshape(out.shape), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("case", CASES, ids=range(len(CASES)))
def test_filecheck_cases_run_the_same(case):
    """Each FileCheck program, lowered and planned with and without the pass, on the memory
    interpreter with poisoned storage: the reference interpreter's values."""
    from xrelay.runtime.interpreter import run

    module = Parser(CTX, case).parse_module()
    args = [a for a in _main(module).body.block.args]
    inputs = {a.name_hint: _data(tuple(a.type.get_shape()), i) for i, a in enumerate(args)}
    ref = run(module.clone(), inputs)
    for aliased in (False, True):
        m = module.clone()
        FuseOpsPass().apply(CTX, m)
        LowerToMemoryPass().apply(CTX, m)
        if aliased:
            alias_slices(m)
        PlanMemoryPass().apply(CTX, m)
        outs = run_memory(m, inputs, poison=True)
        for o, r in zip(outs, ref):
            np.testing.assert_allclose(o, r, rtol=1e-6, atol=1e-6)


def test_export_graph_json_and_load(tmp_path):
    """A slice read in place is a ``__nop`` of the tensor around it, sharing its storage id;
    the export loads and runs."""
    from xrelay.runtime.executor_factory import load

    mod, shape = attention()
    x = _data(shape)
    m = xrelay.build(mod, {}, opt_level=3, backends=("native",))
    graph = m.graph_json()
    row, sids = graph["node_row_ptr"], graph["attrs"]["storage_id"][1]
    nops = [(i, n) for i, n in enumerate(graph["nodes"]) if n.get("attrs", {}).get("func_name") == "__nop"]
    shared = [n for i, n in nops if len(n["inputs"]) == 1 and sids[row[i]] == sids[row[n["inputs"][0][0]] + n["inputs"][0][1]]]
    assert len(shared) >= 3
    paths = [str(tmp_path / f) for f in ("graph.json", "lib.mlir", "params.npz")]
    m.export(*paths)
    loaded = load(*paths)
    m.set_input(x=x)
    m.run()
    loaded.set_input(x=x)
    loaded.run()
    np.testing.assert_array_equal(loaded.get_output(0).numpy(), m.get_output(0).numpy())


def test_c_target_same_outputs():
    from xrelay.backend.build import build_c

    mod, shape = attention()
    x = _data(shape)
    ref = np.asarray(xrelay.run(mod, {"x": x}))
    outs, steps = {}, {}
    for disabled in ([], OFF):
        with xrelay.transform.PassContext(disabled_pass=disabled):
            lib = build_c(mod, {})
        lib.set_input(x=x)
        lib.run()
        outs[str(disabled)] = lib.get_output(0).numpy()
        steps[str(disabled)] = _slice_steps(lib.planned)
    np.testing.assert_array_equal(outs["[]"], outs[str(OFF)])
    np.testing.assert_allclose(outs["[]"], ref.reshape(outs["[]"].shape), rtol=1e-4, atol=1e-4)
    assert steps["[]"] < steps[str(OFF)]


def test_planned_module_is_refused():
    mod, _ = attention()
    m = mod.module.clone()
    FuseOpsPass().apply(CTX, m)
    LowerToMemoryPass().apply(CTX, m)
    PlanMemoryPass().apply(CTX, m)
    with pytest.raises(Exception, match="before plan-memory"):
        alias_slices(m)


@pytest.mark.parametrize("level", [0, 3])
def test_roll_placed_as_concatenation_keeps_inside_its_source(level):
    """A roll as slices and a concatenation (Swin's shifted windows): place-concat-inputs
    puts both slices in the concatenation's storage, the first slice at its start. That
    slice is also a contiguous range of the source, but the concatenation's storage holds
    more than its bytes: moved into the source with it, the concatenation ran past the
    source's storage (Swin2SR at opt level 0: the arena executor failed to load it, the C
    target's step wrote into another tensor's bytes). The values are numpy's roll."""
    from xrelay.backend.build import build_c

    x = relay.var("x", shape=(1, 16, 8, 4))
    a = relay.nn.relu(x)  # (the source: a step's result in a storage of its own)
    rolled = relay.concatenate([relay.strided_slice(a, [4], [16], axes=[1]), relay.strided_slice(a, [0], [4], axes=[1])], 1)
    mod = xrelay.relay.IRModule.from_expr(relay.Function([x], relay.sigmoid(rolled)))
    data = _data((1, 16, 8, 4))
    want = 1 / (1 + np.exp(-np.roll(np.maximum(data, 0), -4, axis=1)))
    with xrelay.transform.PassContext(opt_level=level):
        m = xrelay.build(mod, None, opt_level=level, backends=("native",))
        lib = build_c(mod, {}, opt_level=level)
    for built in (m, lib):
        built.set_input(x=data)
        built.run()
        np.testing.assert_allclose(built.get_output(0).numpy(), want, rtol=1e-6, atol=1e-6)
    verify_memory_plan(m.program)
