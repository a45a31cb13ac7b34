"""xrelay.runtime.load does not trust its files: a bad plan, a malformed or mismatched
graph JSON, or a pool over the limit is one GraphJsonError (a TVMError) before any arena."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from xrelay.backend.build import build
from xrelay.error import TVMError
from xrelay.relay.module import IRModule
from xrelay.runtime.executor_factory import load
from xrelay.runtime.graph_json import GraphJsonError

TEXT = """
func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = relay.multiply %x, %x : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %z = relay.add %y, %x : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %w = relay.negative %z : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %v = relay.add %w, %z : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %v : tensor<2x3xf32>
}
"""


@pytest.fixture
def export(tmp_path):
    m = build(IRModule.from_text(TEXT), opt_level=0)
    paths = [tmp_path / "graph.json", tmp_path / "lib.mlir", tmp_path / "params.npz"]
    m.export(*paths)
    return paths


def test_round_trip_still_loads(export):
    m = load(*export)
    x = np.arange(6, dtype="float32").reshape(2, 3)
    m.run(x=x)
    np.testing.assert_array_equal(m.get_output(0), -(x * x + x) + (x * x + x))


def test_overlapping_plan_is_refused(export):
    lib = export[1]
    text = lib.read_text()
    # %z (live over steps 1..3) keeps offset 128; put %w (steps 2..3) on top of it
    line = next(ln for ln in text.splitlines() if "%w_storage = memory.alloc_storage" in ln)
    assert "offset = 0}" in line
    lib.write_text(text.replace(line, line.replace("offset = 0}", "offset = 128}")))
    with pytest.raises(GraphJsonError, match="live at the same time and overlap") as e:
        load(*export)
    assert "verify-memory-plan" in str(e.value)


def _mutations(doc):
    """20 ways to break a graph JSON: missing keys, wrong types, indices out of range,
    and shapes, dltypes and storage ids that do not match the program."""
    attrs = doc["attrs"]
    cases = [
        lambda d: d.pop("nodes"),
        lambda d: d.pop("heads"),
        lambda d: d.pop("attrs"),
        lambda d: d.pop("arg_nodes"),
        lambda d: d.pop("node_row_ptr"),
        lambda d: d.__setitem__("nodes", "nodes"),
        lambda d: d.__setitem__("heads", [[99, 0, 0]]),
        lambda d: d.__setitem__("arg_nodes", [7]),
        lambda d: d["nodes"][0].pop("name"),
        lambda d: d["nodes"][1].__setitem__("inputs", [[42, 0, 0]]),
        lambda d: d["nodes"][1]["inputs"].__setitem__(0, "x"),
        lambda d: d["nodes"].pop(),
        lambda d: d["attrs"]["shape"][1].__setitem__(1, ["shape", [2, 4]]),
        lambda d: d["attrs"]["shape"][1].__setitem__(0, [3, 2]),
        lambda d: d["attrs"]["dltype"][1].__setitem__(0, "int64"),
        lambda d: d["attrs"]["storage_id"].__setitem__(1, [0] * len(attrs["storage_id"][1])),
        lambda d: d["attrs"]["storage_id"][1].pop(),
        lambda d: d["attrs"].__setitem__("shape", None),
        lambda d: d.__setitem__("extra", 1),
        lambda d: d["nodes"][1]["attrs"].__setitem__("func_name", "other"),
    ]
    for case in cases:
        mutated = copy.deepcopy(doc)
        case(mutated)
        yield mutated


def test_malformed_graph_json_is_one_clear_error(export):
    graph = export[0]
    doc = json.loads(graph.read_text())
    assert doc["attrs"]["dltype"][1][0] == "float32"
    messages = []
    for mutated in _mutations(doc):
        graph.write_text(json.dumps(mutated))
        with pytest.raises(GraphJsonError) as e:
            load(*export)
        assert isinstance(e.value, TVMError)
        assert "the graph JSON does not match the program" in str(e.value)
        messages.append(str(e.value))
    assert len(messages) == 20
    assert any('attrs.dltype[1] is ["int64", "float32", ' in m for m in messages)
    assert any("attrs.shape[1][0] is [3, 2], the program has [2, 3]" in m for m in messages)
    assert any("attrs.storage_id[1] is [0, 0, 0, 0, 0], the program has [0, 1, " in m
               for m in messages)
    graph.write_text("[1, 2")
    with pytest.raises(GraphJsonError, match="cannot read the export"):
        load(*export)


def test_pool_over_the_limit_is_refused_before_allocating(export, monkeypatch):
    with pytest.raises(GraphJsonError, match=r"memory.pool @global needs 192 bytes, more than "
                       r"the limit of 100"):
        load(*export, max_pool_bytes=100)
    monkeypatch.setenv("XRELAY_MAX_POOL_BYTES", "191")
    with pytest.raises(GraphJsonError, match="more than the limit of 191"):
        load(*export)
    assert load(*export, max_pool_bytes=192).arena_bytes == 192
    monkeypatch.setenv("XRELAY_MAX_POOL_BYTES", "lots")
    with pytest.raises(GraphJsonError, match="XRELAY_MAX_POOL_BYTES must be a byte count"):
        load(*export)
    lib = export[1]
    lib.write_text(lib.read_text().replace("size = 192}", "size = 99999999999999}"))
    monkeypatch.delenv("XRELAY_MAX_POOL_BYTES")
    with pytest.raises(GraphJsonError, match="needs 99999999999999 bytes"):
        load(*export)


def test_a_temporary_inside_a_fused_function_larger_than_memory_is_refused_before_allocating():
    # broadcast_to -> relu -> sum fuse into one function with two 32 GB temporaries, planned
    # in the step's workspace: the pool is refused before anything is allocated (numpy's
    # MemoryError, or paging until the OOM killer, without the check).
    from xrelay import relay
    from xrelay.runtime import graph_executor

    x = relay.var("x", shape=(2,), dtype="float32")
    body = relay.sum(relay.nn.relu(relay.broadcast_to(x, (4000000000, 2))), axis=0)
    with pytest.raises(TVMError, match=r"memory pool 'global' needs 64000000128 bytes \(59.6 GiB\), "
                       r"more than this machine's memory"):
        lib = build(IRModule.from_expr(relay.Function([x], body)), target="llvm")
        graph_executor.GraphModule(lib["default"](None))
