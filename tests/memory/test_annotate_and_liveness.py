"""annotate-used-memory against a brute-force liveness count; liveness and workspace sizes."""

from __future__ import annotations

import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from xrelay.backend.native.scratch import kernel_scratch_bytes, state_native_scratch
from xrelay.dialects import make_context
from xrelay.dialects.memory import (
    KERNEL_SCRATCH_ATTR,
    AllocStorageOp,
    fused_temporaries,
    workspace_bytes,
)
from xrelay.dialects.relay import byte_size
from xrelay.runtime.liveness import buffer_lifetimes, storage_lifetimes
from xrelay.testing.random_graphs import random_dag
from xrelay.testing.semantics import check_semantics
from xrelay.transforms.annotate_used_memory import AnnotateUsedMemoryPass, used_memory
from xrelay.transforms.lower_to_memory import LowerToMemoryPass

CTX = make_context()


def brute_force(m: ModuleOp) -> tuple[dict[str, list[int]], int]:
    """Used memory by definition: for each call, every value defined at or before it and
    used at or after it (returned values to the end)."""
    main = next(f for f in m.ops if isinstance(f, func.FuncOp) and f.sym_name.data == "main")
    ops = list(main.body.block.ops)
    values = [(a, -1) for a in main.body.block.args] + [
        (r, i) for i, op in enumerate(ops) for r in op.results
    ]
    out: dict[str, list[int]] = {}
    for i, op in enumerate(ops):
        if not isinstance(op, func.CallOp):
            continue
        total = 0
        for v, d in values:
            users = [ops.index(u.operation) for u in v.uses]
            last = max([len(ops) if isinstance(ops[u], func.ReturnOp) else u for u in users] or [d])
            if d <= i <= last and (d == i or users):
                total += byte_size(v.type)
        out.setdefault(op.callee.root_reference.data, []).append(total)
    io = sum(byte_size(a.type) for a in main.body.block.args)
    io += sum(byte_size(v.type) for v in ops[-1].operands)
    return out, io


@pytest.mark.parametrize("seed", range(5))
def test_used_memory_matches_brute_force(fused, seed):
    m = fused(random_dag(seed, num_ops=30))
    assert used_memory(m) == brute_force(m)


def test_annotation_keeps_meaning(workloads, fused):
    m = fused(workloads["resnet18"])
    check_semantics(AnnotateUsedMemoryPass(), m)
    AnnotateUsedMemoryPass().apply(CTX, m)
    prims = [f for f in m.ops if isinstance(f, func.FuncOp) and "relay.primitive" in f.attributes]
    calls = sum(1 for op in m.walk() if isinstance(op, func.CallOp))
    assert sum(len(f.attributes["relay.used_memory"].data) for f in prims) == calls


def test_liveness_alias_union_and_lower_bound():
    m = Parser(
        CTX,
        """
func.func private @neg(%p: tensor<4x4xf32>) -> tensor<4x4xf32> attributes {relay.primitive = 1 : i64} {
  %r = relay.negative %p : (tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %r : tensor<4x4xf32>
}
func.func private @flat(%p: tensor<4x4xf32>) -> tensor<16xf32> attributes {relay.primitive = 1 : i64, relay.reshape_only = 1 : i64} {
  %r = relay.reshape %p {newshape = [16]} : (tensor<4x4xf32>) -> tensor<16xf32>
  func.return %r : tensor<16xf32>
}
func.func private @neg16(%p: tensor<16xf32>) -> tensor<16xf32> attributes {relay.primitive = 1 : i64} {
  %r = relay.negative %p : (tensor<16xf32>) -> tensor<16xf32>
  func.return %r : tensor<16xf32>
}
func.func @main(%x: tensor<4x4xf32>) -> tensor<16xf32> {
  %a = func.call @neg(%x) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %b = func.call @neg(%a) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %f = func.call @flat(%a) : (tensor<4x4xf32>) -> tensor<16xf32>
  %c = func.call @neg16(%f) : (tensor<16xf32>) -> tensor<16xf32>
  %d = func.call @neg(%b) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %e = func.call @flat(%d) : (tensor<4x4xf32>) -> tensor<16xf32>
  %g = func.call @neg16(%e) : (tensor<16xf32>) -> tensor<16xf32>
  func.return %g : tensor<16xf32>
}""",
    ).parse_module()
    LowerToMemoryPass(inputs_in_arena=False, outputs_in_arena=False).apply(CTX, m)
    lifetimes, steps = storage_lifetimes(m)
    by_name = {op.result.name_hint: lt for op, lt in lifetimes.items()}
    # Steps: 0 a, 1 b, 2 c (reads a through the alias f), 3 d, 4 g (reads d via e).
    assert steps == 5
    assert by_name == {
        "a_storage": (0, 2),
        "b_storage": (1, 3),
        "c_storage": (2, 2),
        "d_storage": (3, 4),
        "g_storage": (4, 4),
    }
    buffers = buffer_lifetimes(m)
    assert {b.name for b in buffers} == {"a_storage", "b_storage", "c_storage", "d_storage"}
    assert all(
        op.lifetime_range == lifetimes[op] for op in m.walk() if isinstance(op, AllocStorageOp)
    )


def test_workspace_bytes_formula():
    m = Parser(
        CTX,
        """
func.func private @f(%x: tensor<2x8x10x10xf32>, %w: tensor<16x4x3x3xf32>, %w2: tensor<16x16x1x1xf32>) -> tensor<2x16x5x5xf32> attributes {relay.primitive = 1 : i64} {
  %y = relay.nn.conv2d %x, %w {strides = [2, 2], padding = [1, 1, 1, 1], groups = 2} : (tensor<2x8x10x10xf32>, tensor<16x4x3x3xf32>) -> tensor<2x16x5x5xf32>
  %z = relay.nn.conv2d %y, %w2 : (tensor<2x16x5x5xf32>, tensor<16x16x1x1xf32>) -> tensor<2x16x5x5xf32>
  func.return %z : tensor<2x16x5x5xf32>
}""",
    ).parse_module()
    (f,) = m.ops
    # out 5x5, in_c/groups = 4, 3x3 taps, 4 bytes; the pointwise conv needs none. Then %y,
    # which no result's buffer can hold (a convolution reads it): each part on a cache line.
    im2col, y = 5 * 5 * 4 * 3 * 3 * 4, 2 * 16 * 5 * 5 * 4
    assert kernel_scratch_bytes(f, {}.get) == -(-im2col // 64) * 64
    assert [v.name_hint for v in fused_temporaries(f)] == ["y"]
    # lower-to-memory's size reads what the engine stated: before, the temporaries only
    assert workspace_bytes(f) == -(-y // 64) * 64
    state_native_scratch(m)
    assert f.attributes[KERNEL_SCRATCH_ATTR].value.data == -(-im2col // 64) * 64
    assert workspace_bytes(f) == -(-im2col // 64) * 64 + -(-y // 64) * 64
