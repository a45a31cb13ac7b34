"""The printing instruments on Python API modules: Relay's text under TVM's headers."""

from __future__ import annotations

import numpy as np

from xrelay import relay
from xrelay.instrument import PassPrintingInstrument, PrintAfterAll, PrintBeforeAll


def test_print_instruments_print_relay_text_for_an_irmodule(capsys):
    # TVM's PrintBeforeAll/PrintAfterAll print `f"... Running Pass: {info}"` and then the
    # module, whose str() is Relay's text; PassPrintingInstrument prints "Print IR before:".
    x = relay.var("x", shape=(1, 4), dtype="float32")
    one = relay.const(np.ones((1, 4), "float32"))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.add(x, relay.add(one, one))))
    instruments = [
        PrintBeforeAll(),
        PassPrintingInstrument(print_after_pass_names=["fold-constant"]),
    ]
    mod = relay.transform.InferType()(mod)
    text = str(mod)
    with relay.transform.PassContext(instruments=instruments):
        folded = relay.transform.FoldConstant()(mod)
    out = capsys.readouterr().out
    before = "Before Running Pass: The meta data of the pass - pass name: FoldConstant, "
    before += "opt_level: 2, required passes: []\n"
    assert out.startswith(before + text + "\n")
    assert out.endswith(f"Print IR after: FoldConstant\n{folded}\n\n\n")
    assert "add(%x, meta[relay.Constant][0]" in str(folded) and "func.func" not in out


def test_print_after_all_prints_each_pass_of_a_sequential(capsys):
    x = relay.var("x", shape=(2,), dtype="float32")
    mod = relay.IRModule.from_expr(relay.Function([x], relay.nn.relu(x)))
    seq = relay.transform.Sequential(
        [relay.transform.InferType(), relay.transform.FoldConstant()], name="seq"
    )
    with relay.transform.PassContext(instruments=[PrintAfterAll()]):
        seq(mod)
    headers = [line for line in capsys.readouterr().out.splitlines() if "Running Pass" in line]
    names = [h.split("pass name: ")[1].split(",")[0] for h in headers]
    assert names[-1] == "seq" and "FoldConstant" in names
    assert all(h.startswith("After Running Pass: The meta data of the pass") for h in headers)
