"""Helpers shared by the interpreter tests: parse module text with xrelay's context."""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from xrelay.dialects import make_context
from xrelay.dialects.relay import params_source


def parse(text: str, params=None) -> ModuleOp:
    """Parse and verify a module; ``params`` resolves ``relay.constant @name``."""
    with params_source(params):
        module = Parser(make_context(), text, "test.mlir").parse_module()
    module.verify()
    return module


@pytest.fixture
def rng():
    import numpy as np

    return np.random.default_rng(1234)
