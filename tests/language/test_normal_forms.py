"""ToANormalForm / ToGraphNormalForm / ToBasicBlockNormalForm: what the Relay text shows, and
that none changes what the module computes."""

from __future__ import annotations

import numpy as np
import pytest

import xrelay
from xrelay import relay
from xrelay.relay.parser import parse
from xrelay.testing import check_semantics, mobilenet
from xrelay.testing.structural import assert_structural_equal

TEXT = """#[version = "0.0.5"]
def @main(%x: Tensor[(1, 4), float32], %w: Tensor[(3, 4), float32]) {
  %0 = nn.dense(%x, %w);
  let %s = split(%0, indices_or_sections=3, axis=1);
  %1 = add(%s.0, %s.1);
  nn.relu(%1)
}
"""


def test_a_normal_form_let_binds_every_call_as_relay_prints_it():
    mod = relay.transform.ToANormalForm()(parse(TEXT))
    text = mod.astext()
    body = [line.strip().split(" /*")[0] for line in text.splitlines()[2:-1]]
    assert body == [
        "let %x1 = nn.dense(%x, %w, units=None)",
        "let %s = split(%x1, indices_or_sections=3, axis=1)",
        "let %x2 = %s.0",
        "let %x3 = %s.1",
        "let %x4 = add(%x2, %x3)",
        "let %x5 = nn.relu(%x4)",
        "%x5",
    ]
    again = parse(text)  # the same program (a field of a let-bound tuple is not a value of its own)
    assert_structural_equal(again, mod)
    assert "let %x1 = nn.dense(%x, %w, units=None)" in again.astext() and "let %x5 = nn.relu(%x4)" in again.astext()


@pytest.mark.no_change("to-a-normal-form", "checks to-graph-normal-form's result, which has no lets whether or not A-normal form added them")
def test_graph_normal_form_drops_the_lets():
    mod = relay.transform.ToGraphNormalForm()(relay.transform.ToANormalForm()(parse(TEXT)))
    text = mod.astext()
    assert "let " not in text
    assert "%0 = nn.dense(%x, %w, units=None)" in text and "nn.relu(%4) /* ty=Tensor[(1, 1), float32] */\n}" in text
    assert all(op.results[0].name_hint is None for op in mod.module.ops.first.body.block.ops if op.results)


def test_normal_forms_keep_the_meaning():
    mod, params = mobilenet.get_workload(batch_size=1, num_classes=4, image_shape=(3, 32, 32))
    for p in (relay.transform.ToANormalForm(), relay.transform.ToGraphNormalForm(), relay.transform.ToBasicBlockNormalForm()):
        check_semantics(p, mod, params=params)


@pytest.mark.no_change("to-basic-block-normal-form", "the If is already in basic-block normal form")
def test_basic_block_normal_form_keeps_an_if_as_it_is():
    mod = parse(
        "def @main(%c: bool, %x: Tensor[(2), float32]) { let %t = add(%x, %x); "
        "if (%c) { multiply(exp(%t), %t) } else { negative(%t) } }"
    )
    before = str(mod)
    mod = relay.transform.ToBasicBlockNormalForm()(mod)
    assert str(mod) == before
    x = np.array([0.5, 1.0], "float32")
    assert np.allclose(xrelay.run(mod, {"c": np.array(True), "x": x})[0], np.exp(2 * x) * 2 * x)
    assert np.allclose(xrelay.run(mod, {"c": np.array(False), "x": x})[0], -2 * x)
