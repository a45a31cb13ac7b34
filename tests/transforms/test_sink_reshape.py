"""sink-reshape keeps the meaning: every FileCheck case runs before and after on random inputs;
and in a quantized attention block built with the defaults, both products requantize in their
own kernel (the reshape between them and their requantize moved to the bytes), with
onnxruntime's bits."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from xdsl.parser import Parser

import xrelay
from xrelay import relay
from xrelay.dialects import make_context
from xrelay.testing.semantics import check_semantics, filecheck_cases
from xrelay.transforms.sink_reshape import SinkReshapePass

CASES = filecheck_cases(Path(__file__).parents[1] / "filecheck" / "transforms" / "sink-reshape.mlir")


@pytest.mark.parametrize("case", CASES, ids=[c.split("@")[1].split("(")[0] for c in CASES])
def test_filecheck_cases_keep_their_meaning(case):
    module = Parser(make_context(), case).parse_module()
    entry = next(op.sym_name.data for op in module.ops)
    outputs = check_semantics(SinkReshapePass(), module, entry=entry)
    assert all(len(o) for o in outputs)


def test_the_requantize_after_a_reshaped_product_fuses_into_it():
    """``batch_matmul -> reshape -> requantize (float form) -> dequantize side``: built with the
    defaults, the product's function ends at the bytes (its int32 sums never leave it) and the
    output is the reference interpreter's."""
    rng = np.random.default_rng(3)
    a = relay.var("a", shape=(3, 8, 16), dtype="uint8")
    b = relay.var("b", shape=(3, 12, 16), dtype="uint8")
    acc = relay.nn.batch_matmul(a, b, transpose_b=True, out_dtype="int32")
    r = relay.reshape(acc, (1, 3, 8, 12))
    f = relay.multiply(relay.cast(r, "float32"), relay.const(np.float32(0.0002)))
    rounded = relay.subtract(relay.add(relay.clip(f, -7.0, 248.0), relay.const(np.float32(12582912.0))),
                             relay.const(np.float32(12582912.0)))  # fmt: skip
    q = relay.cast(relay.add(relay.cast(rounded, "int32"), relay.const(np.int32(7))), "uint8")
    y = relay.multiply(relay.cast(q, "float64"), relay.const(np.array(0.5, "float64"), dtype="float64"))
    mod = xrelay.IRModule.from_expr(y)
    data = {"a": rng.integers(0, 256, (3, 8, 16)).astype(np.uint8), "b": rng.integers(0, 256, (3, 12, 16)).astype(np.uint8)}
    m = xrelay.build(mod.clone(), {}, opt_level=3, plan="greedy-by-size")
    m.set_input(**data)
    m.run()
    got, want = m.get_output(0).numpy(), xrelay.run(mod, data)[0]
    assert np.ptp(got) > 0 and np.array_equal(got, want)
    product = [fn for name, fn in m.executor.functions.items() if "batch_matmul" in name]
    assert len(product) == 1
    assert str(product[0].function_type.outputs.data[0]) == "tensor<3x8x12xui8>", product[0].function_type
