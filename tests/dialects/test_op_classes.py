"""Every op class is written out in its dialect's source (found by grep for its name), with its
fusion pattern kind spelled out."""

from __future__ import annotations

import inspect
import re
import sys

import pytest

from xrelay.dialects.qnn import QNN_OPS
from xrelay.dialects.relay import RELAY_OPS

OPS = {**RELAY_OPS, **QNN_OPS}


@pytest.mark.parametrize("name", sorted(OPS))
def test_op_class_is_defined_by_a_class_statement(name):
    cls = OPS[name]
    source = inspect.getsource(sys.modules[cls.__module__])
    assert re.search(rf"^\s*class {cls.__name__}\(", source, re.M), (
        f"{name}: no 'class {cls.__name__}(' in {cls.__module__} (generated with type()?)"
    )


def test_pattern_kinds_are_spelled_out():
    modules = {sys.modules[cls.__module__] for cls in OPS.values()}
    short = []
    for module in modules:
        for m in re.finditer(r'@relay_op\(\s*"([^"]+)",\s*([A-Za-z_.]+)', inspect.getsource(module)):
            if not m.group(2).startswith("OpPattern."):
                short.append(f"{module.__name__}: {m.group(1)} uses {m.group(2)}")
    assert not short, short
