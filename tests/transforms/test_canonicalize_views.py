"""canonicalize-views keeps the meaning bit for bit: every FileCheck case runs before and
after on random inputs; the rewrites reach a fixpoint; an exported attention's fused Q/K/V
split and a zero-width pad built as the ONNX importer writes them end as slices and views."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from xdsl.parser import Parser

from xrelay.dialects import make_context
from xrelay.testing.semantics import check_semantics, filecheck_cases
from xrelay.transforms.canonicalize_views import CanonicalizeViewsPass, canonicalize_views

ALL_CASES = filecheck_cases(Path(__file__).parents[1] / "filecheck" / "transforms" / "canonicalize-views.mlir")
CASES = [c for c in ALL_CASES if "@take_fast_out_of_range" not in c]
"""The cases that run (an index out of range in fast mode is an error, checked apart)."""


def _entry(case: str) -> str:
    return case.split("func.func @")[1].split("(")[0]


@pytest.mark.parametrize("case", CASES, ids=[_entry(c) for c in CASES])
def test_filecheck_cases_keep_their_values(case):
    module = Parser(make_context(), case).parse_module()
    before, after = check_semantics(CanonicalizeViewsPass(), module, entry=_entry(case), rtol=0, atol=0)
    assert all(np.asarray(o).size for o in before)


@pytest.mark.no_change("canonicalize-views", "an index out of range in fast mode keeps the take and its error")
def test_fast_index_out_of_range_keeps_its_error():
    from xrelay.runtime.interpreter import RunError, run

    (case,) = [c for c in ALL_CASES if "@take_fast_out_of_range" in c]
    module = Parser(make_context(), case).parse_module()
    CanonicalizeViewsPass().apply(make_context(), module)
    with pytest.raises(RunError, match="index 9 is out of bounds"):
        run(module, {"x": np.zeros((2, 7), np.float32)}, entry="take_fast_out_of_range")


def test_fixpoint():
    module = Parser(make_context(), "\n".join(ALL_CASES)).parse_module()
    first = canonicalize_views(module)
    # 1 pad, 2 + 3 transposes, 6 + 3 takes; the packed Q/K/V: each of 3 slices moves before
    # a squeeze, a transpose, an expand_dims and a reshape (12), and 12 reshapes merge; 4
    # slices before a transpose or a reshape elsewhere; Falcon's gather_nd of one index: a
    # take, its slice, the slice before the transpose, the transpose of a unit axis (4); a
    # broadcast_to no longer read by the two ops that broadcast (1)
    assert first == 48
    once = str(module)
    assert canonicalize_views(module) == 0
    assert str(module) == once


def test_exported_qkv_split_and_zero_pad_become_views():
    """torch's export of ``qkv.reshape(B, N, 3, H, D).permute(2, 0, 3, 1, 4)`` then ``q, k, v =
    qkv[0], qkv[1], qkv[2]`` (three Gathers of a scalar), after a zero-width Pad, through the
    ONNX importer: no take and no pad is left, and the values are the same."""
    from xrelay.dialects.relay import RelayOp
    from xrelay.frontends.onnx import from_onnx
    from xrelay.testing.onnx_models import GraphBuilder
    from xrelay.transforms.infra import module_op

    g = GraphBuilder()
    p = g.node("Pad", ["x", g.const(np.zeros(6, np.int64))])
    r = g.node("Reshape", [p, g.const(np.array([1, 6, 3, 2, 4], np.int64))])
    t = g.node("Transpose", [r], perm=[2, 0, 3, 1, 4])
    outs = [g.node("Gather", [t, g.const(np.array(i, np.int64))], axis=0) for i in range(3)]
    model = g.model({"x": ([1, 6, 24], np.float32)}, outs, "qkv_split")
    mod, params = from_onnx(model)
    module = module_op(mod)
    before, after = check_semantics(CanonicalizeViewsPass(), module, params=params, rtol=0, atol=0)
    assert [o.shape for o in after] == [(1, 2, 6, 4)] * 3
    CanonicalizeViewsPass().apply(make_context(), module)
    names = {op.RELAY_NAME for op in module.walk() if isinstance(op, RelayOp)}
    assert "take" not in names and "nn.pad" not in names
    assert "strided_slice" in names
