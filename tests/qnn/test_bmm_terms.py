"""The integer terms after an int8 batch product, in every form, run in its C kernel.

``_bmm_terms`` reads the int32 adds and subtracts after ``nn.batch_matmul`` as a linear form
of the product (constant multiples of row and column arrays, constants) whatever their order
and operand sides; each program here must give the reference interpreter's bits with the
product's step running one thunk (the chain claimed), or, for a term the kernel cannot take,
leave the chain to its own kernels with the same bits. Terms the function orders before the
product (the swapped form's) are computed by their own ops before it, then read.
"""

from __future__ import annotations

import numpy as np
import pytest

import xrelay
from xrelay import relay

NB, M, K, N = 3, 10, 16, 21
RNG = np.random.default_rng(30)


def _inputs():
    return {
        "a": RNG.integers(0, 256, (NB, M, K)).astype(np.uint8),
        "b": RNG.integers(0, 256, (NB, N, K)).astype(np.uint8),
        "rs": RNG.integers(0, 4000, (NB, M, 1)).astype(np.int32),
        "cs": RNG.integers(0, 4000, (NB, N)).astype(np.int32),
        "full": RNG.integers(-9, 9, (NB, M, N)).astype(np.int32),
    }


def _program(form: str):
    a = relay.var("a", shape=(NB, M, K), dtype="uint8")
    b = relay.var("b", shape=(NB, N, K), dtype="uint8")
    rs = relay.var("rs", shape=(NB, M, 1), dtype="int32")
    cs = relay.var("cs", shape=(NB, N), dtype="int32")
    full = relay.var("full", shape=(NB, M, N), dtype="int32")
    acc = relay.nn.batch_matmul(a, b, transpose_b=True, out_dtype="int32")
    i32 = lambda v: relay.const(np.int32(v))  # noqa: E731
    col = relay.expand_dims(cs, axis=1)
    if form == "fake-quantization":  # the form fake-quantization-to-integer writes
        y = relay.add(relay.subtract(acc, relay.multiply(i32(7), rs)), relay.subtract(i32(K * 7 * 3), relay.multiply(i32(3), col)))
    elif form == "operands-swapped":
        y = relay.add(relay.subtract(i32(K * 7 * 3), relay.multiply(col, i32(3))), relay.add(relay.multiply(rs, i32(-7)), acc))
    elif form == "one-term-per-op":
        y = relay.subtract(relay.subtract(relay.add(acc, i32(11)), relay.multiply(rs, i32(7))), relay.multiply(relay.reshape(cs, (NB, 1, N)), i32(3)))
    elif form == "constant-columns":
        y = relay.add(relay.subtract(acc, relay.const(RNG.integers(-99, 99, (1, N)).astype(np.int32))), relay.multiply(i32(2), rs))
    elif form == "rows-twice":  # one row array, its coefficients summed
        y = relay.subtract(relay.add(acc, relay.multiply(i32(5), rs)), relay.multiply(rs, i32(2)))
    elif form == "full-array":  # not a row or column term: the kernel declines the chain
        y = relay.subtract(relay.add(acc, full), relay.multiply(i32(7), rs))
    else:
        raise AssertionError(form)
    return xrelay.IRModule.from_expr(y)


@pytest.mark.parametrize(
    "form, claimed",
    [("fake-quantization", True), ("operands-swapped", True), ("one-term-per-op", True),
     ("constant-columns", True), ("rows-twice", True), ("full-array", False)],
)  # fmt: skip
def test_terms_in_every_form_run_in_the_kernel_with_the_reference_bits(int8_library, form, claimed):
    mod = _program(form)
    names = {p.name_hint for p in mod["main"].params}
    data = {k: v for k, v in _inputs().items() if k in names}
    ref = xrelay.run(mod, data)[0]
    m = xrelay.build(mod.clone(), {}, opt_level=3, plan="greedy-by-size")
    m.set_input(**data)
    m.run()
    out = m.get_output(0).numpy()
    assert np.ptp(out) > 0
    np.testing.assert_array_equal(out, ref)
    steps = [c for name, _, c in m.executor.steps if "batch_matmul" in name]
    assert len(steps) == 1
    labels = [lab for lab, _, _ in steps[0].thunks]
    # nothing runs after the product when it claimed the chain (ops the function orders
    # before the product, as the swapped form's side terms, have run already)
    assert (labels[-1] == "nn.batch_matmul") == claimed, labels
    if form != "operands-swapped":
        assert (labels == ["nn.batch_matmul"]) == claimed, labels

