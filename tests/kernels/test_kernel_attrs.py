"""A kernel's attributes and defaults are its relay dialect op's: declared once, in the dialect."""

from __future__ import annotations

import functools
import inspect

import numpy as np
import pytest

from xrelay.dialects.qnn import QNN_OPS
from xrelay.dialects.relay import RELAY_OPS
from xrelay.kernels import KERNELS

OPS = {**RELAY_OPS, **QNN_OPS}
DIALECT_KERNELS = sorted(name for name in KERNELS if name in OPS)


def _params(fn):
    return inspect.signature(fn).parameters


@pytest.mark.parametrize("name", DIALECT_KERNELS)
def test_kernel_declares_the_ops_attributes_without_defaults(name):
    entry = KERNELS[name]
    fn = entry.func if isinstance(entry, functools.partial) else entry
    attrs = OPS[name].ATTRS
    params = _params(fn)
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return  # an identity kernel ignoring every attribute (on_device, copy, ...)
    keywords = {n: p for n, p in params.items() if p.kind is p.KEYWORD_ONLY and n != "out"}
    assert set(keywords) == set(attrs), f"{name}: kernel keywords differ from the op's attributes"
    redeclared = [n for n, p in keywords.items() if p.default is not p.empty]
    assert not redeclared, f"{name}: the kernel redeclares the defaults of {redeclared}"


@pytest.mark.parametrize("name", DIALECT_KERNELS)
def test_registry_binds_the_dialects_defaults(name):
    defaults = OPS[name].default_attrs()
    params = _params(KERNELS[name])
    for attr, default in defaults.items():
        if attr in params:
            assert params[attr].default == default, (name, attr)


def test_conv2d_defaults_come_from_the_dialect():
    x = np.arange(16, dtype="float32").reshape(1, 1, 4, 4)
    w = np.ones((1, 1, 3, 3), "float32")
    # strides 1, padding 0, dilation 1, groups 1, NCHW/OIHW: the 3x3 window sums
    res = KERNELS["nn.conv2d"](x, w)
    assert res.shape == (1, 1, 2, 2)
    assert res[0, 0].tolist() == [[45.0, 54.0], [81.0, 90.0]]
    # the dialect's nn.leaky_relu default alpha is Relay's attribute default, 0.25
    assert KERNELS["nn.leaky_relu"](np.array([-4.0], "float32")).tolist() == [-1.0]


def test_required_attribute_is_required():
    with pytest.raises(TypeError, match="a_min"):
        KERNELS["clip"](np.zeros(2, "float32"))
