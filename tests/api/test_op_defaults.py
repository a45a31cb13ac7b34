"""The Python API reads its attribute defaults from the relay dialect (declared once, on the op)."""

from __future__ import annotations

import inspect

import pytest

from xrelay import relay
from xrelay.dialects.qnn import QNN_OPS
from xrelay.dialects.relay import RELAY_OPS
from xrelay.relay.op import DEFAULT

OPS = {**RELAY_OPS, **QNN_OPS}


def _api_functions():
    """(API function, op name) for every function of relay, relay.nn, relay.image and
    relay.qnn.op named after an op."""
    out = []
    for name in relay.op.__all__:
        if name in RELAY_OPS:
            out.append((getattr(relay, name), name))
    for name in relay.nn.__all__:
        op = "nn.dropout" if name == "dropout_raw" else "nn." + name
        if op in RELAY_OPS:
            out.append((getattr(relay.nn, name), op))
    for module, prefix in ((relay.image, "image."), (relay.qnn.op, "qnn.")):
        for name in module.__all__:
            if prefix + name in OPS:
                out.append((getattr(module, name), prefix + name))
    return out


API = _api_functions()


def _raw_defaults(fn) -> dict:
    code = fn.__code__
    names = code.co_varnames[: code.co_argcount]
    defaults = fn.__defaults__ or ()
    return dict(zip(names[len(names) - len(defaults) :], defaults))


def test_the_api_covers_the_ops():
    assert len(API) >= 60
    assert {op for _, op in API} >= {"nn.conv2d", "sum", "argmax", "strided_slice", "qnn.conv2d"}


@pytest.mark.parametrize(("fn", "op"), API, ids=[f"{f.__module__}.{f.__name__}" for f, _ in API])
def test_api_defaults_are_the_dialects(fn, op):
    defaults = OPS[op].default_attrs()
    shown = inspect.signature(fn).parameters
    for name, raw in _raw_defaults(fn).items():
        if name not in OPS[op].ATTRS:
            continue  # an operand (nn.pad's pad_value)
        if raw is DEFAULT:
            assert shown[name].default == defaults[name], (op, name)
        else:
            # only where tvm.relay's Python default differs from the attribute's
            assert name not in defaults or raw != defaults[name], (
                f"{fn.__name__} redeclares {op}'s default {name}={raw!r}; use DEFAULT"
            )


def test_positional_arguments_in_relays_order():
    x = relay.var("x", shape=(1, 4, 8, 8))
    w = relay.var("w", shape=(4, 2, 3, 3))
    c = relay.nn.conv2d(x, w, (2, 2), (1, 1), (1, 1), 2)
    assert c.attrs["strides"] == (2, 2)
    assert c.attrs["padding"] == (1, 1, 1, 1)
    assert c.attrs["groups"] == 2
    assert c.attrs["kernel_layout"] == "OIHW"
    s = relay.sum(x, (1,), True, True)
    assert dict(s.attrs) == {"axis": (1,), "keepdims": True, "exclude": True}


def test_tvm_python_defaults_that_differ_from_the_attributes_are_kept():
    a = relay.var("a", shape=(2, 4, 8))
    b = relay.var("b", shape=(2, 3, 8))
    assert relay.nn.batch_matmul(a, b).attrs["transpose_b"] is True
    assert RELAY_OPS["nn.batch_matmul"].default_attrs()["transpose_b"] is False
    assert relay.nn.leaky_relu(a).attrs["alpha"] == 0.01
    assert relay.nn.max_pool2d(relay.var("x", shape=(1, 1, 4, 4))).attrs["pool_size"] == (1, 1)


def test_a_parameter_that_is_no_attribute_is_refused_at_definition():
    with pytest.raises(TypeError, match="relay.nn.relu has no attribute 'alpha'"):

        @relay.op.dialect_defaults("nn.relu")
        def relu(data, alpha=DEFAULT):
            return data
